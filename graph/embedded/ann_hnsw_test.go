package embedded

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRelinkIsTheHeuristic builds each graph twice, once shrinking an
// overflowing list by relink and once by the full heuristic, and asks for
// the same links in the same order on every layer: relink is a shortcut,
// never a different graph. The data covers the session-like pages of
// BenchmarkHNSW, and a dense low-dimensional cloud with exact duplicates
// (ties broken by node) and small M, where most lists overflow and
// verdicts flip.
func TestRelinkIsTheHeuristic(t *testing.T) {
	cases := []struct {
		name string
		m    int
		vecs [][]float32
	}{
		{"pages-384", 16, hnswVectors(3000)},
		{"dense-8-m4", 4, denseVectors(2500, 8, 11)},
		{"dense-3-m2", 2, denseVectors(1500, 3, 12)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fast := newHNSW(tc.m, 40, 5)
			full := newHNSW(tc.m, 40, 5)
			full.fullShrink = true
			for _, v := range tc.vecs {
				fast.add(v)
				full.add(v)
			}
			held := 0
			for n := range fast.links {
				for l := range fast.links[n] {
					if !slices.Equal(fast.links[n][l], full.links[n][l]) {
						t.Fatalf("node %d layer %d: relink %v, heuristic %v", n, l, fast.links[n][l], full.links[n][l])
					}
					if fast.held[n][l].d != nil {
						held++
					}
				}
			}
			if held < len(tc.vecs)/10 {
				t.Fatalf("only %d lists went through relink's path; the case does not exercise it", held)
			}
		})
	}
}

// denseVectors are n unit vectors of dim dimensions around a few centres,
// every fifth an exact copy of an earlier one.
func denseVectors(n, dim int, seed uint64) [][]float32 {
	rng := rand.New(rand.NewPCG(seed, 1))
	centres := make([][]float32, 6)
	for i := range centres {
		centres[i] = make([]float32, dim)
		for d := range centres[i] {
			centres[i][d] = float32(rng.NormFloat64())
		}
	}
	out := make([][]float32, n)
	for i := range out {
		if i > 0 && i%5 == 0 {
			out[i] = out[rng.IntN(i)]
			continue
		}
		c := centres[rng.IntN(len(centres))]
		v := make([]float32, dim)
		for d := range v {
			v[d] = c[d] + 0.2*float32(rng.NormFloat64())
		}
		out[i] = unit32(v, invNorm(v))
	}
	return out
}
