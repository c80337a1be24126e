package neo4j_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/graph/neo4j"
)

// TestWalkCache reads a walk's rounds around a task of 300 items through a
// store with the walk cache and through one without, and wants the same
// answer every time: on the first read (which fills the cache), on the
// next (served from it), after a page of a later iteration is added (the
// copy is brought up to date from the new items), after an item stamped
// late and after an item of another task is linked to it (read again),
// after another process resets the session and writes it again under the
// same id with as many items (the generation changes), and for a session
// an older binary created without a generation (never kept).
func TestWalkCache(t *testing.T) {
	cfg := serverConfig(t)
	plain := open(t, cfg)
	cfg.WalkCacheMiB = 16
	cached := open(t, cfg)
	sid := fmt.Sprintf("walkcache-%d", time.Now().UnixNano())
	t.Cleanup(func() { _ = plain.ResetSession(t.Context(), sid) })
	rng := rand.New(rand.NewPCG(7, 8))

	ids := walkSession(t, plain, sid, rng, "first")
	same := func(step string, known func(string) bool) {
		t.Helper()
		want, err := plain.NeighbourhoodShape(t.Context(), sid, ids, known)
		if err != nil {
			t.Fatal(err)
		}
		got, err := cached.NeighbourhoodShape(t.Context(), sid, ids, known)
		if err != nil {
			t.Fatal(err)
		}
		sameShape(t, step, got, want)
	}
	wantSize := func(step string, tasks, items int) {
		t.Helper()
		if gt, gi := neo4j.WalkCacheSize(cached); gt != tasks || gi != items {
			t.Fatalf("%s: the cache holds %d tasks and %d items, want %d and %d", step, gt, gi, tasks, items)
		}
	}
	wantUses := func(step string, hits, caught, reread int64) {
		t.Helper()
		if h, c, r := neo4j.WalkCacheUses(cached); h != hits || c != caught || r != reread {
			t.Fatalf("%s: copies used %d, brought up to date %d, read again %d; want %d, %d, %d", step, h, c, r, hits, caught, reread)
		}
	}
	same("first read", nil)
	wantSize("first read", 1, 300)
	same("from the cache", nil)
	same("from the cache, half known", func(id string) bool { return slices.Index(ids, id)%2 == 0 })
	wantSize("from the cache", 1, 300)
	wantUses("from the cache", 2, 0, 0)

	// A page of the next iteration: the copy takes it from the delta.
	addItems(t, plain, sid, graph.RootShortID, rng, "more", 5, 2)
	same("after 5 more items", nil)
	wantSize("after 5 more items", 1, 305)
	wantUses("after 5 more items", 2, 1, 0)

	// An item stamped with an older iteration (a late research child):
	// the delta cannot see it, so the task is read whole.
	addItems(t, plain, sid, graph.RootShortID, rng, "late", 1, 1)
	same("after a late item", nil)
	wantSize("after a late item", 1, 306)
	wantUses("after a late item", 2, 1, 1)

	// An item of the child linked to the root: AddEvidence of held content.
	child, err := plain.Evidence(t.Context(), sid, "a")
	if err != nil || len(child) == 0 {
		t.Fatalf("child evidence: %v (%d items)", err, len(child))
	}
	if _, err := plain.AddEvidence(t.Context(), sid, "link", graph.RootShortID, []graph.Evidence{child[0]}); err != nil {
		t.Fatal(err)
	}
	same("after a link", nil)
	wantSize("after a link", 1, 307)
	wantUses("after a link", 2, 1, 2)

	// Another process resets the session and writes it again: the same
	// counts, other items.
	if err := plain.ResetSession(t.Context(), sid); err != nil {
		t.Fatal(err)
	}
	ids = walkSession(t, plain, sid, rng, "second")
	addItems(t, plain, sid, graph.RootShortID, rng, "more", 5, 2)
	addItems(t, plain, sid, graph.RootShortID, rng, "again", 2, 2)
	same("after a reset elsewhere", nil)
	wantSize("after a reset elsewhere", 1, 307)
	wantUses("after a reset elsewhere", 2, 1, 3)

	// A session without a generation, as an older binary created it.
	cypher := cypherOf(t, cfg)
	cypher("MATCH (s:Session {id: $sid}) REMOVE s.gen", map[string]any{"sid": sid})
	addItems(t, plain, sid, graph.RootShortID, rng, "old", 3, 3)
	same("without a generation", nil)
	same("without a generation, again", nil)

	if err := cached.ResetSession(t.Context(), sid); err != nil {
		t.Fatal(err)
	}
	wantSize("after its own reset", 0, 0)
}

// walkSession writes a session whose root holds 300 items and whose child
// task a holds 10, and returns the ids of a walk's seed round: the root,
// the child, and three of the root's items.
func walkSession(t *testing.T, s *neo4j.Store, sid string, rng *rand.Rand, tag string) []string {
	t.Helper()
	if err := s.CreateSession(t.Context(), graph.Session{ID: sid, Goal: "g", GoalDocEmb: walkVec(rng)}, graph.Task{Embedding: walkVec(rng)}); err != nil {
		t.Fatal(err)
	}
	op := graph.Op{Kind: graph.OpCreate, Task: "a", Description: "child", EmbedText: "child", Embedding: walkVec(rng), Parent: graph.RootShortID}
	if _, err := s.Apply(t.Context(), graph.ApplyRequest{SessionID: sid, Key: "create-a", Iteration: 1, ActiveTask: graph.RootShortID, Ops: []graph.Op{op}}); err != nil {
		t.Fatal(err)
	}
	addItems(t, s, sid, graph.RootShortID, rng, tag, 300, 1)
	addItems(t, s, sid, "a", rng, tag+"-a", 10, 1)
	rows, err := s.Evidence(t.Context(), sid, graph.RootShortID)
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{graph.TaskID(sid, graph.RootShortID), graph.TaskID(sid, "a")}
	for _, e := range rows[:3] {
		ids = append(ids, e.ID)
	}
	return ids
}

// addItems adds n items to the task, stamped with iteration iter.
func addItems(t *testing.T, s *neo4j.Store, sid, task string, rng *rand.Rand, tag string, n, iter int) {
	t.Helper()
	evs := make([]graph.Evidence, n)
	for i := range evs {
		evs[i] = graph.Evidence{Content: fmt.Sprintf("%s passage %d about the task, long enough to be a fact", tag, i),
			SourceURL: "https://example.org/" + tag, Kind: graph.KindHTML, Strength: 0.5, Embedding: walkVec(rng), CreatedIter: iter}
	}
	if _, err := s.AddEvidence(t.Context(), sid, tag+"-"+task, task, evs); err != nil {
		t.Fatal(err)
	}
}

func walkVec(rng *rand.Rand) []float32 {
	v := make([]float32, 32)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
}

// sameShape fails unless two shape reads have the same edges, tasks and
// evidence shapes.
func sameShape(t *testing.T, step string, got, want graph.Neighbourhood) {
	t.Helper()
	if len(want.Edges) < 300 {
		t.Fatalf("%s: the read has %d edges: the test session is not what it means to be", step, len(want.Edges))
	}
	if !slices.Equal(got.Edges, want.Edges) {
		t.Fatalf("%s: %d edges, want %d (or they differ)", step, len(got.Edges), len(want.Edges))
	}
	tid := func(ts []graph.Task) []string {
		var out []string
		for _, x := range ts {
			out = append(out, x.ID)
		}
		return out
	}
	if !slices.Equal(tid(got.Tasks), tid(want.Tasks)) {
		t.Fatalf("%s: tasks %v, want %v", step, tid(got.Tasks), tid(want.Tasks))
	}
	if len(got.Evidence) != len(want.Evidence) {
		t.Fatalf("%s: %d evidence shapes, want %d", step, len(got.Evidence), len(want.Evidence))
	}
	for i := range want.Evidence {
		g, w := got.Evidence[i], want.Evidence[i]
		if g.ID != w.ID || g.CreatedIter != w.CreatedIter || g.ContentHash != w.ContentHash || !slices.Equal(g.Embedding, w.Embedding) {
			t.Fatalf("%s: evidence %d is %s, want %s (or its shape differs)", step, i, g.ID, w.ID)
		}
	}
}
