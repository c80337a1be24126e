// Package sessiontest holds what the end-to-end tests (on the dev server,
// e2e, and on the production-shaped cluster, e2e/cluster) check of a
// finished session: its outcome, read back from Temporal and the graph
// store, compared with an undisturbed run of the same scripted model. It
// imports the workflows to replay histories, so it is a package of its own
// beside lethetest, which the workflow tests import.
package sessiontest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/proto"

	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/workflows"
)

// Outcome is what a session left behind: its result, its graph and its
// history.
type Outcome struct {
	Res      workflows.SessionResult
	Tasks    []graph.Task
	Evidence []graph.Evidence
	History  *historypb.History
}

// ReadGraph fills o's tasks and evidence from store.
func (o *Outcome) ReadGraph(ctx context.Context, store graph.Store, id string) error {
	var err error
	if o.Tasks, err = store.Tasks(ctx, id); err != nil {
		return fmt.Errorf("tasks of %s: %w", id, err)
	}
	if o.Evidence, err = store.Evidence(ctx, id, ""); err != nil {
		return fmt.Errorf("evidence of %s: %w", id, err)
	}
	return nil
}

// History reads a workflow's whole history (runID "" = the latest run).
func History(t testing.TB, c client.Client, id, runID string) *historypb.History {
	t.Helper()
	it := c.GetWorkflowHistory(context.Background(), id, runID, false, 0)
	h := &historypb.History{}
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatalf("history of %s: %v", id, err)
		}
		h.Events = append(h.Events, e)
	}
	return h
}

// CheckNoDuplicates fails t when the session stored an evidence text or a
// task twice, stored no evidence, or left a task ACTIVE or PENDING.
func CheckNoDuplicates(t testing.TB, o Outcome) {
	t.Helper()
	seen := map[string]bool{}
	for _, e := range o.Evidence {
		h := graph.ContentHash(e.Content)
		if seen[h] {
			t.Errorf("duplicate evidence %q", e.Content[:min(60, len(e.Content))])
		}
		seen[h] = true
	}
	if len(o.Evidence) == 0 {
		t.Error("no evidence")
	}
	ids := map[string]bool{}
	for _, tk := range o.Tasks {
		if ids[tk.ShortID] {
			t.Errorf("duplicate task %s", tk.ShortID)
		}
		ids[tk.ShortID] = true
		if tk.Status == graph.Active || tk.Status == graph.Pending {
			t.Errorf("task %s left %s", tk.ShortID, tk.Status)
		}
	}
}

// SameAsUndisturbed checks the promise of a disturbed session: the same
// stop reason, iterations, tasks, evidence and report as the undisturbed
// run, nothing duplicated, no failed model call, and every history payload
// within bounds.
func SameAsUndisturbed(t testing.TB, got, base Outcome) {
	t.Helper()
	CheckNoDuplicates(t, got)
	g, b := got.Res, base.Res
	if g.StopReason != b.StopReason || g.Iterations != b.Iterations || len(got.Tasks) != len(base.Tasks) ||
		len(got.Evidence) != len(base.Evidence) || g.Report != b.Report {
		t.Errorf("disturbed: %s, %d iterations, %d tasks, %d evidence; undisturbed: %s, %d, %d, %d\nreport:\n%s",
			g.StopReason, g.Iterations, len(got.Tasks), len(got.Evidence), b.StopReason, b.Iterations, len(base.Tasks), len(base.Evidence), g.Report)
	}
	if g.Stats.FailedCalls != 0 || g.Stats.LLMCalls != b.Stats.LLMCalls {
		t.Errorf("failed calls %d, calls %d (undisturbed %d): an outage must cost no call", g.Stats.FailedCalls, g.Stats.LLMCalls, b.Stats.LLMCalls)
	}
	CheckPayloadBound(t, got.History)
}

// CheckPayloadBound asserts that no history event, and so no activity
// result or workflow payload in it, exceeds 256 KiB.
func CheckPayloadBound(t testing.TB, h *historypb.History) {
	t.Helper()
	const bound = 256 << 10
	for _, e := range h.Events {
		if n := proto.Size(e); n > bound {
			t.Errorf("history event %d (%s) is %d bytes, over 256 KiB", e.EventId, e.EventType, n)
		}
	}
}

// Replay runs a real history through the workflow code again: any
// nondeterminism fails the test.
func Replay(t testing.TB, id string, h *historypb.History) {
	t.Helper()
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(workflows.ResearchSession, workflow.RegisterOptions{Name: workflows.SessionWorkflow})
	r.RegisterWorkflowWithOptions(workflows.WebResearch, workflow.RegisterOptions{Name: workflows.ResearchWorkflow})
	opts := worker.ReplayWorkflowHistoryOptions{OriginalExecution: workflow.Execution{ID: id}}
	if err := r.ReplayWorkflowHistoryWithOptions(nil, h, opts); err != nil {
		t.Fatalf("replay %s: %v", id, err)
	}
}

// Retried names the activities of a history that started more
// than once, each with its highest attempt and, for an activity task, the
// failure (or timeout) of the attempt before it, which its started event
// carries.
func Retried(h *historypb.History) map[string]string {
	name := map[int64]string{}
	out := map[string]string{}
	highest := map[string]int32{}
	note := func(activity string, attempt int32, how string) {
		if attempt > highest[activity] {
			highest[activity], out[activity] = attempt, how
		}
	}
	for _, e := range h.Events {
		if a := e.GetActivityTaskScheduledEventAttributes(); a != nil {
			name[e.GetEventId()] = a.GetActivityType().GetName()
		}
		if a := e.GetActivityTaskStartedEventAttributes(); a != nil && a.GetAttempt() > 1 {
			f := a.GetLastFailure()
			note(name[a.GetScheduledEventId()], a.GetAttempt(), fmt.Sprintf("attempt %d after %q (%s)", a.GetAttempt(), f.GetMessage(), f.GetTimeoutFailureInfo().GetTimeoutType()))
		}
		// A local activity (ReadState, Observe, and since local-steps the
		// other store steps of the loop) records its attempt in its marker.
		if m := e.GetMarkerRecordedEventAttributes(); m != nil && m.GetMarkerName() == "LocalActivity" {
			var d struct {
				ActivityType string
				Attempt      int32
			}
			if p := m.GetDetails()["data"].GetPayloads(); len(p) > 0 && json.Unmarshal(p[0].GetData(), &d) == nil && d.Attempt > 1 {
				note(d.ActivityType, d.Attempt, fmt.Sprintf("local, attempt %d", d.Attempt))
			}
		}
	}
	return out
}
