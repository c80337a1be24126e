package research

import (
	"math"
	"testing"

	"github.com/lethe-research/lethe/graph"
)

// The documented default priors, and Strength with the defaults is the
// formula of the constants (0.6·g + 0.4·ig)·prior, bit for bit.
func TestStrengthDefaults(t *testing.T) {
	for kind, want := range map[graph.EvidenceKind]float64{
		graph.KindPDF: 1.0, graph.KindHTML: 0.95, graph.KindText: 0.95, graph.KindTranscript: 0.9, graph.KindLLM: 0.8, "": 0.9, "video": 0.9,
	} {
		if got := KindPrior(kind); got != want {
			t.Errorf("KindPrior(%q) = %v, want %v", kind, got, want)
		}
	}
	for _, c := range []float64{-1, -0.3, 0, 0.42, 1, math.NaN()} {
		for _, ig := range []float64{0, 0.25, 1, 2, math.NaN()} {
			for _, kind := range []graph.EvidenceKind{graph.KindPDF, graph.KindHTML, graph.KindTranscript, ""} {
				cc, ii := c, ig
				if math.IsNaN(cc) {
					cc = -1
				}
				if math.IsNaN(ii) {
					ii = 0
				}
				g := clamp01((1 + clamp(cc, -1, 1)) / 2)
				want := clamp01((StrengthGoalWeight*g + StrengthGainWeight*clamp01(ii)) * KindPrior(kind))
				if got := Strength(c, ig, kind); got != want {
					t.Errorf("Strength(%v, %v, %q) = %v, want %v", c, ig, kind, got, want)
				}
			}
		}
	}
}

// Each strength parameter changes the strength it should and only that.
func TestStrengthParams(t *testing.T) {
	def := DefaultStrengthParams()
	base := def.Strength(0.5, 0.5, graph.KindHTML)
	goal := def
	goal.GoalWeight, goal.GainWeight = 1, 0
	if got, want := goal.Strength(0.5, 0.5, graph.KindHTML), 0.75*0.95; math.Abs(got-want) > 1e-15 {
		t.Errorf("goal weight only: %v, want %v", got, want)
	}
	gain := def
	gain.GoalWeight, gain.GainWeight = 0, 1
	if got, want := gain.Strength(0.5, 0.5, graph.KindHTML), 0.5*0.95; math.Abs(got-want) > 1e-15 {
		t.Errorf("gain weight only: %v, want %v", got, want)
	}
	pr := def
	pr.Priors.HTML = 0.5
	if got := pr.Strength(0.5, 0.5, graph.KindHTML); !(got < base) || pr.Strength(0.5, 0.5, graph.KindPDF) != def.Strength(0.5, 0.5, graph.KindPDF) {
		t.Errorf("prior_html 0.5: html %v (default %v), pdf changed", got, base)
	}
	pr = def
	pr.Priors.Other = 0.1
	if got := pr.Strength(0.5, 0.5, "video"); math.Abs(got-def.Strength(0.5, 0.5, "video")/9) > 1e-15 {
		t.Errorf("prior_other 0.1: %v", got)
	}
	if got := (StrengthParams{}).Strength(1, 1, graph.KindPDF); got != 0 {
		t.Errorf("zero parameters: %v, want 0", got)
	}
}
