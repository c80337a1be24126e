// Package algebra is the quantitative control plane: pure functions over
// embedding vectors and scalar signals. It imports nothing from the project.
//
// Functions called from Temporal workflow code (smooth.go, budget.go,
// rank.go, knapsack.go, mmr.go, ppr.go's NormalizeScores, batch.go's
// AttentionGA/GoalAlignment) are plain loops over small slices that import
// only math. The heavy ones (ComputeSVD, ComputeIterationSignals, PPR,
// NewPairSims) run in activities and may use gonum; they too are
// deterministic: no goroutines of their own, fixed seeds, fixed summation
// orders. Every formula, including the ones reconstructed from the seeds'
// prose, is written in its function's doc comment and in docs/algebra.md.
package algebra

import "math"

// Cosine32 returns the cosine similarity of two float32 vectors, computed in
// float64. It returns 0 when either vector has zero norm or the lengths differ.
func Cosine32(a, b []float32) float64 {
	if len(a) != len(b) || len(a) == 0 {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		dot += x * y
		na += x * x
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

// Dot32 is the dot product of two float32 vectors, accumulated in float64
// (0 when their lengths differ). With Norm32 it is Cosine32 for a caller
// that meets each vector many times and computes its norm once. Four
// accumulators let the products run in parallel: Expand's walk computes
// tens of thousands per call at 100k evidence.
func Dot32(a, b []float32) float64 {
	if len(a) != len(b) {
		return 0
	}
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += float64(a[i]) * float64(b[i])
		s1 += float64(a[i+1]) * float64(b[i+1])
		s2 += float64(a[i+2]) * float64(b[i+2])
		s3 += float64(a[i+3]) * float64(b[i+3])
	}
	for ; i < len(a); i++ {
		s0 += float64(a[i]) * float64(b[i])
	}
	return (s0 + s1) + (s2 + s3)
}

// Norm32 is the Euclidean norm of a float32 vector, accumulated in float64.
func Norm32(a []float32) float64 {
	return math.Sqrt(Dot32(a, a))
}

// Static vector operations on float64 embeddings. They are plain loops (no
// BLAS), so they are also safe in workflow code, but vectors never travel
// through workflow history (DESIGN.md §3): in practice activities call them.

// Dot returns the dot product of a and b over their common length.
func Dot(a, b []float64) float64 {
	if len(b) < len(a) {
		a = a[:len(b)]
	}
	b = b[:len(a)]
	var s float64
	for i, x := range a {
		s += x * b[i]
	}
	return s
}

// Norm returns the Euclidean norm of v.
func Norm(v []float64) float64 {
	return math.Sqrt(Dot(v, v))
}

// Cosine returns the cosine similarity a·b/(‖a‖‖b‖), clamped to [−1, 1].
// It returns 0 when either vector has zero norm or the lengths differ.
func Cosine(a, b []float64) float64 {
	if len(a) != len(b) || len(a) == 0 {
		return 0
	}
	var dot, na, nb float64
	for i, x := range a {
		y := b[i]
		dot += x * y
		na += x * x
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return clampCos(dot / math.Sqrt(na*nb))
}

// Normalize returns v/‖v‖ as a new slice. A zero (or empty) vector is
// returned as a zero copy.
func Normalize(v []float64) []float64 {
	out := make([]float64, len(v))
	n := Norm(v)
	if n == 0 || math.IsNaN(n) || math.IsInf(n, 0) {
		return out
	}
	for i, x := range v {
		out[i] = x / n
	}
	return out
}

// Warp is warp_toward_goal (seed 003): the geodesic rotation of ê = e/‖e‖
// by angle θ toward d̂ = d/‖d‖ on the unit sphere, i.e. the Riemannian
// exponential map at ê applied to θ·t̂:
//
//	t̂ = (d̂ − (ê·d̂)ê) / ‖d̂ − (ê·d̂)ê‖
//	warp(e, d, θ) = cosθ·ê + sinθ·t̂
//
// The result has unit norm (it is re-normalised against rounding). θ = 0,
// d ∥ ±e (‖d̂ − (ê·d̂)ê‖² < 1e−12) and a zero d return ê: the identity. A
// zero e returns a zero vector. Lengths must match (otherwise ê is
// returned). θ larger than the angle between e and d rotates past d along
// the same great circle; with θ ≤ 0.5 rad this only happens for tasks already
// within 28.6° of the gap direction. cos(warp(e, d, θ), g) has the closed
// form WarpedCosine.
func Warp(e, d []float64, theta float64) []float64 {
	eh := Normalize(e)
	if theta == 0 || len(d) != len(e) || Dot(eh, eh) == 0 {
		return eh
	}
	dh := Normalize(d)
	c := Dot(eh, dh)
	t := make([]float64, len(eh))
	var tn float64
	for i := range t {
		t[i] = dh[i] - c*eh[i]
		tn += t[i] * t[i]
	}
	if tn < 1e-12 {
		return eh
	}
	sn, cs := math.Sincos(theta)
	inv := sn / math.Sqrt(tn)
	for i := range t {
		t[i] = cs*eh[i] + inv*t[i]
	}
	n := Norm(t)
	if n > 0 {
		for i := range t {
			t[i] /= n
		}
	}
	return t
}

// ToFloat64 converts a float32 embedding to float64.
func ToFloat64(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// ToFloat32 converts a float64 embedding to float32 (round to nearest).
func ToFloat32(v []float64) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out
}
