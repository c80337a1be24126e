package algebra

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// Spectral analysis of the evidence matrix (seed 003 "Stage 1"). These
// functions run inside activities (Observe, ReadState); ComputeSVD uses
// gonum. Coverage, Eigengap, ChordalDistance and GapDirection are plain
// loops over the stored basis.

// SharedSVD is the truncated SVD of the mean-centred evidence matrix, shared
// by every signal of one iteration and stored under (session, iteration) so
// that the next iteration can warm-start from it and measure how far the
// evidence subspace rotated.
//
// The zero-rank value (K = 0, see EmptySVD) is an algebraic zero: Coverage
// and Eigengap return 0 and ChordalDistance returns its maximum 1, so no
// optional values flow through the signal chain.
type SharedSVD struct {
	// K is the number of singular triplets kept (0 for EmptySVD).
	K int
	// Dim is the embedding dimensionality.
	Dim int
	// Rows is the number of evidence rows the decomposition was computed from.
	Rows int
	// Sigma holds the K singular values of the centred matrix, descending.
	Sigma []float64
	// Basis holds the K right singular vectors as the rows of a K×Dim
	// row-major matrix (V^T); the rows are orthonormal.
	Basis []float64
	// Mean is the evidence centroid subtracted before the decomposition
	// (nil for EmptySVD).
	Mean []float64
}

// EmptySVD returns the algebraic zero of dimension dim: K = 0, no basis.
func EmptySVD(dim int) SharedSVD {
	return SharedSVD{Dim: dim}
}

// Row returns basis row r (the r-th right singular vector); it aliases
// s.Basis.
func (s SharedSVD) Row(r int) []float64 {
	return s.Basis[r*s.Dim : (r+1)*s.Dim]
}

// valid reports whether s has a usable basis of dimension dim.
func (s SharedSVD) valid(dim int) bool {
	return s.K > 0 && s.Dim == dim && len(s.Basis) >= s.K*s.Dim
}

// Coverage is the reconstruction coverage of v by the evidence (seed 003:
// the coverage signal is the complement of the reconstruction error; seed
// 002: "reconstruction coverage"). The SharedSVD is a PCA of the evidence:
// its reconstruction of v is the evidence mean plus the part of v − mean
// inside the evidence subspace,
//
//	v̂ = μ + VᵀV (v − μ)
//	coverage(v) = 1 − ‖v − v̂‖² / ‖v‖² = 1 − ‖(I − VᵀV)(v − μ)‖² / ‖v‖²
//
// clamped to [0, 1] (V the K×Dim basis, rows orthonormal; μ = Mean). It is
// 1 when v lies in the affine hull the evidence spans and falls with v's
// distance from it, relative to v's energy. The mean matters: the basis is
// built from centred rows, so it has no direction for what every evidence
// row shares, and sentence embeddings share a lot (anisotropy). Projecting
// the raw v, as this function did before, counted that shared part as
// uncovered and measured the basis's size more than the goal's coverage:
// on Debian Reference paragraphs (docs/algebra.md) off-topic chapters
// covered a networking goal more (0.24, 0.30) than the networking chapter
// (0.13); with the mean, 0.38 for the networking chapter, 0.12 and 0.15 for
// the others. A nil Mean (a hand-built basis) is μ = 0, the raw
// projection ‖Vv‖²/‖v‖². EmptySVD, a zero v and a dimension mismatch give 0.
func (s SharedSVD) Coverage(v []float64) float64 {
	if !s.valid(len(v)) {
		return 0
	}
	vv := Dot(v, v)
	if vv == 0 {
		return 0
	}
	r := s.residual(v)
	return Clamp01(1 - Dot(r, r)/vv)
}

// residual is (I − VᵀV)(v − μ), the part of v the reconstruction misses
// (μ = 0 when Mean is nil or of another length).
func (s SharedSVD) residual(v []float64) []float64 {
	r := append([]float64(nil), v...)
	if len(s.Mean) == len(v) {
		for j, m := range s.Mean {
			r[j] -= m
		}
	}
	c := make([]float64, s.K)
	for k := 0; k < s.K; k++ {
		c[k] = dotUnrolled(s.Row(k), r)
	}
	for k := 0; k < s.K; k++ {
		row := s.Row(k)
		for j, x := range row {
			r[j] -= c[k] * x
		}
	}
	return r
}

// Eigengap is the spectral decisiveness (σ0 − σ1)/σ0 in [0, 1]: large when
// the evidence concentrates around one dominant direction. 0 for EmptySVD
// or σ0 = 0; with a single kept value σ1 counts as 0.
func (s SharedSVD) Eigengap() float64 {
	if s.K == 0 || len(s.Sigma) == 0 || !(s.Sigma[0] > 0) {
		return 0
	}
	s1 := 0.0
	if s.K > 1 && len(s.Sigma) > 1 {
		s1 = s.Sigma[1]
	}
	return Clamp01((s.Sigma[0] - s1) / s.Sigma[0])
}

// ChordalDistance is the normalised chordal Grassmannian distance between
// the two bases' subspaces (seed 003 "Stage 1"):
//
//	d(a, b) = √( Σ_{i=1..k} sin²θ_i / k ),   k = min(K_a, K_b)
//
// θ_i are the principal angles, whose cosines are the singular values of
// V_a V_bᵀ. Σ cos²θ_i = ‖V_a V_bᵀ‖²_F, so the K_a×K_b product's Frobenius
// norm gives the sum without its SVD: d² = (k − ‖V_a V_bᵀ‖²_F)/k. This is
// ‖P_a − P_b‖_F/√(2k) for equal K (P the orthogonal projectors), in [0, 1]:
// 0 for the same subspace, 1 for orthogonal ones. Bit-identical bases give
// exactly 0. When either side is EmptySVD (or the dimensions differ) the
// distance is its maximum, 1.
func ChordalDistance(a, b SharedSVD) float64 {
	if !a.valid(a.Dim) || !b.valid(a.Dim) {
		return 1
	}
	k := min(a.K, b.K)
	if a.K == b.K && sameFloats(a.Basis[:a.K*a.Dim], b.Basis[:b.K*b.Dim]) {
		return 0
	}
	var fro float64
	for i := 0; i < a.K; i++ {
		ai := a.Row(i)
		for j := 0; j < b.K; j++ {
			c := dotUnrolled(ai, b.Row(j))
			fro += c * c
		}
	}
	s := (float64(k) - fro) / float64(k)
	return Clamp01(math.Sqrt(Clamp01(s)))
}

func sameFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// GapDirection is the least-covered direction of the goal (seed 003 "Warp
// Toward Goal"): the normalised reconstruction residual of the goal, the
// direction from the evidence's reconstruction toward the goal,
//
//	gap = normalize(g − ĝ) = normalize((I − VᵀV)(g − μ))
//
// (the same reconstruction as Coverage; μ = 0 for a nil Mean). When the
// basis is empty or of another dimension, or the residual is negligible
// (‖r‖ ≤ 1e−9·‖g‖: the goal is fully covered), it returns normalize(g). A
// zero goal returns a zero vector.
func (s SharedSVD) GapDirection(goal []float64) []float64 {
	if !s.valid(len(goal)) {
		return Normalize(goal)
	}
	r := s.residual(goal)
	if Norm(r) <= 1e-9*Norm(goal) { // fixed numerical guard, not a parameter
		return Normalize(goal)
	}
	return Normalize(r)
}

// Krylov parameters of ComputeSVD. The block size is k (so that singular
// values of multiplicity up to k are resolved).
const (
	// coldDepth is the number of AᵀA applications of a cold start: the
	// Krylov space is [Ω, (AᵀA)Ω, …, (AᵀA)^5 Ω], dimension 6k.
	coldDepth = 5
	// warmDepth is the number of AᵀA applications of a warm start from the
	// previous basis V: [V, (AᵀA)V], dimension 2k.
	warmDepth = 1
	// seedStream is the second word of the PCG source (the first is the
	// caller's seed).
	seedStream = 0x4c65746865535644 // "LetheSVD"
)

// ComputeSVD is the truncated SVD of the mean-centred evidence matrix
// (seed 003 "Stage 1"). rows are the evidence embeddings (all of one
// length; rows of another length than the first are ignored); the result
// keeps K = min(k, n−1, dim) singular triplets, since centring n rows
// leaves rank ≤ n−1. Fewer than max(minRows, 2) rows, or k ≤ 0, give
// EmptySVD.
//
// Method. Let A be the centred n×d matrix (A = X − 1μᵀ, never forming
// anything n×n).
//
//   - Small inputs (min(n, d) ≤ 6k): exact thin SVD of A (gonum, LAPACK
//     Dgesvd), in float64.
//   - Otherwise block Krylov with Rayleigh–Ritz. Starting from a d×k block
//     W₀ (cold: Gaussian from a PCG source seeded with seed; warm: the rows
//     of warm.Basis, padded with Gaussian columns if warm.K < k), the
//     orthonormal Krylov basis Q = [W₀, W₁, …, W_q] is built with
//     W_{j+1} = orth((AᵀA) W_j ⟂ W₀…W_j) (two passes of classical
//     Gram–Schmidt), q = 5 cold and q = 1 warm. Each application of AᵀA is
//     one pass over the rows of A computing Y_j = A W_j and Aᵀ Y_j together.
//     Rayleigh–Ritz: C = A Q = [Y₀ … Y_q] (already computed), G = CᵀC
//     ((q+1)k square), G = E Λ Eᵀ; σ_r = √λ_r and the basis is Q E_{:,r}
//     for the k largest λ. Thin throughout: the largest products are n×d
//     by d×k.
//
// The passes over A run in float32 through gonum's SIMD kernels (blas32
// Sdot/Saxpy), with the transposed product accumulated in float32 over
// 64-row chunks and in float64 across chunks; everything else (mean, Gram–
// Schmidt, Gram matrix, eigensolver, basis) is float64. The float32 passes
// bound the relative accuracy of σ and of the basis at ≈1e−6, far below
// the spectral gaps the signals resolve. Deterministic: one goroutine, fixed
// summation orders, a fixed seed; the same input gives the same bits, so
// two runs from the same warm basis are at chordal distance exactly 0.
func ComputeSVD(rows [][]float64, k, minRows int, warm *SharedSVD, seed uint64) SharedSVD {
	if len(rows) == 0 {
		return EmptySVD(0)
	}
	d := len(rows[0])
	valid := rows
	for _, r := range rows {
		if len(r) != d {
			valid = nil
			break
		}
	}
	if valid == nil {
		valid = make([][]float64, 0, len(rows))
		for _, r := range rows {
			if len(r) == d {
				valid = append(valid, r)
			}
		}
	}
	n := len(valid)
	if n < max(minRows, 2) || k <= 0 || d == 0 {
		e := EmptySVD(d)
		e.Rows = n
		return e
	}
	K := min(k, n-1, d)
	mean := columnMean(valid, d)
	if min(n, d) <= (coldDepth+1)*K {
		return exactSVD(valid, mean, K)
	}
	a := centred32(valid, mean)
	kr := newKrylov(a, n, d, seed)
	var start [][]float64
	depth := coldDepth
	if warm != nil && warm.valid(d) {
		depth = warmDepth
		for r := 0; r < min(warm.K, K); r++ {
			start = append(start, append([]float64(nil), warm.Row(r)...))
		}
	}
	for len(start) < K {
		start = append(start, kr.gaussian())
	}
	sigma, basis := kr.run(start, depth, K)
	return SharedSVD{K: K, Dim: d, Rows: n, Sigma: sigma, Basis: basis, Mean: mean}
}

// columnMean returns the column means of the rows (float64, row order).
func columnMean(rows [][]float64, d int) []float64 {
	m := make([]float64, d)
	for _, r := range rows {
		for j, x := range r {
			m[j] += x
		}
	}
	inv := 1 / float64(len(rows))
	for j := range m {
		m[j] *= inv
	}
	return m
}

// centred32 returns the centred rows as a flat n×d float32 matrix.
func centred32(rows [][]float64, mean []float64) []float32 {
	d := len(mean)
	a := make([]float32, len(rows)*d)
	for i, r := range rows {
		dst := a[i*d : (i+1)*d]
		for j, x := range r[:d] {
			dst[j] = float32(x - mean[j])
		}
	}
	return a
}

// exactSVD is the dense path for small inputs.
func exactSVD(rows [][]float64, mean []float64, K int) SharedSVD {
	n, d := len(rows), len(mean)
	a := mat.NewDense(n, d, nil)
	for i, r := range rows {
		for j, x := range r[:d] {
			a.Set(i, j, x-mean[j])
		}
	}
	var svd mat.SVD
	if !svd.Factorize(a, mat.SVDThin) {
		e := EmptySVD(d)
		e.Rows = n
		return e
	}
	vals := svd.Values(nil)
	var v mat.Dense
	svd.VTo(&v)
	out := SharedSVD{K: K, Dim: d, Rows: n, Sigma: make([]float64, K), Basis: make([]float64, K*d), Mean: mean}
	for r := 0; r < K; r++ {
		out.Sigma[r] = vals[r]
		row := out.Basis[r*d : (r+1)*d]
		for j := range row {
			row[j] = v.At(j, r)
		}
		canonicalSign(row)
	}
	return out
}

// canonicalSign flips v so that its largest-magnitude entry (lowest index
// on ties) is positive. Singular vectors are defined up to sign; fixing it
// makes stored bases comparable.
func canonicalSign(v []float64) {
	best, bi := -1.0, -1
	for i, x := range v {
		if a := math.Abs(x); a > best {
			best, bi = a, i
		}
	}
	if bi >= 0 && v[bi] < 0 {
		for i := range v {
			v[i] = -v[i]
		}
	}
}

// gaussianVec returns a standard normal vector of length d from r.
func gaussianVec(r *rand.Rand, d int) []float64 {
	v := make([]float64, d)
	for i := range v {
		v[i] = r.NormFloat64()
	}
	return v
}
