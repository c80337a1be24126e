package algebra

import "math"

// DefaultMMRLambda is the relevance weight of MMR used for assembly.
const DefaultMMRLambda = 0.7

// MMR orders items by Maximal Marginal Relevance (Carbonell & Goldstein,
// 1998): starting from the empty selection, repeatedly append
//
//	argmax_{i ∉ S}  λ·rel_i − (1 − λ)·max_{j ∈ S} sim(i, j)
//
// (the max is 0 for the first pick, so the most relevant item comes first)
// until every item is placed. λ is clamped to [0, 1]: λ = 1 is a pure
// relevance sort, smaller λ favours diversity. Ties go to the lower index;
// NaN relevances count as −Inf. sim may be nil (pure relevance order).
// Returns a permutation of 0 … len(relevance)−1. O(N²) sim calls. Safe in
// workflow code.
func MMR(relevance []float64, sim func(i, j int) float64, lambda float64) []int {
	n := len(relevance)
	lambda = Clamp01(lambda)
	rel := make([]float64, n)
	for i, r := range relevance {
		if math.IsNaN(r) {
			r = math.Inf(-1)
		}
		rel[i] = r
	}
	maxSim := make([]float64, n)
	placed := make([]bool, n)
	order := make([]int, 0, n)
	for len(order) < n {
		best := -1
		bestScore := math.Inf(-1)
		for i := 0; i < n; i++ {
			if placed[i] {
				continue
			}
			sc := lambda*rel[i] - (1-lambda)*maxSim[i]
			if math.IsNaN(sc) {
				sc = math.Inf(-1)
			}
			if best < 0 || sc > bestScore {
				best, bestScore = i, sc
			}
		}
		placed[best] = true
		order = append(order, best)
		if sim == nil {
			continue
		}
		for i := 0; i < n; i++ {
			if placed[i] {
				continue
			}
			v := sim(i, best)
			if len(order) == 1 || v > maxSim[i] {
				maxSim[i] = v
			}
		}
	}
	return order
}
