package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	sdkpb "go.temporal.io/api/sdk/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/config/load"
	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/graph/embedded"
	"github.com/lethe-research/lethe/internal/lethetest"
	"github.com/lethe-research/lethe/llm/llmtest"
	"github.com/lethe-research/lethe/workflows"
)

// live is a session running on the dev server with its own worker process.
type live struct {
	id     string
	c      client.Client
	run    client.WorkflowRun
	w      *workerProc
	llm    *llmtest.Server
	cfg    config.Config
	params map[string]string
}

// startLive starts a session with the slow battery script (each model answer
// takes a moment, so control requests land mid-loop).
func startLive(t *testing.T, id, script string, extra map[string]string) *live {
	t.Helper()
	s := lethetest.Script(t, script)
	for i := range s.Rules {
		s.Rules[i].DelayMS = 300
	}
	return startScripted(t, id, s, extra)
}

// startScripted is startLive with the script as given.
func startScripted(t *testing.T, id string, s llmtest.Script, extra map[string]string) *live {
	t.Helper()
	srv := llmtest.NewServer(s)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	params := lethetest.Params(srv.URL(), dir)
	params["temporal.task_queue"] = "lethe-" + id
	for k, v := range extra {
		params[k] = v
	}
	w := startWorker(t, params)
	c := dial(t)
	cfg, err := load.Load(load.Sources{Env: []string{}, Overrides: params})
	if err != nil {
		t.Fatal(err)
	}
	run, err := c.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{ID: id, TaskQueue: cfg.Temporal.TaskQueue},
		workflows.SessionWorkflow, workflows.SessionInput{Goal: goal, Config: &cfg})
	if err != nil {
		t.Fatal(err)
	}
	return &live{id: id, c: c, run: run, w: w, llm: srv, cfg: cfg, params: params}
}

func (l *live) result(t *testing.T) (workflows.SessionResult, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var res workflows.SessionResult
	err := l.run.Get(ctx, &res)
	return res, err
}

// graphAfter stops the worker (releasing the graph file) and reads the
// session's tasks.
func (l *live) graphAfter(t *testing.T) []graph.Task {
	t.Helper()
	l.w.stop(syscall.SIGTERM)
	store, err := embedded.Open(l.cfg.Graph.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	tasks, err := store.Tasks(context.Background(), l.id)
	if err != nil {
		t.Fatal(err)
	}
	return tasks
}

// listed polls visibility until the query finds the workflow (visibility is
// eventually consistent).
func listed(t *testing.T, c client.Client, query string) bool {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := c.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{Query: query})
		if err == nil && len(resp.Executions) > 0 {
			return true
		}
		time.Sleep(300 * time.Millisecond)
	}
	return false
}

func TestStopSignalAndSearchAttributes(t *testing.T) {
	l := startLive(t, "ctl-stop", "battery_no_ready", nil)
	waitIteration(t, l.c, l.id, 1)
	if !listed(t, l.c, fmt.Sprintf(`WorkflowId = %q AND LetheStatus = "running" AND LetheIteration >= 1`, l.id)) {
		t.Fatal(`temporal workflow list --query 'LetheStatus="running"' does not find the running session`)
	}
	if err := l.c.SignalWorkflow(context.Background(), l.id, "", workflows.SignalStop, nil); err != nil {
		t.Fatal(err)
	}
	res, err := l.result(t)
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != workflows.StopRequested || !strings.Contains(res.Report, "stop_requested") {
		t.Fatalf("stop reason %q; report:\n%s", res.StopReason, res.Report)
	}
	// The report query answers a finished session with the whole report
	// (here under the result's bound, so the same text).
	if v, err := l.c.QueryWorkflow(context.Background(), l.id, "", workflows.QueryReport); err != nil {
		t.Errorf("report query: %v", err)
	} else if whole := ""; v.Get(&whole) != nil || whole != res.Report {
		t.Errorf("report query gave %d bytes, the result %d", len(whole), len(res.Report))
	}
	if res.Iterations >= 4 { // the uninterrupted session needs 4 or more
		t.Errorf("stop did not cut the session short: %d iterations", res.Iterations)
	}
	if !listed(t, l.c, fmt.Sprintf(`WorkflowId = %q AND LetheStatus = "done"`, l.id)) {
		t.Error("finished session is not listed as done")
	}
	var tree workflows.TreeNode
	v, err := l.c.QueryWorkflow(context.Background(), l.id, "", workflows.QueryTree)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Get(&tree); err != nil || tree.ID != graph.RootShortID {
		t.Fatalf("tree query: %v %+v", err, tree)
	}
	// The UI reads current details through the built-in metadata query.
	mv, err := l.c.QueryWorkflow(context.Background(), l.id, "", "__temporal_workflow_metadata")
	if err != nil {
		t.Fatal(err)
	}
	var meta sdkpb.WorkflowMetadata
	if err := mv.Get(&meta); err != nil {
		t.Fatal(err)
	}
	if d := meta.GetCurrentDetails(); !strings.Contains(d, "stop reason") {
		t.Errorf("current details do not show the stop reason:\n%s", d)
	}
}

func TestExtendLetsSessionGoOn(t *testing.T) {
	// Without the extension this session stops at max_iterations = 2.
	l := startLive(t, "ctl-extend", "battery_no_ready", map[string]string{"budget.max_iterations": "2", "budget.min_iterations": "1"})
	waitIteration(t, l.c, l.id, 1)
	ctx := context.Background()
	bad, err := l.c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: l.id, UpdateName: workflows.UpdateExtend, Args: []any{workflows.ExtendRequest{Iterations: -3}},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err == nil {
		err = bad.Get(ctx, nil)
	}
	if err == nil || !strings.Contains(err.Error(), "control.max_extend_iterations") {
		t.Fatalf("negative extension: err = %v, want a rejection naming the limit", err)
	}
	h, err := l.c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: l.id, UpdateName: workflows.UpdateExtend, Args: []any{workflows.ExtendRequest{Iterations: 10}},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		t.Fatal(err)
	}
	var ext workflows.ExtendResult
	if err := h.Get(ctx, &ext); err != nil || ext.MaxIterations != 12 {
		t.Fatalf("extend: %v %+v", err, ext)
	}
	guide, err := l.c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: l.id, UpdateName: workflows.UpdateGuide, Args: []any{workflows.GuideRequest{Note: "focus on garnet electrolytes"}},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err != nil || guide.Get(ctx, nil) != nil {
		t.Fatalf("guide: %v", err)
	}
	res, err := l.result(t)
	if err != nil {
		t.Fatal(err)
	}
	if res.Iterations <= 2 || res.StopReason == workflows.StopMaxIterations {
		t.Fatalf("extended session stopped by %q after %d iterations", res.StopReason, res.Iterations)
	}
	seen := false
	for _, r := range l.llm.Requests() {
		seen = seen || strings.Contains(r.User, "focus on garnet electrolytes")
	}
	if !seen {
		t.Error("the guide note never reached a DIN-Read")
	}
}

func TestCancelLeavesNoActiveTask(t *testing.T) {
	l := startLive(t, "ctl-cancel", "battery_no_ready", nil)
	waitIteration(t, l.c, l.id, 2)
	l.cancelled(t)
}

// cancelled cancels the session and checks that it ends cancelled with no
// task left ACTIVE.
func (l *live) cancelled(t *testing.T) {
	t.Helper()
	if err := l.c.CancelWorkflow(context.Background(), l.id, ""); err != nil {
		t.Fatal(err)
	}
	_, err := l.result(t)
	var canceled *temporal.CanceledError
	if !errors.As(err, &canceled) {
		t.Fatalf("result error %v, want cancellation", err)
	}
	for _, task := range l.graphAfter(t) {
		if task.Status == graph.Active {
			t.Errorf("task %s left ACTIVE after cancel", task.ShortID)
		}
	}
}

// TestCancelDuringAssembly: a cancel that lands while the report is being
// composed ends the session cancelled, with no task left ACTIVE, though
// assembly goes on past failed model calls (an extractive part, no
// summary) when the failure is not a cancellation.
func TestCancelDuringAssembly(t *testing.T) {
	s := lethetest.Script(t, "battery_no_ready")
	for i := range s.Rules {
		s.Rules[i].DelayMS = 100
		if s.Rules[i].Name == "compose" {
			s.Rules[i].DelayMS = 20000 // the cancel lands while the first part is composed
		}
	}
	l := startScripted(t, "ctl-cancel-assembly", s, nil)
	waitProgress(t, l.c, l.id, "phase assembling", func(p workflows.Progress) bool { return p.Phase == "assembling" })
	l.cancelled(t)
}

func TestMetricsEndpoint(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	l := startLive(t, "ctl-metrics", "battery_root_done", map[string]string{"telemetry.metrics_addr": addr})
	if _, err := l.result(t); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond) // the scope reports every second
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, m := range []string{"lethe_iterations_total", "lethe_llm_latency", "lethe_psi", "lethe_research_pages_total", "temporal_workflow_completed"} {
		if !strings.Contains(string(body), m) {
			t.Errorf("/metrics has no %s", m)
		}
	}
}
