package e2e

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/lethe-research/lethe/graph/embedded"
	"github.com/lethe-research/lethe/workflows"
)

// afterObserve is the first WorkflowTaskCompleted event after iteration
// n's Observe: a completed activity in older shapes, a local-activity
// marker since bounded-view (the marker is written with the workflow task
// that ran it, so the reset point is the next task's completion), or 0.
func afterObserve(events []*historypb.HistoryEvent, n int) int64 {
	observed := 0
	for i, e := range events {
		if a := e.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == "Observe" {
			observed++
			continue
		}
		if observed == n && e.GetEventType() == enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED {
			return nextTaskCompleted(events[i:])
		}
		if m := e.GetMarkerRecordedEventAttributes(); m != nil && m.GetMarkerName() == "LocalActivity" &&
			strings.Contains(m.GetDetails()["data"].String(), `Observe`) {
			if observed++; observed == n {
				return nextTaskCompleted(events[i+1:])
			}
		}
	}
	return 0
}

func nextTaskCompleted(events []*historypb.HistoryEvent) int64 {
	for _, e := range events {
		if e.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED {
			return e.GetEventId()
		}
	}
	return 0
}

// TestResetToEarlierIteration resets a finished session to the workflow task
// after iteration 2's signals (what `temporal workflow reset --event-id`
// does) and checks that the new run finishes with the same graph: writes of
// iterations already applied are not repeated.
func TestResetToEarlierIteration(t *testing.T) {
	l := startLive(t, "ctl-reset", "battery_root_done", nil)
	first, err := l.result(t)
	if err != nil {
		t.Fatal(err)
	}
	h := history(t, l.c, l.id, l.run.GetRunID())
	resetAt := afterObserve(h.Events, 2)
	if resetAt == 0 {
		t.Fatal("no workflow task after iteration 2 to reset to")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	resp, err := l.c.ResetWorkflowExecution(ctx, &workflowservice.ResetWorkflowExecutionRequest{
		Namespace:                 "default",
		WorkflowExecution:         &commonpb.WorkflowExecution{WorkflowId: l.id, RunId: l.run.GetRunID()},
		Reason:                    "e2e: reset to iteration 2",
		WorkflowTaskFinishEventId: resetAt,
		RequestId:                 fmt.Sprintf("reset-%d", time.Now().UnixNano()),
	})
	if err != nil {
		t.Fatal(err)
	}
	var second workflows.SessionResult
	if err := l.c.GetWorkflow(ctx, l.id, resp.GetRunId()).Get(ctx, &second); err != nil {
		l.w.dumpLog(t)
		t.Fatal(err)
	}
	if second.StopReason != first.StopReason || second.Tasks != first.Tasks || second.Evidence != first.Evidence {
		t.Fatalf("after reset: %s, %d tasks, %d evidence; before: %s, %d tasks, %d evidence",
			second.StopReason, second.Tasks, second.Evidence, first.StopReason, first.Tasks, first.Evidence)
	}
	l.w.stop(syscall.SIGTERM)
	store, err := embedded.Open(l.cfg.Graph.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ev, err := store.Evidence(ctx, l.id, "")
	if err != nil {
		t.Fatal(err)
	}
	checkNoDuplicates(t, outcome{evidence: ev})
}
