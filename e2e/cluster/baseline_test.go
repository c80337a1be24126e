package cluster

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"

	"github.com/lethe-research/lethe/contract"
	"github.com/lethe-research/lethe/workflows"
)

// TestUndisturbedAndVisibility runs ten sessions with no fault (the
// baseline row of the table) and finds them through the search attributes
// on the PostgreSQL visibility store: LetheStatus="running" while they
// run, LetheStatus="done" with their iteration count once they finished.
func TestUndisturbedAndVisibility(t *testing.T) {
	r := need(t)
	ref := r.reference(t)
	b := r.startBatch(t, "undisturbed", sessions)
	r.waitMidSession(t, b)
	running := r.listed(t, fmt.Sprintf("%s=%q", contract.AttrNameStatus, workflows.StatusRunning), b.ids, false)
	t.Logf("LetheStatus=%q listed %d of %d running sessions", workflows.StatusRunning, running, len(b.ids))
	outs := r.finishBatch(t, b)
	same := compare(t, b.ids, outs, ref, all)
	r.table.add(t, row{fault: "none (undisturbed)", identical: same, runs: len(outs), total: time.Since(b.start)})

	q := fmt.Sprintf(`%s=%q AND ExecutionStatus="Completed"`, contract.AttrNameStatus, workflows.StatusDone)
	iterations := map[string]int64{}
	r.listedWith(t, q, b.ids, iterations)
	for i, id := range b.ids {
		if got, want := iterations[id], int64(outs[i].Res.Iterations); got != want {
			t.Errorf("%s: %s=%d in visibility, want the session's %d iterations", id, contract.AttrNameIteration, got, want)
		}
	}
}

// listed polls the visibility query until it lists every id (all) or at
// least one (!all), and returns how many it listed; it fails t after a
// minute.
func (r *rig) listed(t *testing.T, query string, ids []string, all bool) int {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		found := r.list(t, query)
		n := 0
		for _, id := range ids {
			if _, ok := found[id]; ok {
				n++
			}
		}
		if (all && n == len(ids)) || (!all && n > 0) {
			return n
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s lists %d of the sessions %v after a minute", query, n, ids)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// listedWith waits for every id under query and fills iterations with
// each one's LetheIteration.
func (r *rig) listedWith(t *testing.T, query string, ids []string, iterations map[string]int64) {
	t.Helper()
	r.listed(t, query, ids, true)
	for id, it := range r.list(t, query) {
		iterations[id] = it
	}
}

// list runs a visibility query and returns the listed workflow ids with
// their LetheIteration (0 when unset).
func (r *rig) list(t *testing.T, query string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	var token []byte
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		resp, err := r.c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Namespace: r.cfg.Temporal.Namespace, Query: query, PageSize: 1000, NextPageToken: token})
		cancel()
		if err != nil {
			t.Fatalf("list %s: %v", query, err)
		}
		for _, e := range resp.GetExecutions() {
			var it int64
			if p, ok := e.GetSearchAttributes().GetIndexedFields()[contract.AttrNameIteration]; ok {
				if err := converter.GetDefaultDataConverter().FromPayload(p, &it); err != nil {
					t.Errorf("%s of %s: %v", contract.AttrNameIteration, e.GetExecution().GetWorkflowId(), err)
				}
			}
			out[e.GetExecution().GetWorkflowId()] = it
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			return out
		}
	}
}
