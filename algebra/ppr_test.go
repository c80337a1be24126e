package algebra

import (
	"math"
	"math/rand/v2"
	"testing"
)

func pprFromRef(c refPPRCase) CSR {
	from := make([]int, len(c.Edges))
	to := make([]int, len(c.Edges))
	w := make([]float64, len(c.Edges))
	for i, e := range c.Edges {
		from[i], to[i], w[i] = int(e[0]), int(e[1]), e[2]
	}
	return BuildCSR(c.N, from, to, w, c.Undirected)
}

// TestPPRAgainstNetworkx compares with networkx.pagerank (alpha_nx = 1 − α,
// personalization = seeds, dangling → seeds) to 1e-6; both converge to
// ~1e-13 here.
func TestPPRAgainstNetworkx(t *testing.T) {
	for ci, c := range mustRef(t).PPR {
		got := PPR(pprFromRef(c), c.Seeds, c.Alpha, 1e-14, 100000)
		var sum float64
		for i, want := range c.PPR {
			sum += got[i]
			if math.Abs(got[i]-want) > 1e-6 {
				t.Errorf("case %d node %d: PPR %.10f, networkx %.10f", ci, i, got[i], want)
			}
		}
		if !near(sum, 1, 1e-12) {
			t.Errorf("case %d: PPR sums to %v", ci, sum)
		}
	}
}

func TestBuildCSR(t *testing.T) {
	g := BuildCSR(4,
		[]int{0, 0, 1, 2, 3, -1, 0, 2},
		[]int{1, 2, 2, 2, 9, 0, 3, 0},
		[]float64{1, 0.5, 2, 1, 1, 1, -0.3, math.NaN()}, false)
	// kept: 0→1 (1), 0→2 (0.5), 1→2 (2); dropped: self-loop, out of range, ≤ 0, NaN
	if g.N != 4 || len(g.Col) != 3 {
		t.Fatalf("BuildCSR = %+v", g)
	}
	wantPtr := []int{0, 2, 3, 3, 3}
	for i := range wantPtr {
		if g.RowPtr[i] != wantPtr[i] {
			t.Fatalf("RowPtr = %v, want %v", g.RowPtr, wantPtr)
		}
	}
	if g.Col[0] != 1 || g.Col[1] != 2 || g.W[1] != 0.5 || g.Col[2] != 2 {
		t.Errorf("layout = %+v", g)
	}
	u := BuildCSR(3, []int{0, 1}, []int{1, 2}, nil, true)
	if len(u.Col) != 4 || u.RowPtr[1]-u.RowPtr[0] != 1 || u.RowPtr[2]-u.RowPtr[1] != 2 {
		t.Errorf("undirected = %+v", u)
	}
}

func TestPPRProperties(t *testing.T) {
	// a path 0 → 1 → 2 → 3 (3 dangling): mass decays with distance from the seed
	g := BuildCSR(5, []int{0, 1, 2}, []int{1, 2, 3}, []float64{1, 1, 1}, false)
	x := PPR(g, []int{0}, DefaultPPRAlpha, DefaultPPRTol, DefaultPPRMaxIter)
	if !(x[0] > x[1] && x[1] > x[2] && x[2] > x[3]) || x[4] != 0 {
		t.Errorf("PPR on a path = %v", x)
	}
	var sum float64
	for _, v := range x {
		if v < 0 {
			t.Fatalf("negative mass %v", x)
		}
		sum += v
	}
	if !near(sum, 1, 1e-12) {
		t.Errorf("sum = %v", sum)
	}
	// duplicate and invalid seeds count once / are ignored
	y := PPR(g, []int{0, 0, -3, 17}, DefaultPPRAlpha, DefaultPPRTol, DefaultPPRMaxIter)
	for i := range x {
		if x[i] != y[i] {
			t.Fatalf("seed handling: %v vs %v", x, y)
		}
	}
	if PPR(CSR{}, []int{0}, 0.15, 1e-6, 50) != nil {
		t.Error("empty graph")
	}
	// no seeds: global PageRank, uniform teleport
	z := PPR(BuildCSR(3, nil, nil, nil, false), nil, 0.15, 1e-6, 50)
	for _, v := range z {
		if !near(v, 1.0/3, 1e-15) {
			t.Errorf("isolated nodes, no seeds: %v", z)
		}
	}
}

func TestNormalizeScores(t *testing.T) {
	got := NormalizeScores([]float64{0.2, 0.4, -1, 0})
	want := []float64{0.5, 1, 0, 0}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("NormalizeScores = %v, want %v", got, want)
		}
	}
	if z := NormalizeScores([]float64{0, -1}); z[0] != 0 || z[1] != 0 {
		t.Errorf("all non-positive: %v", z)
	}
}

// randomGraph returns n nodes and m random weighted directed edges.
func randomGraph(n, m int, seed uint64) CSR {
	r := rand.New(rand.NewPCG(seed, 1))
	from, to, w := make([]int, m), make([]int, m), make([]float64, m)
	for e := range from {
		from[e], to[e], w[e] = r.IntN(n), r.IntN(n), r.Float64()
	}
	return BuildCSR(n, from, to, w, false)
}

func BenchmarkPPR10k100k(b *testing.B) {
	g := randomGraph(10000, 100000, 7)
	seeds := []int{0, 1, 2, 3, 4}
	b.ReportAllocs()
	for b.Loop() {
		PPR(g, seeds, DefaultPPRAlpha, DefaultPPRTol, DefaultPPRMaxIter)
	}
}

func BenchmarkBuildCSR10k100k(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 1))
	n, m := 10000, 100000
	from, to, w := make([]int, m), make([]int, m), make([]float64, m)
	for e := range from {
		from[e], to[e], w[e] = r.IntN(n), r.IntN(n), r.Float64()
	}
	b.ReportAllocs()
	for b.Loop() {
		BuildCSR(n, from, to, w, true)
	}
}
