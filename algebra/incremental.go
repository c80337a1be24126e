package algebra

import (
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// Incremental rank-k PCA (docs/incremental-signals.md). UpdateSVD folds new
// evidence rows into a stored SharedSVD without the old rows, so Observe
// reads only what arrived since the previous observation.

// UpdateSVD folds rows into prev, the truncated SVD of the mean-centred
// matrix of prev.Rows earlier rows, and returns the truncated SVD of all
// prev.Rows + len(rows) rows, keeping K = min(k, n−1, Dim) triplets.
//
// Method (Brand's update with the mean shift of Ross et al. 2008). With
// n_a = prev.Rows, μ_a = prev.Mean, prev ≈ Σ V (K×d), new rows B (m×d) of
// mean μ_b, n = n_a + m and μ = (n_a μ_a + m μ_b)/n, the scatter of all
// centred rows is
//
//	S = (A − 1μ_aᵀ)ᵀ(A − 1μ_aᵀ) + (B − 1μ_bᵀ)ᵀ(B − 1μ_bᵀ) + (n_a m/n)(μ_b − μ_a)(μ_b − μ_a)ᵀ
//
// and the first term is (ΣV)ᵀ(ΣV) up to the part prev discarded. So the
// right singular vectors and values of the small matrix
//
//	C = [ Σ V ; B − 1μ_bᵀ ; √(n_a m/n) (μ_b − μ_a)ᵀ ]      ((K + m + 1) × d)
//
// are those of all centred rows, exactly when prev kept every direction
// (K = n_a − 1) and otherwise up to the energy prev had truncated. Rows are
// folded in blocks of at most max(K, 16) (the cost (K + c)²·d per block of
// c rows, summed over m/c blocks, is least near c = K), truncating after
// each block. The small SVD is the eigendecomposition of C Cᵀ (gramEigen).
// Deterministic (gonum, one goroutine, fixed order); basis rows
// get canonicalSign like ComputeSVD's.
//
// prev must be non-empty (K > 0, a Mean of length Dim and Rows ≥ 1): an
// EmptySVD carries no scatter to update, and the caller recomputes from
// all rows. Rows of another length than prev.Dim are skipped. With no
// usable rows prev is returned unchanged.
func UpdateSVD(prev SharedSVD, rows [][]float64, k int) SharedSVD {
	d := prev.Dim
	if !prev.valid(d) || len(prev.Mean) != d || prev.Rows < 1 || k <= 0 {
		return prev
	}
	block := max(prev.K, 16)
	cur, pending := prev, make([][]float64, 0, block)
	for _, r := range rows {
		if len(r) != d {
			continue
		}
		pending = append(pending, r)
		if len(pending) == block {
			cur = foldBlock(cur, pending, k)
			pending = pending[:0]
		}
	}
	if len(pending) > 0 {
		cur = foldBlock(cur, pending, k)
	}
	return cur
}

// foldBlock is one step of UpdateSVD: SVD of C for one block of rows.
func foldBlock(prev SharedSVD, rows [][]float64, k int) SharedSVD {
	d, na, m := prev.Dim, prev.Rows, len(rows)
	n := na + m
	mb := columnMean(rows, d)
	mu := make([]float64, d)
	for j := range mu {
		mu[j] = (float64(na)*prev.Mean[j] + float64(m)*mb[j]) / float64(n)
	}
	c := mat.NewDense(prev.K+m+1, d, nil)
	for r := 0; r < prev.K; r++ {
		row := prev.Row(r)
		for j, x := range row {
			c.Set(r, j, prev.Sigma[r]*x)
		}
	}
	for i, b := range rows {
		for j, x := range b[:d] {
			c.Set(prev.K+i, j, x-mb[j])
		}
	}
	shift := math.Sqrt(float64(na) * float64(m) / float64(n))
	for j := range mu {
		c.Set(prev.K+m, j, shift*(mb[j]-prev.Mean[j]))
	}
	K := min(k, n-1, d)
	vals, u, ok := gramEigen(c)
	if !ok {
		return prev // the eigensolver did not converge: keep the previous basis (never seen)
	}
	K = min(K, len(vals))
	for K > 0 && !(vals[K-1] > 1e-24*vals[0]) { // σ_K ≤ 1e−12 σ_0: no direction to keep
		K--
	}
	if K == 0 {
		return prev
	}
	out := SharedSVD{K: K, Dim: d, Rows: n, Sigma: make([]float64, K), Basis: make([]float64, K*d), Mean: mu}
	raw := c.RawMatrix()
	for i := 0; i < K; i++ {
		sigma := math.Sqrt(vals[i])
		out.Sigma[i] = sigma
		row := out.Basis[i*d : (i+1)*d]
		for q := 0; q < raw.Rows; q++ { // v_i = Cᵀ u_i / σ_i
			if w := u.At(q, i) / sigma; w != 0 {
				floats.AddScaled(row, w, raw.Data[q*raw.Stride:q*raw.Stride+d])
			}
		}
		canonicalSign(row)
	}
	return out
}

// gramEigen returns the eigenvalues of C Cᵀ in descending order and their
// eigenvectors (columns of u). C is (K + m + 1) × d with K + m + 1 ≪ d, so
// the small Gram matrix is far cheaper than a thin SVD of C; it squares
// the condition number, which costs relative accuracy only in directions
// with σ below ≈1e−4·σ₀, far below what the signals resolve.
func gramEigen(c *mat.Dense) ([]float64, *mat.Dense, bool) {
	rows, _ := c.Dims()
	g := mat.NewSymDense(rows, nil)
	g.SymOuterK(1, c)
	var eig mat.EigenSym
	if !eig.Factorize(g, true) {
		return nil, nil, false
	}
	asc := eig.Values(nil)
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	vals := make([]float64, rows)
	u := mat.NewDense(rows, rows, nil)
	for i := range vals { // descending
		j := rows - 1 - i
		vals[i] = math.Max(asc[j], 0)
		for q := 0; q < rows; q++ {
			u.Set(q, i, vecs.At(q, j))
		}
	}
	return vals, u, true
}
