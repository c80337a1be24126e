package research

import (
	"math"

	"github.com/lethe-research/lethe/graph"
)

// Default weights of the evidence-strength blend (research.strength_goal_weight,
// research.strength_gain_weight).
const (
	StrengthGoalWeight = 0.6
	StrengthGainWeight = 0.4
)

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

// DefaultKindPriors: PDFs (papers, reports) 1.0; HTML and text 0.95;
// transcripts 0.9 (speech-to-text noise); LLM-written 0.8; anything else 0.9.
func DefaultKindPriors() KindPriors {
	return KindPriors{PDF: 1.0, HTML: 0.95, Text: 0.95, Transcript: 0.9, LLM: 0.8, Other: 0.9}
}

// Of is the factor of kind.
func (k KindPriors) Of(kind graph.EvidenceKind) float64 {
	switch kind {
	case graph.KindPDF:
		return k.PDF
	case graph.KindHTML:
		return k.HTML
	case graph.KindText:
		return k.Text
	case graph.KindTranscript:
		return k.Transcript
	case graph.KindLLM:
		return k.LLM
	}
	return k.Other
}

// KindPrior is the small source-kind factor of Strength with the default
// priors (DefaultKindPriors).
func KindPrior(kind graph.EvidenceKind) float64 {
	return DefaultKindPriors().Of(kind)
}

// StrengthParams are the session's parameters of the evidence strength.
type StrengthParams struct {
	GoalWeight float64    `json:"goal"`
	GainWeight float64    `json:"gain"`
	Priors     KindPriors `json:"priors"`
}

// DefaultStrengthParams are the parameters' defaults: 0.6 goal, 0.4 gain,
// DefaultKindPriors.
func DefaultStrengthParams() StrengthParams {
	return StrengthParams{GoalWeight: StrengthGoalWeight, GainWeight: StrengthGainWeight, Priors: DefaultKindPriors()}
}

// Strength is StrengthParams.Strength with the defaults:
//
//	(0.6·g + 0.4·ig) · KindPrior(kind),  g = (1 + goalCos)/2
func Strength(goalCos, infoGain float64, kind graph.EvidenceKind) float64 {
	return DefaultStrengthParams().Strength(goalCos, infoGain, kind)
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
func (p StrengthParams) Strength(goalCos, infoGain float64, kind graph.EvidenceKind) float64 {
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
