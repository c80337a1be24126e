package main

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/lethe-research/lethe/graph"
)

func TestTaskCount(t *testing.T) {
	for _, c := range []struct{ n, want int }{
		{0, 16}, {1000, 47}, {10000, 116}, {100000, 332}, {1000000, 400},
	} {
		if got := taskCount(c.n); got != c.want {
			t.Errorf("taskCount(%d) = %d, want %d", c.n, got, c.want)
		}
	}
}

// The generator is a function of the seed and the index only.
func TestGeneratorDeterministic(t *testing.T) {
	g := generator{seed: 7, dim: 64}
	a, b := g.page(12, g.goal(), 3), g.page(12, g.goal(), 3)
	for i := range a {
		if a[i].Content != b[i].Content || !slices.Equal(a[i].Embedding, b[i].Embedding) {
			t.Fatalf("page 12 chunk %d differs between two calls", i)
		}
	}
	if slices.Equal(a[0].Embedding, g.page(13, g.goal(), 3)[0].Embedding) {
		t.Error("pages 12 and 13 have the same first chunk")
	}
	if other := (generator{seed: 8, dim: 64}).page(12, g.goal(), 3); other[0].Content == a[0].Content {
		t.Error("seeds 7 and 8 give the same content")
	}
	if x, y := g.task(5), g.task(5); x.Description != y.Description || x.Parent != y.Parent || !slices.Equal(x.Embedding, y.Embedding) {
		t.Error("task 5 differs between two calls")
	}
}

// The task tree is a tree: every parent and prerequisite comes earlier, so
// no write of the fill can be a cycle.
func TestTaskTreeOrder(t *testing.T) {
	g := generator{seed: 1, dim: 32}
	for k := 1; k < 400; k++ {
		op := g.task(k)
		p, ok := generatedIndex(op.Parent)
		if op.Parent != graph.RootShortID && (!ok || p >= k) {
			t.Fatalf("task %d: parent %q is not an earlier task", k, op.Parent)
		}
		for _, d := range op.DependsOn {
			if j, ok := generatedIndex(d); !ok || j >= k || d == op.Parent {
				t.Fatalf("task %d: prerequisite %q is not an earlier non-parent task", k, d)
			}
		}
	}
}

// Chunks of one page are over the default SIMILAR_TO threshold (0.80),
// chunks of two pages of one task are under it, every vector is a unit
// vector: the geometry the fill's edges and the real sync agree on.
func TestPageGeometry(t *testing.T) {
	g := generator{seed: 3, dim: 384}
	task := perturb(g.rng(streamTask, 1), g.goal(), taskNoise)
	a, b := g.page(1, task, 0), g.page(2, task, 0)
	var within, across []float64
	for i := range a {
		if n := cosine32(a[i].Embedding, a[i].Embedding); math.Abs(n-1) > 1e-5 {
			t.Fatalf("chunk %d is not a unit vector: |v|² = %v", i, n)
		}
		for j := range a {
			if i < j {
				within = append(within, cosine32(a[i].Embedding, a[j].Embedding))
			}
			across = append(across, cosine32(a[i].Embedding, b[j].Embedding))
		}
	}
	if m := slices.Min(within); m < 0.82 {
		t.Errorf("min cosine within a page = %.3f, want ≥ 0.82", m)
	}
	if m := slices.Max(across); m > 0.78 {
		t.Errorf("max cosine across pages = %.3f, want ≤ 0.78", m)
	}
	if c := cosine32(to32(task), to32(g.goal())); c < 0.5 || c > 0.9 {
		t.Errorf("task·goal = %.3f, want a task that leans toward the goal (0.5..0.9)", c)
	}
}

func TestSimilarEdges(t *testing.T) {
	items := []graph.Evidence{
		{ID: "d", Embedding: []float32{1, 0, 0}},
		{ID: "a", Embedding: []float32{0.96, 0.28, 0}}, // cos 0.96 with d
		{ID: "c", Embedding: []float32{0.8, 0.6, 0}},   // 0.8 with d, 0.936 with a
		{ID: "b", Embedding: []float32{0, 0, 1}},       // 0 with all
	}
	for _, c := range []struct {
		threshold float64
		maxPer    int
		want      []string
	}{
		{0.99, 0, nil},
		{0.95, 0, []string{"a-d"}},
		{0.79, 0, []string{"a-d", "a-c", "c-d"}},
		{0.79, 1, []string{"a-d"}},
		{0.79, 2, []string{"a-d", "a-c", "c-d"}},
	} {
		var got []string
		for _, e := range similarEdges(items, c.threshold, c.maxPer) {
			if e.Kind != graph.SimilarTo || e.From >= e.To {
				t.Errorf("edge %+v: want SIMILAR_TO with From < To", e)
			}
			got = append(got, fmt.Sprintf("%s-%s", e.From, e.To))
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("threshold %v, cap %d: edges %v, want %v", c.threshold, c.maxPer, got, c.want)
		}
	}
}

func TestIterationOps(t *testing.T) {
	ops := iterationOps(4, "t7")
	kinds := map[string]int{}
	for _, op := range ops {
		kinds[op.Op]++
	}
	if kinds["evidence"] != 3 || kinds["create"] != 1 || kinds["complete"] != 1 {
		t.Errorf("ops on t7: %v, want 3 evidence, 1 create, 1 complete", kinds)
	}
	for _, op := range iterationOps(4, graph.RootShortID) {
		if op.Op == "complete" {
			t.Error("the root is completed: that would end the session")
		}
	}
}
