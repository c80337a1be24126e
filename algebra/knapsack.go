package algebra

// Context packing (DESIGN.md §6): greedy marginal information gain per
// token with an AdaGReS-style adaptive redundancy weight, the compact
// pairwise-similarity matrix the Expand activity returns, and
// group_by_budget. Pack, GroupByBudget, AdaptiveBeta(Range), PairSims.At and
// PairSims.Mean are safe in workflow code; NewPairSims runs in activities.

// Default bounds of AdaptiveBetaRange (context.beta_min, context.beta_max).
const (
	BetaMin = 0.5
	BetaMax = 1.0
)

// AdaptiveBeta is AdaptiveBetaRange with the default bounds BetaMin and
// BetaMax.
func AdaptiveBeta(meanSim float64) float64 {
	return AdaptiveBetaRange(meanSim, BetaMin, BetaMax)
}

// AdaptiveBetaRange is the redundancy weight β of Pack, adapted to the
// candidate pool's mean pairwise cosine μ (DESIGN.md §6 "AdaGReS"; the
// formula is ours):
//
//	β(μ) = β_min + (β_max − β_min)·clamp01(μ)
//
// β_min = lo and β_max = hi are the session's context.beta_min and
// context.beta_max (defaults 0.5 and 1).
//
// AdaGReS (Peng et al., 2025) calibrates the relevance–redundancy trade-off
// per instance from candidate-pool statistics instead of a hand-tuned
// constant. Its objective sums pairwise similarities; Pack penalises only
// the maximum similarity to what is already picked, so the calibration
// reduces to one statistic, the pool's mean similarity. Embedding cosines
// have a topic-dependent baseline (anisotropy): in a diverse pool (μ → 0)
// the max-similarities are mostly baseline and half strength suffices; in a
// redundant pool (μ → 1) the full weight β = 1 is needed, which drives an
// exact duplicate's gain to 0. β ≤ 1 keeps every gain ≥ 0 for
// similarities ≤ 1, so an unrelated candidate is never pushed below a
// redundant one by the penalty alone. NaN μ counts as 0. Safe in workflow
// code.
func AdaptiveBetaRange(meanSim, lo, hi float64) float64 {
	return lo + (hi-lo)*Clamp01(meanSim)
}

// Pack is the greedy marginal-information-gain knapsack (DESIGN.md §6).
// Repeatedly pick, among the unpicked candidates that still fit the
// remaining budget,
//
//	argmax_i  s_i · (1 − β·max_{j ∈ picked} sim(i, j)) / tokens_i
//
// (the max is 0 while nothing is picked), until no candidate fits or the
// best gain is ≤ 0. Ties go to the lower index. Candidates with
// tokens_i ≤ 0 count as 1 token; NaN or negative scores are never picked.
// Returns the picked indices in pick order. sim may be nil (no redundancy
// penalty). O(N·picked) gain evaluations and sim calls; deterministic.
func Pack(scores []float64, tokens []int, sim func(i, j int) float64, budget int, beta float64) []int {
	n := min(len(scores), len(tokens))
	if n == 0 || budget <= 0 {
		return nil
	}
	type cand struct {
		i      int
		cost   int
		rate   float64 // s_i / tokens_i
		maxSim float64
	}
	// The active list stays in index order (ties → lower index). A
	// candidate leaves it for good once it no longer fits (the remaining
	// budget only shrinks) or its gain is ≤ 0 (max_sim only grows, so the
	// gain never recovers for β ≥ 0).
	active := make([]cand, 0, n)
	for i := 0; i < n; i++ {
		if scores[i] > 0 {
			c := tokens[i]
			if c <= 0 {
				c = 1
			}
			active = append(active, cand{i: i, cost: c, rate: scores[i] / float64(c)})
		}
	}
	var out []int
	remaining := budget
	for len(active) > 0 {
		best, bestGain := -1, 0.0
		w := 0
		for _, a := range active {
			if a.cost > remaining {
				continue
			}
			g := a.rate * (1 - beta*a.maxSim)
			if !(g > 0) {
				continue
			}
			if g > bestGain {
				best, bestGain = w, g
			}
			active[w] = a
			w++
		}
		active = active[:w]
		if best < 0 {
			break
		}
		p := active[best]
		out = append(out, p.i)
		remaining -= p.cost
		active = append(active[:best], active[best+1:]...)
		if sim == nil {
			continue
		}
		for k := range active {
			if v := sim(active[k].i, p.i); v > active[k].maxSim {
				active[k].maxSim = v
			}
		}
	}
	return out
}

// PairSims is a compact symmetric similarity matrix: the strict upper
// triangle of the N×N cosine matrix, row-major, in float32 (N(N−1)/2
// values: 1,000 candidates are ≈ 2 MB, 200 are 80 KB). The diagonal is
// implicit (1).
type PairSims struct {
	N int
	V []float32
}

// NewPairSims returns the pairwise cosines of the vectors (zero vectors
// have cosine 0 with everything). Computed in float64, stored in float32.
// Activity-side: O(N²·d).
func NewPairSims(vecs [][]float64) PairSims {
	n := len(vecs)
	p := PairSims{N: n}
	if n < 2 {
		return p
	}
	u := make([][]float64, n)
	for i, v := range vecs {
		u[i] = Normalize(v)
	}
	p.V = make([]float32, n*(n-1)/2)
	k := 0
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			var c float64
			if len(u[i]) == len(u[j]) {
				c = clampCos(dotUnrolled(u[i], u[j]))
			}
			p.V[k] = float32(c)
			k++
		}
	}
	return p
}

// index of (i, j), i < j, in the strict upper triangle.
func (p PairSims) index(i, j int) int {
	return i*(2*p.N-i-1)/2 + (j - i - 1)
}

// At returns sim(i, j): 1 on the diagonal, 0 for indices out of range.
// Safe in workflow code.
func (p PairSims) At(i, j int) float64 {
	if i < 0 || j < 0 || i >= p.N || j >= p.N {
		return 0
	}
	if i == j {
		return 1
	}
	if i > j {
		i, j = j, i
	}
	k := p.index(i, j)
	if k >= len(p.V) {
		return 0
	}
	return float64(p.V[k])
}

// Mean returns the mean off-diagonal similarity (0 for N < 2), summed in
// index order. Safe in workflow code.
func (p PairSims) Mean() float64 {
	if p.N < 2 || len(p.V) == 0 {
		return 0
	}
	var s float64
	for _, x := range p.V {
		s += float64(x)
	}
	return s / float64(len(p.V))
}

// GroupByBudget splits an ordered list of items (given by their token
// counts) into consecutive groups whose token sums are ≤ budget, greedily:
// an item starts a new group when it would overflow the current one. An
// item larger than the budget forms a group of its own. Items with
// negative token counts count as 0. Returns groups of indices in order;
// budget ≤ 0 puts every item alone. Safe in workflow code.
func GroupByBudget(tokens []int, budget int) [][]int {
	var groups [][]int
	var cur []int
	sum := 0
	for i, t := range tokens {
		if t < 0 {
			t = 0
		}
		if len(cur) > 0 && (budget <= 0 || sum+t > budget) {
			groups = append(groups, cur)
			cur, sum = nil, 0
		}
		cur = append(cur, i)
		sum += t
	}
	if len(cur) > 0 {
		groups = append(groups, cur)
	}
	return groups
}
