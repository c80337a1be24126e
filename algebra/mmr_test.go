package algebra

import (
	"math"
	"testing"
)

func TestMMR(t *testing.T) {
	// 0 and 1 near-duplicates, 2 different
	sims := PairSims{N: 3, V: []float32{0.99, 0.1, 0.1}}
	rel := []float64{0.9, 0.85, 0.5}
	got := MMR(rel, sims.At, 0.5)
	want := []int{0, 2, 1}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("MMR(λ=0.5) = %v, want %v", got, want)
		}
	}
	got = MMR(rel, sims.At, 1) // pure relevance
	for i, w := range []int{0, 1, 2} {
		if got[i] != w {
			t.Fatalf("MMR(λ=1) = %v", got)
		}
	}
	got = MMR([]float64{0.5, math.NaN(), 0.5}, nil, 0.7) // ties → lower index; NaN last
	for i, w := range []int{0, 2, 1} {
		if got[i] != w {
			t.Fatalf("MMR ties = %v", got)
		}
	}
	if len(MMR(nil, nil, 0.5)) != 0 {
		t.Error("empty")
	}
	// permutation on a larger random input
	scores, _, ps := benchCandidates(100)
	order := MMR(scores, ps.At, DefaultMMRLambda)
	seen := make([]bool, 100)
	for _, i := range order {
		if seen[i] {
			t.Fatal("not a permutation")
		}
		seen[i] = true
	}
	if len(order) != 100 || order[0] != ArgMax(scores) {
		t.Errorf("first pick %d, want the most relevant %d", order[0], ArgMax(scores))
	}
}
