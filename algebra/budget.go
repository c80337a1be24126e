package algebra

import "math"

// Budget manager math (seed 000 "Budget Management"): resource progress,
// convergence acceleration, termination potential ψ, thinking budget,
// convergence score and the confidence-weighted EMA trackers.
//
// Every function in this file is safe to call from Temporal workflow code.

// ZeroYieldStep is the default per-iteration additive boost of the
// convergence score after an iteration whose tool calls returned no new
// evidence (seed 000 "Zero-Yield Tracking"; budget.zero_yield_step).
const ZeroYieldStep = 0.08

// DefaultEMAAlpha is the smoothing factor of the stability, residual and
// eigengap trackers (seed 003 "Stage 3").
const DefaultEMAAlpha = 0.3

// DefaultPlateauTol is the convergence-score change per iteration at which
// PlateauIndicator is 0.5.
const DefaultPlateauTol = 0.05

// ResourceProgress is the bottleneck maximum of the resource fractions
// (seed 000 "Resource Progress"):
//
//	resource_progress = clamp01(max(iterations/max_iterations, elapsed/time_budget))
//
// Whichever resource is most depleted dominates. Tokens do not enter (seed
// 000: they act through the thinking budget instead).
func ResourceProgress(iterFrac, wallFrac float64) float64 {
	return Clamp01(math.Max(Clamp01(iterFrac), Clamp01(wallFrac)))
}

// AcceleratedProgress lets convergence accelerate perceived progress (seed
// 000 "Accelerated Progress"; the formula block was lost, this is the
// reconstruction):
//
//	accelerated = rp + (1 − rp)·conv·rp
//
// with rp = clamp01(resourceProgress), conv = clamp01(convergence). Why this
// form: it is the identity when conv = 0 (no convergence, no acceleration);
// it keeps both endpoints fixed (rp = 0 → 0: at the very start convergence is
// not trusted, iteration readiness guards that phase anyway; rp = 1 → 1: an
// exhausted budget stays exhausted); the acceleration (1 − rp)·rp·conv closes
// a conv-weighted share of the remaining budget in proportion to the budget
// already spent, largest (conv/4) mid-session, where converged evidence
// should cut the remaining time most; and it is monotone non-decreasing in
// both arguments on [0, 1]² (∂/∂rp = 1 + conv·(1 − 2rp) ≥ 1 − conv ≥ 0), so
// more convergence is always treated "as if resources were further
// depleted", never less. The result lies in [rp, 1].
func AcceleratedProgress(resourceProgress, convergence float64) float64 {
	rp := Clamp01(resourceProgress)
	conv := Clamp01(convergence)
	return Clamp01(rp + (1-rp)*conv*rp)
}

// ZeroYieldBoost adds the zero-yield term to the convergence score (seed
// 000 "Zero-Yield Tracking"):
//
//	boosted = clamp01(score + 0.08·n)
//
// n is the number of consecutive iterations whose tool calls returned no new
// evidence (negative n counts as 0). Three such iterations add 0.24.
func ZeroYieldBoost(score float64, n int) float64 {
	return ZeroYieldBoostStep(score, n, ZeroYieldStep)
}

// ZeroYieldBoostStep is ZeroYieldBoost with the session's step
// (budget.zero_yield_step): clamp01(score + step·n).
func ZeroYieldBoostStep(score float64, n int, step float64) float64 {
	if n < 0 {
		n = 0
	}
	return Clamp01(score + step*float64(n))
}

// PlateauIndicator is a smooth "the convergence score has stopped moving"
// indicator for ψ's conv_signal (seed 000 names the plateau factor but not
// its formula; this is our definition):
//
//	plateau(Δ) = 1 − soft_gate(|Δ|, tol, 4·atanh(0.9)/tol)
//
// Δ is the change of the convergence score since the previous iteration. It
// is ≈ 0.997 at Δ = 0, 0.5 at |Δ| = tol and ≈ 0.003 at |Δ| = 2·tol. tol ≤ 0
// uses DefaultPlateauTol.
func PlateauIndicator(delta, tol float64) float64 {
	if !(tol > 0) {
		tol = DefaultPlateauTol
	}
	// 4·atanh(0.9) is a fixed shape constant, not a parameter: it makes the
	// gate go from 0.9 to 0.1 between 0.5·tol and 1.5·tol, so that tol alone
	// (algebra.plateau_tol) sets the scale.
	T := 4 * math.Atanh(0.9) / tol
	return Clamp01(1 - SoftGate(math.Abs(delta), tol, T))
}

// PsiParams are the gates of the termination potential; the session's come
// from its config (budget.psi_*, config.Budget.PsiParams), DefaultPsiParams
// are the seed's values. The termination thresholds (0.82 agent, 0.70
// research) and min_iters are configuration too; MinIters here is only the
// documented default.
type PsiParams struct {
	// MinIters is the default minimum number of iterations before
	// convergence may terminate (the value callers usually put in
	// PsiInputs.MinIters).
	MinIters float64
	// QualityThreshold is the convergence quality (convergence·plateau)
	// above which pressure operates at near-full strength: 0.15.
	QualityThreshold float64
	// IterTemperature is the soft-gate temperature of iteration readiness: 4.
	IterTemperature float64
	// PressureCenter, PressureTemperature: soft_gate(pressure, 0.85, 8).
	PressureCenter, PressureTemperature float64
	// ResourceCenter, ResourceTemperature: soft_gate(resource_progress, 0.95, 12).
	ResourceCenter, ResourceTemperature float64
}

// DefaultPsiParams returns the seed's constants: MinIters 3,
// QualityThreshold 0.15, readiness T = 4, urgency gates (0.85, T = 8) on
// pressure and (0.95, T = 12) on resource progress.
func DefaultPsiParams() PsiParams {
	return PsiParams{
		MinIters:            3,
		QualityThreshold:    0.15,
		IterTemperature:     4,
		PressureCenter:      0.85,
		PressureTemperature: 8,
		ResourceCenter:      0.95,
		ResourceTemperature: 12,
	}
}

// IterReadiness ramps from 0 to 1 as the iteration count approaches the
// minimum (seed 000):
//
//	iter_readiness = soft_gate(iterations, min_iters − 0.5, T = 4)
//
// It is 0.5 half an iteration before min_iters and ≈ 0.88 at min_iters.
func IterReadiness(iterations, minIters float64) float64 {
	return SoftGate(iterations, minIters-0.5, 4)
}

// PressureUrgency is the pressure term of ψ (seed 000):
//
//	pressure_urgency = clamp01(max(soft_gate(pressure, 0.85, T=8),
//	                               soft_gate(resource_progress, 0.95, T=12)))
func PressureUrgency(pressure, resourceProgress float64) float64 {
	return Clamp01(math.Max(SoftGate(pressure, 0.85, 8), SoftGate(resourceProgress, 0.95, 12)))
}

// QualityGate attenuates pressure when convergence quality is low (seed 000
// "Termination Potential"; the formula block was lost, this is the
// reconstruction). With q = clamp01(convergence)·clamp01(plateau) and
// θ = 0.15:
//
//	quality_gate(q) = soft_gate(q, θ/2, 4·atanh(0.9)/θ)      (T ≈ 39.3)
//
// The gate is centred at θ/2 with the temperature chosen so that it is
// symmetric about the centre: ≈ 0.05 at q = 0, 0.5 at q = 0.075, ≈ 0.95 at
// q = θ = 0.15 and ≈ 0.9999 at q = 0.3. So "when quality is high (> 0.15),
// pressure operates at near-full strength", and with no convergence quality
// pressure alone contributes at most 0.05 to ψ, far below either termination
// threshold.
func QualityGate(convergence, plateau float64) float64 {
	return qualityGate(Clamp01(convergence)*Clamp01(plateau), DefaultPsiParams().QualityThreshold)
}

func qualityGate(q, threshold float64) float64 {
	if !(threshold > 0) {
		return 1
	}
	// Centre θ/2 and 4·atanh(0.9)/θ are fixed shape constants, not
	// parameters: 0.05 at q = 0, 0.95 at q = θ (budget.psi_quality_threshold).
	return SoftGate(q, threshold/2, 4*math.Atanh(0.9)/threshold)
}

// PsiInputs are the signals ψ is computed from. Convergence is the (zero-
// yield boosted) convergence score, Plateau the plateau indicator, both in
// [0, 1]; Iterations the number of completed iterations and MinIters the
// configured minimum; Pressure the budget pressure (BudgetHorizon of the
// accelerated progress) and ResourceProgress the raw bottleneck progress.
type PsiInputs struct {
	Convergence, Plateau, Iterations, MinIters, Pressure, ResourceProgress float64
}

// Psi is the termination potential (seed 000 "Termination Potential"), a
// complement product of a convergence signal and an effective pressure:
//
//	conv_signal        = convergence · plateau · iter_readiness(iterations, min_iters)
//	effective_pressure = pressure_urgency(pressure, resource_progress) · quality_gate(convergence, plateau)
//	ψ                  = 1 − (1 − conv_signal)·(1 − effective_pressure)
//
// Either strong convergence or heavy pressure (with some convergence
// quality) drives ψ toward 1; neither alone at moderate levels does. ψ is in
// [0, 1] and monotone non-decreasing in Pressure, ResourceProgress,
// Convergence, Plateau and Iterations. The session terminates when ψ exceeds
// its configured threshold (0.82 agent loop, 0.70 research loop).
func Psi(in PsiInputs) float64 {
	return PsiWith(DefaultPsiParams(), in)
}

// PsiWith is Psi with explicit constants (Psi uses DefaultPsiParams):
//
//	conv_signal        = conv·plateau·soft_gate(iterations, min_iters − 0.5, IterTemperature)
//	pressure_urgency   = clamp01(max(soft_gate(pressure, PressureCenter, PressureTemperature),
//	                                 soft_gate(resource_progress, ResourceCenter, ResourceTemperature)))
//	effective_pressure = pressure_urgency·quality_gate(conv·plateau; QualityThreshold)
//	ψ                  = 1 − (1 − conv_signal)·(1 − effective_pressure)
//
// in.MinIters is used as given (p.MinIters is only the documented default).
// Monotone in pressure for positive temperatures.
func PsiWith(p PsiParams, in PsiInputs) float64 {
	conv := Clamp01(in.Convergence)
	plateau := Clamp01(in.Plateau)
	convSignal := conv * plateau * SoftGate(in.Iterations, in.MinIters-0.5, p.IterTemperature)
	urgency := Clamp01(math.Max(
		SoftGate(in.Pressure, p.PressureCenter, p.PressureTemperature),
		SoftGate(in.ResourceProgress, p.ResourceCenter, p.ResourceTemperature)))
	eff := urgency * qualityGate(conv*plateau, p.QualityThreshold)
	return Clamp01(1 - (1-Clamp01(convSignal))*(1-Clamp01(eff)))
}

// ThinkingBudget is the two-stage reasoning-token budget (seed 000 "Step 7",
// seed 003 "Stage 4"; the formula blocks were lost, this is the
// reconstruction):
//
//	base   = min + (max − min)·clamp01(novelty)          (stage 1: previous iteration's novelty)
//	budget = base − (base − min)·clamp01(pressure)       (stage 2: adjust_thinking_budget)
//
// rounded to the nearest integer (halves away from zero) and clamped to
// [min, max]. High novelty early gets budgets near max; heavy pressure pulls
// any base toward min. If maxTokens < minTokens the budget is minTokens.
func ThinkingBudget(novelty, pressure float64, minTokens, maxTokens int) int {
	if maxTokens < minTokens {
		maxTokens = minTokens
	}
	lo, hi := float64(minTokens), float64(maxTokens)
	base := lo + (hi-lo)*Clamp01(novelty)
	b := base - (base-lo)*Clamp01(pressure)
	out := int(math.Round(b))
	if out < minTokens {
		out = minTokens
	}
	if out > maxTokens {
		out = maxTokens
	}
	return out
}

// ConvergenceWeights weight the three convergence signals: goal alignment,
// the temporal signal and reconstruction coverage.
type ConvergenceWeights struct {
	GA, Temporal, Coverage float64
}

// AgentConvergenceWeights are the agent loop's weights: GA 0.40, temporal
// (state stability) 0.35, coverage 0.25. The seed's weight table was lost;
// these defaults put the most weight on "is the evidence about the goal",
// then on "has the focus settled", and the least on SVD coverage, which is
// noisy while the evidence matrix is small.
func AgentConvergenceWeights() ConvergenceWeights {
	return ConvergenceWeights{GA: 0.40, Temporal: 0.35, Coverage: 0.25}
}

// ResearchConvergenceWeights are the research loop's weights: GA 0.30,
// temporal (1 − mean information gain) 0.50, coverage 0.20. Information-gain
// saturation ("are new pages still useful?") is the research loop's primary
// stopping signal, so it carries half the weight.
func ResearchConvergenceWeights() ConvergenceWeights {
	return ConvergenceWeights{GA: 0.30, Temporal: 0.50, Coverage: 0.20}
}

// ConvergenceScore is the normalised weighted blend (seed 003 "Convergence
// Score"):
//
//	score = (w_ga·ga + w_t·temporal + w_c·coverage) / (w_ga + w_t + w_c)
//
// Each signal is clamped to [0, 1] and negative weights count as 0, so the
// score is in [0, 1]; all-zero weights give 0. The temporal signal is
// stability for the agent loop and 1 − mean information gain for research.
func ConvergenceScore(w ConvergenceWeights, ga, temporal, coverage float64) float64 {
	wg, wt, wc := math.Max(w.GA, 0), math.Max(w.Temporal, 0), math.Max(w.Coverage, 0)
	sum := wg + wt + wc
	if !(sum > 0) {
		return 0
	}
	return Clamp01((wg*Clamp01(ga) + wt*Clamp01(temporal) + wc*Clamp01(coverage)) / sum)
}

// EMA is an exponential moving average with confidence-weighted updates.
// The zero value starts at 0; use InitialTrackers for the documented
// starting values of the three signal trackers.
type EMA struct {
	Value float64
}

// Update returns the tracker after one confidence-weighted observation
// (seed 003 "Stage 3"; the formula block was lost, this is the
// reconstruction):
//
//	v ← v + α·conf·(obs − v)
//
// with α and conf clamped to [0, 1]. At conf = 0 the tracker holds its value
// exactly (no warm-up flags needed); at conf = 1 it is the plain EMA with
// factor α. A NaN observation is ignored.
func (e EMA) Update(obs, confidence, alpha float64) EMA {
	g := Clamp01(alpha) * Clamp01(confidence)
	if g == 0 || math.IsNaN(obs) {
		return e
	}
	return EMA{Value: e.Value + g*(obs-e.Value)}
}

// ObservedScalars are the raw per-iteration observations the trackers
// consume, with their confidences (see SignalObservation.Scalars).
type ObservedScalars struct {
	Stability, StabilityConf float64
	Residual, ResidualConf   float64
	Eigengap, SVDConf        float64
}

// Trackers are the three EMA trackers of seed 003 "Stage 3": state
// stability (gated by ev_confidence·prior_confidence), residual magnitude
// (gated by ev_confidence) and eigengap (gated by svd_confidence).
type Trackers struct {
	Stability, Residual, Eigengap EMA
}

// InitialTrackers returns the trackers' starting values, the neutral value
// of each signal: stability 0.5 (orthogonal drift: no information),
// residual 1 (maximum distance to the goal: nothing known), eigengap 0 (no
// spectral decisiveness). Fixed by the signals' definitions, not
// parameters.
func InitialTrackers() Trackers {
	return Trackers{Stability: EMA{0.5}, Residual: EMA{1}, Eigengap: EMA{0}}
}

// Update feeds one iteration's observations to the three trackers, each
// with its own confidence.
func (t Trackers) Update(o ObservedScalars, alpha float64) Trackers {
	return Trackers{
		Stability: t.Stability.Update(o.Stability, o.StabilityConf, alpha),
		Residual:  t.Residual.Update(o.Residual, o.ResidualConf, alpha),
		Eigengap:  t.Eigengap.Update(o.Eigengap, o.SVDConf, alpha),
	}
}
