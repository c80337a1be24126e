package e2e

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/lethe-research/lethe/contract"
	"github.com/lethe-research/lethe/internal/lethetest"
	"github.com/lethe-research/lethe/llm/llmtest"
	"github.com/lethe-research/lethe/workflows"
)

// TestFailedSessionListedAsFailed: a session whose chat server does not
// answer (a closed loopback port) fails its health check; the query the
// docs give for failed sessions finds it, and the one for running
// sessions does not.
func TestFailedSessionListedAsFailed(t *testing.T) {
	dir := t.TempDir()
	queue := fmt.Sprintf("lethe-failed-%d", time.Now().UnixNano())
	id := "failed-health-check" // fixed: the recorded history is named after it
	params := lethetest.Params("http://127.0.0.1:9", dir)
	params["temporal.task_queue"] = queue
	startWorker(t, params)
	c := dial(t)
	cfg := lethetest.Config(t, "http://127.0.0.1:9", dir, map[string]string{"temporal.task_queue": queue})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: queue}, workflows.SessionWorkflow,
		workflows.SessionInput{Goal: goal, Config: &cfg})
	if err != nil {
		t.Fatal(err)
	}
	if err := run.Get(ctx, nil); err == nil || !strings.Contains(err.Error(), "health check") {
		t.Fatalf("session ended with %v, want the health check's error", err)
	}
	if got := attrs(t, c, id)[contract.AttrNameStatus]; got != workflows.StatusFailed {
		t.Fatalf("LetheStatus %v, want %q", got, workflows.StatusFailed)
	}
	// Visibility is eventually consistent: the list catches up in moments.
	listed := func(status string) int {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: fmt.Sprintf("%s=%q AND WorkflowId=%q", contract.AttrNameStatus, status, id),
		})
		if err != nil {
			t.Fatal(err)
		}
		return len(resp.GetExecutions())
	}
	for deadline := time.Now().Add(20 * time.Second); listed(workflows.StatusFailed) == 0; time.Sleep(250 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("LetheStatus=%q does not list %s", workflows.StatusFailed, id)
		}
	}
	if n := listed(workflows.StatusRunning); n != 0 {
		t.Fatalf("LetheStatus=%q lists the failed session", workflows.StatusRunning)
	}
	// A query on the closed session replays its history on the worker.
	v, err := c.QueryWorkflow(ctx, id, run.GetRunID(), workflows.QueryProgress)
	var p workflows.Progress
	if err == nil {
		err = v.Get(&p)
	}
	if err != nil || p.Phase != "failed" {
		t.Fatalf("progress of the failed session: %+v, %v; want phase failed", p, err)
	}
	recordHistory(t, c, id, run.GetRunID())
}

// recordHistory writes the history of a session as the recorded history
// of the shape LETHETEST_UPDATE_HISTORY names, which the replay test
// replays from then on (docs/versioning.md).
func recordHistory(t *testing.T, c client.Client, id, runID string) {
	t.Helper()
	shape := os.Getenv("LETHETEST_UPDATE_HISTORY")
	if shape == "" {
		return
	}
	b, err := protojson.MarshalOptions{Indent: " "}.Marshal(history(t, c, id, runID))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(lethetest.Root(), "testdata", "history", shape+"--"+id+".json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestFinishedSessionSearchAttributesEqualResult: the search attributes a
// finished scripted session leaves are its result's numbers (the battery
// session completes its root in the last iteration, so its last read saw
// one task done of three).
func TestFinishedSessionSearchAttributesEqualResult(t *testing.T) {
	id := fmt.Sprintf("finished-attrs-%d", time.Now().UnixNano())
	o := runScripted(t, id, lethetest.Script(t, "battery_root_done"), nil)
	a := attrs(t, dial(t), id)
	const f = "%v %v %v %v %v %v"
	got := fmt.Sprintf(f, a[contract.AttrNameStatus], a[contract.AttrNameIteration], a[contract.AttrNameTasksDone], a[contract.AttrNameEvidence], a[contract.AttrNameTokens], a[contract.AttrNamePsi])
	want := fmt.Sprintf(f, workflows.StatusDone, o.res.Iterations, o.res.TasksDone, o.res.Evidence, o.res.Tokens, o.res.Psi)
	if got != want {
		t.Fatalf("search attributes (status, iteration, tasks done, evidence, tokens, psi) %s; result %s", got, want)
	}
}

// attrs are the workflow's search attributes as the server holds them
// (describe reads the workflow's own record, not the eventually
// consistent list).
func attrs(t *testing.T, c client.Client, id string) map[string]any {
	t.Helper()
	d, err := c.DescribeWorkflowExecution(context.Background(), id, "")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	for k, p := range d.GetWorkflowExecutionInfo().GetSearchAttributes().GetIndexedFields() {
		var v any
		if err := converter.GetDefaultDataConverter().FromPayload(p, &v); err != nil {
			t.Fatalf("decode %s: %v", k, err)
		}
		if f, ok := v.(float64); ok && k != contract.AttrNamePsi && k != contract.AttrNamePressure {
			v = int(f) // Int attributes and the Double LetheTokens compare as counts
		}
		out[k] = v
	}
	return out
}

// starter is the starter command under test, its stderr read line by
// line while it runs.
type starter struct {
	cmd    *exec.Cmd
	mu     sync.Mutex
	stderr []string
	exited chan error
}

// buildStarter builds ./starter.
func buildStarter(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "starter")
	build := exec.Command("go", "build", "-o", bin, "./starter")
	build.Dir = lethetest.Root()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build starter: %v\n%s", err, out)
	}
	return bin
}

// startStarter runs the starter bin with params as LETHE_* variables (the
// dev server's address added) and args.
func startStarter(t *testing.T, bin string, params map[string]string, args ...string) *starter {
	t.Helper()
	p := map[string]string{"temporal.host_port": hostPort}
	for k, v := range params {
		p[k] = v
	}
	s := &starter{cmd: exec.Command(bin, args...), exited: make(chan error, 1)}
	s.cmd.Env = lethetest.Env(p)
	pipe, err := s.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			s.mu.Lock()
			s.stderr = append(s.stderr, sc.Text())
			s.mu.Unlock()
		}
		s.exited <- s.cmd.Wait()
	}()
	t.Cleanup(func() { _ = s.cmd.Process.Kill() })
	return s
}

func (s *starter) output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.stderr, "\n")
}

// waitLine waits up to d for a stderr line containing sub.
func (s *starter) waitLine(t *testing.T, sub string, d time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(d); !strings.Contains(s.output(), sub); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q on the starter's stderr in %s:\n%s", sub, d, s.output())
		}
	}
}

// TestStarterRefusesWithoutWorker: with no worker polling the session's
// queue the starter exits within seconds, names the queue and the
// command that starts a worker, and starts nothing; with the workflow
// queue served but the LLM queue split off and unserved, it names that
// one.
func TestStarterRefusesWithoutWorker(t *testing.T) {
	queue := fmt.Sprintf("nobody-%d", time.Now().UnixNano())
	bin := buildStarter(t)
	t.Run("no worker", func(t *testing.T) {
		id := queue + "-session"
		out := refused(t, bin, map[string]string{"temporal.task_queue": queue}, id)
		if !strings.Contains(out, fmt.Sprintf("task queue %q (temporal.task_queue, workflow tasks)", queue)) || !strings.Contains(out, "go run ./worker") {
			t.Fatalf("the error does not name the queue and the worker command:\n%s", out)
		}
		_, err := dial(t).DescribeWorkflowExecution(context.Background(), id, "")
		var nf *serviceerror.NotFound
		if !errors.As(err, &nf) {
			t.Fatalf("describe %s: %v, want not found: nothing should have been started", id, err)
		}
	})
	t.Run("LLM queue unserved", func(t *testing.T) {
		llmq := queue + "-llm"
		params := lethetest.Params("http://127.0.0.1:9", t.TempDir())
		params["temporal.task_queue"], params["temporal.llm_queue"] = queue, llmq
		startWorker(t, params, "--queues", queue)
		out := refused(t, bin, map[string]string{"temporal.task_queue": queue, "temporal.llm_queue": llmq}, queue+"-llm-session")
		if !strings.Contains(out, fmt.Sprintf("task queue %q (temporal.llm_queue, activity tasks)", llmq)) ||
			!strings.Contains(out, "go run ./worker --queues "+llmq) || strings.Contains(out, "temporal.task_queue") {
			t.Fatalf("the error should name the LLM queue only, with its worker command:\n%s", out)
		}
	})
}

// refused runs the starter for session id and wants it to exit non-zero
// within 20 s (a 2 s check); it returns the starter's stderr.
func refused(t *testing.T, bin string, params map[string]string, id string) string {
	t.Helper()
	s := startStarter(t, bin, params, "-goal", goal, "-id", id, "-worker-wait", "2s")
	select {
	case err := <-s.exited:
		if err == nil {
			t.Fatalf("the starter exited 0:\n%s", s.output())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("the starter still runs after 20 s with no worker:\n%s", s.output())
	}
	return s.output()
}

// TestStarterShowsProgressQueryErrors: once the only worker is gone, the
// progress query fails on every tick; the starter says so (once), not
// nothing.
func TestStarterShowsProgressQueryErrors(t *testing.T) {
	srv := llmtest.NewServer(slowScript(t))
	t.Cleanup(srv.Close)
	queue := fmt.Sprintf("lethe-follow-%d", time.Now().UnixNano())
	params := lethetest.Params(srv.URL(), t.TempDir())
	params["temporal.task_queue"] = queue
	bin := buildStarter(t)
	w, begun := startWorker(t, params), time.Now()
	s := startStarter(t, bin, params, "-goal", goal, "-id", queue, "-worker-wait", "20s")
	t.Cleanup(func() { _ = dial(t).TerminateWorkflow(context.Background(), queue, "", "test over") })
	s.waitLine(t, "session "+queue+" started", 30*time.Second)
	t.Logf("the starter found the worker polling and started the session %s after the worker process started", time.Since(begun).Round(10*time.Millisecond))
	s.waitLine(t, "iteration", time.Minute)
	w.stop(syscall.SIGKILL)
	s.waitLine(t, "progress query", 90*time.Second)
	if n := strings.Count(s.output(), "progress query"); n > 3 {
		t.Errorf("%d progress query errors printed; each distinct one should be printed once:\n%s", n, s.output())
	}
	t.Logf("starter stderr:\n%s", s.output())
}
