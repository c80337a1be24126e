package graphtest

// Lane fullreads (#14): conformance of TaskOutline, TasksByIDs,
// SetStatusWhere, SetResultEmbeddings and EvidenceOfTasks, each checked
// against the whole-session reads it replaces.

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/lethe-research/lethe/graph"
)

// fullReadsSession is a session with a small tree (root > a > a1, root > b
// depending on a, c FAILED), a result on a, and evidence on root, a, b
// (one item shared by a and b); other holds a task "a" too, which must not
// leak.
func fullReadsSession(t *testing.T, s graph.Store) (sid, other string) {
	t.Helper()
	sid, other = newSession(t, s), newSession(t, s)
	mustApply(t, s, graph.ApplyRequest{SessionID: sid, Key: "apply/1", Iteration: 1, ActiveTask: graph.RootShortID, Ops: []graph.Op{
		create("a", 2), create("b", 3, "a"), create("c", 4),
	}})
	mustApply(t, s, graph.ApplyRequest{SessionID: sid, Key: "apply/2", Iteration: 2, ActiveTask: "a", Ops: []graph.Op{
		{Kind: graph.OpCreate, Task: "a1", Parent: "a", Description: "task a1", EmbedText: "embed a1", Embedding: Unit(5)},
		{Kind: graph.OpComplete, Task: "a", Result: "a is done", EmbedText: "a result", Embedding: Unit(6)},
		{Kind: graph.OpFail, Task: "c", Reason: "dead end"},
	}})
	mustApply(t, s, graph.ApplyRequest{SessionID: other, Key: "apply/1", Iteration: 1, ActiveTask: graph.RootShortID, Ops: []graph.Op{create("a", 2)}})
	addEv(t, s, sid, "web/root", graph.Evidence{Content: "on the root", Kind: graph.KindHTML, Strength: 0.4, Embedding: Unit(7), CreatedIter: 1})
	ctx := ctxOf(t)
	for _, task := range []string{"a", "b"} {
		if _, err := s.AddEvidence(ctx, sid, "web/"+task, task, []graph.Evidence{
			{Content: "shared by a and b", Kind: graph.KindHTML, Strength: 0.6, Embedding: Unit(8), CreatedIter: 2},
			{Content: "only " + task, Kind: graph.KindPDF, Strength: 0.5, Embedding: Unit(9), CreatedIter: 2},
		}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.AddEvidence(ctx, other, "web/a", "a", []graph.Evidence{{Content: "elsewhere", Kind: graph.KindHTML, Embedding: Unit(8), CreatedIter: 1}}); err != nil {
		t.Fatal(err)
	}
	return sid, other
}

// testTaskOutline: the outline is Tasks without texts and embeddings, in
// the same order; TasksByIDs is Tasks filtered to the named (existing) ids.
func testTaskOutline(t *testing.T, s graph.Store) {
	ctx := ctxOf(t)
	sid, _ := fullReadsSession(t, s)
	all, err := s.Tasks(ctx, sid)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.TaskOutline(ctx, sid)
	if err != nil {
		t.Fatal(err)
	}
	var want []graph.TaskNode
	for _, tk := range all {
		n := graph.TaskNode{ShortID: tk.ShortID, Status: tk.Status, CreatedIter: tk.CreatedIter, ResultEmbedded: len(tk.ResultEmbedding) > 0}
		if tk.Parent != "" {
			n.Parent = graph.ShortIDOf(tk.Parent)
		}
		want = append(want, n)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("outline\n got %+v\nwant %+v", got, want)
	}
	byID, err := s.TasksByIDs(ctx, sid, []string{"b", "nope", graph.RootShortID, "a1", "b"})
	if err != nil {
		t.Fatal(err)
	}
	var wantT []graph.Task
	for _, tk := range all {
		if slices.Contains([]string{"b", graph.RootShortID, "a1"}, tk.ShortID) {
			wantT = append(wantT, tk)
		}
	}
	if !reflect.DeepEqual(byID, wantT) {
		t.Fatalf("tasks by ids\n got %+v\nwant %+v", byID, wantT)
	}
	if none, err := s.TasksByIDs(ctx, sid, nil); err != nil || len(none) != 0 {
		t.Fatalf("no ids: %v, %v", none, err)
	}
	for _, err := range []error{
		second(s.TaskOutline(ctx, "gt-missing-session")),
		second(s.TasksByIDs(ctx, "gt-missing-session", []string{"root"})),
		second(s.EvidenceOfTasks(ctx, "gt-missing-session", []string{"root"})),
		second(s.SetStatusWhere(ctx, "gt-missing-session", []graph.Status{graph.Pending}, graph.Done)),
	} {
		if !errors.Is(err, graph.ErrNotFound) {
			t.Errorf("missing session: %v, want ErrNotFound", err)
		}
	}
}

func second[T any](_ T, err error) error { return err }

// testSetStatusWhere: every PENDING and ACTIVE task becomes DONE in one
// call, as SetStatus per task would leave them; FAILED ones never move,
// and asking to move them is ErrImmutable; other sessions are untouched.
func testSetStatusWhere(t *testing.T, s graph.Store) {
	ctx := ctxOf(t)
	sid, other := fullReadsSession(t, s)
	setStatus(t, s, sid, "b", graph.Active)
	before := tasks(t, s, sid)
	open := []graph.Status{graph.Pending, graph.Active}
	n, err := s.SetStatusWhere(ctx, sid, open, graph.Done)
	if err != nil {
		t.Fatal(err)
	}
	after := tasks(t, s, sid)
	moved := 0
	for id, tk := range before {
		want := tk
		if slices.Contains(open, tk.Status) {
			want.Status = graph.Done
			moved++
		}
		if !reflect.DeepEqual(after[id], want) {
			t.Errorf("task %s: got %+v, want %+v", id, after[id], want)
		}
	}
	if n != moved || moved != 3 { // root, b, a1
		t.Errorf("moved %d (counted %d), want 3", n, moved)
	}
	if n, err := s.SetStatusWhere(ctx, sid, open, graph.Done); err != nil || n != 0 {
		t.Errorf("repeat: %d, %v; want 0 moved", n, err)
	}
	if _, err := s.SetStatusWhere(ctx, sid, []graph.Status{graph.Failed}, graph.Pending); !errors.Is(err, graph.ErrImmutable) {
		t.Errorf("moving FAILED tasks: %v, want ErrImmutable", err)
	}
	if _, err := s.SetStatusWhere(ctx, sid, nil, graph.Done); err == nil {
		t.Error("no source status: no error")
	}
	if tasks(t, s, other)["a"].Status != graph.Pending {
		t.Error("another session's task moved")
	}
}

// testSetResultEmbeddings: one call fills what SetResultEmbedding per task
// would; an unknown or FAILED task fails the call and writes nothing.
func testSetResultEmbeddings(t *testing.T, s graph.Store) {
	ctx := ctxOf(t)
	sid, other := fullReadsSession(t, s)
	if err := s.SetResultEmbeddings(ctx, sid, map[string][]float32{"b": Unit(10), graph.RootShortID: Unit(11)}); err != nil {
		t.Fatal(err)
	}
	ts := tasks(t, s, sid)
	if !reflect.DeepEqual(ts["b"].ResultEmbedding, Unit(10)) || !reflect.DeepEqual(ts[graph.RootShortID].ResultEmbedding, Unit(11)) {
		t.Errorf("result embeddings not set: b %v, root %v", ts["b"].ResultEmbedding, ts[graph.RootShortID].ResultEmbedding)
	}
	if !reflect.DeepEqual(ts["a"].ResultEmbedding, Unit(6)) {
		t.Error("a task outside the call changed")
	}
	for _, c := range []struct {
		embs map[string][]float32
		want error
	}{
		{map[string][]float32{"a1": Unit(12), "nope": Unit(12)}, graph.ErrNotFound},
		{map[string][]float32{"a1": Unit(12), "c": Unit(12)}, graph.ErrImmutable},
	} {
		if err := s.SetResultEmbeddings(ctx, sid, c.embs); !errors.Is(err, c.want) {
			t.Errorf("%v: %v, want %v", slices.Sorted(mapKeys(c.embs)), err, c.want)
		}
	}
	if got := tasks(t, s, sid)["a1"].ResultEmbedding; len(got) != 0 {
		t.Errorf("a failed call wrote a1's result embedding: %v", got)
	}
	if got := tasks(t, s, other)["a"].ResultEmbedding; len(got) != 0 {
		t.Error("another session's task changed")
	}
}

func mapKeys(m map[string][]float32) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// testEvidenceOfTasks: the evidence of several tasks in one read is the
// union of Evidence per task (shared items once), in Evidence order.
func testEvidenceOfTasks(t *testing.T, s graph.Store) {
	ctx := ctxOf(t)
	sid, _ := fullReadsSession(t, s)
	for _, ids := range [][]string{{"a"}, {"a", "b"}, {graph.RootShortID, "b", "nope"}, {"a1"}, {}} {
		got, err := s.EvidenceOfTasks(ctx, sid, ids)
		if err != nil {
			t.Fatal(err)
		}
		var want []graph.Evidence
		for _, e := range evidence(t, s, sid, "") {
			for _, id := range ids {
				if e.TaskID == graph.TaskID(sid, id) || slices.Contains(e.Also, graph.TaskID(sid, id)) {
					want = append(want, e)
					break
				}
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%v\n got %+v\nwant %+v", ids, got, want)
		}
	}
}

// testSyncGuardFallsBack: after a full sync of 200 items, 500 new ones
// make the incremental cascade's first round cost more than the full sync
// (500 × (700 + 500) comparisons against a budget of 2^18): the guard gives
// it up before writing anything, the full sync runs (Incremental false,
// though the watermark and the counts allowed the incremental path), and
// the edges and strengths equal an exhaustive full sync of a twin
// session. (Similar/IncrementalEqualsFull shows the same sessions' small
// waves taking the incremental path.)
func testSyncGuardFallsBack(t *testing.T, s graph.Store) {
	ctx := ctxOf(t)
	inc, full := newSession(t, s), newSession(t, s)
	// Exhaustive (probes past the cluster count) so that the first full
	// sync is the exact one too; the budget stays max(2^18, n²/2).
	p := graph.SimilarParams{Threshold: 0.9, MaxPerNode: 3, Probes: 1 << 20}
	for w, wave := range []struct {
		iter, n     int
		incremental bool
	}{{1, 200, false}, {2, 500, false}} {
		items := clusteredItems(uint64(w+3)*104729, wave.n, wave.iter, fmt.Sprintf("g%d", w))
		addEv(t, s, inc, fmt.Sprintf("wave%d", w), items...)
		addEv(t, s, full, fmt.Sprintf("wave%d", w), items...)
		st, err := graph.SyncSimilar(ctx, s, inc, p, nil)
		if err != nil {
			t.Fatalf("wave %d: %v", w, err)
		}
		eq(t, fmt.Sprintf("wave %d incremental", w), st.Incremental, wave.incremental)
		fp := p
		fp.Full, fp.Probes = true, 1<<20
		if _, err := graph.SyncSimilar(ctx, s, full, fp, nil); err != nil {
			t.Fatalf("wave %d: full: %v", w, err)
		}
		sameSimilar(t, s, w, inc, full)
	}
}

// testStatusReads: TaskStatusCounts is Tasks counted by status, with the
// root's status; TasksWithStatus is Tasks filtered to one status, in the
// same order. Both after the statuses move, and without the other
// session's tasks.
func testStatusReads(t *testing.T, s graph.Store) {
	ctx := ctxOf(t)
	sid, _ := fullReadsSession(t, s)
	check := func(step string) {
		t.Helper()
		all, err := s.Tasks(ctx, sid)
		if err != nil {
			t.Fatal(err)
		}
		want := graph.StatusCounts{Count: map[graph.Status]int{}}
		byStatus := map[graph.Status][]graph.Task{}
		for _, tk := range all {
			want.Count[tk.Status]++
			byStatus[tk.Status] = append(byStatus[tk.Status], tk)
			if tk.ShortID == graph.RootShortID {
				want.Root = tk.Status
			}
		}
		got, err := s.TaskStatusCounts(ctx, sid)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: status counts %+v (%v), want %+v", step, got, err, want)
		}
		for _, st := range []graph.Status{graph.Pending, graph.Active, graph.Done, graph.Failed} {
			tasks, err := s.TasksWithStatus(ctx, sid, st)
			if err != nil || !reflect.DeepEqual(tasks, byStatus[st]) {
				t.Fatalf("%s: tasks with status %s\n got %+v (%v)\nwant %+v", step, st, tasks, err, byStatus[st])
			}
		}
	}
	check("as written")
	setStatus(t, s, sid, "b", graph.Active)
	setStatus(t, s, sid, "a1", graph.Active)
	check("two active")
	setStatus(t, s, sid, graph.RootShortID, graph.Done)
	check("root done")
	for _, err := range []error{
		second(s.TaskStatusCounts(ctx, "gt-missing-session")),
		second(s.TasksWithStatus(ctx, "gt-missing-session", graph.Active)),
	} {
		if !errors.Is(err, graph.ErrNotFound) {
			t.Errorf("missing session: %v, want ErrNotFound", err)
		}
	}
}
