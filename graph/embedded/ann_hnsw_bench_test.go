package embedded

import (
	"math/rand/v2"
	"testing"

	"github.com/lethe-research/lethe/algebra"
)

// hnswVectors are n unit vectors of 384 dimensions: 64 topics, pages of
// eight chunks near one another within a topic, as a session's are.
func hnswVectors(n int) [][]float32 {
	rng := rand.New(rand.NewPCG(7, 384))
	out := make([][]float32, n)
	const dim = 384
	topics := make([][]float64, 64)
	for t := range topics {
		topics[t] = make([]float64, dim)
		for d := range topics[t] {
			topics[t][d] = rng.NormFloat64()
		}
	}
	page := make([]float64, dim)
	for i := range out {
		if i%8 == 0 {
			topic := topics[rng.IntN(len(topics))]
			for d := range page {
				page[d] = rng.NormFloat64() + 1.5*topic[d]
			}
		}
		v := make([]float64, dim)
		for d := range v {
			v[d] = rng.NormFloat64() + 2*page[d]
		}
		v32 := algebra.ToFloat32(v)
		out[i] = unit32(v32, invNorm(v32))
	}
	return out
}

// BenchmarkHNSW times building a graph of 4,096 items (add, reported per
// item; add-full without relink) and one search (k 64, ef 64: a threshold
// query's first ask) in a graph of 20,000, with the default M and
// ef_construction.
func BenchmarkHNSW(b *testing.B) {
	o := DefaultANNOptions()
	vecs := hnswVectors(20000 + 1024)
	// add-full shrinks every overflowing list by the whole heuristic, as
	// before relink: the baseline of add in the same process.
	for _, full := range []bool{false, true} {
		name := "add"
		if full {
			name = "add-full"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				g := newHNSW(o.M, o.EfConstruction, 1)
				g.fullShrink = full
				for _, v := range vecs[:4096] {
					g.add(v)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*4096), "ns/item")
		})
	}
	g := newHNSW(o.M, o.EfConstruction, 1)
	for _, v := range vecs[:20000] {
		g.add(v)
	}
	b.Run("search", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			g.search(vecs[20000+i%1024], 64, o.EfSearch)
		}
	})
}
