package algebra

import "math"

// Task selection and context scoring (seed 000 "Step 2", "Step 5"; seed 003
// "Warp Toward Goal"; DESIGN.md §6).
//
// Every function in this file is safe to call from Temporal workflow code:
// selection needs no vectors, only three cosines per task.

// DefaultMaxWarpAngle is the warp angle at full pressure, 0.5 rad (≈ 28.6°).
const DefaultMaxWarpAngle = 0.5

// TaskGAFloor is ε in the ranking formula (_TASK_GA_FLOOR in the original).
// A fixed mathematical constant, not a parameter: it only keeps the product
// RankScore non-zero when every GA is 0 (docs/parameters.md).
const TaskGAFloor = 0.01

// EvidenceDeficitFloor is the floor of EvidenceDeficit. A fixed
// mathematical constant, not a parameter: it keeps the deficit factor of
// RankScore non-zero for a fully covered task (seed 000; docs/parameters.md).
const EvidenceDeficitFloor = 0.05

// WarpAngle is the geodesic rotation angle for a budget pressure:
//
//	θ = clamp01(pressure)·maxAngle
//
// maxAngle is DefaultMaxWarpAngle (0.5 rad) in the seed.
func WarpAngle(pressure, maxAngle float64) float64 {
	return Clamp01(pressure) * maxAngle
}

// WarpedCosine is the closed form of cos(warp(e, d, θ), g) for unit vectors
// e (task), d (warp direction: the previous iteration's gap direction) and g
// (goal), from three cosines. With warp(e, d, θ) = cosθ·e + sinθ·t̂ and the
// unit tangent t̂ = (d − (e·d)e)/‖d − (e·d)e‖, ‖d − (e·d)e‖ = √(1 − (e·d)²):
//
//	cos(warp, g) = cosθ·cos_eg + sinθ·(cos_dg − cos_ed·cos_eg)/√(1 − cos_ed²)
//
// When d ∥ ±e (1 − cos_ed² < 1e−12) the tangent is undefined and the warp is
// the identity, so the result is cos_eg; θ = 0 is the identity too. Inputs
// are clamped to [−1, 1] and so is the result. It agrees with
// Cosine(Warp(e, d, θ), g) to rounding (tested on random unit vectors).
func WarpedCosine(cosEG, cosED, cosDG, theta float64) float64 {
	cosEG, cosED, cosDG = clampCos(cosEG), clampCos(cosED), clampCos(cosDG)
	s2 := 1 - cosED*cosED
	if theta == 0 || s2 < 1e-12 { // fixed guard, not a parameter: the tangent is undefined
		return cosEG
	}
	sn, cs := math.Sincos(theta)
	return clampCos(cs*cosEG + sn*(cosDG-cosED*cosEG)/math.Sqrt(s2))
}

func clampCos(c float64) float64 {
	switch {
	case c > 1:
		return 1
	case c >= -1:
		return c
	case c < -1:
		return -1
	default: // NaN
		return 0
	}
}

// NormalizeCosine is the affine map from [−1, 1] to [0, 1]:
//
//	normalize_cosine(c) = ½·(1 + c)
//
// clamped, so anti-aligned (−1) → 0, orthogonal (0) → 0.5, aligned (1) → 1.
func NormalizeCosine(c float64) float64 {
	return Clamp01(0.5 * (1 + c))
}

// EvidenceDeficit is how much a task still lacks evidence (seed 000 "Step 2"):
//
//	deficit = 0.05 + 0.95·(1 − clamp01(coverage))
//
// where coverage is the task embedding's SVD coverage by the top-k evidence
// subspace (SharedSVD.Coverage). The 0.05 floor prevents zero-deficit
// degeneracy when every task is well covered. Range [0.05, 1].
func EvidenceDeficit(coverage float64) float64 {
	return EvidenceDeficitFloor + (1-EvidenceDeficitFloor)*(1-Clamp01(coverage))
}

// DepthWeight is w_depth = 1/(1 + depth), depth the BFS distance from the
// root task (negative depths count as 0).
func DepthWeight(depth int) float64 {
	if depth < 0 {
		depth = 0
	}
	return 1 / (1 + float64(depth))
}

// DiminishingReturns is 1/√(1 + n_productive), where n_productive counts the
// iterations in which the task produced at least one applied operation
// (negative counts as 0).
func DiminishingReturns(nProductive int) float64 {
	if nProductive < 0 {
		nProductive = 0
	}
	return 1 / math.Sqrt(1+float64(nProductive))
}

// RankScore is the task ranking score (seed 000 "_rank_tasks"):
//
//	score = max(ga, ε) · deficit · w_depth · 1/√(1 + n_productive),   ε = 0.01
//
// ga is NormalizeCosine of the warped task–goal cosine, deficit is
// EvidenceDeficit. The floor ε keeps the product non-zero when every GA is
// 0, so depth and diminishing returns still order the tasks (without it all
// scores would tie at 0). ga is clamped to [0, 1].
func RankScore(ga, deficit float64, depth, nProductive int) float64 {
	return math.Max(Clamp01(ga), TaskGAFloor) * math.Max(deficit, 0) * DepthWeight(depth) * DiminishingReturns(nProductive)
}

// ArgMax returns the index of the largest score, the lowest index on ties,
// and −1 for an empty slice. NaN scores are never selected.
func ArgMax(scores []float64) int {
	best := -1
	for i, s := range scores {
		if math.IsNaN(s) {
			continue
		}
		if best < 0 || s > scores[best] {
			best = i
		}
	}
	return best
}

// ContextWeight is the GA weight of context scoring under pressure p
// (seed 000 "Step 5"):
//
//	w = w0 + (w1 − w0)·clamp01(p)²
//
// The quadratic coupling keeps the weight near w0 through most of the budget
// and moves it to w1 near exhaustion.
func ContextWeight(pressure, w0, w1 float64) float64 {
	p := Clamp01(pressure)
	return w0 + (w1-w0)*p*p
}

// BlendScore is the context candidate score (DESIGN.md §6):
//
//	s = (1 − w)·ppr_norm + w·ga
//
// with w clamped to [0, 1]; ppr_norm is the candidate's PPR mass divided by
// the largest PPR mass among candidates, ga its NormalizeCosine to the goal.
func BlendScore(pprNorm, ga, w float64) float64 {
	w = Clamp01(w)
	return (1-w)*pprNorm + w*ga
}
