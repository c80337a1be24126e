package research

import (
	"math"

	"github.com/lethe-research/lethe/contract"
	"github.com/lethe-research/lethe/graph"
)

// Default weights of the evidence-strength blend (research.strength_goal_weight,
// research.strength_gain_weight).
const (
	StrengthGoalWeight = 0.6
	StrengthGainWeight = 0.4
)

// KindPriors are the source-kind factors of the strength formula
// (research.prior_*); contract.KindPriors, as they travel in Ingest's input.
type KindPriors = contract.KindPriors

// DefaultKindPriors: PDFs (papers, reports) 1.0; HTML and text 0.95;
// transcripts 0.9 (speech-to-text noise); LLM-written 0.8; anything else 0.9.
func DefaultKindPriors() KindPriors {
	return KindPriors{PDF: 1.0, HTML: 0.95, Text: 0.95, Transcript: 0.9, LLM: 0.8, Other: 0.9}
}

// KindPrior is the small source-kind factor of Strength with the default
// priors (DefaultKindPriors).
func KindPrior(kind graph.EvidenceKind) float64 {
	return DefaultKindPriors().Of(kind)
}

// StrengthParams are the session's parameters of the evidence strength
// (contract.StrengthParams, with the formula).
type StrengthParams = contract.StrengthParams

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

func clamp(x, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, x)) }

func clamp01(x float64) float64 { return clamp(x, 0, 1) }
