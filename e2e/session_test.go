package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	historypb "go.temporal.io/api/history/v1"

	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/graph/embedded"
	"github.com/lethe-research/lethe/internal/lethetest"
	"github.com/lethe-research/lethe/internal/lethetest/sessiontest"
	"github.com/lethe-research/lethe/llm/llmtest"
	"github.com/lethe-research/lethe/workflows"
)

const goal = "How do solid-state batteries fail?"

// outcome is what a session left behind: its result and its graph.
type outcome struct {
	res      workflows.SessionResult
	tasks    []graph.Task
	evidence []graph.Evidence
	history  *historypb.History
}

// slowScript makes each chat answer take a moment, so a kill lands mid-loop.
func slowScript(t *testing.T) llmtest.Script {
	s := lethetest.Script(t, "battery_root_done")
	for i := range s.Rules {
		s.Rules[i].DelayMS = 400
	}
	return s
}

// runSession runs one session on the dev server; kill, when set, is called
// with the client and the workflow id while the session runs.
func runSession(t *testing.T, id string, kill func(c client.Client, w *workerProc) *workerProc) outcome {
	t.Helper()
	return runScripted(t, id, slowScript(t), kill)
}

// runScripted runs one session on the dev server against the scripted
// model script, as runSession does.
func runScripted(t *testing.T, id string, script llmtest.Script, kill func(c client.Client, w *workerProc) *workerProc) outcome {
	t.Helper()
	srv := llmtest.NewServer(script)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	queue := "lethe-" + strings.ReplaceAll(id, "/", "-")
	params := lethetest.Params(srv.URL(), dir)
	params["temporal.task_queue"] = queue
	w := startWorker(t, params)
	c := dial(t)
	cfg := lethetest.Config(t, srv.URL(), dir, map[string]string{"temporal.task_queue": queue})
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: queue}, workflows.SessionWorkflow,
		workflows.SessionInput{Goal: goal, Config: &cfg})
	if err != nil {
		t.Fatal(err)
	}
	if kill != nil {
		w = kill(c, w)
	}
	return finishSession(t, ctx, c, run, w, embeddedAt(cfg.Graph.Path))
}

// finishSession waits for the session's result, stops the worker (which
// releases an embedded graph file), and reads the session's tasks and
// evidence from the store that open returns, and its history.
func finishSession(t *testing.T, ctx context.Context, c client.Client, run client.WorkflowRun, w *workerProc, open func() (graph.Store, error)) outcome {
	t.Helper()
	var out outcome
	if err := run.Get(ctx, &out.res); err != nil {
		w.dumpLog(t)
		t.Fatalf("session %s: %v", run.GetID(), err)
	}
	w.stop(syscall.SIGTERM)
	store, err := open()
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var g sessiontest.Outcome
	if err := g.ReadGraph(ctx, store, run.GetID()); err != nil {
		t.Fatal(err)
	}
	out.tasks, out.evidence = g.Tasks, g.Evidence
	out.history = history(t, c, run.GetID(), run.GetRunID())
	return out
}

// embeddedAt opens the embedded graph file at path, for finishSession.
func embeddedAt(path string) func() (graph.Store, error) {
	return func() (graph.Store, error) { return embedded.Open(path) }
}

func history(t *testing.T, c client.Client, id, runID string) *historypb.History {
	t.Helper()
	return sessiontest.History(t, c, id, runID)
}

// waitIteration polls the progress query until the session has completed
// at least n iterations.
func waitIteration(t *testing.T, c client.Client, id string, n int) {
	t.Helper()
	waitProgress(t, c, id, fmt.Sprintf("iteration %d", n), func(p workflows.Progress) bool { return p.Iteration >= n })
}

// waitProgress polls the session's progress query until ok holds.
func waitProgress(t *testing.T, c client.Client, id, what string, ok func(workflows.Progress) bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		v, err := c.QueryWorkflow(context.Background(), id, "", workflows.QueryProgress)
		if err == nil {
			var p workflows.Progress
			if v.Get(&p) == nil && ok(p) {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("session %s never reached %s", id, what)
}

func TestSessionSurvivesKilledWorker(t *testing.T) {
	base := runSession(t, "battery-uninterrupted", nil)
	if base.res.StopReason != workflows.StopRootDone {
		t.Fatalf("uninterrupted run stopped by %q", base.res.StopReason)
	}
	checkNoDuplicates(t, base)
	checkPayloads(t, base.history)
	if shape := os.Getenv("LETHETEST_UPDATE_HISTORY"); shape != "" {
		// One history per released workflow shape (docs/versioning.md):
		// LETHETEST_UPDATE_HISTORY names the shape, e.g. v1-focus.
		b, err := protojson.MarshalOptions{Indent: " "}.Marshal(base.history)
		if err != nil {
			t.Fatal(err)
		}
		name := shape + "--battery-uninterrupted.json"
		if err := os.WriteFile(filepath.Join(lethetest.Root(), "testdata", "history", name), b, 0o644); err != nil {
			t.Fatal(err)
		}
		recordFirstChild(t, shape, "battery-uninterrupted")
	}
	replay(t, "battery-uninterrupted", base.history)

	var params map[string]string
	killed := runSession(t, "battery-killed", func(c client.Client, w *workerProc) *workerProc {
		waitIteration(t, c, "battery-killed", 2) // iteration 3 is under way
		time.Sleep(300 * time.Millisecond)
		w.stop(syscall.SIGKILL)
		params = w.params
		return startWorker(t, params)
	})
	checkNoDuplicates(t, killed)
	if killed.res.Iterations != base.res.Iterations {
		t.Errorf("iterations: killed %d, uninterrupted %d", killed.res.Iterations, base.res.Iterations)
	}
	if len(killed.tasks) != len(base.tasks) || len(killed.evidence) != len(base.evidence) {
		t.Errorf("killed run has %d tasks, %d evidence; uninterrupted %d, %d",
			len(killed.tasks), len(killed.evidence), len(base.tasks), len(base.evidence))
	}
	if killed.res.Evidence != base.res.Evidence || killed.res.Report != base.res.Report {
		t.Errorf("results differ:\nkilled: %+v\nbase:   %+v", killed.res, base.res)
	}
	replay(t, "battery-killed", killed.history)
}

func checkNoDuplicates(t *testing.T, o outcome) {
	t.Helper()
	sessiontest.CheckNoDuplicates(t, o.shared())
}

// shared is o as the checks shared with the cluster tests take it.
func (o outcome) shared() sessiontest.Outcome {
	return sessiontest.Outcome{Res: o.res, Tasks: o.tasks, Evidence: o.evidence, History: o.history}
}

// replay runs a real history through the workflow code again: any
// nondeterminism fails the test.
func replay(t *testing.T, id string, h *historypb.History) {
	t.Helper()
	sessiontest.Replay(t, id, h)
}

// checkPayloads keeps every history event far below Temporal's 512 KiB
// payload warning: vectors and page texts must stay inside activities.
func checkPayloads(t *testing.T, h *historypb.History) {
	t.Helper()
	const limit = 64 << 10
	largest := 0
	for _, e := range h.Events {
		n := proto.Size(e)
		largest = max(largest, n)
		if n > limit {
			t.Errorf("history event %d (%s) is %d bytes, over %d", e.EventId, e.EventType, n, limit)
		}
	}
	t.Logf("largest history event: %d bytes of %d events", largest, len(h.Events))
}

// recordFirstChild writes the history of the session's first research run
// next to the session's, so that the WebResearch workflow's shape is
// replayed too; its file name has the child id with "/" turned into "_"
// (WebResearch never reads its own id).
func recordFirstChild(t *testing.T, shape, id string) {
	t.Helper()
	c := dial(t)
	for _, e := range history(t, c, id, "").Events {
		a := e.GetStartChildWorkflowExecutionInitiatedEventAttributes()
		if a == nil {
			continue
		}
		b, err := protojson.MarshalOptions{Indent: " "}.Marshal(history(t, c, a.GetWorkflowId(), ""))
		if err != nil {
			t.Fatal(err)
		}
		name := shape + "--" + strings.ReplaceAll(a.GetWorkflowId(), "/", "_") + ".json"
		if err := os.WriteFile(filepath.Join(lethetest.Root(), "testdata", "history", name), b, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("session %s started no research run", id)
}
