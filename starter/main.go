// Command starter starts a research session, follows its progress and
// prints (or writes) the report.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"go.temporal.io/sdk/client"

	"github.com/lethe-research/lethe/config/load"
	"github.com/lethe-research/lethe/internal/preflight"
	"github.com/lethe-research/lethe/workflows"
)

type params map[string]string

func (p params) String() string { return fmt.Sprint(map[string]string(p)) }
func (p params) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok {
		return fmt.Errorf("want key=value, got %q", s)
	}
	p[k] = v
	return nil
}

func main() {
	ps := params{}
	goal := flag.String("goal", "", "the research goal (required)")
	id := flag.String("id", "", "workflow id (default lethe-<unix time>)")
	file := flag.String("config", "", "YAML config file (default $LETHE_CONFIG)")
	instructions := flag.String("instructions", "", "formatting instructions for the report")
	follow := flag.Bool("follow", true, "print progress while the session runs")
	output := flag.String("output", "", "also write the report to this file")
	workerWait := flag.Duration("worker-wait", 5*time.Second, "how long to wait for workers polling the session's task queues before starting it (0: start without checking)")
	flag.Var(ps, "param", "override a parameter, key=value (repeatable)")
	flag.Parse()
	if err := run(*goal, *id, *file, *instructions, *output, *follow, *workerWait, ps); err != nil {
		fmt.Fprintln(os.Stderr, "starter:", err)
		os.Exit(1)
	}
}

func run(goal, id, file, instructions, output string, follow bool, workerWait time.Duration, ps params) error {
	if err := load.CheckSessionParams("a session's -param", ps); err != nil {
		return err
	}
	cfg, err := load.Load(load.Sources{File: file, Overrides: ps})
	if err != nil {
		return err
	}
	if strings.TrimSpace(goal) == "" {
		return errors.New("invalid input: goal is empty (use -goal)")
	}
	if n := utf8.RuneCountInString(goal); n > cfg.Session.GoalMaxChars {
		return fmt.Errorf("invalid input: goal has %d characters, more than session.goal_max_chars = %d", n, cfg.Session.GoalMaxChars)
	}
	c, err := client.Dial(client.Options{HostPort: cfg.Temporal.HostPort, Namespace: cfg.Temporal.Namespace})
	if err != nil {
		return fmt.Errorf("connect to Temporal at %s: %w", cfg.Temporal.HostPort, err)
	}
	defer c.Close()
	if id == "" {
		id = fmt.Sprintf("lethe-%d", time.Now().Unix())
	}
	ctx := context.Background()
	if err := preflight.Workers(ctx, c, cfg, workerWait, "session", "-worker-wait"); err != nil {
		return err
	}
	started := time.Now()
	sent := cfg.WithoutWorkerOnly() // the worker fills in its own endpoints and paths
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: cfg.Temporal.TaskQueue},
		workflows.SessionWorkflow, workflows.SessionInput{Goal: goal, Instructions: instructions, Config: &sent})
	if err != nil {
		return fmt.Errorf("start session: %w", err)
	}
	fmt.Fprintf(os.Stderr, "session %s started (run %s); UI: http://localhost:8233/namespaces/%s/workflows/%s\n", id, run.GetRunID(), cfg.Temporal.Namespace, id)
	done := make(chan struct{})
	if follow {
		go followProgress(ctx, c, id, done)
	}
	var res workflows.SessionResult
	err = run.Get(ctx, &res)
	close(done)
	if err != nil {
		return fmt.Errorf("session %s: %w", id, err)
	}
	fmt.Println(res.Report)
	fmt.Fprintf(os.Stderr, "stop reason: %s; iterations: %d; tasks: %d (done %d, failed %d); evidence: %d; citations: %d (removed %d)\n",
		res.StopReason, res.Iterations, res.Tasks, res.TasksDone, res.TasksFailed, res.Evidence, res.Citations, res.RemovedCitations)
	fmt.Fprintf(os.Stderr, "LLM: %d calls (%d repairs, %d failed), %d prompt + %d completion tokens, %.1fs in model calls\n",
		res.Stats.LLMCalls, res.Stats.RepairCalls, res.Stats.FailedCalls, res.Stats.PromptTokens, res.Stats.CompletionToken, float64(res.Stats.LLMLatencyMS)/1000)
	wall, llmS := time.Since(started).Seconds(), float64(res.Stats.LLMLatencyMS)/1000
	fmt.Fprintf(os.Stderr, "time: %.1fs wall; %d tokens; %.1fs of model-call latency per iteration; %s\n",
		wall, res.Stats.PromptTokens+res.Stats.CompletionToken, llmS/float64(max(res.Iterations, 1)), outsideShare(wall, llmS))
	if output != "" {
		if err := os.WriteFile(output, []byte(res.Report), 0o644); err != nil {
			return fmt.Errorf("write report: %w", err)
		}
	}
	return nil
}

func followProgress(ctx context.Context, c client.Client, id string, done <-chan struct{}) {
	t := time.NewTicker(2 * time.Second)
	defer t.Stop()
	last, errs := "", newErrorOnce(os.Stderr)
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		v, err := c.QueryWorkflow(ctx, id, "", workflows.QueryProgress)
		if err != nil {
			errs.print("progress query", err)
			continue
		}
		var p workflows.Progress
		if err := v.Get(&p); err != nil {
			errs.print("progress query answer", err)
			continue
		}
		line := fmt.Sprintf("%s %-10s iteration %d/%d  task %-12s done %d/%d  evidence %d  pressure %.2f  ψ %.2f",
			bar(p.Iteration, p.MaxIterations, 24), p.Phase, p.Iteration, p.MaxIterations, p.CurrentTask,
			p.Tasks["DONE"], total(p.Tasks), p.Evidence, p.Pressure, p.Psi)
		if line != last {
			fmt.Fprintln(os.Stderr, line)
			last = line
		}
	}
}

// bar draws a fixed-width progress bar of n out of max.
func bar(n, max, width int) string {
	if max <= 0 {
		max = 1
	}
	full := min(width, n*width/max)
	return "[" + strings.Repeat("#", full) + strings.Repeat(".", width-full) + "]"
}

func total(m map[string]int) int {
	t := 0
	for _, n := range m {
		t += n
	}
	return t
}

// outsideShare says how much of the wall time went outside model calls.
// Research children and composition parts call the model in parallel, so
// the summed latency can exceed the wall time: the share is then unknown
// from these two numbers, and the line says the calls overlapped instead
// of printing a meaningless 0%.
func outsideShare(wall, llm float64) string {
	if llm >= wall {
		return fmt.Sprintf("model calls overlapped (%.1fs of latency in %.1fs of wall time)", llm, wall)
	}
	return fmt.Sprintf("at least %.0f%% of wall time outside model calls", 100*(1-llm/max(wall, 1e-9)))
}
