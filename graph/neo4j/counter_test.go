package neo4j_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/lethe-research/lethe/graph"
)

// TestEvidenceCounter follows the session's evidence counter through
// every write that adds evidence or could seem to (new items, items held
// already, items linked to another task, a replayed key, an Apply's
// evidence op) against a count of the nodes; then through a drift as an
// older binary would leave it (items written without the counter) healed
// by a full sync, and a session that never had one.
func TestEvidenceCounter(t *testing.T) {
	cfg := serverConfig(t)
	s := open(t, cfg)
	cypher := cypherOf(t, cfg)
	sid := fmt.Sprintf("counter-%d", time.Now().UnixNano())
	t.Cleanup(func() { _ = s.ResetSession(t.Context(), sid) })
	if err := s.CreateSession(t.Context(), graph.Session{ID: sid, Goal: "g", GoalDocEmb: []float32{1, 0}}, graph.Task{Embedding: []float32{1, 0}}); err != nil {
		t.Fatal(err)
	}
	op := graph.Op{Kind: graph.OpCreate, Task: "a", Description: "child", EmbedText: "child", Embedding: []float32{0, 1}, Parent: graph.RootShortID}
	if _, err := s.Apply(t.Context(), graph.ApplyRequest{SessionID: sid, Key: "create-a", Iteration: 1, ActiveTask: graph.RootShortID, Ops: []graph.Op{op}}); err != nil {
		t.Fatal(err)
	}
	item := func(i int) graph.Evidence {
		return graph.Evidence{Content: fmt.Sprintf("item %d", i), Kind: graph.KindHTML, Strength: 0.5, Embedding: []float32{1, float32(i)}}
	}
	nodes := func() int {
		rec := cypher("MATCH (e:Evidence {session_id: $sid}) RETURN count(e)", map[string]any{"sid": sid})
		n, _ := rec[0].Values[0].(int64)
		return int(n)
	}
	check := func(step string, want int) {
		t.Helper()
		got, err := s.EvidenceCount(t.Context(), sid)
		if err != nil {
			t.Fatal(err)
		}
		if got != want || nodes() != want {
			t.Fatalf("%s: EvidenceCount %d, %d nodes, want %d", step, got, nodes(), want)
		}
	}
	add := func(key, task string, items ...graph.Evidence) {
		t.Helper()
		if _, err := s.AddEvidence(t.Context(), sid, key, task, items); err != nil {
			t.Fatal(err)
		}
	}
	check("new session", 0)
	add("k1", graph.RootShortID, item(1), item(2), item(3))
	check("three items", 3)
	add("k2", graph.RootShortID, item(1), item(4))
	check("one held, one new", 4)
	add("k3", "a", item(1), item(2))
	check("two linked to another task", 4)
	add("k1", graph.RootShortID, item(7))
	check("a replayed key", 4)
	ev := graph.Op{Kind: graph.OpEvidence, Task: "a", Content: "the model's own fact", EmbedText: "fact", Embedding: []float32{0, 1}}
	if _, err := s.Apply(t.Context(), graph.ApplyRequest{SessionID: sid, Key: "ev", Iteration: 2, ActiveTask: "a", Ops: []graph.Op{ev}}); err != nil {
		t.Fatal(err)
	}
	check("an evidence op", 5)

	// An older binary writes two items without the counter.
	cypher("MATCH (s:Session {id: $sid}) SET s.evidence_n = s.evidence_n - 2", map[string]any{"sid": sid})
	if n, _ := s.EvidenceCount(t.Context(), sid); n != 3 {
		t.Fatalf("the drifted counter reads %d, want 3: EvidenceCount does not read the counter", n)
	}
	if _, err := graph.SyncSimilar(t.Context(), s, sid, graph.SimilarParams{Threshold: 0.9, MaxPerNode: 4, Full: true}, nil); err != nil {
		t.Fatal(err)
	}
	check("after a full sync", 5)

	// A session an older binary created has no counter: its items are
	// counted until a recount sets one.
	cypher("MATCH (s:Session {id: $sid}) REMOVE s.evidence_n", map[string]any{"sid": sid})
	check("without a counter", 5)
	add("k4", graph.RootShortID, item(5))
	check("without a counter, one more", 6)
	if err := s.Commit(t.Context(), sid, graph.Writes{RecountEvidence: true}); err != nil {
		t.Fatal(err)
	}
	add("k5", graph.RootShortID, item(6))
	check("recounted, one more", 7)
	if rec := cypher("MATCH (s:Session {id: $sid}) RETURN s.evidence_n", map[string]any{"sid": sid}); rec[0].Values[0] != int64(7) {
		t.Fatalf("the counter is %v after the recount and one item, want 7", rec[0].Values[0])
	}
}
