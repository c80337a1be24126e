// Command eval starts an Evaluation workflow (docs/eval.md): every
// question of a question set as a research session and as the rag and
// loop baselines, scored; it follows the progress and prints the table.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/lethe-research/lethe/config/load"
	"github.com/lethe-research/lethe/contract"
	"github.com/lethe-research/lethe/eval/questions"
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

type options struct {
	file, id, questions, systems, judgeModel string
	n                                        int
	follow                                   bool
	workerWait                               time.Duration
	ps                                       params
}

func main() {
	o := options{ps: params{}}
	flag.StringVar(&o.file, "config", "", "YAML config file (default $LETHE_CONFIG)")
	flag.StringVar(&o.id, "id", "", "workflow id (default eval-<unix time>); an existing id's evaluation is followed, or its result printed once it ended; it is never run twice")
	flag.StringVar(&o.questions, "questions", "", "question file (JSONL, one question per line, as eval/questions; default the embedded Debian Reference set)")
	flag.IntVar(&o.n, "n", 0, "a stratified subset of this many questions (0 = all)")
	flag.StringVar(&o.systems, "systems", "lethe,rag,loop", "systems to run, comma-separated")
	flag.StringVar(&o.judgeModel, "judge-model", "", "judge model (eval.judge_model)")
	flag.BoolVar(&o.follow, "follow", true, "print progress while the evaluation runs")
	flag.DurationVar(&o.workerWait, "worker-wait", 5*time.Second, "how long to wait for workers polling the evaluation's task queues before starting it (0: start without checking)")
	flag.Var(o.ps, "param", "override a parameter, key=value (repeatable)")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "eval:", err)
		os.Exit(1)
	}
}

func loadQuestions(path string, n int) ([]questions.Question, error) {
	var qs []questions.Question
	var err error
	if path == "" {
		qs, err = questions.DebianReference()
	} else {
		f, ferr := os.Open(path)
		if ferr != nil {
			return nil, fmt.Errorf("questions: %w", ferr)
		}
		defer f.Close()
		qs, err = questions.Parse(f)
	}
	if err != nil {
		return nil, err
	}
	if n > 0 {
		qs = questions.Stratified(qs, n)
	}
	return qs, nil
}

func run(o options) error {
	if o.judgeModel != "" {
		o.ps["eval.judge_model"] = o.judgeModel
	}
	if err := load.CheckSessionParams("an evaluation's -param", o.ps); err != nil {
		return err
	}
	cfg, err := load.Load(load.Sources{File: o.file, Overrides: o.ps})
	if err != nil {
		return err
	}
	cfg = cfg.WithoutWorkerOnly() // the worker fills in its own endpoints and paths
	qs, err := loadQuestions(o.questions, o.n)
	if err != nil {
		return err
	}
	evalQs := make([]contract.EvalQuestion, len(qs))
	for i, q := range qs {
		evalQs[i] = contract.EvalQuestion(q)
	}
	in := workflows.EvalInput{Questions: evalQs, Systems: splitList(o.systems), Config: &cfg}
	if err := workflows.ValidateEval(in); err != nil {
		return err
	}
	c, err := client.Dial(client.Options{HostPort: cfg.Temporal.HostPort, Namespace: cfg.Temporal.Namespace})
	if err != nil {
		return fmt.Errorf("connect to Temporal at %s: %w", cfg.Temporal.HostPort, err)
	}
	defer c.Close()
	if o.id == "" {
		o.id = fmt.Sprintf("eval-%d", time.Now().Unix())
	}
	if err := contract.CheckEvalID(o.id); err != nil {
		return err
	}
	if err := preflight.Workers(context.Background(), c, cfg, o.workerWait, "evaluation", "-worker-wait"); err != nil {
		return err
	}
	return startOrFollow(context.Background(), c, cfg, o, in)
}

// startOrFollow starts the evaluation o.id, or follows the one of that id
// that exists: a re-run of the command after it was interrupted follows
// the running evaluation, and one after the evaluation ended prints its
// result (WorkflowIDReusePolicy REJECT_DUPLICATE: the SDK then returns
// the ended run instead of starting the whole evaluation again). Its own
// input is then unused: the evaluation keeps the one it started with.
func startOrFollow(ctx context.Context, c client.Client, cfg contract.Config, o options, in workflows.EvalInput) error {
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: o.id, TaskQueue: cfg.Temporal.TaskQueue,
		WorkflowExecutionErrorWhenAlreadyStarted: false,
		WorkflowIDReusePolicy:                    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		StaticSummary:                            fmt.Sprintf("Evaluation: %d questions, systems %s", len(in.Questions), strings.Join(in.Systems, ", ")),
	}, workflows.EvaluationWorkflow, in)
	if err != nil {
		return fmt.Errorf("start evaluation: %w", err)
	}
	fmt.Fprintf(os.Stderr, "evaluation %s: %d questions, systems %s; UI: http://localhost:8233/namespaces/%s/workflows/%s\n",
		o.id, len(in.Questions), strings.Join(in.Systems, ","), cfg.Temporal.Namespace, o.id)
	done := make(chan struct{})
	if o.follow {
		go follow(ctx, c, o.id, done)
	}
	var res workflows.EvalResult
	err = run.Get(ctx, &res)
	close(done)
	if err != nil {
		return fmt.Errorf("evaluation %s (a new -id runs it again): %w", o.id, err)
	}
	fmt.Println(res.Table)
	if res.OutputsError != "" {
		fmt.Fprintf(os.Stderr, "outputs were NOT written (%s); the table above is the evaluation's result "+
			"(temporal workflow result --workflow-id %s); docs/eval.md says how to write the files; %d failed runs\n", res.OutputsError, o.id, res.Failed)
		return nil
	}
	fmt.Fprintf(os.Stderr, "outputs: %s (results.md, results.jsonl, accuracy-tokens.svg); %d failed runs\n", res.Dir, res.Failed)
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

func follow(ctx context.Context, c client.Client, id string, done <-chan struct{}) {
	t := time.NewTicker(5 * time.Second)
	defer t.Stop()
	last := ""
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		v, err := c.QueryWorkflow(ctx, id, "", workflows.QueryProgress)
		if err != nil {
			continue
		}
		var p workflows.EvalProgress
		if v.Get(&p) != nil {
			continue
		}
		var parts []string
		for _, s := range p.Systems {
			parts = append(parts, fmt.Sprintf("%s %d (judge %.2f)", s.System, s.Records, s.Judge))
		}
		line := fmt.Sprintf("%s %d/%d questions; %s; running %s", p.Phase, p.Done, p.Questions, strings.Join(parts, ", "), strings.Join(p.Running, ","))
		if p.OutputsError != "" {
			line += fmt.Sprintf("\noutputs not written: %s\nfix it on the worker's side, then: temporal workflow signal --workflow-id %s --name %s",
				p.OutputsError, id, workflows.SignalRetryOutputs)
		}
		if line != last {
			fmt.Fprintln(os.Stderr, line)
			last = line
		}
	}
}
