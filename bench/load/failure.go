package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	failurepb "go.temporal.io/api/failure/v1"
	historypb "go.temporal.io/api/history/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/sdk/client"
)

// failure is why one session did not complete: what the bench saw (kind,
// its own error) and what the server says of the execution (status, the
// close event's failure or the pending activities' last failure).
type failure struct {
	id, runID string
	kind      string
	status    string // the server's execution status; "" when it has none
	message   string
}

// Kinds of failure, from the bench's side.
const (
	kindStart    = "start error"     // the start call failed: no run, or none the bench knows
	kindFailed   = "failed"          // the workflow failed
	kindTimedOut = "timed out"       // the workflow's own timeout
	kindTerm     = "terminated"      // someone or something terminated it
	kindCanceled = "canceled"        // canceled
	kindUnended  = "not finished"    // still running when the bench's -timeout ended
	kindMismatch = "result mismatch" // completed, with a result unlike the round's others
	kindHistory  = "history error"   // completed, but its history could not be read
	kindWait     = "wait error"      // the bench lost the result for another reason
)

// classify names a failure from the server's view of the execution: its
// status, its close event (nil while it runs) and, while it runs, its
// pending activities. A completed execution yields no kind: the failure
// was the bench's (a history or result error) and keeps its own.
func classify(st enumspb.WorkflowExecutionStatus, closeEv *historypb.HistoryEvent, pending []*workflowpb.PendingActivityInfo) (kind, msg string) {
	switch st {
	case enumspb.WORKFLOW_EXECUTION_STATUS_FAILED:
		a := closeEv.GetWorkflowExecutionFailedEventAttributes()
		return kindFailed, failureChain(a.GetFailure())
	case enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT:
		a := closeEv.GetWorkflowExecutionTimedOutEventAttributes()
		return kindTimedOut, "workflow timeout, retry state " + a.GetRetryState().String()
	case enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED:
		a := closeEv.GetWorkflowExecutionTerminatedEventAttributes()
		return kindTerm, fmt.Sprintf("reason %q by %q", a.GetReason(), a.GetIdentity())
	case enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED:
		return kindCanceled, "canceled"
	case enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW:
		return kindWait, "continued as new: the bench waits for the first run only"
	case enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
		return kindUnended, pendingSummary(pending)
	}
	return "", ""
}

// failureChain is a failure's message and its causes', outermost first:
// an activity failure's own message says only which activity failed.
func failureChain(f *failurepb.Failure) string {
	var parts []string
	for ; f != nil; f = f.GetCause() {
		if m := strings.TrimSpace(f.GetMessage()); m != "" {
			parts = append(parts, m)
		}
	}
	if len(parts) == 0 {
		return "no failure message"
	}
	return strings.Join(parts, ": ")
}

// pendingSummary says what a running session waits on: each pending
// activity, its attempt and last failure.
func pendingSummary(pending []*workflowpb.PendingActivityInfo) string {
	if len(pending) == 0 {
		return "running, no activity pending (waiting on a workflow task, a timer or a child)"
	}
	var parts []string
	for _, p := range pending {
		s := fmt.Sprintf("%s %s attempt %d", p.GetActivityType().GetName(), p.GetState(), p.GetAttempt())
		if f := p.GetLastFailure(); f != nil {
			s += ", last failure: " + failureChain(f)
		}
		parts = append(parts, s)
	}
	return "running; pending: " + strings.Join(parts, "; ")
}

// explainFailures asks the server about every failed session that has a
// workflow id, a few at a time, after the round so as not to load it.
func explainFailures(ctx context.Context, c client.Client, sessions []session) {
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for i := range sessions {
		if sessions[i].fail == nil || sessions[i].fail.id == "" {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			explain(ctx, c, sessions[i].fail)
		}()
	}
	wg.Wait()
}

// explain fills f's status and, where the server knows more than the
// bench's error, its kind and message. A start error is described too: a
// start that timed out may have created the session after all.
func explain(ctx context.Context, c client.Client, f *failure) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	d, err := c.DescribeWorkflowExecution(ctx, f.id, f.runID)
	if err != nil {
		f.message += fmt.Sprintf(" (describe: %v)", err)
		return
	}
	info := d.GetWorkflowExecutionInfo()
	f.status = info.GetStatus().String()
	if f.runID == "" {
		f.runID = info.GetExecution().GetRunId()
	}
	var closeEv *historypb.HistoryEvent
	if info.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		it := c.GetWorkflowHistory(ctx, f.id, f.runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT)
		if it.HasNext() {
			if closeEv, err = it.Next(); err != nil {
				f.message += fmt.Sprintf(" (close event: %v)", err)
			}
		}
	}
	kind, msg := classify(info.GetStatus(), closeEv, d.GetPendingActivities())
	if kind == "" || f.kind == kindStart {
		// A completed session failed on the bench's side; a start error
		// stays one (the server's status says what became of it).
		if msg != "" {
			f.message += "; server: " + msg
		}
		if info.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED && f.kind == kindWait {
			f.message += "; the server: completed after the bench stopped waiting"
		}
		return
	}
	f.kind, f.message = kind, msg
}

// expectedResult is what a round's sessions are expected to end with: the
// same script runs in each, so the most common stop reason and iteration
// count among them.
type expectedResult struct {
	stop       string
	iterations int
}

// markMismatches turns completed sessions whose result is not the
// round's common one, or carries an error or no report, into failures.
func markMismatches(sessions []session) {
	count := map[expectedResult]int{}
	for _, s := range sessions {
		if s.fail == nil {
			count[expectedResult{s.stop, s.iterations}]++
		}
	}
	var want expectedResult
	keys := make([]expectedResult, 0, len(count))
	for k := range count {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i].stop < keys[j].stop || keys[i].stop == keys[j].stop && keys[i].iterations < keys[j].iterations
	})
	for _, k := range keys {
		if count[k] > count[want] {
			want = k
		}
	}
	for i := range sessions {
		s := &sessions[i]
		if s.fail != nil {
			continue
		}
		var why []string
		if got := (expectedResult{s.stop, s.iterations}); got != want {
			why = append(why, fmt.Sprintf("stop reason %q after %d iterations, the round's others %q after %d", got.stop, got.iterations, want.stop, want.iterations))
		}
		if s.resultErr != "" {
			why = append(why, "result error: "+s.resultErr)
		}
		if s.reportLen == 0 {
			why = append(why, "empty report")
		}
		if len(why) > 0 {
			s.fail = &failure{id: s.id, runID: s.runID, kind: kindMismatch, status: enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED.String(), message: strings.Join(why, "; ")}
		}
	}
}

func (f failure) String() string {
	return fmt.Sprintf("%s (run %s): %s, status %s: %s", f.id, f.runID, f.kind, f.status, f.message)
}
