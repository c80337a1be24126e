package main

import (
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"google.golang.org/protobuf/types/known/timestamppb"
)

func TestBreakdown(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 18, 0, 0, 0, time.UTC)
	ev := func(id int64, ms int, typ enumspb.EventType, set func(*historypb.HistoryEvent)) *historypb.HistoryEvent {
		e := &historypb.HistoryEvent{EventId: id, EventType: typ, EventTime: timestamppb.New(t0.Add(time.Duration(ms) * time.Millisecond))}
		if set != nil {
			set(e)
		}
		return e
	}
	sched := func(name string) func(*historypb.HistoryEvent) {
		return func(e *historypb.HistoryEvent) {
			e.Attributes = &historypb.HistoryEvent_ActivityTaskScheduledEventAttributes{ActivityTaskScheduledEventAttributes: &historypb.ActivityTaskScheduledEventAttributes{ActivityType: &commonpb.ActivityType{Name: name}}}
		}
	}
	started := func(s int64) func(*historypb.HistoryEvent) {
		return func(e *historypb.HistoryEvent) {
			e.Attributes = &historypb.HistoryEvent_ActivityTaskStartedEventAttributes{ActivityTaskStartedEventAttributes: &historypb.ActivityTaskStartedEventAttributes{ScheduledEventId: s}}
		}
	}
	completed := func(s, st int64) func(*historypb.HistoryEvent) {
		return func(e *historypb.HistoryEvent) {
			e.Attributes = &historypb.HistoryEvent_ActivityTaskCompletedEventAttributes{ActivityTaskCompletedEventAttributes: &historypb.ActivityTaskCompletedEventAttributes{ScheduledEventId: s, StartedEventId: st}}
		}
	}
	evs := []*historypb.HistoryEvent{
		ev(1, 0, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED, nil),
		ev(2, 0, enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED, nil),
		ev(3, 30, enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED, func(e *historypb.HistoryEvent) {
			e.Attributes = &historypb.HistoryEvent_WorkflowTaskStartedEventAttributes{WorkflowTaskStartedEventAttributes: &historypb.WorkflowTaskStartedEventAttributes{ScheduledEventId: 2}}
		}),
		ev(4, 40, enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED, func(e *historypb.HistoryEvent) {
			e.Attributes = &historypb.HistoryEvent_WorkflowTaskCompletedEventAttributes{WorkflowTaskCompletedEventAttributes: &historypb.WorkflowTaskCompletedEventAttributes{StartedEventId: 3}}
		}),
		ev(5, 40, enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED, sched("ReadState")),
		ev(6, 40, enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED, sched("Reason")),
		ev(7, 45, enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED, started(5)),
		ev(8, 140, enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED, started(6)),
		ev(9, 65, enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED, completed(5, 7)),
		ev(10, 1140, enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED, completed(6, 8)),
		ev(11, 1140, enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED, nil),
		// A sticky schedule-to-start timeout has no started event.
		ev(12, 6140, enumspb.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT, func(e *historypb.HistoryEvent) {
			e.Attributes = &historypb.HistoryEvent_WorkflowTaskTimedOutEventAttributes{WorkflowTaskTimedOutEventAttributes: &historypb.WorkflowTaskTimedOutEventAttributes{
				ScheduledEventId: 11, TimeoutType: enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START}}
		}),
		ev(13, 6200, enumspb.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED, nil),
		ev(14, 7200, enumspb.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED, func(e *historypb.HistoryEvent) {
			e.Attributes = &historypb.HistoryEvent_ChildWorkflowExecutionCompletedEventAttributes{ChildWorkflowExecutionCompletedEventAttributes: &historypb.ChildWorkflowExecutionCompletedEventAttributes{InitiatedEventId: 13}}
		}),
	}
	got := breakdown(evs)
	want := parts{wftWait: 5030 * time.Millisecond, stickyTimeouts: 1, wftRun: 10 * time.Millisecond, actWait: 5 * time.Millisecond,
		actRun: 20 * time.Millisecond, llmWait: 100 * time.Millisecond, child: time.Second, start: 40 * time.Millisecond}
	if got != want {
		t.Errorf("breakdown = %+v, want %+v", got, want)
	}
}
