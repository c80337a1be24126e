package main

import (
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
)

// parts splits a session's time by where it went, from its history (server
// clock): waiting for a worker to pick up a workflow task or an activity
// (the server and the worker's pollers and slots), running workflow tasks
// (the worker's workflow code and its round trip), and running the
// activities that are not model calls (the store, embeddings). Sums over
// the session; overlapping activities each count.
type parts struct {
	wftWait, wftRun time.Duration
	actWait, actRun time.Duration // activities other than model calls
	llmWait         time.Duration // model calls waiting for a worker slot
	child           time.Duration // research child workflows, initiated to completed
	start           time.Duration // the session's start to its first model call (health check, bootstrap)
	stickyTimeouts  int           // workflow tasks whose sticky worker did not poll in time
}

// modelActivities call the chat model; their run time is model time.
var modelActivities = map[string]bool{
	"Reason": true, "Compose": true, "Summarize": true, "VerifyCitations": true,
}

// list is the parts in table order.
func (p parts) list() [7]time.Duration {
	return [7]time.Duration{p.wftWait, p.wftRun, p.actWait, p.actRun, p.llmWait, p.child, p.start}
}

func breakdown(evs []*historypb.HistoryEvent) parts {
	var p parts
	at := map[int64]time.Time{} // event id → time
	model := map[int64]bool{}   // scheduled event id → a model call
	for _, e := range evs {
		t := e.GetEventTime().AsTime()
		at[e.GetEventId()] = t
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED:
			p.wftWait += t.Sub(at[e.GetWorkflowTaskStartedEventAttributes().GetScheduledEventId()])
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT:
			a := e.GetWorkflowTaskTimedOutEventAttributes()
			if a.GetTimeoutType() == enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START {
				// Never started: a sticky queue's worker did not poll in
				// time, and the task goes back to the normal queue.
				p.wftWait += t.Sub(at[a.GetScheduledEventId()])
				p.stickyTimeouts++
			} else {
				p.wftRun += t.Sub(at[a.GetStartedEventId()])
			}
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED, enumspb.EVENT_TYPE_WORKFLOW_TASK_FAILED:
			p.wftRun += t.Sub(at[wftStarted(e)])
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			model[e.GetEventId()] = modelActivities[e.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName()]
			if model[e.GetEventId()] && p.start == 0 {
				p.start = t.Sub(at[1])
			}
		case enumspb.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED:
			p.child += t.Sub(at[e.GetChildWorkflowExecutionCompletedEventAttributes().GetInitiatedEventId()])
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED:
			sched := e.GetActivityTaskStartedEventAttributes().GetScheduledEventId()
			if model[sched] {
				p.llmWait += t.Sub(at[sched])
			} else {
				p.actWait += t.Sub(at[sched])
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
			a := e.GetActivityTaskCompletedEventAttributes()
			if !model[a.GetScheduledEventId()] {
				p.actRun += t.Sub(at[a.GetStartedEventId()])
			}
		}
	}
	return p
}

func wftStarted(e *historypb.HistoryEvent) int64 {
	if e.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED {
		return e.GetWorkflowTaskCompletedEventAttributes().GetStartedEventId()
	}
	return e.GetWorkflowTaskFailedEventAttributes().GetStartedEventId()
}
