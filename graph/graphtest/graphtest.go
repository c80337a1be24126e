// Package graphtest is the conformance suite of graph.Store: every backend
// runs it (the embedded one in every `go test`, Neo4j against a real server
// in CI). Each subtest works in sessions of its own with random ids, so the
// suite can share one server (and one database) with other runs.
package graphtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/lethe-research/lethe/graph"
)

// Dim is the embedding dimension the suite uses.
const Dim = 16

// Unit returns the i-th basis vector of dimension Dim.
func Unit(i int) []float32 {
	v := make([]float32, Dim)
	v[i%Dim] = 1
	return v
}

// Blend returns c·e_i + √(1−c²)·e_j, a unit vector whose cosine with Unit(i)
// is c (and with Unit(j) is √(1−c²)); i != j.
func Blend(i, j int, c float64) []float32 {
	v := make([]float32, Dim)
	v[i%Dim] = float32(c)
	v[j%Dim] = float32(math.Sqrt(1 - c*c))
	return v
}

// Run runs the conformance suite. open is called once per subtest, from
// parallel subtests, and must return a ready store (registering its Close
// with t.Cleanup); it may return the same store every time, since every
// subtest uses fresh session ids.
func Run(t *testing.T, open func(t *testing.T) graph.Store) {
	cases := []struct {
		name string
		fn   func(t *testing.T, s graph.Store)
	}{
		{"Ping", testPing},
		{"Session/CreateIdempotentWithRoot", testCreateSession},
		{"Session/UnknownSessionIsNotFound", testUnknownSession},
		{"ReadySet/DependencyGating", testReadySetGating},
		{"Status/Transitions", testStatusTransitions},
		{"Status/FailedImmutable", testFailedImmutable},
		{"Apply/CreateParentDepthProductive", testApplyCreate},
		{"Apply/ForwardReferences", testApplyForwardRefs},
		{"Apply/OpSemantics", testApplyOps},
		{"Apply/RepeatsKeepEmbeddings", testApplyRepeats},
		{"Apply/DedupAt095", testApplyDedup},
		{"Apply/DedupOntoFailedTaskSkipsOps", testApplyDedupOntoFailed},
		{"Apply/CycleRollsBackEverything", testApplyCycle},
		{"Apply/IdempotentReapply", testApplyIdempotent},
		{"Apply/ErrorsWriteNothing", testApplyErrors},
		{"Isolation/TwoSessionsInterleaved", testIsolation},
		{"Evidence/ContentHashDedupAndKeys", testEvidenceDedup},
		{"Evidence/FilterOrderAndStrengths", testEvidenceOrderStrengths},
		{"Similar/ReplaceSimilarScope", testReplaceSimilar},
		{"Commit/AllOrNothing", testCommit},
		{"Similar/SyncEdgesAndStrengths", testSyncSimilar},
		{"Similar/SyncDegreeCapAndNLIFailure", testSyncCapAndFailure},
		{"Similar/NLILabelCache", testSyncLabelCache},
		{"Similar/SyncPrefilterRecall", testSyncPrefilter},
		{"Similar/IncrementalEqualsFull", testSyncIncremental},
		{"Similar/NearestEvidence", testNearestEvidence},
		{"Similar/NearestCosine", testNearestCosine},
		{"Similar/FetchedSources", testFetchedSources},
		{"Similar/EvidenceRows", testEvidenceRows},
		{"Similar/EdgesOf", testSimilarEdgesOf},
		{"Similar/LocalEqualsFull", testSyncLocalEqualsFull},
		{"Similar/LocalDeferredLabels", testSyncLocalDeferredLabels},
		{"Similar/LocalCrashBeforeMark", testSyncLocalCrashBeforeMark},
		{"Similar/LocalReadsFail", testSyncLocalReadsFail},
		{"Similar/StoredPairs", testSyncStoredPairs},
		{"Similar/StrengthShardsMigrate", testStrengthShardsMigrate},
		{"Similar/StrengthShardsJSON", testStrengthShardsJSON},
		{"Blobs", testBlobs},
		{"Ordering/TasksEvidenceEdges", testOrdering},
		{"Concurrency/ParallelAddEvidence", testConcurrency},
		// lane observe
		{"Evidence/Since", testEvidenceSince},
		{"Blobs/Delete", testDeleteBlob},
		{"Neighbourhood/OneHopAsFullReads", testNeighbourhood}, // lane expand
		// Lane payloads (#14).
		{"Evidence/CountsPerTask", testEvidenceCounts},
		// Lane fullreads (#14).
		{"Tasks/OutlineAndByIDs", testTaskOutline},
		{"Tasks/StatusCountsAndWithStatus", testStatusReads},
		{"Status/SetStatusWhere", testSetStatusWhere},
		{"Tasks/SetResultEmbeddings", testSetResultEmbeddings},
		{"Evidence/OfTasks", testEvidenceOfTasks},
		{"Similar/GuardFallsBackToFull", testSyncGuardFallsBack},
		// Lane storecost (#14): the indexed reads follow every write.
		{"Neighbourhood/CountsFollowWrites", testAdjacencyFollowsWrites},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.fn(t, open(t))
		})
	}
}

// ---------------------------------------------------------------- helpers

func ctxOf(t *testing.T) context.Context { return t.Context() }

// newSessionID returns a fresh session id for the running test.
func newSessionID(t *testing.T) string {
	t.Helper()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	name := strings.NewReplacer("/", "-", " ", "_").Replace(t.Name())
	return "gt-" + name + "-" + hex.EncodeToString(b[:])
}

// newSession creates a session whose root embedding is Unit(0).
func newSession(t *testing.T, s graph.Store) string {
	t.Helper()
	id := newSessionID(t)
	err := s.CreateSession(ctxOf(t), graph.Session{
		ID: id, Goal: "How do solid-state batteries fail?",
		GoalDocEmb: Unit(0), GoalQueryEmb: Unit(1), Dim: Dim,
	}, graph.Task{Description: "How do solid-state batteries fail?", EmbedText: "solid-state battery failure", Embedding: Unit(0)})
	if err != nil {
		t.Fatalf("CreateSession: %v", err)
	}
	return id
}

func mustApply(t *testing.T, s graph.Store, req graph.ApplyRequest) graph.ApplyResult {
	t.Helper()
	if req.DedupThreshold == 0 {
		req.DedupThreshold = 0.95
	}
	res, err := s.Apply(ctxOf(t), req)
	if err != nil {
		t.Fatalf("Apply %s: %v", req.Key, err)
	}
	return res
}

func tasks(t *testing.T, s graph.Store, sid string) map[string]graph.Task {
	t.Helper()
	ts, err := s.Tasks(ctxOf(t), sid)
	if err != nil {
		t.Fatalf("Tasks: %v", err)
	}
	m := map[string]graph.Task{}
	for _, x := range ts {
		m[x.ShortID] = x
	}
	return m
}

func shortIDs(ts []graph.Task) []string {
	out := make([]string, len(ts))
	for i, x := range ts {
		out[i] = x.ShortID
	}
	return out
}

func ready(t *testing.T, s graph.Store, sid string) []string {
	t.Helper()
	ts, err := s.ReadySet(ctxOf(t), sid)
	if err != nil {
		t.Fatalf("ReadySet: %v", err)
	}
	return shortIDs(ts)
}

func evidence(t *testing.T, s graph.Store, sid, task string) []graph.Evidence {
	t.Helper()
	es, err := s.Evidence(ctxOf(t), sid, task)
	if err != nil {
		t.Fatalf("Evidence: %v", err)
	}
	return es
}

func edges(t *testing.T, s graph.Store, sid string, kind graph.EdgeKind) []graph.Edge {
	t.Helper()
	es, err := s.Edges(ctxOf(t), sid)
	if err != nil {
		t.Fatalf("Edges: %v", err)
	}
	var out []graph.Edge
	for _, e := range es {
		if kind == "" || e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

func create(id string, axis int, deps ...string) graph.Op {
	return graph.Op{Kind: graph.OpCreate, Task: id, Description: "task " + id, EmbedText: "embed " + id, Embedding: Unit(axis), DependsOn: deps}
}

func setStatus(t *testing.T, s graph.Store, sid, short string, to graph.Status) {
	t.Helper()
	if _, err := s.SetStatus(ctxOf(t), sid, short, nil, to); err != nil {
		t.Fatalf("SetStatus %s -> %s: %v", short, to, err)
	}
}

func wantErr(t *testing.T, err, target error, what string) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: error %v, want %v", what, err, target)
	}
}

func eq[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Fatalf("%s = %v, want %v", what, got, want)
	}
}

func eqSlice[T comparable](t *testing.T, what string, got, want []T) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s = %v, want %v", what, got, want)
	}
}

// ---------------------------------------------------------------- sessions

func testPing(t *testing.T, s graph.Store) {
	if err := s.Ping(ctxOf(t)); err != nil {
		t.Fatal(err)
	}
}

func testCreateSession(t *testing.T, s graph.Store) {
	ctx := ctxOf(t)
	sid := newSession(t, s)
	// A second create (a retried bootstrap) changes nothing.
	err := s.CreateSession(ctx, graph.Session{ID: sid, Goal: "other goal"}, graph.Task{Description: "other", Status: graph.Done, Depth: 7})
	if err != nil {
		t.Fatalf("second CreateSession: %v", err)
	}
	got, err := s.GetSession(ctx, sid)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "goal", got.Goal, "How do solid-state batteries fail?")
	eq(t, "id", got.ID, sid)
	eq(t, "dim", got.Dim, Dim)
	eqSlice(t, "goal doc emb", got.GoalDocEmb, Unit(0))
	eqSlice(t, "goal query emb", got.GoalQueryEmb, Unit(1))

	ts, err := s.Tasks(ctx, sid)
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 1 {
		t.Fatalf("tasks = %v, want only the root", shortIDs(ts))
	}
	r := ts[0]
	eq(t, "root short id", r.ShortID, graph.RootShortID)
	eq(t, "root id", r.ID, graph.TaskID(sid, graph.RootShortID))
	eq(t, "root session", r.SessionID, sid)
	eq(t, "root status", r.Status, graph.Pending)
	eq(t, "root depth", r.Depth, 0)
	eq(t, "root parent", r.Parent, "")
	eq(t, "root description", r.Description, "How do solid-state batteries fail?")
	eqSlice(t, "root embedding", r.Embedding, Unit(0))
	eqSlice(t, "ready", ready(t, s, sid), []string{graph.RootShortID})
}

func testUnknownSession(t *testing.T, s graph.Store) {
	ctx := ctxOf(t)
	sid := newSessionID(t)
	_, err := s.GetSession(ctx, sid)
	wantErr(t, err, graph.ErrNotFound, "GetSession")
	_, err = s.Tasks(ctx, sid)
	wantErr(t, err, graph.ErrNotFound, "Tasks")
	_, err = s.ReadySet(ctx, sid)
	wantErr(t, err, graph.ErrNotFound, "ReadySet")
	_, err = s.Apply(ctx, graph.ApplyRequest{SessionID: sid, Key: "apply/1", Ops: []graph.Op{create("a", 2)}})
	wantErr(t, err, graph.ErrNotFound, "Apply")
	_, err = s.AddEvidence(ctx, sid, "k", graph.RootShortID, []graph.Evidence{{Content: "x"}})
	wantErr(t, err, graph.ErrNotFound, "AddEvidence")
	_, err = s.GetBlob(ctx, sid, "b")
	wantErr(t, err, graph.ErrNotFound, "GetBlob")
	unknownSessionReads(t, s, sid)
	if err := s.ResetSession(ctx, sid); err != nil {
		t.Fatalf("ResetSession of a missing session: %v", err)
	}
	// Unknown task in an existing session.
	sid = newSession(t, s)
	_, err = s.SetStatus(ctx, sid, "nope", nil, graph.Active)
	wantErr(t, err, graph.ErrNotFound, "SetStatus unknown task")
	_, err = s.Evidence(ctx, sid, "nope")
	wantErr(t, err, graph.ErrNotFound, "Evidence unknown task")
	_, err = s.AddEvidence(ctx, sid, "k", "nope", []graph.Evidence{{Content: "x"}})
	wantErr(t, err, graph.ErrNotFound, "AddEvidence unknown task")
}

// unknownSessionReads asks every narrow read of the loop about a session
// that does not exist (ErrNotFound), then about a fresh one, where each
// finds nothing and says so without an error: a backend may check the
// session only when a read found nothing.
func unknownSessionReads(t *testing.T, s graph.Store, unknown string) {
	t.Helper()
	ctx := ctxOf(t)
	reads := []struct {
		name string
		read func(sid string) (int, error)
	}{
		{"TaskOutline", func(sid string) (int, error) { v, err := s.TaskOutline(ctx, sid); return len(v) - 1, err }}, // the root
		{"TasksByIDs", func(sid string) (int, error) { v, err := s.TasksByIDs(ctx, sid, []string{"nope"}); return len(v), err }},
		{"TasksWithStatus", func(sid string) (int, error) { v, err := s.TasksWithStatus(ctx, sid, graph.Failed); return len(v), err }},
		{"GetBlobs", func(sid string) (int, error) { v, err := s.GetBlobs(ctx, sid, []string{"b"}); return len(v), err }},
		{"EvidenceCounts", func(sid string) (int, error) { v, err := s.EvidenceCounts(ctx, sid); return len(v), err }},
		{"EvidenceSince", func(sid string) (int, error) { v, err := s.EvidenceSince(ctx, sid, 0); return len(v), err }},
		{"EvidenceOfTasks", func(sid string) (int, error) {
			v, err := s.EvidenceOfTasks(ctx, sid, []string{"nope"})
			return len(v), err
		}},
		{"SimilarEdges", func(sid string) (int, error) { v, err := s.SimilarEdges(ctx, sid); return len(v), err }},
	}
	fresh := newSession(t, s)
	for _, r := range reads {
		_, err := r.read(unknown)
		wantErr(t, err, graph.ErrNotFound, r.name)
		if n, err := r.read(fresh); err != nil || n != 0 {
			t.Errorf("%s of a fresh session: %d more than expected, error %v", r.name, n, err)
		}
	}
	_, err := s.EvidenceByIDs(ctx, unknown, []string{graph.EvidenceID(unknown, "h")})
	wantErr(t, err, graph.ErrNotFound, "EvidenceByIDs")
	_, err = s.EvidenceByIDs(ctx, fresh, []string{graph.EvidenceID(fresh, "h")})
	wantErr(t, err, graph.ErrNotFound, "EvidenceByIDs of a missing item")
}

// ---------------------------------------------------------------- ready set and status

func testReadySetGating(t *testing.T, s graph.Store) {
	sid := newSession(t, s)
	setStatus(t, s, sid, graph.RootShortID, graph.Active)
	mustApply(t, s, graph.ApplyRequest{SessionID: sid, Key: "apply/1", Iteration: 1, ActiveTask: graph.RootShortID, Ops: []graph.Op{
		create("a", 2),
		create("b", 3, "a"),
		create("c", 4, "a", "b"),
		create("d", 5),
	}})
	eqSlice(t, "ready after create", ready(t, s, sid), []string{"a", "d"})

	// ACTIVE and FAILED tasks are not ready.
	setStatus(t, s, sid, "d", graph.Active)
	eqSlice(t, "ready with d active", ready(t, s, sid), []string{"a"})

	// Completing a releases b; c still waits for b.
	mustApply(t, s, graph.ApplyRequest{SessionID: sid, Key: "apply/2", Iteration: 2, ActiveTask: "a", Ops: []graph.Op{
		{Kind: graph.OpComplete, Task: "a", Result: "a found", EmbedText: "a found", Embedding: Unit(6)},
	}})
	eqSlice(t, "ready after a done", ready(t, s, sid), []string{"b"})

	// A FAILED prerequisite never counts as DONE.
	mustApply(t, s, graph.ApplyRequest{SessionID: sid, Key: "apply/3", Iteration: 3, ActiveTask: "b", Ops: []graph.Op{
		{Kind: graph.OpFail, Task: "b", Reason: "dead end"},
	}})
	eqSlice(t, "ready after b failed", ready(t, s, sid), nil)

	// A dependency added later gates a ready task.
	setStatus(t, s, sid, "d", graph.Pending)
	eqSlice(t, "ready with d pending", ready(t, s, sid), []string{"d"})
	mustApply(t, s, graph.ApplyRequest{SessionID: sid, Key: "apply/4", Iteration: 4, ActiveTask: graph.RootShortID, Ops: []graph.Op{
		create("e", 7),
		{Kind: graph.OpDepend, Task: "d", On: "e"},
	}})
	eqSlice(t, "ready after d depends on e", ready(t, s, sid), []string{"e"})
}

func testStatusTransitions(t *testing.T, s graph.Store) {
	ctx := ctxOf(t)
	sid := newSession(t, s)
	ch, err := s.SetStatus(ctx, sid, graph.RootShortID, []graph.Status{graph.Pending}, graph.Active)
	if err != nil || !ch {
		t.Fatalf("PENDING->ACTIVE: changed=%v err=%v", ch, err)
	}
	ch, err = s.SetStatus(ctx, sid, graph.RootShortID, []graph.Status{graph.Pending}, graph.Active)
	if err != nil || ch {
		t.Fatalf("conditional on PENDING while ACTIVE: changed=%v err=%v", ch, err)
	}
	ch, err = s.SetStatus(ctx, sid, graph.RootShortID, nil, graph.Active)
	if err != nil || ch {
		t.Fatalf("ACTIVE->ACTIVE: changed=%v err=%v", ch, err)
	}
	ch, err = s.SetStatus(ctx, sid, graph.RootShortID, []graph.Status{graph.Pending, graph.Active}, graph.Pending)
	if err != nil || !ch {
		t.Fatalf("ACTIVE->PENDING: changed=%v err=%v", ch, err)
	}
	ch, err = s.SetStatus(ctx, sid, graph.RootShortID, nil, graph.Done)
	if err != nil || !ch {
		t.Fatalf("any->DONE: changed=%v err=%v", ch, err)
	}
	eq(t, "root status", tasks(t, s, sid)[graph.RootShortID].Status, graph.Done)
	if _, err := s.SetStatus(ctx, sid, graph.RootShortID, nil, graph.Status("WAITING")); err == nil {
		t.Fatal("invalid status accepted")
	}
	eq(t, "root status after invalid", tasks(t, s, sid)[graph.RootShortID].Status, graph.Done)
	if err := s.SetResultEmbedding(ctx, sid, graph.RootShortID, Unit(9)); err != nil {
		t.Fatal(err)
	}
	eqSlice(t, "result embedding", tasks(t, s, sid)[graph.RootShortID].ResultEmbedding, Unit(9))
}

func testFailedImmutable(t *testing.T, s graph.Store) {
	ctx := ctxOf(t)
	sid := newSession(t, s)
	mustApply(t, s, graph.ApplyRequest{SessionID: sid, Key: "apply/1", Iteration: 1, ActiveTask: graph.RootShortID, Ops: []graph.Op{create("a", 2)}})
	setStatus(t, s, sid, "a", graph.Active)
	res := mustApply(t, s, graph.ApplyRequest{SessionID: sid, Key: "apply/2", Iteration: 2, ActiveTask: "a", Ops: []graph.Op{
		{Kind: graph.OpFail, Task: "a", Reason: "no sources exist"},
	}})
	eq(t, "applied", res.Applied, 1)
	a := tasks(t, s, sid)["a"]
	eq(t, "status", a.Status, graph.Failed)
	eq(t, "reason", a.ResultSummary, "no sources exist")
	eq(t, "n_productive of the failed active task", a.NProductive, 1)

	for _, to := range []graph.Status{graph.Pending, graph.Active, graph.Done, graph.Failed} {
		ch, err := s.SetStatus(ctx, sid, "a", nil, to)
		wantErr(t, err, graph.ErrImmutable, "SetStatus FAILED->"+string(to))
		if ch {
			t.Fatalf("SetStatus FAILED->%s reported a change", to)
		}
	}
	wantErr(t, s.SetResultEmbedding(ctx, sid, "a", Unit(3)), graph.ErrImmutable, "SetResultEmbedding")

	for i, op := range []graph.Op{
		{Kind: graph.OpUpdate, Task: "a", Description: "revived", EmbedText: "revived", Embedding: Unit(3)},
		{Kind: graph.OpComplete, Task: "a", Result: "done", EmbedText: "done", Embedding: Unit(3)},
		{Kind: graph.OpContinue, Task: "a"},
		{Kind: graph.OpFail, Task: "a", Reason: "again"},
		{Kind: graph.OpEvidence, Task: "a", Content: "late evidence", EmbedText: "late", Embedding: Unit(3)},
		{Kind: graph.OpDepend, Task: "a", On: graph.RootShortID},
		{Kind: graph.OpDepend, Task: graph.RootShortID, On: "a"},
		{Kind: graph.OpCreate, Task: "child", Parent: "a", Description: "child", EmbedText: "child", Embedding: Unit(4)},
	} {
		key := fmt.Sprintf("apply/bad-%d", i)
		_, err := s.Apply(ctx, graph.ApplyRequest{SessionID: sid, Key: key, Iteration: 3, ActiveTask: graph.RootShortID, DedupThreshold: 0.95,
			Ops: []graph.Op{create(fmt.Sprintf("x%d", i), 5+i), op}})
		wantErr(t, err, graph.ErrImmutable, "Apply "+string(op.Kind)+" on FAILED")
	}
	ts := tasks(t, s, sid)
	if len(ts) != 2 {
		t.Fatalf("failed writes left tasks behind: %v", ts)
	}
	if got := ts["a"]; got.Status != graph.Failed || got.ResultSummary != "no sources exist" || got.Description != "task a" {
		t.Fatalf("FAILED task changed: %+v", got)
	}
	eq(t, "root n_productive", ts[graph.RootShortID].NProductive, 1)
	eq(t, "evidence", len(evidence(t, s, sid, "")), 0)
}

// ---------------------------------------------------------------- apply

func testApplyCreate(t *testing.T, s graph.Store) {
	sid := newSession(t, s)
	setStatus(t, s, sid, graph.RootShortID, graph.Active)
	res := mustApply(t, s, graph.ApplyRequest{SessionID: sid, Key: "apply/4", Iteration: 4, ActiveTask: graph.RootShortID, Ops: []graph.Op{
		create("a", 2),
		{Kind: graph.OpCreate, Task: "b", Parent: "a", Description: "task b", EmbedText: "embed b", Embedding: Unit(3), DependsOn: []string{"c", graph.RootShortID}},
		create("c", 4),
	}})
	eq(t, "applied", res.Applied, 3)
	eqSlice(t, "created", res.Created, []string{"a", "b", "c"})
	if len(res.Mapped) != 0 || res.RolledBack || res.Replayed {
		t.Fatalf("unexpected result %+v", res)
	}
	ts := tasks(t, s, sid)
	root := ts[graph.RootShortID]
	eq(t, "root n_productive", root.NProductive, 1)
	eq(t, "root status (untouched by creates)", root.Status, graph.Active)
	a, b, c := ts["a"], ts["b"], ts["c"]
	eq(t, "a id", a.ID, graph.TaskID(sid, "a"))
	eq(t, "a parent", a.Parent, root.ID)
	eq(t, "a depth", a.Depth, 1)
	eq(t, "a status", a.Status, graph.Pending)
	eq(t, "a created_iter", a.CreatedIter, 4)
	eq(t, "a description", a.Description, "task a")
	eq(t, "a embed_text", a.EmbedText, "embed a")
	eqSlice(t, "a embedding", a.Embedding, Unit(2))
	eq(t, "a n_productive", a.NProductive, 0)
	eq(t, "b parent", b.Parent, a.ID)
	eq(t, "b depth", b.Depth, 2)
	eqSlice(t, "b depends_on (sorted ids)", b.DependsOn, slices.Sorted(slices.Values([]string{c.ID, root.ID})))
	eq(t, "c depth", c.Depth, 1)

	sub := edges(t, s, sid, graph.SubtaskOf)
	want := []graph.Edge{
		{From: a.ID, To: root.ID, Kind: graph.SubtaskOf},
		{From: b.ID, To: a.ID, Kind: graph.SubtaskOf},
		{From: c.ID, To: root.ID, Kind: graph.SubtaskOf},
	}
	eqSlice(t, "SUBTASK_OF edges", sub, want)
	eq(t, "DEPENDS_ON edges", len(edges(t, s, sid, graph.DependsOn)), 2)

	// An iteration with nothing applied leaves n_productive alone.
	res = mustApply(t, s, graph.ApplyRequest{SessionID: sid, Key: "apply/5", Iteration: 5, ActiveTask: graph.RootShortID, Ops: []graph.Op{
		{Kind: graph.OpContinue, Task: "a"}, // PENDING already: no change
	}})
	eq(t, "applied no-op", res.Applied, 0)
	eq(t, "root n_productive after no-op", tasks(t, s, sid)[graph.RootShortID].NProductive, 1)
}

func testApplyForwardRefs(t *testing.T, s graph.Store) {
	sid := newSession(t, s)
	res := mustApply(t, s, graph.ApplyRequest{SessionID: sid, Key: "apply/1", Iteration: 1, ActiveTask: graph.RootShortID, Ops: []graph.Op{
		create("late-dep", 2, "prereq"),
		{Kind: graph.OpCreate, Task: "grandchild", Parent: "child", Description: "g", EmbedText: "g", Embedding: Unit(3)},
		create("prereq", 4),
		create("child", 5),
	}})
	eq(t, "applied", res.Applied, 4)
	ts := tasks(t, s, sid)
	eqSlice(t, "late-dep deps", ts["late-dep"].DependsOn, []string{graph.TaskID(sid, "prereq")})
	eq(t, "grandchild parent", ts["grandchild"].Parent, graph.TaskID(sid, "child"))
	eq(t, "grandchild depth", ts["grandchild"].Depth, 2)
}

func testApplyOps(t *testing.T, s graph.Store) {
	sid := newSession(t, s)
	mustApply(t, s, graph.ApplyRequest{SessionID: sid, Key: "apply/1", Iteration: 1, ActiveTask: graph.RootShortID, Ops: []graph.Op{
		create("a", 2), create("b", 3), create("c", 4),
	}})
	setStatus(t, s, sid, "a", graph.Active)
	setStatus(t, s, sid, "c", graph.Done)

	res := mustApply(t, s, graph.ApplyRequest{SessionID: sid, Key: "apply/2", Iteration: 2, ActiveTask: "a", Ops: []graph.Op{
		{Kind: graph.OpUpdate, Task: "b", Description: "task b, sharper", EmbedText: "embed b sharper", Embedding: Blend(3, 5, 0.5)},
		{Kind: graph.OpUpdate, Task: "c", Description: "ignored: c is DONE", EmbedText: "ignored", Embedding: Unit(6)},
		{Kind: graph.OpDepend, Task: "b", On: "a"},
		{Kind: graph.OpDepend, Task: "b", On: "a"}, // already there
		{Kind: graph.OpEvidence, Task: "a", Content: "Lithium  dendrites pierce the separator.", EmbedText: "dendrites", Embedding: Unit(7), Source: "https://example.org/d"},
		{Kind: graph.OpEvidence, Task: "b", Content: "lithium dendrites pierce the separator.", EmbedText: "dendrites", Embedding: Unit(7)}, // same content hash
		{Kind: graph.OpComplete, Task: "a", Result: "Dendrites are the failure mode.", EmbedText: "dendrites failure", Embedding: Unit(8)},
	}})
	eq(t, "applied", res.Applied, 4) // update b, depend, evidence, complete
	eq(t, "evidence added", res.Evidence, 1)
	ts := tasks(t, s, sid)
	b := ts["b"]
	eq(t, "b description", b.Description, "task b, sharper")
	eq(t, "b embed_text", b.EmbedText, "embed b sharper")
	eqSlice(t, "b embedding", b.Embedding, Blend(3, 5, 0.5))
	eqSlice(t, "b depends_on", b.DependsOn, []string{graph.TaskID(sid, "a")})
	eq(t, "c description", ts["c"].Description, "task c")
	a := ts["a"]
	eq(t, "a status", a.Status, graph.Done)
	eq(t, "a result", a.ResultSummary, "Dendrites are the failure mode.")
	eqSlice(t, "a result embedding", a.ResultEmbedding, Unit(8))
	eqSlice(t, "a embedding unchanged by complete", a.Embedding, Unit(2))
	eq(t, "a n_productive", a.NProductive, 1)

	ev := evidence(t, s, sid, "")
	if len(ev) != 1 {
		t.Fatalf("evidence = %d items, want 1", len(ev))
	}
	e := ev[0]
	h := graph.ContentHash("Lithium dendrites pierce the separator.")
	eq(t, "evidence hash", e.ContentHash, h)
	eq(t, "evidence id", e.ID, graph.EvidenceID(sid, h))
	eq(t, "evidence kind", e.Kind, graph.KindLLM)
	eq(t, "evidence strength", e.Strength, graph.LLMEvidenceStrength)
	eq(t, "evidence task", e.TaskID, a.ID)
	eq(t, "evidence source", e.SourceURL, "https://example.org/d")
	eq(t, "evidence created_iter", e.CreatedIter, 2)
	eq(t, "evidence content", e.Content, "Lithium  dendrites pierce the separator.")
	eqSlice(t, "evidence embedding", e.Embedding, Unit(7))
	eqSlice(t, "SUPPORTS", edges(t, s, sid, graph.Supports), []graph.Edge{{From: e.ID, To: a.ID, Kind: graph.Supports}})

	// continue: ACTIVE -> PENDING; fail stores the reason.
	setStatus(t, s, sid, "b", graph.Active)
	res = mustApply(t, s, graph.ApplyRequest{SessionID: sid, Key: "apply/3", Iteration: 3, ActiveTask: "b", Ops: []graph.Op{
		{Kind: graph.OpContinue, Task: "b"},
		{Kind: graph.OpFail, Task: "c", Reason: "superseded"},
		{Kind: graph.OpEvidence, Task: "b", Content: "LITHIUM dendrites pierce the separator.", EmbedText: "x", Embedding: Unit(7)},
	}})
	eq(t, "applied", res.Applied, 2)
	eq(t, "evidence (duplicate across requests)", res.Evidence, 0)
	ts = tasks(t, s, sid)
	eq(t, "b status", ts["b"].Status, graph.Pending)
	eq(t, "b n_productive", ts["b"].NProductive, 1)
	eq(t, "c status", ts["c"].Status, graph.Failed)
	eq(t, "c reason", ts["c"].ResultSummary, "superseded")
}

// testApplyRepeats repeats an update and a completion: the store must
// compare them with the targets' stored embeddings (nothing applied, no
// productive iteration), and keep every embedding of the tasks the request
// does not name, whose full state the plan does not write.
func testApplyRepeats(t *testing.T, s graph.Store) {
	sid := newSession(t, s)
	mustApply(t, s, graph.ApplyRequest{SessionID: sid, Key: "apply/1", Iteration: 1, ActiveTask: graph.RootShortID, Ops: []graph.Op{
		create("a", 2), create("b", 3), create("c", 4),
	}})
	mustApply(t, s, graph.ApplyRequest{SessionID: sid, Key: "apply/2", Iteration: 2, ActiveTask: graph.RootShortID, Ops: []graph.Op{
		{Kind: graph.OpComplete, Task: "b", Result: "b found", Embedding: Unit(5)},
		{Kind: graph.OpComplete, Task: "c", Result: "c found", Embedding: Unit(6)},
	}})
	before := tasks(t, s, sid)
	res := mustApply(t, s, graph.ApplyRequest{SessionID: sid, Key: "apply/3", Iteration: 3, ActiveTask: "a", Ops: []graph.Op{
		{Kind: graph.OpUpdate, Task: "a", Description: "task a", Embedding: Unit(2)},
		{Kind: graph.OpComplete, Task: "b", Result: "b found", Embedding: Unit(5)},
	}})
	eq(t, "applied by repeats", res.Applied, 0)
	eq(t, "a n_productive", tasks(t, s, sid)["a"].NProductive, 0)
	// A change to a beside them: a's full state is written, and only a's.
	res = mustApply(t, s, graph.ApplyRequest{SessionID: sid, Key: "apply/4", Iteration: 4, ActiveTask: "a", Ops: []graph.Op{
		{Kind: graph.OpUpdate, Task: "a", Description: "task a, sharper"},
	}})
	eq(t, "applied by the change", res.Applied, 1)
	after := tasks(t, s, sid)
	for short, b := range before {
		a := after[short]
		eqSlice(t, short+" embedding", a.Embedding, b.Embedding)
		eqSlice(t, short+" result embedding", a.ResultEmbedding, b.ResultEmbedding)
	}
	eq(t, "a description", after["a"].Description, "task a, sharper")
	eq(t, "a n_productive", after["a"].NProductive, 1)
	eqSlice(t, "c result embedding", after["c"].ResultEmbedding, Unit(6))
}

func testApplyDedup(t *testing.T, s graph.Store) {
	sid := newSession(t, s)
	mustApply(t, s, graph.ApplyRequest{SessionID: sid, Key: "apply/1", Iteration: 1, ActiveTask: graph.RootShortID, Ops: []graph.Op{
		create("anode", 2),
	}})
	res := mustApply(t, s, graph.ApplyRequest{SessionID: sid, Key: "apply/2", Iteration: 2, ActiveTask: graph.RootShortID, DedupThreshold: 0.95, Ops: []graph.Op{
		{Kind: graph.OpCreate, Task: "anode2", Description: "anode again", EmbedText: "anode again", Embedding: Blend(2, 3, 0.96)},
		{Kind: graph.OpCreate, Task: "anode3", Description: "near anode", EmbedText: "near anode", Embedding: Blend(2, 4, 0.90)},
		// The second create maps onto the first create of this request.
		{Kind: graph.OpCreate, Task: "anode3b", Description: "near anode again", EmbedText: "x", Embedding: Blend(2, 4, 0.90)},
		// Ops naming a mapped id reach the existing task.
		{Kind: graph.OpEvidence, Task: "anode2", Content: "Anode interface evidence", EmbedText: "e", Embedding: Unit(9)},
		{Kind: graph.OpCreate, Task: "sub", Parent: "anode2", Description: "sub of mapped", EmbedText: "sub", Embedding: Unit(10)},
		{Kind: graph.OpDepend, Task: "anode3", On: "anode2"},
	}})
	eqSlice(t, "created", res.Created, []string{"anode3", "sub"})
	if len(res.Mapped) != 2 || res.Mapped["anode2"] != "anode" || res.Mapped["anode3b"] != "anode3" {
		t.Fatalf("mapped = %v, want anode2->anode, anode3b->anode3", res.Mapped)
	}
	eq(t, "applied", res.Applied, 4) // anode3, evidence, sub, depend
	ts := tasks(t, s, sid)
	if _, ok := ts["anode2"]; ok {
		t.Fatal("deduplicated create exists")
	}
	if _, ok := ts["anode3b"]; ok {
		t.Fatal("create deduplicated within the request exists")
	}
	eq(t, "sub parent", ts["sub"].Parent, graph.TaskID(sid, "anode"))
	eq(t, "sub depth", ts["sub"].Depth, 2)
	eqSlice(t, "anode3 deps", ts["anode3"].DependsOn, []string{graph.TaskID(sid, "anode")})
	ev := evidence(t, s, sid, "anode")
	eq(t, "evidence on the existing task", len(ev), 1)

	// A threshold <= 0 disables dedup.
	res = mustApply(t, s, graph.ApplyRequest{SessionID: sid, Key: "apply/3", Iteration: 3, ActiveTask: graph.RootShortID, DedupThreshold: -1, Ops: []graph.Op{
		{Kind: graph.OpCreate, Task: "anode4", Description: "anode once more", EmbedText: "x", Embedding: Unit(2)},
	}})
	eqSlice(t, "created without dedup", res.Created, []string{"anode4"})
}

func testApplyDedupOntoFailed(t *testing.T, s graph.Store) {
	sid := newSession(t, s)
	mustApply(t, s, graph.ApplyRequest{SessionID: sid, Key: "apply/1", Iteration: 1, ActiveTask: graph.RootShortID, Ops: []graph.Op{
		create("dead", 2), create("live", 3),
	}})
	mustApply(t, s, graph.ApplyRequest{SessionID: sid, Key: "apply/2", Iteration: 2, ActiveTask: graph.RootShortID, Ops: []graph.Op{
		{Kind: graph.OpFail, Task: "dead", Reason: "paywalled"},
	}})
	res := mustApply(t, s, graph.ApplyRequest{SessionID: sid, Key: "apply/3", Iteration: 3, ActiveTask: "live", Ops: []graph.Op{
		{Kind: graph.OpCreate, Task: "dead2", Description: "dead again", EmbedText: "x", Embedding: Blend(2, 5, 0.99)},
		{Kind: graph.OpEvidence, Task: "dead2", Content: "would land on a FAILED task", EmbedText: "x", Embedding: Unit(6)},
		{Kind: graph.OpCreate, Task: "below", Parent: "dead2", Description: "below", EmbedText: "x", Embedding: Unit(7)},
		{Kind: graph.OpUpdate, Task: "below", Description: "below, revised", EmbedText: "y"},
		{Kind: graph.OpCreate, Task: "after", Description: "after dead2", EmbedText: "x", Embedding: Unit(8), DependsOn: []string{"dead2"}},
	}})
	eq(t, "mapped", res.Mapped["dead2"], "dead")
	eqSlice(t, "created", res.Created, []string{"after"})
	eq(t, "applied", res.Applied, 1)
	ts := tasks(t, s, sid)
	if _, ok := ts["below"]; ok {
		t.Fatal("create below a task deduplicated onto a FAILED task exists")
	}
	eqSlice(t, "after deps (edge to FAILED dropped)", ts["after"].DependsOn, nil)
	eq(t, "dead unchanged", ts["dead"].ResultSummary, "paywalled")
	eq(t, "evidence", len(evidence(t, s, sid, "")), 0)
}

func testApplyCycle(t *testing.T, s graph.Store) {
	ctx := ctxOf(t)
	sid := newSession(t, s)
	mustApply(t, s, graph.ApplyRequest{SessionID: sid, Key: "apply/1", Iteration: 1, ActiveTask: graph.RootShortID, Ops: []graph.Op{
		create("a", 2), create("b", 3, "a"),
	}})
	before := tasks(t, s, sid)
	beforeEdges := edges(t, s, sid, "")

	req := graph.ApplyRequest{SessionID: sid, Key: "apply/2", Iteration: 2, ActiveTask: "a", DedupThreshold: 0.95, Ops: []graph.Op{
		create("x", 4),
		{Kind: graph.OpUpdate, Task: "a", Description: "changed", EmbedText: "changed"},
		{Kind: graph.OpEvidence, Task: "a", Content: "evidence in a discarded write", EmbedText: "e", Embedding: Unit(5)},
		{Kind: graph.OpComplete, Task: "b", Result: "r", EmbedText: "r", Embedding: Unit(6)},
		{Kind: graph.OpDepend, Task: "a", On: "b"}, // b depends on a: cycle
	}}
	res, err := s.Apply(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if !res.RolledBack || res.Reason == "" {
		t.Fatalf("result %+v, want RolledBack with a reason", res)
	}
	if res.Applied != 0 || res.Evidence != 0 || len(res.Created) != 0 || len(res.Mapped) != 0 {
		t.Fatalf("rolled-back result reports changes: %+v", res)
	}
	after := tasks(t, s, sid)
	if len(after) != len(before) {
		t.Fatalf("tasks after rollback: %d, before %d", len(after), len(before))
	}
	for id, b := range before {
		a := after[id]
		if a.Description != b.Description || a.Status != b.Status || a.NProductive != b.NProductive || !slices.Equal(a.DependsOn, b.DependsOn) {
			t.Fatalf("task %s changed by a rolled-back write: %+v -> %+v", id, b, a)
		}
	}
	eqSlice(t, "edges after rollback", edges(t, s, sid, ""), beforeEdges)
	eq(t, "evidence after rollback", len(evidence(t, s, sid, "")), 0)

	// The retry of the rolled-back key gets the same answer.
	again, err := s.Apply(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Replayed || !again.RolledBack || again.Reason != res.Reason {
		t.Fatalf("retry = %+v, want the recorded rollback replayed", again)
	}

	// Self dependency and a SUBTASK_OF/DEPENDS_ON mixed cycle.
	for i, ops := range [][]graph.Op{
		{{Kind: graph.OpDepend, Task: "a", On: "a"}},
		{{Kind: graph.OpDepend, Task: graph.RootShortID, On: "b"}}, // b -SUBTASK_OF-> root -DEPENDS_ON-> b
		{create("y", 7, "z"), {Kind: graph.OpCreate, Task: "z", Parent: "y", Description: "z", EmbedText: "z", Embedding: Unit(8)}, {Kind: graph.OpDepend, Task: "y", On: "z"}},
	} {
		res := mustApply(t, s, graph.ApplyRequest{SessionID: sid, Key: fmt.Sprintf("apply/cyc-%d", i), Iteration: 3, ActiveTask: "a", Ops: ops})
		if !res.RolledBack {
			t.Fatalf("cycle %d not rolled back: %+v", i, res)
		}
	}
	eq(t, "task count", len(tasks(t, s, sid)), len(before))
	eq(t, "a n_productive", tasks(t, s, sid)["a"].NProductive, 0)
}

func testApplyIdempotent(t *testing.T, s graph.Store) {
	ctx := ctxOf(t)
	sid := newSession(t, s)
	req := graph.ApplyRequest{SessionID: sid, Key: "apply/1", Iteration: 1, ActiveTask: graph.RootShortID, DedupThreshold: 0.95, Ops: []graph.Op{
		create("a", 2),
		{Kind: graph.OpCreate, Task: "a-dup", Description: "a again", EmbedText: "x", Embedding: Blend(2, 9, 0.99)},
		{Kind: graph.OpEvidence, Task: "a", Content: "some fact", EmbedText: "fact", Embedding: Unit(3)},
	}}
	first, err := s.Apply(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if first.Replayed {
		t.Fatal("first apply reported Replayed")
	}
	second, err := s.Apply(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if !second.Replayed {
		t.Fatal("second apply with the same key not Replayed")
	}
	eq(t, "replayed applied", second.Applied, first.Applied)
	eqSlice(t, "replayed created", second.Created, first.Created)
	eq(t, "replayed mapped", second.Mapped["a-dup"], "a")
	eq(t, "replayed evidence", second.Evidence, 1)
	ts := tasks(t, s, sid)
	eq(t, "tasks", len(ts), 2)
	eq(t, "root n_productive counted once", ts[graph.RootShortID].NProductive, 1)
	eq(t, "evidence", len(evidence(t, s, sid, "")), 1)

	// A replay returns the first result even if the ops differ now.
	third, err := s.Apply(ctx, graph.ApplyRequest{SessionID: sid, Key: "apply/1", Iteration: 1, ActiveTask: graph.RootShortID, Ops: []graph.Op{create("zzz", 4)}})
	if err != nil {
		t.Fatal(err)
	}
	if !third.Replayed || !slices.Equal(third.Created, first.Created) {
		t.Fatalf("replay with other ops = %+v", third)
	}
	if _, ok := tasks(t, s, sid)["zzz"]; ok {
		t.Fatal("replayed key applied new ops")
	}
	// Apply keys and AddEvidence keys are separate namespaces.
	ar, err := s.AddEvidence(ctx, sid, "apply/1", "a", []graph.Evidence{{Content: "fresh web fact", Embedding: Unit(5)}})
	if err != nil {
		t.Fatal(err)
	}
	if ar.Replayed || ar.Added != 1 {
		t.Fatalf("AddEvidence with an Apply key = %+v", ar)
	}
	// An empty key is not recorded: the same ops apply again (here: no-ops).
	r1 := mustApply(t, s, graph.ApplyRequest{SessionID: sid, Iteration: 2, ActiveTask: "a", Ops: []graph.Op{{Kind: graph.OpUpdate, Task: "a", Description: "v2"}}})
	r2 := mustApply(t, s, graph.ApplyRequest{SessionID: sid, Iteration: 2, ActiveTask: "a", Ops: []graph.Op{{Kind: graph.OpUpdate, Task: "a", Description: "v2"}}})
	if r1.Applied != 1 || r2.Applied != 0 || r2.Replayed {
		t.Fatalf("keyless applies = %+v, %+v", r1, r2)
	}
}

func testApplyErrors(t *testing.T, s graph.Store) {
	ctx := ctxOf(t)
	sid := newSession(t, s)
	mustApply(t, s, graph.ApplyRequest{SessionID: sid, Key: "apply/1", Iteration: 1, ActiveTask: graph.RootShortID, Ops: []graph.Op{create("a", 2)}})
	cases := []struct {
		name   string
		req    graph.ApplyRequest
		target error
	}{
		{"unknown target", graph.ApplyRequest{ActiveTask: "a", Ops: []graph.Op{create("n1", 3), {Kind: graph.OpUpdate, Task: "ghost", Description: "x"}}}, graph.ErrNotFound},
		{"unknown depend", graph.ApplyRequest{ActiveTask: "a", Ops: []graph.Op{create("n2", 3), {Kind: graph.OpDepend, Task: "a", On: "ghost"}}}, graph.ErrNotFound},
		{"unknown parent", graph.ApplyRequest{ActiveTask: "a", Ops: []graph.Op{{Kind: graph.OpCreate, Task: "n3", Parent: "ghost", Embedding: Unit(3)}}}, graph.ErrNotFound},
		{"unknown active task", graph.ApplyRequest{ActiveTask: "ghost", Ops: []graph.Op{create("n4", 3)}}, graph.ErrNotFound},
		{"existing short id", graph.ApplyRequest{ActiveTask: "a", Ops: []graph.Op{create("n5", 3), create("a", 4)}}, nil},
		{"duplicate new id", graph.ApplyRequest{ActiveTask: "a", Ops: []graph.Op{create("n6", 3), create("n6", 4)}}, nil},
		{"unknown op", graph.ApplyRequest{ActiveTask: "a", Ops: []graph.Op{create("n7", 3), {Kind: "call", Task: "a"}}}, nil},
		{"empty evidence", graph.ApplyRequest{ActiveTask: "a", Ops: []graph.Op{create("n8", 3), {Kind: graph.OpEvidence, Task: "a", Content: "  "}}}, nil},
	}
	for i, c := range cases {
		c.req.SessionID, c.req.Key, c.req.Iteration, c.req.DedupThreshold = sid, fmt.Sprintf("apply/e%d", i), 2, 0.95
		_, err := s.Apply(ctx, c.req)
		if err == nil {
			t.Fatalf("%s: no error", c.name)
		}
		if c.target != nil && !errors.Is(err, c.target) {
			t.Fatalf("%s: error %v, want %v", c.name, err, c.target)
		}
		// Nothing was written and the key was not recorded.
		eq(t, c.name+": tasks", len(tasks(t, s, sid)), 2)
		c.req.Ops = []graph.Op{create(fmt.Sprintf("ok%d", i), 5+i)}
		c.req.ActiveTask = "a"
		res := mustApply(t, s, c.req)
		if res.Replayed || res.Applied != 1 {
			t.Fatalf("%s: key recorded by a failed write: %+v", c.name, res)
		}
		if err := s.ResetSession(ctx, sid); err != nil {
			t.Fatal(err)
		}
		sid = newSession(t, s)
		mustApply(t, s, graph.ApplyRequest{SessionID: sid, Key: "apply/1", Iteration: 1, ActiveTask: graph.RootShortID, Ops: []graph.Op{create("a", 2)}})
	}
}

// ---------------------------------------------------------------- isolation

func testIsolation(t *testing.T, s graph.Store) {
	ctx := ctxOf(t)
	sa, sb := newSession(t, s), newSession(t, s)
	// The same short ids, keys, contents and blob keys in both sessions.
	for i := 1; i <= 3; i++ {
		for _, sid := range []string{sa, sb} {
			ops := []graph.Op{create(fmt.Sprintf("t%d", i), 1+i)}
			if sid == sb {
				ops = append(ops, create(fmt.Sprintf("only-b%d", i), 8+i))
			}
			mustApply(t, s, graph.ApplyRequest{SessionID: sid, Key: fmt.Sprintf("apply/%d", i), Iteration: i, ActiveTask: graph.RootShortID, Ops: ops})
			r, err := s.AddEvidence(ctx, sid, fmt.Sprintf("web/%d", i), fmt.Sprintf("t%d", i), []graph.Evidence{{Content: fmt.Sprintf("shared fact %d", i), Embedding: Unit(i), CreatedIter: i}})
			if err != nil {
				t.Fatal(err)
			}
			eq(t, "added in "+sid, r.Added, 1)
			if err := s.PutBlob(ctx, sid, "svd/1", []byte(sid)); err != nil {
				t.Fatal(err)
			}
		}
	}
	setStatus(t, s, sa, "t1", graph.Done)
	ta, tb := tasks(t, s, sa), tasks(t, s, sb)
	eq(t, "tasks in a", len(ta), 4)
	eq(t, "tasks in b", len(tb), 7)
	eq(t, "t1 in b untouched", tb["t1"].Status, graph.Pending)
	eq(t, "a root n_productive", ta[graph.RootShortID].NProductive, 3)
	for _, x := range ta {
		eq(t, "session of "+x.ShortID, x.SessionID, sa)
	}
	for _, sid := range []string{sa, sb} {
		for _, e := range evidence(t, s, sid, "") {
			eq(t, "evidence session", e.SessionID, sid)
		}
		for _, e := range edges(t, s, sid, "") {
			if !strings.HasPrefix(e.From, sid+"/") || !strings.HasPrefix(e.To, sid+"/") {
				t.Fatalf("edge %v of session %s leaves it", e, sid)
			}
		}
	}
	eq(t, "evidence in a", len(evidence(t, s, sa, "")), 3)

	if err := s.ResetSession(ctx, sa); err != nil {
		t.Fatal(err)
	}
	_, err := s.GetSession(ctx, sa)
	wantErr(t, err, graph.ErrNotFound, "GetSession after reset")
	_, err = s.Tasks(ctx, sa)
	wantErr(t, err, graph.ErrNotFound, "Tasks after reset")
	eq(t, "tasks in b after reset of a", len(tasks(t, s, sb)), 7)
	eq(t, "evidence in b after reset of a", len(evidence(t, s, sb, "")), 3)
	eq(t, "SUPPORTS in b after reset of a", len(edges(t, s, sb, graph.Supports)), 3)
	blob, err := s.GetBlob(ctx, sb, "svd/1")
	if err != nil || string(blob) != sb {
		t.Fatalf("blob of b after reset of a = %q, %v", blob, err)
	}
	// A recreated session starts empty: no tasks, evidence or keys survive.
	if err := s.CreateSession(ctx, graph.Session{ID: sa, Goal: "again"}, graph.Task{Embedding: Unit(0)}); err != nil {
		t.Fatal(err)
	}
	eq(t, "tasks in recreated a", len(tasks(t, s, sa)), 1)
	eq(t, "evidence in recreated a", len(evidence(t, s, sa, "")), 0)
	res := mustApply(t, s, graph.ApplyRequest{SessionID: sa, Key: "apply/1", Iteration: 1, ActiveTask: graph.RootShortID, Ops: []graph.Op{create("t1", 2)}})
	if res.Replayed {
		t.Fatal("idempotency key survived ResetSession")
	}
	_, err = s.GetBlob(ctx, sa, "svd/1")
	wantErr(t, err, graph.ErrNotFound, "blob after reset")
}

// ---------------------------------------------------------------- evidence

func testEvidenceDedup(t *testing.T, s graph.Store) {
	ctx := ctxOf(t)
	sid := newSession(t, s)
	mustApply(t, s, graph.ApplyRequest{SessionID: sid, Key: "apply/1", Iteration: 1, ActiveTask: graph.RootShortID, Ops: []graph.Op{create("a", 2), create("b", 3)}})
	items := []graph.Evidence{
		{Content: "Sulfide electrolytes react with moisture.", SourceURL: "https://a.example/1", Title: "A", Kind: graph.KindHTML, Strength: 0.7, Embedding: Unit(4), CreatedIter: 1},
		{Content: "  sulfide ELECTROLYTES react\nwith moisture. ", SourceURL: "https://b.example/2", Kind: graph.KindPDF, Strength: 0.9, Embedding: Unit(4), CreatedIter: 1},
		{Content: "Interfacial resistance grows with cycling.", SourceURL: "https://a.example/3", Strength: 0.6, Embedding: Unit(5), CreatedIter: 1},
	}
	r, err := s.AddEvidence(ctx, sid, "web/1/0", "a", items)
	if err != nil {
		t.Fatal(err)
	}
	if r.Added != 2 || r.Duplicates != 1 || r.Replayed {
		t.Fatalf("first add = %+v, want 2 added, 1 duplicate", r)
	}
	r, err = s.AddEvidence(ctx, sid, "web/1/0", "a", items)
	if err != nil {
		t.Fatal(err)
	}
	if r.Added != 2 || r.Duplicates != 1 || !r.Replayed {
		t.Fatalf("replayed add = %+v", r)
	}
	// Another key and task: content held for task a is not stored again but
	// supports b too; a repeat within the call is a duplicate.
	second := []graph.Evidence{
		{Content: "Interfacial resistance grows with cycling.", SourceURL: "https://c.example/9", Strength: 0.1, Embedding: Unit(7), CreatedIter: 2},
		{Content: "Voids form at the lithium interface.", Embedding: Unit(6), CreatedIter: 2},
		{Content: "interfacial resistance grows with cycling.", Embedding: Unit(5), CreatedIter: 2},
	}
	r, err = s.AddEvidence(ctx, sid, "web/2/0", "b", second)
	if err != nil {
		t.Fatal(err)
	}
	if r.Added != 1 || r.Linked != 1 || r.Duplicates != 1 || r.Replayed {
		t.Fatalf("second key = %+v, want 1 added, 1 linked, 1 duplicate", r)
	}
	if r, err = s.AddEvidence(ctx, sid, "web/2/0", "b", second); err != nil || r != (graph.AddEvidenceResult{Added: 1, Linked: 1, Duplicates: 1, Replayed: true}) {
		t.Fatalf("replayed second key = %+v, %v", r, err)
	}
	// Content that supports the task already is a duplicate, linked or not.
	r, err = s.AddEvidence(ctx, sid, "web/2/1", "b", second[:1])
	if err != nil || r.Linked != 0 || r.Duplicates != 1 {
		t.Fatalf("linked content again = %+v, %v; want 1 duplicate", r, err)
	}
	shared := graph.ContentHash("Interfacial resistance grows with cycling.")
	for _, task := range []string{"", "a", "b"} {
		n := 0
		for _, e := range evidence(t, s, sid, task) {
			if e.ContentHash != shared {
				continue
			}
			n++
			// The node is the first one: its task, source, strength and
			// embedding; b is a further SUPPORTS target.
			eq(t, "shared task", e.TaskID, graph.TaskID(sid, "a"))
			eqSlice(t, "shared also", e.Also, []string{graph.TaskID(sid, "b")})
			eq(t, "shared source", e.SourceURL, "https://a.example/3")
			eq(t, "shared strength", e.Strength, 0.6)
			eqSlice(t, "shared embedding", e.Embedding, Unit(5))
		}
		eq(t, "shared evidence listed for task "+task, n, 1)
	}
	all := evidence(t, s, sid, "")
	eq(t, "evidence", len(all), 3)
	h := graph.ContentHash("Sulfide electrolytes react with moisture.")
	found := false
	for _, e := range all {
		found = found || e.ContentHash == h
		eq(t, "id", e.ID, graph.EvidenceID(sid, e.ContentHash))
		eq(t, "hash", e.ContentHash, graph.ContentHash(e.Content))
		if e.ContentHash == h {
			// The first item wins; the duplicate changed nothing.
			eq(t, "kept source", e.SourceURL, "https://a.example/1")
			eq(t, "kept title", e.Title, "A")
			eq(t, "kept kind", e.Kind, graph.KindHTML)
			eq(t, "kept strength", e.Strength, 0.7)
			eq(t, "kept task", e.TaskID, graph.TaskID(sid, "a"))
			eqSlice(t, "kept embedding", e.Embedding, Unit(4))
		}
	}
	if !found {
		t.Fatalf("no evidence with the computed hash %s", h)
	}
	eq(t, "evidence of a", len(evidence(t, s, sid, "a")), 2)
	eq(t, "evidence of b", len(evidence(t, s, sid, "b")), 2)
	eq(t, "SUPPORTS", len(edges(t, s, sid, graph.Supports)), 4)
	found = false
	for _, e := range edges(t, s, sid, graph.Supports) {
		found = found || (e.From == graph.EvidenceID(sid, shared) && e.To == graph.TaskID(sid, "b"))
	}
	if !found {
		t.Fatal("no SUPPORTS edge from the shared evidence to b")
	}
	// An evidence op in Apply dedups against ingested evidence too.
	res := mustApply(t, s, graph.ApplyRequest{SessionID: sid, Key: "apply/2", Iteration: 2, ActiveTask: "a", Ops: []graph.Op{
		{Kind: graph.OpEvidence, Task: "a", Content: "voids form at the LITHIUM interface.", EmbedText: "x", Embedding: Unit(6)},
	}})
	eq(t, "apply evidence dup", res.Evidence, 0)
	// A caller-provided hash is kept; kind defaults to text.
	r, err = s.AddEvidence(ctx, sid, "web/3/0", "b", []graph.Evidence{{Content: "custom hashed", ContentHash: "custom-1", CreatedIter: 3}})
	if err != nil || r.Added != 1 {
		t.Fatalf("custom hash add = %+v, %v", r, err)
	}
	last := evidence(t, s, sid, "b")
	got := last[len(last)-1]
	eq(t, "custom hash id", got.ID, graph.EvidenceID(sid, "custom-1"))
	eq(t, "default kind", got.Kind, graph.KindText)
	// Empty content is rejected and nothing of the call is written.
	_, err = s.AddEvidence(ctx, sid, "web/4/0", "b", []graph.Evidence{{Content: "valid one"}, {Content: " "}})
	if err == nil {
		t.Fatal("empty content accepted")
	}
	eq(t, "evidence after rejected call", len(evidence(t, s, sid, "")), 4)
}

func testEvidenceOrderStrengths(t *testing.T, s graph.Store) {
	ctx := ctxOf(t)
	sid := newSession(t, s)
	var items []graph.Evidence
	for i := range 6 {
		items = append(items, graph.Evidence{Content: fmt.Sprintf("fact number %d", i), CreatedIter: 5 - i/2, Strength: 0.5, Embedding: Unit(i)})
	}
	if _, err := s.AddEvidence(ctx, sid, "k", graph.RootShortID, items); err != nil {
		t.Fatal(err)
	}
	all := evidence(t, s, sid, graph.RootShortID)
	eq(t, "count", len(all), 6)
	for i := 1; i < len(all); i++ {
		a, b := all[i-1], all[i]
		if a.CreatedIter > b.CreatedIter || (a.CreatedIter == b.CreatedIter && a.ID >= b.ID) {
			t.Fatalf("evidence not ordered by (CreatedIter, ID): %v then %v", a, b)
		}
	}
	upd := map[string]float64{all[0].ID: 0.9, all[3].ID: 0.1}
	if err := s.SetStrengths(ctx, sid, upd); err != nil {
		t.Fatal(err)
	}
	for _, e := range evidence(t, s, sid, "") {
		want := 0.5
		if v, ok := upd[e.ID]; ok {
			want = v
		}
		eq(t, "strength of "+e.Content, e.Strength, want)
	}
	err := s.SetStrengths(ctx, sid, map[string]float64{all[1].ID: 0.3, graph.EvidenceID(sid, "missing"): 0.2})
	wantErr(t, err, graph.ErrNotFound, "SetStrengths unknown id")
	for _, e := range evidence(t, s, sid, "") {
		if e.ID == all[1].ID && e.Strength != 0.5 {
			t.Fatal("failed SetStrengths wrote part of its updates")
		}
	}
}

// ---------------------------------------------------------------- SIMILAR_TO

func addEv(t *testing.T, s graph.Store, sid, key string, items ...graph.Evidence) []graph.Evidence {
	t.Helper()
	if _, err := s.AddEvidence(ctxOf(t), sid, key, graph.RootShortID, items); err != nil {
		t.Fatal(err)
	}
	out := make([]graph.Evidence, len(items))
	for i, it := range items {
		out[i] = it
		out[i].ContentHash = graph.ContentHash(it.Content)
		out[i].ID = graph.EvidenceID(sid, out[i].ContentHash)
	}
	return out
}

func testReplaceSimilar(t *testing.T, s graph.Store) {
	ctx := ctxOf(t)
	sid := newSession(t, s)
	ev := addEv(t, s, sid, "k",
		graph.Evidence{Content: "e0", Embedding: Unit(0)},
		graph.Evidence{Content: "e1", Embedding: Unit(1)},
		graph.Evidence{Content: "e2", Embedding: Unit(2)},
		graph.Evidence{Content: "e3", Embedding: Unit(3)},
	)
	id := func(i int) string { return ev[i].ID }
	all := []string{id(0), id(1), id(2), id(3)}
	err := s.ReplaceSimilar(ctx, sid, all, []graph.Edge{
		{From: id(1), To: id(0), Kind: graph.SimilarTo, Weight: 0.9, Label: graph.LabelEntailment},
		{From: id(2), To: id(3), Weight: 0.85},
		{From: id(2), To: id(2), Weight: 1}, // self loop dropped
	})
	if err != nil {
		t.Fatal(err)
	}
	got := edges(t, s, sid, graph.SimilarTo)
	if len(got) != 2 {
		t.Fatalf("edges = %v", got)
	}
	for _, e := range got {
		if e.From >= e.To {
			t.Fatalf("edge not normalised: %v", e)
		}
		if (e.From == min(id(0), id(1))) && (e.Weight != 0.9 || e.Label != graph.LabelEntailment) {
			t.Fatalf("edge fields lost: %v", e)
		}
	}
	// Replacing within {0,1,2}: the 2-3 edge touches evidence out of scope and stays.
	if err := s.ReplaceSimilar(ctx, sid, all[:3], []graph.Edge{{From: id(0), To: id(2), Weight: 0.8}}); err != nil {
		t.Fatal(err)
	}
	got = edges(t, s, sid, graph.SimilarTo)
	pairs := map[[2]string]bool{}
	for _, e := range got {
		pairs[[2]string{e.From, e.To}] = true
	}
	if len(got) != 2 || !pairs[[2]string{min(id(0), id(2)), max(id(0), id(2))}] || !pairs[[2]string{min(id(2), id(3)), max(id(2), id(3))}] {
		t.Fatalf("after scoped replace: %v", got)
	}
	// Endpoints outside the scope or the session are rejected, and nothing changes.
	err = s.ReplaceSimilar(ctx, sid, all[:2], []graph.Edge{{From: id(0), To: id(3), Weight: 0.9}})
	wantErr(t, err, graph.ErrNotFound, "edge leaving the scope")
	err = s.ReplaceSimilar(ctx, sid, []string{id(0), graph.EvidenceID(sid, "nope")}, nil)
	wantErr(t, err, graph.ErrNotFound, "unknown scope id")
	eq(t, "edges after rejected replaces", len(edges(t, s, sid, graph.SimilarTo)), 2)
}

// fakeNLI labels by markers in the texts: "contra" in either -> contradiction,
// "agree" in both -> entailment, else neutral. It counts the pairs it saw.
type fakeNLI struct {
	pairs int
	calls int
	fail  bool
}

func (f *fakeNLI) Classify(_ context.Context, pairs []graph.TextPair) ([]string, error) {
	f.calls++
	if f.fail {
		return nil, errors.New("nli endpoint unavailable")
	}
	f.pairs += len(pairs)
	out := make([]string, len(pairs))
	for i, p := range pairs {
		switch {
		case strings.Contains(p.Premise, "contra") || strings.Contains(p.Hypothesis, "contra"):
			out[i] = "contradiction"
		case strings.Contains(p.Premise, "agree") && strings.Contains(p.Hypothesis, "agree"):
			out[i] = "ENTAILMENT" // labels are normalised
		default:
			out[i] = "neutral"
		}
	}
	return out, nil
}

func testSyncSimilar(t *testing.T, s graph.Store) {
	ctx := ctxOf(t)
	sid := newSession(t, s)
	ev := addEv(t, s, sid, "k",
		// A: entailment between independent sources.
		graph.Evidence{Content: "agree: cracks start at grain boundaries", SourceURL: "https://a.example/x", Strength: 0.5, Embedding: Unit(2)},
		graph.Evidence{Content: "agree: grain boundaries are where cracks begin", SourceURL: "https://www.b.example/y", Strength: 0.5, Embedding: Blend(2, 3, 0.95)},
		// B: contradiction between independent sources.
		graph.Evidence{Content: "contra: dendrites cannot grow in ceramics", SourceURL: "https://c.example/1", Strength: 0.5, Embedding: Unit(5)},
		graph.Evidence{Content: "dendrites grow through ceramic electrolytes", SourceURL: "https://d.example/1", Strength: 0.5, Embedding: Blend(5, 6, 0.90)},
		// C: entailment from the same host: no corroboration.
		graph.Evidence{Content: "agree: stack pressure matters", SourceURL: "https://e.example/1", Strength: 0.5, Embedding: Unit(8)},
		graph.Evidence{Content: "agree: pressure on the stack matters", SourceURL: "https://e.example/2", Strength: 0.5, Embedding: Blend(8, 9, 0.92)},
		// Unrelated and weakly related items.
		graph.Evidence{Content: "agree: the weather was nice", SourceURL: "https://f.example/1", Strength: 0.5, Embedding: Unit(12)},
		graph.Evidence{Content: "agree: halfway related", SourceURL: "https://g.example/1", Strength: 0.5, Embedding: Blend(2, 13, 0.5)},
		// No embedding: ignored.
		graph.Evidence{Content: "agree: no vector", SourceURL: "https://h.example/1", Strength: 0.5},
	)
	nli := &fakeNLI{}
	p := graph.SimilarParams{Threshold: 0.80, MaxPerNode: 8}
	st, err := graph.SyncSimilar(ctx, s, sid, p, nli)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "embedded evidence", st.Evidence, 8)
	eq(t, "edges", st.Edges, 3)
	eq(t, "classified", st.Classified, 3)
	got := edges(t, s, sid, graph.SimilarTo)
	want := map[[2]string]string{
		pair(ev[0].ID, ev[1].ID): graph.LabelEntailment,
		pair(ev[2].ID, ev[3].ID): graph.LabelContradiction,
		pair(ev[4].ID, ev[5].ID): graph.LabelEntailment,
	}
	weight := map[[2]string]float64{}
	if len(got) != len(want) {
		t.Fatalf("SIMILAR_TO = %v, want 3 edges", got)
	}
	for _, e := range got {
		k := [2]string{e.From, e.To}
		l, ok := want[k]
		if !ok {
			t.Fatalf("unexpected SIMILAR_TO %v", e)
		}
		eq(t, "label", e.Label, l)
		weight[k] = e.Weight
	}
	if w := weight[pair(ev[0].ID, ev[1].ID)]; math.Abs(w-0.95) > 1e-6 {
		t.Fatalf("weight = %v, want cosine 0.95", w)
	}
	strength := func() map[string]float64 {
		m := map[string]float64{}
		for _, e := range evidence(t, s, sid, "") {
			m[e.ID] = e.Strength
		}
		return m
	}
	str := strength()
	wA := weight[pair(ev[0].ID, ev[1].ID)]
	wB := weight[pair(ev[2].ID, ev[3].ID)]
	for i, want := range []float64{
		graph.RefineStrength(0.5, wA, 0), graph.RefineStrength(0.5, wA, 0),
		graph.RefineStrength(0.5, 0, wB), graph.RefineStrength(0.5, 0, wB),
		0.5, 0.5, 0.5, 0.5, 0.5,
	} {
		if math.Abs(str[ev[i].ID]-want) > 1e-9 {
			t.Fatalf("strength of %q = %v, want %v", ev[i].Content, str[ev[i].ID], want)
		}
	}
	if !(str[ev[0].ID] > 0.5 && str[ev[2].ID] < 0.5 && str[ev[2].ID] > 0.45) {
		t.Fatalf("boost/penalty out of shape: %v", str)
	}

	// A second sync is a fixed point: labels reused, nothing classified or changed.
	st, err = graph.SyncSimilar(ctx, s, sid, p, nli)
	if err != nil {
		t.Fatal(err)
	}
	if st.Classified != 0 || st.Reused != 3 || st.Refined != 0 || nli.pairs != 3 {
		t.Fatalf("second sync = %+v (classifier saw %d pairs)", st, nli.pairs)
	}
	eqSlice(t, "edges after second sync", edges(t, s, sid, graph.SimilarTo), got)
	for id, v := range strength() {
		eq(t, "strength after second sync", v, str[id])
	}

	// A re-scored item becomes the new base of its refinement.
	if err := s.SetStrengths(ctx, sid, map[string]float64{ev[0].ID: 0.8}); err != nil {
		t.Fatal(err)
	}
	if _, err := graph.SyncSimilar(ctx, s, sid, p, nli); err != nil {
		t.Fatal(err)
	}
	if v := strength()[ev[0].ID]; math.Abs(v-graph.RefineStrength(0.8, wA, 0)) > 1e-9 {
		t.Fatalf("re-based strength = %v", v)
	}

	// New near-duplicate evidence joins on the next sync; only the new pairs
	// are classified.
	ev2 := addEv(t, s, sid, "k2", graph.Evidence{Content: "agree: cracks nucleate at grain boundaries", SourceURL: "https://i.example/z", Strength: 0.5, Embedding: Blend(2, 4, 0.97), CreatedIter: 2})
	st, err = graph.SyncSimilar(ctx, s, sid, p, nli)
	if err != nil {
		t.Fatal(err)
	}
	if st.Edges != 5 || st.Classified != 2 || st.Reused != 3 {
		t.Fatalf("sync after new evidence = %+v", st)
	}
	for _, e := range edges(t, s, sid, graph.SimilarTo) {
		if (e.From == ev2[0].ID || e.To == ev2[0].ID) && e.Label != graph.LabelEntailment {
			t.Fatalf("new edge %v not classified", e)
		}
	}

	// Without a classifier, edges are kept unlabelled and strengths stay.
	sid2 := newSession(t, s)
	addEv(t, s, sid2, "k",
		graph.Evidence{Content: "agree: one", SourceURL: "https://a.example", Strength: 0.5, Embedding: Unit(2)},
		graph.Evidence{Content: "agree: two", SourceURL: "https://b.example", Strength: 0.5, Embedding: Blend(2, 3, 0.9)},
	)
	st, err = graph.SyncSimilar(ctx, s, sid2, p, nil)
	if err != nil || st.Edges != 1 || st.Classified != 0 {
		t.Fatalf("sync without NLI = %+v, %v", st, err)
	}
	for _, e := range edges(t, s, sid2, graph.SimilarTo) {
		eq(t, "label without NLI", e.Label, "")
	}
	for _, e := range evidence(t, s, sid2, "") {
		eq(t, "strength without NLI", e.Strength, 0.5)
	}
	// SIMILAR_TO of one session never touches another.
	eq(t, "edges in first session", len(edges(t, s, sid, graph.SimilarTo)), 5)
}

func pair(a, b string) [2]string {
	if a > b {
		a, b = b, a
	}
	return [2]string{a, b}
}

func testSyncCapAndFailure(t *testing.T, s graph.Store) {
	ctx := ctxOf(t)
	sid := newSession(t, s)
	addEv(t, s, sid, "k",
		graph.Evidence{Content: "agree: v0", SourceURL: "https://a.example", Strength: 0.5, Embedding: Unit(2)},
		graph.Evidence{Content: "agree: v1", SourceURL: "https://b.example", Strength: 0.5, Embedding: Blend(2, 3, 0.99)},
		graph.Evidence{Content: "agree: v2", SourceURL: "https://c.example", Strength: 0.5, Embedding: Blend(2, 4, 0.98)},
		graph.Evidence{Content: "agree: v3", SourceURL: "https://d.example", Strength: 0.5, Embedding: Blend(2, 5, 0.97)},
	)
	failing := &fakeNLI{fail: true}
	st, err := graph.SyncSimilar(ctx, s, sid, graph.SimilarParams{Threshold: 0.8, MaxPerNode: 1}, failing)
	if err != nil {
		t.Fatalf("a failing classifier is not fatal: %v", err)
	}
	if st.NLIError == "" || st.Classified != 0 {
		t.Fatalf("stats = %+v, want NLIError set", st)
	}
	got := edges(t, s, sid, graph.SimilarTo)
	eq(t, "edges under MaxPerNode=1", len(got), 2)
	deg := map[string]int{}
	for _, e := range got {
		deg[e.From]++
		deg[e.To]++
		eq(t, "label after NLI failure", e.Label, "")
	}
	for id, d := range deg {
		if d > 1 {
			t.Fatalf("degree of %s = %d > 1", id, d)
		}
	}
	for _, e := range evidence(t, s, sid, "") {
		eq(t, "strength after NLI failure", e.Strength, 0.5)
	}
	// The next sync with a working classifier labels the same edges.
	nli := &fakeNLI{}
	st, err = graph.SyncSimilar(ctx, s, sid, graph.SimilarParams{Threshold: 0.8, MaxPerNode: 1}, nli)
	if err != nil || st.Classified != 2 || st.NLIError != "" {
		t.Fatalf("retry sync = %+v, %v", st, err)
	}
	if _, err := graph.SyncSimilar(ctx, s, sid, graph.SimilarParams{}, nli); err == nil {
		t.Fatal("zero threshold accepted")
	}
}

// cancelAfter is a classifier that answers like fakeNLI for n calls, then
// cancels its context and fails: a worker killed in the middle of a sync.
type cancelAfter struct {
	fakeNLI
	n      int
	cancel context.CancelFunc
}

func (c *cancelAfter) Classify(ctx context.Context, pairs []graph.TextPair) ([]string, error) {
	if c.calls >= c.n {
		c.calls++
		c.cancel()
		return nil, ctx.Err()
	}
	return c.fakeNLI.Classify(ctx, pairs)
}

// testSyncLabelCache: MaxClassify bounds a sync's classifier work
// (strongest pairs first, the rest deferred); labels live in the label
// cache keyed by content hashes, so a sync cut short after one batch and
// retried pays only for the rest, and an edge that disappears and comes
// back is not classified again.
func testSyncLabelCache(t *testing.T, s graph.Store) {
	ctx := ctxOf(t)
	sid := newSession(t, s)
	addEv(t, s, sid, "k",
		graph.Evidence{Content: "agree: a0", SourceURL: "https://a.example", Strength: 0.5, Embedding: Unit(2)},
		graph.Evidence{Content: "agree: a1", SourceURL: "https://b.example", Strength: 0.5, Embedding: Blend(2, 3, 0.99)},
		graph.Evidence{Content: "contra: b0", SourceURL: "https://c.example", Strength: 0.5, Embedding: Unit(5)},
		graph.Evidence{Content: "b1", SourceURL: "https://d.example", Strength: 0.5, Embedding: Blend(5, 6, 0.95)},
		graph.Evidence{Content: "c0", SourceURL: "https://e.example", Strength: 0.5, Embedding: Unit(8)},
		graph.Evidence{Content: "c1", SourceURL: "https://f.example", Strength: 0.5, Embedding: Blend(8, 9, 0.90)},
	)
	p := graph.SimilarParams{Threshold: 0.8, MaxPerNode: 8, NLIBatch: 1, MaxClassify: 2}

	// Killed after the first batch: the sync fails, one label is cached.
	cctx, cancel := context.WithCancel(ctx)
	killed := &cancelAfter{n: 1, cancel: cancel}
	if _, err := graph.SyncSimilar(cctx, s, sid, p, killed); err == nil {
		t.Fatal("a sync whose context was cancelled mid-classification returned no error")
	}
	eq(t, "pairs classified before the kill", killed.pairs, 1)

	// The retry takes the cached label and classifies one more (the bound).
	p.MaxClassify = 1
	nli := &fakeNLI{}
	st, err := graph.SyncSimilar(ctx, s, sid, p, nli)
	if err != nil {
		t.Fatal(err)
	}
	if st.Edges != 3 || st.Cached != 1 || st.Classified != 1 || st.Deferred != 1 || nli.pairs != 1 {
		t.Fatalf("retry = %+v (classifier saw %d pairs), want 1 cached, 1 classified, 1 deferred", st, nli.pairs)
	}
	labelOf := func() map[float64]string {
		m := map[float64]string{}
		for _, e := range edges(t, s, sid, graph.SimilarTo) {
			m[math.Round(e.Weight*100)/100] = e.Label
		}
		return m
	}
	// Strongest first: the 0.99 and 0.95 pairs are labelled, 0.90 waits.
	got := labelOf()
	eq(t, "label of the 0.99 pair", got[0.99], graph.LabelEntailment)
	eq(t, "label of the 0.95 pair", got[0.95], graph.LabelContradiction)
	eq(t, "label of the deferred 0.90 pair", got[0.90], "")

	// The next sync labels the deferred pair only.
	st, err = graph.SyncSimilar(ctx, s, sid, p, nli)
	if err != nil || st.Classified != 1 || st.Reused != 2 || st.Deferred != 0 {
		t.Fatalf("third sync = %+v, %v", st, err)
	}

	// Edges dropped (a stricter threshold) and restored: labels come back
	// from the cache, nothing is classified again.
	if _, err := graph.SyncSimilar(ctx, s, sid, graph.SimilarParams{Threshold: 0.999}, nli); err != nil {
		t.Fatal(err)
	}
	eq(t, "edges at 0.999", len(edges(t, s, sid, graph.SimilarTo)), 0)
	before := nli.pairs
	st, err = graph.SyncSimilar(ctx, s, sid, p, nli)
	if err != nil || st.Cached != 3 || st.Classified != 0 || nli.pairs != before {
		t.Fatalf("restored sync = %+v, %v (classifier saw %d more pairs)", st, err, nli.pairs-before)
	}
	eq(t, "restored label", labelOf()[0.90], graph.LabelNeutral)
}

// testSyncPrefilter checks the centroid pre-filter against exhaustive
// comparison on clustered data: the same edges (or nearly), fewer pairs.
func testSyncPrefilter(t *testing.T, s graph.Store) {
	ctx := ctxOf(t)
	const groups, per = 16, 12
	var items []graph.Evidence
	// Deterministic pseudo-random unit vectors around well separated centers.
	seed := uint64(42)
	rnd := func() float64 {
		seed ^= seed << 13
		seed ^= seed >> 7
		seed ^= seed << 17
		return float64(seed%1_000_000)/1_000_000 - 0.5
	}
	for g := range groups {
		center := make([]float64, Dim)
		center[g%Dim] = 1
		center[(g+5)%Dim] = 0.3 * float64(g%3)
		for i := range per {
			v := make([]float32, Dim)
			var nn float64
			for d := range v {
				x := center[d] + 0.12*rnd()
				v[d] = float32(x)
				nn += x * x
			}
			for d := range v {
				v[d] = float32(float64(v[d]) / math.Sqrt(nn))
			}
			items = append(items, graph.Evidence{Content: fmt.Sprintf("group %d item %d", g, i), Strength: 0.5, Embedding: v})
		}
	}
	sidA, sidB := newSession(t, s), newSession(t, s)
	addEv(t, s, sidA, "k", items...)
	addEv(t, s, sidB, "k", items...)
	n := len(items)
	exact, err := graph.SyncSimilar(ctx, s, sidA, graph.SimilarParams{Threshold: 0.9, Probes: n}, nil)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "exhaustive compares all pairs", exact.Compared, n*(n-1)/2)
	fast, err := graph.SyncSimilar(ctx, s, sidB, graph.SimilarParams{Threshold: 0.9}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if fast.Clusters < 2 || fast.Compared >= exact.Compared/2 {
		t.Fatalf("pre-filter compared %d of %d pairs in %d clusters", fast.Compared, exact.Compared, fast.Clusters)
	}
	key := func(sid string) map[[2]string]bool {
		m := map[[2]string]bool{}
		for _, e := range edges(t, s, sid, graph.SimilarTo) {
			m[[2]string{strings.TrimPrefix(e.From, sid), strings.TrimPrefix(e.To, sid)}] = true
		}
		return m
	}
	ea, eb := key(sidA), key(sidB)
	if len(ea) == 0 {
		t.Fatal("no edges in the exhaustive run")
	}
	hit := 0
	for k := range eb {
		if !ea[k] {
			t.Fatalf("pre-filtered edge %v not found exhaustively", k)
		}
		hit++
	}
	if recall := float64(hit) / float64(len(ea)); recall < 0.95 {
		t.Fatalf("pre-filter recall %.3f (%d of %d edges)", recall, hit, len(ea))
	}
	// Deterministic: a second run gives the same edges.
	if _, err := graph.SyncSimilar(ctx, s, sidB, graph.SimilarParams{Threshold: 0.9}, nil); err != nil {
		t.Fatal(err)
	}
	again := key(sidB)
	if len(again) != len(eb) {
		t.Fatalf("second run: %d edges, first %d", len(again), len(eb))
	}
	for k := range eb {
		if !again[k] {
			t.Fatalf("edge %v missing in the second run", k)
		}
	}
}

// ---------------------------------------------------------------- blobs, order, concurrency

func testBlobs(t *testing.T, s graph.Store) {
	ctx := ctxOf(t)
	sid, other := newSession(t, s), newSession(t, s)
	_, err := s.GetBlob(ctx, sid, "svd/3")
	wantErr(t, err, graph.ErrNotFound, "missing blob")
	data := []byte{0, 1, 2, 255}
	if err := s.PutBlob(ctx, sid, "svd/3", data); err != nil {
		t.Fatal(err)
	}
	data[0] = 9 // the store keeps its own copy
	got, err := s.GetBlob(ctx, sid, "svd/3")
	if err != nil || string(got) != string([]byte{0, 1, 2, 255}) {
		t.Fatalf("blob = %v, %v", got, err)
	}
	if err := s.PutBlob(ctx, sid, "svd/3", []byte("v2")); err != nil {
		t.Fatal(err)
	}
	got, _ = s.GetBlob(ctx, sid, "svd/3")
	eq(t, "overwritten blob", string(got), "v2")
	if err := s.PutBlob(ctx, sid, "empty", nil); err != nil {
		t.Fatal(err)
	}
	got, err = s.GetBlob(ctx, sid, "empty")
	if err != nil || len(got) != 0 {
		t.Fatalf("empty blob = %v, %v", got, err)
	}
	_, err = s.GetBlob(ctx, other, "svd/3")
	wantErr(t, err, graph.ErrNotFound, "blob of another session")
	big := make([]byte, 256<<10)
	for i := range big {
		big[i] = byte(i * 7)
	}
	if err := s.PutBlob(ctx, sid, "big", big); err != nil {
		t.Fatal(err)
	}
	got, _ = s.GetBlob(ctx, sid, "big")
	eqSlice(t, "big blob", got, big)

	// Several at once: absent keys are absent, not errors.
	if err := s.PutBlobs(ctx, sid, map[string][]byte{"m/1": []byte("one"), "m/2": nil, "svd/3": []byte("v3")}); err != nil {
		t.Fatal(err)
	}
	many, err := s.GetBlobs(ctx, sid, []string{"m/1", "m/2", "svd/3", "m/absent"})
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "blobs read", len(many), 3)
	eq(t, "blob m/1", string(many["m/1"]), "one")
	eq(t, "blob m/2", len(many["m/2"]), 0)
	eq(t, "blob svd/3 overwritten", string(many["svd/3"]), "v3")
	if err := s.PutBlobs(ctx, sid, map[string][]byte{"m/1": []byte("changed"), "": []byte("x")}); err == nil {
		t.Fatal("PutBlobs took an empty key")
	}
	got, _ = s.GetBlob(ctx, sid, "m/1")
	eq(t, "PutBlobs is all or none", string(got), "one")
	_, err = s.GetBlobs(ctx, "no-such-session", []string{"m/1"})
	wantErr(t, err, graph.ErrNotFound, "GetBlobs of an unknown session")
	wantErr(t, s.PutBlobs(ctx, "no-such-session", map[string][]byte{"k": nil}), graph.ErrNotFound, "PutBlobs of an unknown session")
	none, err := s.GetBlobs(ctx, other, []string{"m/1"})
	if err != nil || len(none) != 0 {
		t.Fatalf("blobs of another session: %v, %v", none, err)
	}
}

func testOrdering(t *testing.T, s graph.Store) {
	ctx := ctxOf(t)
	sid := newSession(t, s)
	// Created out of lexical order, across iterations.
	mustApply(t, s, graph.ApplyRequest{SessionID: sid, Key: "apply/3", Iteration: 3, ActiveTask: graph.RootShortID, Ops: []graph.Op{create("zeta", 2), create("beta", 3)}})
	mustApply(t, s, graph.ApplyRequest{SessionID: sid, Key: "apply/1", Iteration: 1, ActiveTask: graph.RootShortID, Ops: []graph.Op{create("yak", 4), create("alpha", 5, "zeta")}})
	mustApply(t, s, graph.ApplyRequest{SessionID: sid, Key: "apply/2", Iteration: 2, ActiveTask: "yak", Ops: []graph.Op{create("gamma", 6)}})
	ts, err := s.Tasks(ctx, sid)
	if err != nil {
		t.Fatal(err)
	}
	eqSlice(t, "tasks order", shortIDs(ts), []string{graph.RootShortID, "alpha", "yak", "gamma", "beta", "zeta"})
	eqSlice(t, "ready order", ready(t, s, sid), []string{graph.RootShortID, "yak", "gamma", "beta", "zeta"})
	for range 3 {
		ts2, _ := s.Tasks(ctx, sid)
		eqSlice(t, "tasks order is stable", shortIDs(ts2), shortIDs(ts))
	}
	addEv(t, s, sid, "k",
		graph.Evidence{Content: "late", CreatedIter: 9, Embedding: Unit(1)},
		graph.Evidence{Content: "early b", CreatedIter: 1, Embedding: Unit(2)},
		graph.Evidence{Content: "early a", CreatedIter: 1, Embedding: Unit(3)},
	)
	ev := evidence(t, s, sid, "")
	want := slices.Clone(ev)
	graph.SortEvidence(want)
	eqSlice(t, "evidence order", evIDs(ev), evIDs(want))
	eq(t, "last evidence", ev[2].Content, "late")
	es, err := s.Edges(ctx, sid)
	if err != nil {
		t.Fatal(err)
	}
	sorted := slices.Clone(es)
	graph.SortEdges(sorted)
	eqSlice(t, "edges order", es, sorted)
	kinds := map[graph.EdgeKind]int{}
	for _, e := range es {
		kinds[e.Kind]++
	}
	if kinds[graph.SubtaskOf] != 5 || kinds[graph.DependsOn] != 1 || kinds[graph.Supports] != 3 {
		t.Fatalf("edge kinds = %v", kinds)
	}
}

func evIDs(es []graph.Evidence) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.ID
	}
	return out
}

func testConcurrency(t *testing.T, s graph.Store) {
	ctx := ctxOf(t)
	sid := newSession(t, s)
	const workers, calls, distinct = 8, 6, 20
	type outcome struct {
		added, dups, replayed int
		err                   error
	}
	results := make(chan outcome, 2*workers*calls+workers)
	done := make(chan struct{})
	for w := range workers {
		go func() {
			defer func() { done <- struct{}{} }()
			for c := range calls {
				var items []graph.Evidence
				for k := range 4 {
					n := (w*3 + c*5 + k) % distinct
					items = append(items, graph.Evidence{Content: fmt.Sprintf("concurrent fact %d", n), Embedding: Unit(n), CreatedIter: c})
				}
				r, err := s.AddEvidence(ctx, sid, fmt.Sprintf("web/%d/%d", w, c), graph.RootShortID, items)
				results <- outcome{r.Added, r.Duplicates, b2i(r.Replayed), err}
				// Readers run alongside the writers.
				if _, err := s.Evidence(ctx, sid, ""); err != nil {
					results <- outcome{err: err}
				}
			}
			// Every worker also retries one shared key.
			r, err := s.AddEvidence(ctx, sid, "web/shared", graph.RootShortID, []graph.Evidence{{Content: "shared item", Embedding: Unit(15)}})
			results <- outcome{r.Added, r.Duplicates, b2i(r.Replayed), err}
		}()
	}
	for range workers {
		<-done
	}
	close(results)
	var added, replayed int
	for r := range results {
		if r.err != nil {
			t.Fatal(r.err)
		}
		if r.replayed == 0 {
			added += r.added
		}
		replayed += r.replayed
	}
	all := evidence(t, s, sid, "")
	used := map[int]bool{}
	for w := range workers {
		for c := range calls {
			for k := range 4 {
				used[(w*3+c*5+k)%distinct] = true
			}
		}
	}
	eq(t, "stored evidence", len(all), len(used)+1)
	eq(t, "sum of Added over first calls", added, len(used)+1)
	eq(t, "replays of the shared key", replayed, workers-1)
	seen := map[string]bool{}
	for _, e := range all {
		if seen[e.ContentHash] {
			t.Fatalf("duplicate content hash %s", e.ContentHash)
		}
		seen[e.ContentHash] = true
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// ---------------------------------------------------------------- lane payloads (#14)

// testEvidenceCounts: EvidenceCounts agrees with Evidence filtered per
// task, counts content linked to a second task for both, leaves tasks
// without evidence out, sees no other session, and fails for an unknown
// session.
func testEvidenceCounts(t *testing.T, s graph.Store) {
	ctx := ctxOf(t)
	sid, other := newSession(t, s), newSession(t, s)
	mustApply(t, s, graph.ApplyRequest{SessionID: sid, Key: "apply/1", Iteration: 1, ActiveTask: graph.RootShortID,
		Ops: []graph.Op{create("a", 2), create("b", 3), create("c", 4)}})
	ev := func(content string) graph.Evidence {
		return graph.Evidence{Content: content, Strength: 0.5, Embedding: Unit(len(content))}
	}
	add := func(sid, key, task string, items ...graph.Evidence) {
		t.Helper()
		if _, err := s.AddEvidence(ctx, sid, key, task, items); err != nil {
			t.Fatal(err)
		}
	}
	add(sid, "k1", graph.RootShortID, ev("one"), ev("two"), ev("three"))
	add(sid, "k2", "a", ev("two"), ev("four!")) // "two" is linked: it supports root and a
	add(sid, "k3", "b", ev("five!!"))
	add(other, "k1", graph.RootShortID, ev("elsewhere"), ev("and more"))

	per, err := s.EvidenceCounts(ctx, sid)
	if err != nil {
		t.Fatalf("EvidenceCounts: %v", err)
	}
	total, err := s.EvidenceCount(ctx, sid)
	if err != nil {
		t.Fatalf("EvidenceCount: %v", err)
	}
	eq(t, "total (EvidenceCount)", total, 5)
	eq(t, "root", per[graph.RootShortID], 3)
	eq(t, "a", per["a"], 2)
	eq(t, "b", per["b"], 1)
	if n, ok := per["c"]; ok {
		t.Fatalf("task without evidence is in the counts with %d", n)
	}
	eq(t, "tasks with evidence", len(per), 3)
	for _, id := range []string{graph.RootShortID, "a", "b", "c"} {
		eq(t, "count of "+id+" against Evidence(task)", per[id], len(evidence(t, s, sid, id)))
	}
	per, err = s.EvidenceCounts(ctx, other)
	if err != nil {
		t.Fatal(err)
	}
	if total, err = s.EvidenceCount(ctx, other); err != nil {
		t.Fatal(err)
	}
	eq(t, "other session total", total, 2)
	eq(t, "other session root", per[graph.RootShortID], 2)
	_, err = s.EvidenceCounts(ctx, newSessionID(t))
	wantErr(t, err, graph.ErrNotFound, "EvidenceCounts unknown session")
}
