package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"time"

	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/proto"

	"github.com/lethe-research/lethe/internal/lethetest"
	"github.com/lethe-research/lethe/llm/llmtest"
	"github.com/lethe-research/lethe/workflows"
)

// session is what one session of a round cost.
type session struct {
	err        error
	wall       time.Duration // history: started to closed, server clock
	model      time.Duration // the session's own sum of chat latencies
	iterations int
	events     int
	bytes      int
}

// overhead is the time per iteration outside model calls.
func (s session) overhead() time.Duration {
	if s.iterations == 0 {
		return 0
	}
	return (s.wall - s.model) / time.Duration(s.iterations)
}

// round runs n concurrent sessions on a fresh dev server and fresh workers.
func round(ctx context.Context, o options, n int) (row, error) {
	dir, err := os.MkdirTemp("", "lethe-load-")
	if err != nil {
		return row{}, err
	}
	defer os.RemoveAll(dir)
	script, err := llmtest.LoadScript(filepath.Join(lethetest.Root(), o.script))
	if err != nil {
		return row{}, fmt.Errorf("script: %w", err)
	}
	for i := range script.Rules {
		script.Rules[i].DelayMS = int(o.latency.Milliseconds())
	}
	model := llmtest.NewServer(script)
	defer model.Close()
	srv, hostPort, err := startServer(ctx, o.temporal, dir)
	if err != nil {
		return row{}, err
	}
	defer stop(srv)
	workers, err := startWorkers(o, dir, hostPort, model.URL())
	if err != nil {
		return row{}, err
	}
	defer func() {
		for _, w := range workers {
			stop(w)
		}
	}()
	c, err := dialRetry(ctx, hostPort)
	if err != nil {
		return row{}, err
	}
	defer c.Close()
	before := sample(append([]*exec.Cmd{srv}, workers...))
	t0 := time.Now()
	sessions := runSessions(ctx, c, o, n)
	makespan := time.Since(t0)
	after := sample(append([]*exec.Cmd{srv}, workers...))
	return summarize(n, o.latency, makespan, sessions, before, after), nil
}

// runSessions starts n sessions at once and waits for all of them.
func runSessions(ctx context.Context, c client.Client, o options, n int) []session {
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	out := make([]session, n)
	var wg sync.WaitGroup
	for i := range out {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = oneSession(ctx, c, fmt.Sprintf("load-%d-%d", n, i))
		}()
	}
	wg.Wait()
	return out
}

func oneSession(ctx context.Context, c client.Client, id string) session {
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: "lethe"}, workflows.SessionWorkflow,
		workflows.SessionInput{Goal: "How do solid-state batteries fail?"})
	if err != nil {
		return session{err: fmt.Errorf("start %s: %w", id, err)}
	}
	var res workflows.SessionResult
	if err := run.Get(ctx, &res); err != nil {
		return session{err: fmt.Errorf("session %s: %w", id, err)}
	}
	s := session{model: time.Duration(res.Stats.LLMLatencyMS) * time.Millisecond, iterations: res.Iterations}
	it := c.GetWorkflowHistory(ctx, id, run.GetRunID(), false, 0)
	var first, last time.Time
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return session{err: fmt.Errorf("history %s: %w", id, err)}
		}
		if first.IsZero() {
			first = e.GetEventTime().AsTime()
		}
		last = e.GetEventTime().AsTime()
		s.events++
		s.bytes += proto.Size(e)
	}
	s.wall = last.Sub(first)
	return s
}

// startServer starts a dev server with the session search attributes on a
// free loopback port, its database in memory (as make test runs it).
func startServer(ctx context.Context, bin, dir string) (*exec.Cmd, string, error) {
	port, err := freePort()
	if err != nil {
		return nil, "", err
	}
	args := []string{"server", "start-dev", "--ip", "127.0.0.1", "--port", strconv.Itoa(port), "--headless",
		"--log-level", "error"}
	for _, a := range workflows.SearchAttributes() {
		args = append(args, "--search-attribute", a)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, "", fmt.Errorf("start dev server: %w", err)
	}
	return cmd, fmt.Sprintf("127.0.0.1:%d", port), nil
}

// startWorkers builds the worker once per round and starts o.workers of
// them. The embedded graph store is one file per process, so several
// workers would each see part of a session: more than one needs Neo4j.
func startWorkers(o options, dir, hostPort, modelURL string) ([]*exec.Cmd, error) {
	if o.workers > 1 && os.Getenv("LETHE_GRAPH_BACKEND") != "neo4j" {
		return nil, errors.New("-workers > 1 needs a shared graph store: set LETHE_GRAPH_BACKEND=neo4j and its LETHE_GRAPH_* settings")
	}
	bin := filepath.Join(dir, "worker")
	build := exec.Command("go", "build", "-o", bin, "./worker")
	build.Dir, build.Stdout, build.Stderr = lethetest.Root(), os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return nil, fmt.Errorf("build worker: %w", err)
	}
	p := lethetest.Params(modelURL, dir)
	p["temporal.host_port"] = hostPort
	// Timeouts that a slow model under load does not trip: the bench
	// measures orchestration, not retries.
	p["llm.timeout"] = (3*o.latency + time.Minute).String()
	p["temporal.activity_timeout"] = (3*o.latency + time.Minute).String()
	p["temporal.heartbeat_timeout"] = "30s"
	var out []*exec.Cmd
	for i := 0; i < o.workers; i++ {
		logf, err := os.Create(filepath.Join(dir, fmt.Sprintf("worker-%d.log", i)))
		if err != nil {
			return out, err
		}
		cmd := exec.Command(bin, "-log-level", "warn")
		cmd.Env = append(lethetest.Env(p), os.Environ()...)
		cmd.Stdout, cmd.Stderr = logf, logf
		if err := cmd.Start(); err != nil {
			return out, fmt.Errorf("start worker: %w", err)
		}
		out = append(out, cmd)
	}
	return out, nil
}

func dialRetry(ctx context.Context, hostPort string) (client.Client, error) {
	deadline := time.Now().Add(time.Minute)
	for {
		c, err := client.Dial(client.Options{HostPort: hostPort})
		if err == nil {
			if _, err = c.CheckHealth(ctx, &client.CheckHealthRequest{}); err == nil {
				return c, nil
			}
			c.Close()
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("dev server at %s: %w", hostPort, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func stop(cmd *exec.Cmd) {
	if cmd == nil || cmd.Process == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

// percentile is the p-th percentile (0-100) of ds by nearest rank.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	k := int(p/100*float64(len(s))+0.5) - 1
	return s[min(max(k, 0), len(s)-1)]
}
