package contract

import "math"

// KindPriors are the source-kind factors of the strength formula
// (research.prior_*). Other is the factor of a kind none of the fields
// names.
type KindPriors struct {
	PDF        float64 `json:"pdf"`
	HTML       float64 `json:"html"`
	Text       float64 `json:"text"`
	Transcript float64 `json:"transcript"`
	LLM        float64 `json:"llm"`
	Other      float64 `json:"other"`
}

// Of is the factor of kind.
func (k KindPriors) Of(kind EvidenceKind) float64 {
	switch kind {
	case KindPDF:
		return k.PDF
	case KindHTML:
		return k.HTML
	case KindText:
		return k.Text
	case KindTranscript:
		return k.Transcript
	case KindLLM:
		return k.LLM
	}
	return k.Other
}

// StrengthParams are the session's parameters of the evidence strength.
type StrengthParams struct {
	GoalWeight float64    `json:"goal"`
	GainWeight float64    `json:"gain"`
	Priors     KindPriors `json:"priors"`
}

// Strength is the strength of a piece of evidence, in [0, 1]:
//
//	(GoalWeight·g + GainWeight·ig) · Priors.Of(kind),  g = (1 + goalCos)/2
//
// g is the goal cosine affine-mapped from [−1, 1] to [0, 1] (the same map as
// the evidence-level goal alignment, so anti-aligned evidence contributes
// about nothing); ig is the information gain against evidence already held,
// clamped to [0, 1]. Inputs are clamped; NaN counts as the worst value (−1
// for the cosine, 0 for the gain).
func (p StrengthParams) Strength(goalCos, infoGain float64, kind EvidenceKind) float64 {
	if math.IsNaN(goalCos) {
		goalCos = -1
	}
	if math.IsNaN(infoGain) {
		infoGain = 0
	}
	g := clamp01((1 + clamp(goalCos, -1, 1)) / 2)
	ig := clamp01(infoGain)
	return clamp01((p.GoalWeight*g + p.GainWeight*ig) * p.Priors.Of(kind))
}

func clamp(x, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, x)) }

func clamp01(x float64) float64 { return clamp(x, 0, 1) }
