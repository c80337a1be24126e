package neo4j_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/graph/graphtest"
)

// TestVectorLabelPending: a labelling call reads only the evidence written
// since the last one (the pending mark), and a node written without the
// mark, as a binary from before it writes during a rolling upgrade, is
// labelled by the sweep within 64 calls (sweepEvery), not at once.
func TestVectorLabelPending(t *testing.T) {
	cfg := serverConfig(t)
	cfg.LabelBatch = 1 // every call labels what is pending
	s := open(t, cfg)
	ctx := t.Context()
	cypher := cypherOf(t, cfg)
	sid := fmt.Sprintf("label-pending-%d", time.Now().UnixNano())
	t.Cleanup(func() { _ = s.ResetSession(context.Background(), sid) })
	if err := s.CreateSession(ctx, graph.Session{ID: sid, Goal: "g", GoalDocEmb: graphtest.Unit(0)}, graph.Task{Embedding: graphtest.Unit(0)}); err != nil {
		t.Fatal(err)
	}
	add := func(i int) string {
		t.Helper()
		res, err := s.AddEvidence(ctx, sid, fmt.Sprintf("k%d", i), graph.RootShortID, []graph.Evidence{{Content: fmt.Sprintf("fact %d", i), SourceURL: "https://example.org/", Kind: graph.KindHTML, Strength: 0.5, Embedding: graphtest.Unit(i)}})
		if err != nil || res.Added != 1 {
			t.Fatalf("add evidence %d: %+v, %v", i, res, err)
		}
		recs := cypher("MATCH (e:Evidence {session_id: $sid, content: $c}) RETURN e.id", map[string]any{"sid": sid, "c": fmt.Sprintf("fact %d", i)})
		return recs[0].Values[0].(string)
	}
	labels := func(id string) []string {
		t.Helper()
		recs := cypher("MATCH (e:Evidence {id: $id}) RETURN labels(e)", map[string]any{"id": id})
		var out []string
		for _, l := range recs[0].Values[0].([]any) {
			out = append(out, l.(string))
		}
		return out
	}
	near := func() {
		t.Helper()
		if _, err := s.NearestEvidence(ctx, sid, [][]float32{graphtest.Unit(1)}, 0.9); err != nil {
			t.Fatal(err)
		}
	}
	vec := fmt.Sprintf("LetheVec%d", graphtest.Dim)
	first := add(1)
	if l := labels(first); !slices.Contains(l, "LetheVecPending") {
		t.Fatalf("new evidence has labels %v, want the pending mark", l)
	}
	near() // the first call of this store for the session sweeps
	if l := labels(first); !slices.Contains(l, vec) || slices.Contains(l, "LetheVecPending") {
		t.Fatalf("after the first call: labels %v, want %s and no pending mark", l, vec)
	}
	old := add(2)
	cypher("MATCH (e:Evidence {id: $id}) REMOVE e:LetheVecPending", map[string]any{"id": old}) // as an older binary wrote it
	fresh := add(3)
	near()
	if l := labels(fresh); !slices.Contains(l, vec) || slices.Contains(l, "LetheVecPending") {
		t.Fatalf("evidence written after the sweep: labels %v, want %s and no pending mark", l, vec)
	}
	if l := labels(old); slices.Contains(l, vec) {
		t.Fatalf("unmarked evidence labelled by a pending call (%v): the call read every node", l)
	}
	for range 64 {
		near()
	}
	if l := labels(old); !slices.Contains(l, vec) {
		t.Fatalf("unmarked evidence still unlabelled (%v) after 64 calls: no sweep", l)
	}
}

// TestLabelBatch: new evidence waits outside the vector index until a
// batch of it is pending (graph.neo4j_label_batch), and meanwhile every
// call finds it, compared exactly; the call that sees a batch labels it
// all, and the answers stay the same.
func TestLabelBatch(t *testing.T) {
	cfg := serverConfig(t)
	cfg.LabelBatch = 4
	s := open(t, cfg)
	ctx := t.Context()
	cypher := cypherOf(t, cfg)
	sid := fmt.Sprintf("label-batch-%d", time.Now().UnixNano())
	t.Cleanup(func() { _ = s.ResetSession(context.Background(), sid) })
	if err := s.CreateSession(ctx, graph.Session{ID: sid, Goal: "g", GoalDocEmb: graphtest.Unit(0)}, graph.Task{Embedding: graphtest.Unit(0)}); err != nil {
		t.Fatal(err)
	}
	vec := fmt.Sprintf("LetheVec%d", graphtest.Dim)
	labelled := func() int {
		t.Helper()
		recs := cypher("MATCH (e:Evidence {session_id: $sid}) WHERE e:"+vec+" RETURN count(e)", map[string]any{"sid": sid})
		return int(recs[0].Values[0].(int64))
	}
	var ids []string
	add := func(i int) {
		t.Helper()
		e := graph.Evidence{Content: fmt.Sprintf("fact %d", i), SourceURL: "https://example.org/", Kind: graph.KindHTML, Strength: 0.5, Embedding: graphtest.Unit(i)}
		if _, err := s.AddEvidence(ctx, sid, fmt.Sprintf("k%d", i), graph.RootShortID, []graph.Evidence{e}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, graph.EvidenceID(sid, graph.ContentHash(e.Content)))
	}
	// every item answers the query of its own direction, cosine 1
	check := func(step string) {
		t.Helper()
		qs := make([][]float32, len(ids))
		for i := range ids {
			qs[i] = graphtest.Unit(i + 1)
		}
		near, err := s.NearestEvidence(ctx, sid, qs, 0.9)
		if err != nil {
			t.Fatal(err)
		}
		best, err := s.NearestCosine(ctx, sid, qs)
		if err != nil {
			t.Fatal(err)
		}
		for i, id := range ids {
			if len(near[i]) != 1 || near[i][0].ID != id || best[i] < 0.999 {
				t.Fatalf("%s: query %d: nearest %+v, best cosine %v; want %s", step, i, near[i], best[i], id)
			}
		}
	}
	add(1)
	check("first call")
	if n := labelled(); n != 1 {
		t.Fatalf("the first call (a sweep) labelled %d items, want 1", n)
	}
	for i := 2; i <= 4; i++ {
		add(i)
		check(fmt.Sprintf("%d waiting", i-1))
		if n := labelled(); n != 1 {
			t.Fatalf("%d items waiting, a batch of 4: %d labelled, want 1", i-1, n)
		}
	}
	add(5) // four waiting: the next call labels them
	check("a batch waiting")
	if n := labelled(); n != 5 {
		t.Fatalf("after a call with a batch waiting: %d labelled, want 5", n)
	}
	check("all labelled")
}
