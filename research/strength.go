package research

import (
	"math"

	"github.com/lethe-research/lethe/graph"
)

// Weights of the evidence-strength blend.
const (
	StrengthGoalWeight = 0.6
	StrengthGainWeight = 0.4
)

// KindPrior is the small source-kind factor of Strength: PDFs (papers,
// reports) 1.0; HTML and text 0.95; transcripts 0.9 (speech-to-text noise);
// LLM-written 0.8; anything else 0.9.
func KindPrior(kind graph.EvidenceKind) float64 {
	switch kind {
	case graph.KindPDF:
		return 1.0
	case graph.KindHTML, graph.KindText:
		return 0.95
	case graph.KindTranscript:
		return 0.9
	case graph.KindLLM:
		return 0.8
	}
	return 0.9
}

// Strength is the strength of a piece of evidence, in [0, 1]:
//
//	(0.6·g + 0.4·ig) · KindPrior(kind),  g = (1 + goalCos)/2
//
// g is the goal cosine affine-mapped from [−1, 1] to [0, 1] (the same map as
// the evidence-level goal alignment, so anti-aligned evidence contributes
// about nothing); ig is the information gain against evidence already held,
// clamped to [0, 1]. Inputs are clamped; NaN counts as the worst value (−1
// for the cosine, 0 for the gain).
func Strength(goalCos, infoGain float64, kind graph.EvidenceKind) float64 {
	if math.IsNaN(goalCos) {
		goalCos = -1
	}
	if math.IsNaN(infoGain) {
		infoGain = 0
	}
	g := clamp01((1 + clamp(goalCos, -1, 1)) / 2)
	ig := clamp01(infoGain)
	return clamp01((StrengthGoalWeight*g + StrengthGainWeight*ig) * KindPrior(kind))
}

func clamp(x, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, x)) }

func clamp01(x float64) float64 { return clamp(x, 0, 1) }
