package activities_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/lethe-research/lethe/activities"
	"github.com/lethe-research/lethe/contract"
	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/graph/graphtest"
)

// noTaskList fails the test on Store.Tasks, every task with its vectors:
// the loop's steps read the outline and the tasks they use (#14).
type noTaskList struct {
	graph.Store
	t *testing.T
}

func (s noTaskList) Tasks(ctx context.Context, sid string) ([]graph.Task, error) {
	s.t.Helper()
	s.t.Error("Store.Tasks called by a loop step")
	return s.Store.Tasks(ctx, sid)
}

// TestLoopStepsReadNoTaskList: the bounded ReadState, FocusView and
// Observe answer from the outline and the tasks they name, and their
// answers are what the tree says: the counts, the ready set, the focus's
// neighbourhood with its dependency, and the state embedding's tasks.
func TestLoopStepsReadNoTaskList(t *testing.T) {
	env, store, a := newActivityEnv(t, t.TempDir(), nil)
	ctx := t.Context()
	const sid = "no-task-list"
	if err := store.CreateSession(ctx, graph.Session{ID: sid, Goal: "g", GoalDocEmb: graphtest.Unit(0), GoalQueryEmb: graphtest.Unit(1), Dim: graphtest.Dim},
		graph.Task{Description: "g", EmbedText: "g", Embedding: graphtest.Unit(0)}); err != nil {
		t.Fatal(err)
	}
	create := func(id, parent string, dim int, deps ...string) graph.Op {
		return graph.Op{Kind: graph.OpCreate, Task: id, Parent: parent, Description: "task " + id, EmbedText: id, Embedding: graphtest.Unit(dim), DependsOn: deps}
	}
	ops := []graph.Op{create("x", graph.RootShortID, 2), create("a", graph.RootShortID, 3), create("b", "a", 4, "x"),
		create("c", "a", 5), create("d", "b", 6), {Kind: graph.OpComplete, Task: "x", Result: "x done", EmbedText: "x done"}}
	if _, err := store.Apply(ctx, graph.ApplyRequest{SessionID: sid, Key: "k1", Iteration: 1, ActiveTask: graph.RootShortID, Ops: ops}); err != nil {
		t.Fatal(err)
	}
	// Two items, one of them supporting two tasks: the total counts items.
	items := []graph.Evidence{{Content: "one", Kind: graph.KindHTML, Strength: 0.5, Embedding: graphtest.Unit(7), CreatedIter: 1},
		{Content: "two", Kind: graph.KindHTML, Strength: 0.5, Embedding: graphtest.Unit(8), CreatedIter: 1}}
	for task, n := range map[string]int{"c": 2, "b": 1} {
		if _, err := store.AddEvidence(ctx, sid, "ev/"+task, task, items[:n]); err != nil {
			t.Fatal(err)
		}
	}
	if ok, err := store.SetStatus(ctx, sid, "a", []graph.Status{graph.Pending}, graph.Active); !ok || err != nil {
		t.Fatalf("set a active: %v, %v", ok, err)
	}
	a.Store = noTaskList{Store: store, t: t}
	t.Cleanup(func() { a.Store = store })

	v, err := env.ExecuteActivity(acts.ReadState, activities.ReadStateInput{SessionID: sid, Iteration: 2, View: &contract.ViewParams{Ready: 10}})
	if err != nil {
		t.Fatal(err)
	}
	var rs activities.ReadStateResult
	if err := v.Get(&rs); err != nil {
		t.Fatal(err)
	}
	// Pending: root, b, c, d; ready: b (x is done) and c; root and d wait on children or a parent.
	if rs.Counts[string(graph.Pending)] != 4 || rs.Counts[string(graph.Done)] != 1 || rs.Counts[string(graph.Active)] != 1 || rs.RootDone {
		t.Errorf("counts %v, root done %v", rs.Counts, rs.RootDone)
	}
	if rs.Evidence != 2 {
		t.Errorf("evidence total %d, want 2 (one item supports two tasks)", rs.Evidence)
	}
	ready := map[string]bool{}
	for _, r := range rs.Ready {
		ready[r.ShortID] = true
	}
	want, _ := store.ReadySet(ctx, sid)
	if len(ready) != len(want) || rs.ReadyTotal != len(want) {
		t.Errorf("ready %v (total %d), store's ready set has %d", ready, rs.ReadyTotal, len(want))
	}
	for _, w := range want {
		if !ready[w.ShortID] {
			t.Errorf("ready set misses %s", w.ShortID)
		}
	}

	v, err = env.ExecuteActivity(acts.FocusView, contract.FocusViewInput{Focus: contract.FocusInput{SessionID: sid, Iteration: 2, Task: "b"}, Neighbour: 5})
	if err != nil {
		t.Fatal(err)
	}
	var fv contract.FocusViewResult
	if err := v.Get(&fv); err != nil {
		t.Fatal(err)
	}
	var shown []string
	for _, ti := range fv.Tasks {
		shown = append(shown, ti.ShortID)
		if ti.Description != "task "+ti.ShortID && ti.ShortID != graph.RootShortID {
			t.Errorf("task %s shown as %q", ti.ShortID, ti.Description)
		}
	}
	// Store order (created iteration, then short id): the focus b, its
	// parent a, the root, its sibling c, its child d and its dependency x.
	if got, want := shown, []string{graph.RootShortID, "a", "b", "c", "d", "x"}; !slices.Equal(got, want) {
		t.Errorf("focus view tasks %v, want %v", got, want)
	}

	v, err = env.ExecuteActivity(acts.Observe, activities.ObserveInput{SessionID: sid, Iteration: 2, Task: "b", SVDK: 2, MinEvidence: 2})
	if err != nil {
		t.Fatal(err)
	}
	// The status change runs beside the sync: when it fails, so does the
	// view, with its error, and nothing waits for the walk.
	_, err = env.ExecuteActivity(acts.FocusView, contract.FocusViewInput{Focus: contract.FocusInput{SessionID: sid, Iteration: 3, Task: "nope"}, Neighbour: 5})
	if err == nil || !strings.Contains(err.Error(), "focus: set status nope") {
		t.Fatalf("focus view of an unknown task: %v", err)
	}
}
