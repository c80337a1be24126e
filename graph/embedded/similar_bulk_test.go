package embedded

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/lethe-research/lethe/graph"
)

// bulkSession writes a session of n evidence items and returns their ids.
func bulkSession(tb testing.TB, n int) (*Store, string, []string) {
	tb.Helper()
	ctx := context.Background()
	s, err := Open(filepath.Join(tb.TempDir(), "graph.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	sid := "bulk"
	root := graph.Task{ID: graph.TaskID(sid, graph.RootShortID), SessionID: sid, ShortID: graph.RootShortID, Embedding: []float32{1, 0}}
	if err := s.CreateSession(ctx, graph.Session{ID: sid, Goal: "g", Dim: 2}, root); err != nil {
		tb.Fatal(err)
	}
	items := make([]graph.Evidence, n)
	ids := make([]string, n)
	for i := range items {
		c := fmt.Sprintf("item %d", i)
		items[i] = graph.Evidence{Content: c, Embedding: []float32{1, float32(i) / float32(n)}}
		ids[i] = graph.EvidenceID(sid, graph.ContentHash(c))
	}
	if _, err := s.AddEvidence(ctx, sid, "bulk", graph.RootShortID, items); err != nil {
		tb.Fatal(err)
	}
	return s, sid, ids
}

// TestReplaceSimilarLastWins: two edges between the same items, in either
// direction, leave the later one, as writing them one after the other did.
func TestReplaceSimilarLastWins(t *testing.T) {
	s, sid, ids := bulkSession(t, 3)
	ctx := context.Background()
	err := s.ReplaceSimilar(ctx, sid, ids, []graph.Edge{
		{From: ids[0], To: ids[1], Weight: 0.5}, {From: ids[2], To: ids[1], Weight: 0.7},
		{From: ids[1], To: ids[0], Weight: 0.9, Label: graph.LabelEntailment},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := map[[2]string]graph.Edge{}
	edges, err := s.SimilarEdges(ctx, sid)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range edges {
		got[[2]string{min(e.From, e.To), max(e.From, e.To)}] = e
	}
	e01 := got[[2]string{min(ids[0], ids[1]), max(ids[0], ids[1])}]
	if len(got) != 2 || e01.Weight != 0.9 || e01.Label != graph.LabelEntailment {
		t.Fatalf("edges %v", edges)
	}
}

// BenchmarkReplaceSimilarBulk writes the SIMILAR_TO edges of 10,000 items
// (8 per item) in one call, as a bulk fill does.
func BenchmarkReplaceSimilarBulk(b *testing.B) {
	s, sid, ids := bulkSession(b, 10000)
	var edges []graph.Edge
	for i := range ids {
		for k := 1; k <= 8; k++ {
			edges = append(edges, graph.Edge{From: ids[i], To: ids[(i*7919+k*104729)%len(ids)], Weight: 0.85})
		}
	}
	for b.Loop() {
		if err := s.ReplaceSimilar(context.Background(), sid, ids, edges); err != nil {
			b.Fatal(err)
		}
	}
}
