package embedded_test

import (
	"errors"
	"testing"

	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/graph/graphtest"
)

// TestNoPairs: the embedded store keeps no SIMILAR_TO pairs (its index
// answers in the worker's memory): it says so, refuses a commit that
// carries pairs whole, and answers a read of them with ErrNoPairs.
func TestNoPairs(t *testing.T) {
	s := openTemp(t)
	ctx := t.Context()
	if s.KeepsPairs() {
		t.Fatal("the embedded store says it keeps pairs")
	}
	const sid = "no-pairs"
	if err := s.CreateSession(ctx, graph.Session{ID: sid, Goal: "g", GoalDocEmb: graphtest.Unit(0), GoalQueryEmb: graphtest.Unit(0), Dim: graphtest.Dim},
		graph.Task{Description: "g", EmbedText: "g", Embedding: graphtest.Unit(0)}); err != nil {
		t.Fatal(err)
	}
	for _, w := range []graph.Writes{{Pairs: []graph.Edge{{From: "a", To: "b", Weight: 1}}, Blobs: map[string][]byte{"x": []byte("1")}}, {ResetPairs: true}} {
		if err := s.Commit(ctx, sid, w); !errors.Is(err, graph.ErrNoPairs) {
			t.Fatalf("commit with pairs: %v, want ErrNoPairs", err)
		}
	}
	if _, err := s.GetBlob(ctx, sid, "x"); !errors.Is(err, graph.ErrNotFound) {
		t.Fatalf("a refused commit wrote its blob: %v", err)
	}
	if _, err := s.SimilarPairsOf(ctx, sid, []string{"a"}); !errors.Is(err, graph.ErrNoPairs) {
		t.Fatalf("pairs of: %v, want ErrNoPairs", err)
	}
}
