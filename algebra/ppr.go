package algebra

import "math"

// Personalized PageRank for context expansion (DESIGN.md §6, seed 000
// "Step 4"). PPR runs inside the Expand activity; NormalizeScores is safe
// in workflow code.

// DefaultPPRAlpha is the teleport probability α of PPR.
const DefaultPPRAlpha = 0.15

// DefaultPPRTol and DefaultPPRMaxIter are the stopping rule of DESIGN.md §6:
// L1 change below 1e−6 or 50 steps.
const (
	DefaultPPRTol     = 1e-6
	DefaultPPRMaxIter = 50
)

// CSR is a weighted directed graph in compressed sparse row form: the
// out-edges of node u are Col[RowPtr[u]:RowPtr[u+1]] with weights W[…].
// Weights need not be row-stochastic; PPR normalises each row by its sum.
type CSR struct {
	N      int
	RowPtr []int
	Col    []int
	W      []float64
}

// BuildCSR builds a CSR graph on n nodes from an edge list. Edges with an
// endpoint outside [0, n), a self-loop, or a weight that is not > 0 (NaN
// included) are dropped: transition weights are max(cos, 0), so a
// non-positive weight is no edge. With undirected, every edge is also added
// in the reverse direction. Parallel edges are kept (their weights add up
// in the walk). Within a row, edges keep their input order (a stable
// counting sort), so the layout, and every sum over it, is deterministic.
// If w is shorter than from, missing weights are 1.
func BuildCSR(n int, from, to []int, w []float64, undirected bool) CSR {
	if n < 0 {
		n = 0
	}
	m := min(len(from), len(to))
	ok := func(e int) (float64, bool) {
		u, v := from[e], to[e]
		if u < 0 || u >= n || v < 0 || v >= n || u == v {
			return 0, false
		}
		x := 1.0
		if e < len(w) {
			x = w[e]
		}
		if !(x > 0) || math.IsInf(x, 1) {
			return 0, false
		}
		return x, true
	}
	rowPtr := make([]int, n+1)
	for e := 0; e < m; e++ {
		if _, good := ok(e); good {
			rowPtr[from[e]+1]++
			if undirected {
				rowPtr[to[e]+1]++
			}
		}
	}
	for u := 0; u < n; u++ {
		rowPtr[u+1] += rowPtr[u]
	}
	nnz := rowPtr[n]
	col := make([]int, nnz)
	wt := make([]float64, nnz)
	next := append([]int(nil), rowPtr[:n]...)
	for e := 0; e < m; e++ {
		x, good := ok(e)
		if !good {
			continue
		}
		u, v := from[e], to[e]
		col[next[u]], wt[next[u]] = v, x
		next[u]++
		if undirected {
			col[next[v]], wt[next[v]] = u, x
			next[v]++
		}
	}
	return CSR{N: n, RowPtr: rowPtr, Col: col, W: wt}
}

// PPR is personalized PageRank by power iteration:
//
//	x_{t+1} = α·s + (1 − α)·(Pᵀ x_t + δ_t·s),   x_0 = s
//
// where P is the row-normalised transition matrix (P_uv = w_uv/Σ_v w_uv), s
// the uniform distribution over the distinct valid seeds, and δ_t the mass
// on dangling nodes (no out-edges), which is returned to the seeds. It stops
// when ‖x_{t+1} − x_t‖₁ < tol or after maxIter steps (maxIter ≤ 0: 1 step)
// and returns x, a probability vector of length g.N. With no valid seed the
// teleport is uniform over all nodes (global PageRank). alpha outside
// (0, 1] uses DefaultPPRAlpha. This matches networkx.pagerank with
// alpha_nx = 1 − α, personalization = s and dangling = s (the reference
// script checks it).
func PPR(g CSR, seeds []int, alpha, tol float64, maxIter int) []float64 {
	n := g.N
	if n <= 0 {
		return nil
	}
	if !(alpha > 0 && alpha <= 1) {
		alpha = DefaultPPRAlpha
	}
	if maxIter <= 0 {
		maxIter = 1
	}
	w := newPPRWalk(g, seeds, alpha)
	x := append([]float64(nil), w.s...)
	y := make([]float64, n)
	for it := 0; it < maxIter; it++ {
		diff := w.step(x, y)
		x, y = y, x
		if diff < tol {
			break
		}
	}
	return x
}

// pprWalk holds what every power-iteration step reuses, computed once so
// that a step is a single pass over the edges.
type pprWalk struct {
	g        CSR
	alpha    float64
	s        []float64 // teleport distribution
	seedIdx  []int     // nodes where s is non-zero, ascending
	pw       []float64 // row-normalised weights with the damping 1 − α folded in
	dangling []bool    // rows without positive out-weight
}

func newPPRWalk(g CSR, seeds []int, alpha float64) pprWalk {
	w := pprWalk{g: g, alpha: alpha}
	w.s, w.seedIdx = pprSeeds(g.N, seeds)
	w.pw, w.dangling = pprWeights(g, alpha)
	return w
}

// pprSeeds is the uniform distribution over the distinct valid seeds.
// Invalid or repeated seeds are ignored rather than rejected, and no valid
// seed falls back to global PageRank, so a stale node index in the caller
// degrades the ranking instead of failing the expansion.
func pprSeeds(n int, seeds []int) ([]float64, []int) {
	s := make([]float64, n)
	cnt := 0
	for _, u := range seeds {
		if u >= 0 && u < n && s[u] == 0 {
			s[u] = 1
			cnt++
		}
	}
	if cnt == 0 {
		for u := range s {
			s[u] = 1
		}
		cnt = n
	}
	inv := 1 / float64(cnt)
	var seedIdx []int
	for u := range s {
		if s[u] != 0 {
			s[u] = inv
			seedIdx = append(seedIdx, u)
		}
	}
	return s, seedIdx
}

// pprWeights row-normalises the weights and folds in the damping, so the
// inner loop is one multiply-add per edge; rows whose weights do not sum to
// a positive value are dangling and send their mass back to the seeds.
func pprWeights(g CSR, alpha float64) ([]float64, []bool) {
	pw := make([]float64, len(g.W))
	dangling := make([]bool, g.N)
	for u := 0; u < g.N; u++ {
		lo, hi := g.RowPtr[u], g.RowPtr[u+1]
		var sum float64
		for e := lo; e < hi; e++ {
			sum += g.W[e]
		}
		if !(sum > 0) {
			dangling[u] = true
			continue
		}
		f := (1 - alpha) / sum
		for e := lo; e < hi; e++ {
			pw[e] = g.W[e] * f
		}
	}
	return pw, dangling
}

// step computes y = x_{t+1} from x = x_t and returns ‖y − x‖₁ for the
// stopping rule. Summation order is fixed (nodes, then edges in CSR order)
// so the result is bit-for-bit reproducible.
func (w *pprWalk) step(x, y []float64) float64 {
	g, alpha := w.g, w.alpha
	clear(y)
	var dmass float64
	for u := 0; u < g.N; u++ {
		xu := x[u]
		if xu == 0 {
			continue
		}
		if w.dangling[u] {
			dmass += xu
			continue
		}
		for e := g.RowPtr[u]; e < g.RowPtr[u+1]; e++ {
			y[g.Col[e]] += xu * w.pw[e]
		}
	}
	// teleport α plus the damped dangling mass, both to the seeds
	t := alpha + (1-alpha)*dmass
	for _, u := range w.seedIdx {
		y[u] += t * w.s[u]
	}
	var diff float64
	for u := range y {
		diff += math.Abs(y[u] - x[u])
	}
	return diff
}

// NormalizeScores divides the scores by their maximum (ppr_norm of
// DESIGN.md §6), so the best candidate has 1; non-positive maxima give all
// zeros. Returns a new slice. Safe in workflow code.
func NormalizeScores(v []float64) []float64 {
	out := make([]float64, len(v))
	mx := 0.0
	for _, x := range v {
		if x > mx {
			mx = x
		}
	}
	if !(mx > 0) {
		return out
	}
	for i, x := range v {
		if x > 0 {
			out[i] = x / mx
		}
	}
	return out
}
