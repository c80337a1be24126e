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
	// Row-normalised weights, and the damping folded in.
	pw := make([]float64, len(g.W))
	dangling := make([]bool, n)
	for u := 0; u < n; u++ {
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
	x := append([]float64(nil), s...)
	y := make([]float64, n)
	for it := 0; it < maxIter; it++ {
		clear(y)
		var dmass float64
		for u := 0; u < n; u++ {
			xu := x[u]
			if xu == 0 {
				continue
			}
			if dangling[u] {
				dmass += xu
				continue
			}
			for e := g.RowPtr[u]; e < g.RowPtr[u+1]; e++ {
				y[g.Col[e]] += xu * pw[e]
			}
		}
		// teleport α plus the damped dangling mass, both to the seeds
		t := alpha + (1-alpha)*dmass
		for _, u := range seedIdx {
			y[u] += t * s[u]
		}
		var diff float64
		for u := range y {
			diff += math.Abs(y[u] - x[u])
		}
		x, y = y, x
		if diff < tol {
			break
		}
	}
	return x
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
