package activities

import (
	"testing"

	"github.com/lethe-research/lethe/graph"
)

func TestPPRGraph(t *testing.T) {
	tasks := []graph.Task{{ID: "t1", Embedding: []float32{1, 0}}, {ID: "t2", Embedding: []float32{0, 1}}}
	ev := []graph.Evidence{{ID: "e1", Embedding: []float32{1, 1}}, {ID: "e2", Embedding: []float32{-1, 0}}}
	edges := []graph.Edge{
		{From: "e1", To: "t1"},   // cosine 0.71: kept
		{From: "e2", To: "t1"},   // cosine -1: left out
		{From: "t2", To: "t1"},   // cosine 0: left out
		{From: "e1", To: "gone"}, // an endpoint outside the session: left out
	}
	g, idx := pprGraph(tasks, ev, edges)
	if len(idx) != 4 || idx["t1"] != 0 || idx["e2"] != 3 {
		t.Fatalf("index %v", idx)
	}
	if n := g.RowPtr[len(g.RowPtr)-1]; n != 2 { // one undirected edge, stored both ways
		t.Fatalf("%d stored edges, want 2", n)
	}
	if seeds := pprSeeds(g, idx["t1"]); len(seeds) != 2 || seeds[1] != idx["e1"] {
		t.Fatalf("seeds %v, want t1 and its neighbour e1", seeds)
	}
}

func TestTopByPPR(t *testing.T) {
	ev := []graph.Evidence{{ID: "a"}, {ID: "b"}, {ID: "c"}, {ID: "d"}}
	idx := map[string]int{"a": 0, "b": 1, "c": 2, "d": 3}
	cases := []struct {
		pr   []float64
		max  int
		want []string
	}{
		{[]float64{0.1, 0.3, 0, 0.2}, 10, []string{"b", "d", "a"}}, // unreached c left out
		{[]float64{0.1, 0.3, 0, 0.2}, 2, []string{"b", "d"}},
		{[]float64{0.2, 0.2, 0.2, 0.2}, 3, []string{"a", "b", "c"}}, // ties keep store order
		{[]float64{0, 0, 0, 0}, 3, nil},
	}
	for _, c := range cases {
		got := topByPPR(ev, c.pr, idx, c.max)
		if len(got) != len(c.want) {
			t.Fatalf("pr %v max %d: %d candidates, want %v", c.pr, c.max, len(got), c.want)
		}
		for i, s := range got {
			if s.e.ID != c.want[i] {
				t.Fatalf("pr %v max %d: candidate %d is %s, want %v", c.pr, c.max, i, s.e.ID, c.want)
			}
		}
	}
}
