package neo4j_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/graph/neo4j"
)

// TestWalkRoute reads the seeds round of a walk from a task of 300 items
// (its items and their SIMILAR_TO edges) through a store whose walk cache
// holds the task, which reaches the items through it, and through one
// without a cache, which seeks each by id, and wants the same answer:
// for all the items, for all of them with half known, and for a few (which
// are sought by id: routed only when a quarter of the task is wanted).
// Then another process resets the session and writes the same items under
// the other task: the copy's route reaches none of them, and they are
// sought by id.
func TestWalkRoute(t *testing.T) {
	cfg := serverConfig(t)
	plain := open(t, cfg)
	cfg.WalkCacheMiB = 16
	cached := open(t, cfg)
	sid := fmt.Sprintf("walkroute-%d", time.Now().UnixNano())
	t.Cleanup(func() { _ = plain.ResetSession(t.Context(), sid) })
	rng := rand.New(rand.NewPCG(9, 10))

	routeSession(t, plain, sid, rng, graph.RootShortID, "a")
	root := graph.TaskID(sid, graph.RootShortID)
	items := itemIDs(t, plain, sid, graph.RootShortID)
	read := func(step string, ids []string, known func(string) bool) {
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
	wantRoutes := func(step string, routed, sought int64) {
		t.Helper()
		if r, s := neo4j.WalkRoutes(cached); r != routed || s != sought {
			t.Fatalf("%s: %d items routed through their task, %d of them sought by id; want %d and %d", step, r, s, routed, sought)
		}
	}
	read("the task", []string{root}, nil)
	wantRoutes("the task", 0, 0)
	read("its items", items, nil)
	wantRoutes("its items", 300, 0)
	read("its items, half known", items, func(id string) bool { return id < items[150] })
	wantRoutes("its items, half known", 600, 0)
	read("a few of its items", items[:60], nil)
	wantRoutes("a few of its items", 600, 0)

	if err := plain.ResetSession(t.Context(), sid); err != nil {
		t.Fatal(err)
	}
	routeSession(t, plain, sid, rng, "a", graph.RootShortID)
	if moved := itemIDs(t, plain, sid, "a"); len(moved) != 300 || moved[0] != items[0] {
		t.Fatalf("after the reset task a holds %d items: the test session is not what it means to be", len(moved))
	}
	read("its items, moved", items, nil)
	wantRoutes("its items, moved", 900, 300)
}

// routeSession writes a session whose task big holds 300 items and small
// 10 (one of them the root, the other its child a), with SIMILAR_TO edges
// among all of them.
func routeSession(t *testing.T, s *neo4j.Store, sid string, rng *rand.Rand, big, small string) {
	t.Helper()
	if err := s.CreateSession(t.Context(), graph.Session{ID: sid, Goal: "g", GoalDocEmb: walkVec(rng)}, graph.Task{Embedding: walkVec(rng)}); err != nil {
		t.Fatal(err)
	}
	op := graph.Op{Kind: graph.OpCreate, Task: "a", Description: "child", EmbedText: "child", Embedding: walkVec(rng), Parent: graph.RootShortID}
	if _, err := s.Apply(t.Context(), graph.ApplyRequest{SessionID: sid, Key: "create-a", Iteration: 1, ActiveTask: graph.RootShortID, Ops: []graph.Op{op}}); err != nil {
		t.Fatal(err)
	}
	addItems(t, s, sid, big, rng, "big", 300, 1)
	addItems(t, s, sid, small, rng, "small", 10, 1)
	st, err := graph.SyncSimilar(t.Context(), s, sid, graph.SimilarParams{Threshold: 0.3, MaxPerNode: 6, Full: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.Edges < 300 {
		t.Fatalf("the sync made %d SIMILAR_TO edges: the test session is not what it means to be", st.Edges)
	}
}

// itemIDs are the ids of the task's evidence, in store order.
func itemIDs(t *testing.T, s *neo4j.Store, sid, task string) []string {
	t.Helper()
	rows, err := s.Evidence(t.Context(), sid, task)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(rows))
	for i, e := range rows {
		ids[i] = e.ID
	}
	return ids
}
