package algebra

import "math"

// Smooth numeric primitives (seed 003, "Smooth Numeric Primitives").
//
// Every function in this file is safe to call from Temporal workflow code:
// plain float64 arithmetic, no allocation, no goroutines, no randomness.

// DefaultHorizonAlpha is the default steepness α of BudgetHorizon (seed 003),
// documentation only: both loops pass the session's budget.alpha
// (TerminationConfig.budget_alpha, 4.0 in the original).
const DefaultHorizonAlpha = 5.0

// SoftGate is a tanh-based sigmoid gate centred at threshold t with
// temperature T. It replaces `if x > t` wherever a decision has to be smooth:
//
//	soft_gate(x, t, T) = ½·(1 + tanh(T·(x − t)/2))
//
// This is exactly the logistic function 1/(1+e^{−T(x−t)}) written through
// tanh, which needs no overflow guard for large |T(x−t)|. The gate is 0.5 at
// x = t; it reaches 0.9 at x = t + 2·atanh(0.8)/T and 0.1 at
// x = t − 2·atanh(0.8)/T, so the 90%→10% transition spans 4·atanh(0.8)/T,
// ≈ 0.439 at T = 10 (seed: "approximately 0.44"). T ≤ 0 is not meaningful:
// T = 0 gives the constant 0.5 and T < 0 inverts the gate.
func SoftGate(x, t, T float64) float64 {
	return 0.5 * (1 + math.Tanh(T*(x-t)/2))
}

// BudgetHorizon is the exponential budget curve that turns progress into
// pressure (seed 003 "budget_horizon", seed 000 "Budget Pressure"):
//
//	c(x) = (e^{αx} − 1) / (e^{α} − 1),   x clamped to [0, 1]
//
// It satisfies c(0) = 0 and c(1) = 1 for every α; α > 0 makes it convex
// (negligible pressure through the first half, steep near exhaustion). At
// α = 5: c(0.5) ≈ 0.0758 and c(0.95) ≈ 0.777, the two values the seed gives.
// The seed also lists c(0.8) ≈ 0.33, which no member of this family matches
// together with the other two: this curve gives c(0.8) = (e⁴−1)/(e⁵−1)
// ≈ 0.3636. We keep the exponential family (the seed names it and two of its
// three numbers fit it to three digits) and record 0.364 as the value.
// |α| < 1e−9 returns x (the α → 0 limit). Computed with Expm1 for accuracy at
// small αx.
func BudgetHorizon(x, alpha float64) float64 {
	x = Clamp01(x)
	if math.Abs(alpha) < 1e-9 {
		return x
	}
	return Clamp01(math.Expm1(alpha*x) / math.Expm1(alpha))
}

// Clamp01 is the hard projection onto [0, 1]: clamp01(x) = max(0, min(1, x)).
// NaN maps to 0, so a NaN can never leak into a signal that is documented to
// lie in [0, 1].
func Clamp01(x float64) float64 {
	switch {
	case x > 1:
		return 1
	case x >= 0:
		return x
	default: // x < 0 or NaN
		return 0
	}
}

// Confidence is the evidence confidence ramp
//
//	conf(n) = 1 − e^{−n}
//
// 0 at n = 0, ≈ 0.632 at n = 1, ≈ 0.950 at n = 3; n ≤ 0 (and NaN) gives 0.
// n is a float64 so that callers can ramp on fractional counts (for example
// rows per basis direction).
func Confidence(n float64) float64 {
	if !(n > 0) {
		return 0
	}
	return -math.Expm1(-n)
}
