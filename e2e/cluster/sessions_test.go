package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/lethe-research/lethe/internal/lethetest/sessiontest"
	"github.com/lethe-research/lethe/service"
	"github.com/lethe-research/lethe/workflows"
)

const (
	goal = "How do solid-state batteries fail?"
	// sessions is how many sessions each fault runs under.
	sessions = 10
	// sessionLimit bounds a batch from its start to its last result: an
	// undisturbed batch takes about a minute, a fault adds its outage and
	// the time a restarted server takes to answer at its usual speed.
	sessionLimit = 10 * time.Minute
)

// batch is a set of sessions started together.
type batch struct {
	ids   []string
	start time.Time
}

// startBatch starts n sessions named after name.
func (r *rig) startBatch(t *testing.T, name string, n int) *batch {
	t.Helper()
	b := &batch{start: time.Now()}
	tag := b.start.UnixMilli() % 1e6 // a rerun on the same cluster (-count) gets new ids
	for i := range n {
		id := fmt.Sprintf("%s-%d-%02d", name, tag, i+1)
		if _, err := r.startSession(id); err != nil {
			t.Fatalf("start %s: %v", id, err)
		}
		b.ids = append(b.ids, id)
	}
	return b
}

func (r *rig) startSession(id string) (client.WorkflowRun, error) {
	cfg := r.cfg
	return r.c.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{ID: id, TaskQueue: cfg.Temporal.TaskQueue},
		workflows.SessionWorkflow, workflows.SessionInput{Goal: goal, Config: &cfg})
}

// waitMidSession returns once every session of b has finished iteration 1
// and none has finished: a fault injected then lands in the middle of
// each.
func (r *rig) waitMidSession(t *testing.T, b *batch) {
	t.Helper()
	pending := map[string]bool{}
	for _, id := range b.ids {
		pending[id] = true
	}
	for deadline := time.Now().Add(3 * time.Minute); len(pending) > 0; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions never reached iteration 1: %v", len(pending), pending)
		}
		for id := range pending {
			if p, err := r.progress(id); err == nil && p.Iteration >= 1 {
				delete(pending, id)
			}
		}
	}
	for _, id := range b.ids {
		d, err := r.c.DescribeWorkflowExecution(context.Background(), id, "")
		if err != nil {
			t.Fatalf("describe %s: %v", id, err)
		}
		if s := d.GetWorkflowExecutionInfo().GetStatus(); s != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
			t.Fatalf("session %s is %s before the fault: the sessions are too short for it to land in their middle", id, s)
		}
	}
}

func (r *rig) progress(id string) (workflows.Progress, error) {
	var p workflows.Progress
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v, err := r.c.QueryWorkflow(ctx, id, "", workflows.QueryProgress)
	if err != nil {
		return p, fmt.Errorf("query %s: %w", id, err)
	}
	return p, v.Get(&p)
}

// finishBatch waits for every session of b and reads its outcome from
// Temporal and the Neo4j store.
func (r *rig) finishBatch(t *testing.T, b *batch) []sessiontest.Outcome {
	t.Helper()
	ctx, cancel := context.WithDeadline(context.Background(), b.start.Add(sessionLimit))
	defer cancel()
	ctx, stuck := context.WithCancelCause(ctx)
	defer stuck(nil)
	go r.watchNondeterminism(ctx, b.ids, stuck)
	outs := make([]sessiontest.Outcome, len(b.ids))
	errs := make([]error, len(b.ids))
	var wg sync.WaitGroup
	for i, id := range b.ids {
		wg.Go(func() { outs[i].Res, errs[i] = waitResult(ctx, r.c, id) })
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		t.Fatal(err)
	}
	for i, err := range errs {
		if err != nil {
			r.dumpStuck(t, b.ids[i])
			t.Fatalf("session %s: %v", b.ids[i], err)
		}
	}
	store, err := service.OpenStore(r.cfg)
	if err != nil {
		t.Fatalf("open the Neo4j store: %v", err)
	}
	defer store.Close()
	for i, id := range b.ids {
		if err := outs[i].ReadGraph(ctx, store, id); err != nil {
			t.Fatal(err)
		}
		outs[i].History = sessiontest.History(t, r.c, id, "")
	}
	return outs
}

// waitResult waits for the session's result through outages of the
// server or its database: a call that fails for another reason than the
// workflow's own failure is asked again until ctx ends.
func waitResult(ctx context.Context, c client.Client, id string) (workflows.SessionResult, error) {
	var res workflows.SessionResult
	for {
		err := c.GetWorkflow(ctx, id, "").Get(ctx, &res)
		var failed *temporal.WorkflowExecutionError
		switch {
		case err == nil:
			return res, nil
		case errors.As(err, &failed):
			return res, err
		case ctx.Err() != nil:
			return res, fmt.Errorf("no result (last error: %v): %w", err, ctx.Err())
		}
		time.Sleep(time.Second)
	}
}

// dumpStuck logs what a session that did not finish waits on.
func (r *rig) dumpStuck(t *testing.T, id string) {
	t.Helper()
	d, err := r.c.DescribeWorkflowExecution(context.Background(), id, "")
	if err != nil {
		t.Logf("%s: describe: %v", id, err)
		return
	}
	t.Logf("%s: %s", id, d.GetWorkflowExecutionInfo().GetStatus())
	if wt := d.GetPendingWorkflowTask(); wt != nil {
		t.Logf("%s: pending workflow task, attempt %d", id, wt.GetAttempt())
	}
	for _, pa := range d.GetPendingActivities() {
		t.Logf("%s: pending %s attempt %d: %s", id, pa.GetActivityType().GetName(), pa.GetAttempt(), pa.GetLastFailure().GetMessage())
	}
}

// compare checks every outcome against the undisturbed reference, each
// session as a subtest, and returns how many passed. replayed names the
// sessions whose histories the workflow code of this checkout must replay
// (not a session that ran a branch only an upgraded worker has).
func compare(t *testing.T, ids []string, outs []sessiontest.Outcome, ref sessiontest.Outcome, replayed func(id string) bool) int {
	t.Helper()
	same := 0
	for i, o := range outs {
		if t.Run(ids[i], func(t *testing.T) {
			sessiontest.SameAsUndisturbed(t, o, ref)
			checkDeterministic(t, o.History)
			if replayed(ids[i]) {
				sessiontest.Replay(t, ids[i], o.History)
			}
		}) {
			same++
		}
	}
	return same
}

func all(string) bool { return true }

// watchNondeterminism ends ctx with a cause as soon as a session's
// workflow task fails on nondeterminism: the worker would retry it until
// the batch's bound, and no session could finish.
func (r *rig) watchNondeterminism(ctx context.Context, ids []string, stuck context.CancelCauseFunc) {
	tick := time.NewTicker(5 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		for _, id := range ids {
			it := r.c.GetWorkflowHistory(ctx, id, "", false, 0)
			for it.HasNext() {
				e, err := it.Next()
				if err != nil {
					break // the server may be down under a fault: next tick
				}
				if msg, bad := nondeterministic(e); bad {
					stuck(fmt.Errorf("session %s: workflow task %d failed on nondeterminism: %s", id, e.GetEventId(), msg))
					return
				}
			}
		}
	}
}

// nondeterministic reports whether e is a workflow task that failed on
// nondeterminism, with the failure's message.
func nondeterministic(e *historypb.HistoryEvent) (string, bool) {
	a := e.GetWorkflowTaskFailedEventAttributes()
	if a == nil {
		return "", false
	}
	msg := a.GetFailure().GetMessage()
	return msg, a.GetCause() == enumspb.WORKFLOW_TASK_FAILED_CAUSE_NON_DETERMINISTIC_ERROR ||
		strings.Contains(strings.ToLower(msg), "nondetermin")
}

// checkDeterministic fails t when a workflow task of the session failed on
// nondeterminism: the worker then retries it for ever, so a session could
// still finish after a worker that replays it correctly takes over, and
// its result alone would not show it.
func checkDeterministic(t *testing.T, h *historypb.History) {
	t.Helper()
	for _, e := range h.Events {
		if msg, bad := nondeterministic(e); bad {
			t.Errorf("workflow task %d failed on nondeterminism: %s", e.GetEventId(), msg)
		} else if a := e.GetWorkflowTaskFailedEventAttributes(); a != nil {
			t.Logf("workflow task %d failed: %s (%s)", e.GetEventId(), a.GetCause(), a.GetFailure().GetMessage())
		}
	}
}

// reference is the undisturbed run every disturbed session must end as,
// run once for the package.
func (r *rig) reference(t *testing.T) sessiontest.Outcome {
	t.Helper()
	r.refOnce.Do(func() {
		r.refErr = "the undisturbed reference run failed (see the test that ran it first)"
		b := r.startBatch(t, "reference", 1)
		outs := r.finishBatch(t, b)
		ref := outs[0]
		if ref.Res.StopReason != workflows.StopRootDone {
			t.Fatalf("reference run stopped by %q, want %q", ref.Res.StopReason, workflows.StopRootDone)
		}
		sessiontest.CheckNoDuplicates(t, ref)
		sessiontest.Replay(t, b.ids[0], ref.History)
		if !t.Failed() {
			r.ref, r.refErr = ref, ""
			t.Logf("reference: %s after %d iterations, %d tasks, %d evidence, %d model calls, in %.1f s",
				ref.Res.StopReason, ref.Res.Iterations, len(ref.Tasks), len(ref.Evidence), ref.Res.Stats.LLMCalls, time.Since(b.start).Seconds())
		}
	})
	if r.refErr != "" {
		t.Fatal(r.refErr)
	}
	return r.ref
}
