package neo4j

import (
	"reflect"
	"testing"

	"github.com/lethe-research/lethe/graph"
)

// TestWithExact: nodes labelled while the index was queried are compared
// exactly, and the answer is what the index gives once it holds them.
func TestWithExact(t *testing.T) {
	q := []float32{1, 0, 0}
	uq := graph.UnitVector(q)
	cands := map[string][]float32{
		"near":   {0.95, 0.05, 0}, // over 0.9
		"far":    {0, 1, 0},       // under
		"low":    {0.9, 0.4, 0},   // over, below old
		"listed": {1, 0.001, 0},   // already in the answer
		"zero":   {0, 0, 0},       // no direction
		"short":  {1, 0},          // another dimension
	}
	answer := []graph.Neighbor{{ID: "listed", Cosine: 0.9999995}, {ID: "old", Cosine: 0.97}}
	got := withExact(answer, unitsOf(cands), uq, 0.9)
	want := []string{"listed", "near", "old", "low"}
	var ids []string
	for _, n := range got {
		ids = append(ids, n.ID)
	}
	if !reflect.DeepEqual(ids, want) {
		t.Fatalf("answer %v, want %v", ids, want)
	}
	if got[0] != answer[0] || got[2] != answer[1] {
		t.Errorf("the index's neighbours changed: %+v", got)
	}
	if c := got[1].Cosine; c < 0.99 || c > 1 {
		t.Errorf("near's cosine %v", c)
	}
	if len(answer) != 2 {
		t.Errorf("the answer passed in grew to %d", len(answer))
	}
	if same := withExact(answer, nil, uq, 0.9); !reflect.DeepEqual(same, answer) {
		t.Errorf("nothing labelled: %+v", same)
	}
}
