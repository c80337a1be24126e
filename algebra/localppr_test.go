package algebra

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// pushTestGraph is a random weighted graph on n nodes with about deg
// out-edges per node (weights in (0, 1]) and some isolated nodes.
func pushTestGraph(n, deg int, undirected bool, seed uint64) CSR {
	rng := rand.New(rand.NewPCG(seed, 7))
	var from, to []int
	var w []float64
	for u := 0; u < n; u++ {
		if u%17 == 5 {
			continue // no out-edges: dangling if directed
		}
		for k := 0; k < deg; k++ {
			from, to, w = append(from, u), append(to, rng.IntN(n)), append(w, 0.05+0.95*rng.Float64())
		}
	}
	return BuildCSR(n, from, to, w, undirected)
}

func weightedDegree(g CSR, v int) float64 {
	var d float64
	for e := g.RowPtr[v]; e < g.RowPtr[v+1]; e++ {
		d += g.W[e]
	}
	return d
}

// TestPushPPRWithinBound checks the documented bound against the exact
// power iteration run to 1e-14: 0 ≤ π_v − p_v ≤ ‖r‖₁ for every node, the
// total error equals ‖r‖₁, and on undirected graphs a complete run has
// π_v − p_v ≤ tol·w_v.
func TestPushPPRWithinBound(t *testing.T) {
	path := BuildCSR(5, []int{0, 1, 2, 3}, []int{1, 2, 3, 4}, nil, true)
	star := BuildCSR(6, []int{0, 0, 0, 0, 0}, []int{1, 2, 3, 4, 5}, []float64{1, 0.5, 0.25, 2, 1}, true)
	dangling := BuildCSR(4, []int{0, 1, 2}, []int{1, 2, 3}, []float64{1, 0.5, 0.3}, false)
	cases := []struct {
		name       string
		g          CSR
		seeds      []int
		alpha, tol float64
		maxPushes  int
		undirected bool
	}{
		{"path", path, []int{0}, 0.15, 1e-8, 0, true},
		{"path loose tol", path, []int{2}, 0.15, 1e-2, 0, true},
		{"star two seeds", star, []int{0, 3, 3}, 0.2, 1e-6, 0, true},
		{"directed dangling to seeds", dangling, []int{0}, 0.15, 1e-9, 0, false},
		{"isolated seed", BuildCSR(3, []int{1}, []int{2}, nil, true), []int{0}, 0.15, 1e-6, 0, true},
		{"invalid seeds ignored", path, []int{-1, 9, 1}, 0.15, 1e-6, 0, true},
		{"random undirected", pushTestGraph(400, 3, true, 1), []int{3, 10}, 0.15, 1e-6, 0, true},
		{"random undirected tight", pushTestGraph(400, 3, true, 2), []int{0}, 0.15, 1e-9, 0, true},
		{"random directed", pushTestGraph(300, 2, false, 3), []int{1}, 0.15, 1e-7, 0, false},
		{"push budget hit", pushTestGraph(400, 3, true, 4), []int{0}, 0.15, 1e-9, 50, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			exact := PPR(c.g, c.seeds, c.alpha, 1e-14, 100000)
			got, bound := PushPPR(c.g, c.seeds, c.alpha, c.tol, c.maxPushes)
			var total float64
			for v := range exact {
				d := exact[v] - got[v]
				total += d
				if d < -1e-12 || d > bound+1e-12 {
					t.Errorf("node %d: exact %.12g push %.12g, error outside [0, %.3g]", v, exact[v], got[v], bound)
				}
				if c.undirected && d > c.tol*weightedDegree(c.g, v)+c.tol+1e-12 {
					t.Errorf("node %d: error %.3g above tol·w_v = %.3g", v, d, c.tol*weightedDegree(c.g, v))
				}
			}
			if math.Abs(total-bound) > 1e-9 {
				t.Errorf("total error %.12g, residual %.12g", total, bound)
			}
			if c.maxPushes == 0 && c.tol <= 1e-6 && bound > 1e-3 {
				t.Errorf("complete run left residual %.3g", bound)
			}
		})
	}
}

// TestPushPPRBudget: the push budget is respected and leaves the residual
// as the bound.
func TestPushPPRBudget(t *testing.T) {
	g := pushTestGraph(1000, 4, true, 9)
	l := NewLocalPPR([]int{0}, 0.15, 1e-9)
	l.Run(func(u int) ([]int, []float64, bool) {
		return g.Col[g.RowPtr[u]:g.RowPtr[u+1]], g.W[g.RowPtr[u]:g.RowPtr[u+1]], true
	}, 25)
	if l.Pushes() != 25 {
		t.Errorf("pushes = %d, want 25", l.Pushes())
	}
	if r := l.Residual(); r <= 0 || r >= 1 {
		t.Errorf("residual = %v", r)
	}
}

// TestLocalPPRGrowing reads the graph hop by hop, as Expand does, and
// must agree with the run on the whole graph, touching only what it needs.
func TestLocalPPRGrowing(t *testing.T) {
	// a ring lattice: each node linked to the next three, so that mass
	// stays near the seed (a random graph is an expander: it would not)
	n := 3000
	var from, to []int
	var w []float64
	for u := 0; u < n; u++ {
		for k := 1; k <= 3; k++ {
			from, to, w = append(from, u), append(to, (u+k)%n), append(w, 1/float64(k))
		}
	}
	g := BuildCSR(n, from, to, w, true)
	_, fullBound := PushPPR(g, []int{7}, 0.15, 1e-5, 0)
	known := map[int]bool{}
	l := NewLocalPPR([]int{7}, 0.15, 1e-5)
	adj := func(u int) ([]int, []float64, bool) {
		if !known[u] {
			return nil, nil, false
		}
		return g.Col[g.RowPtr[u]:g.RowPtr[u+1]], g.W[g.RowPtr[u]:g.RowPtr[u+1]], true
	}
	rounds := 0
	for need := l.Run(adj, 0); len(need) > 0; need = l.Run(adj, 0) {
		for _, u := range need {
			known[u] = true
		}
		rounds++
	}
	got := l.Scores(g.N)
	exact := PPR(g, []int{7}, 0.15, 1e-14, 100000)
	for v := range exact {
		if d := exact[v] - got[v]; d < -1e-12 || d > l.Residual()+1e-12 {
			t.Fatalf("node %d: error %.3g outside [0, %.3g]", v, d, l.Residual())
		}
	}
	if len(known) >= g.N/2 {
		t.Errorf("read %d of %d nodes; the push should stay local", len(known), g.N)
	}
	// nodes left unread hold residual below tol times the weight seen into
	// them, so the bound is close to, not equal to, the whole-graph push's
	if l.Residual() > 1.5*fullBound {
		t.Errorf("residual %.3g, whole-graph push %.3g", l.Residual(), fullBound)
	}
	t.Logf("rounds %d, nodes read %d of %d, residual %.3g", rounds, len(known), g.N, l.Residual())
}

// TestLocalPPRNoSeed: without a valid seed there is nothing to push (unlike
// PPR, which falls back to global PageRank).
func TestLocalPPRNoSeed(t *testing.T) {
	got, bound := PushPPR(BuildCSR(3, []int{0}, []int{1}, nil, true), []int{-2, 5}, 0.15, 1e-6, 0)
	for _, x := range got {
		if x != 0 {
			t.Fatalf("scores = %v", got)
		}
	}
	if bound != 0 {
		t.Errorf("bound = %v", bound)
	}
}

// BenchmarkPPRvsPush compares power iteration over the whole graph with
// the push at Expand's default tolerance, on graphs of growing size.
func BenchmarkPPRvsPush(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		g := pushTestGraph(n, 3, true, 11)
		b.Run(fmt.Sprintf("power/n=%d", n), func(b *testing.B) {
			for b.Loop() {
				PPR(g, []int{0}, DefaultPPRAlpha, DefaultPPRTol, DefaultPPRMaxIter)
			}
		})
		b.Run(fmt.Sprintf("push/n=%d", n), func(b *testing.B) {
			for b.Loop() {
				PushPPR(g, []int{0}, DefaultPPRAlpha, 1e-6, 0)
			}
		})
	}
}
