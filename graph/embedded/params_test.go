package embedded_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/graph/graphtest"
)

// labelNLI labels "agree" pairs entailment and "contra" pairs contradiction.
type labelNLI struct{}

func (labelNLI) Classify(_ context.Context, pairs []graph.TextPair) ([]string, error) {
	out := make([]string, len(pairs))
	for i, p := range pairs {
		switch {
		case strings.Contains(p.Premise, "contra") || strings.Contains(p.Hypothesis, "contra"):
			out[i] = graph.LabelContradiction
		case strings.Contains(p.Premise, "agree") && strings.Contains(p.Hypothesis, "agree"):
			out[i] = graph.LabelEntailment
		default:
			out[i] = graph.LabelNeutral
		}
	}
	return out, nil
}

// refinedStrengths syncs SIMILAR_TO over one entailed pair and one
// contradicted pair (independent hosts, base strength 0.5) with refinement
// ref and returns the four strengths: entailed, entailed, contradicted,
// contradicted.
func refinedStrengths(t *testing.T, s graph.Store, n int, ref *graph.Refinement) [4]float64 {
	t.Helper()
	ctx := context.Background()
	sid := fmt.Sprintf("params-refine-%d", n)
	if err := s.CreateSession(ctx, graph.Session{ID: sid, Goal: "g", GoalDocEmb: graphtest.Unit(0), GoalQueryEmb: graphtest.Unit(1), Dim: graphtest.Dim},
		graph.Task{Description: "g", EmbedText: "g", Embedding: graphtest.Unit(0)}); err != nil {
		t.Fatal(err)
	}
	items := []graph.Evidence{
		{Content: "agree: cracks start at grain boundaries", SourceURL: "https://a.example/x", Strength: 0.5, Embedding: graphtest.Unit(2)},
		{Content: "agree: grain boundaries are where cracks begin", SourceURL: "https://b.example/y", Strength: 0.5, Embedding: graphtest.Blend(2, 3, 0.95)},
		{Content: "contra: dendrites cannot grow in ceramics", SourceURL: "https://c.example/1", Strength: 0.5, Embedding: graphtest.Unit(5)},
		{Content: "dendrites grow through ceramic electrolytes", SourceURL: "https://d.example/1", Strength: 0.5, Embedding: graphtest.Blend(5, 6, 0.90)},
	}
	if _, err := s.AddEvidence(ctx, sid, "k", graph.RootShortID, items); err != nil {
		t.Fatal(err)
	}
	st, err := graph.SyncSimilar(ctx, s, sid, graph.SimilarParams{Threshold: 0.8, MaxPerNode: 8, Refine: ref}, labelNLI{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Edges != 2 || st.Classified != 2 {
		t.Fatalf("sync = %+v, want 2 labelled edges", st)
	}
	evs, err := s.Evidence(ctx, sid, "")
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]float64{}
	for _, e := range evs {
		by[e.Content] = e.Strength
	}
	var out [4]float64
	for i, it := range items {
		out[i] = by[it.Content]
	}
	return out
}

// The session's algebra.corroboration_boost and algebra.contradiction_penalty
// reach the strength refinement: a nil Refine is the default (the
// conformance suite's RefineStrength values), a larger boost raises the
// entailed items further, a larger penalty lowers the contradicted ones
// further, and zero for both (a legitimate setting, not "unset") leaves
// every strength at its base.
func TestRefinementParamsReachStrengths(t *testing.T) {
	s := openTemp(t)
	def := refinedStrengths(t, s, 0, nil)
	explicit := refinedStrengths(t, s, 1, &graph.Refinement{Boost: 0.30, Penalty: 0.10})
	if def != explicit {
		t.Fatalf("nil refinement %v differs from the explicit defaults %v", def, explicit)
	}
	wA, wB := 0.95, 0.90
	want := [4]float64{graph.RefineStrength(0.5, wA, 0), graph.RefineStrength(0.5, wA, 0), graph.RefineStrength(0.5, 0, wB), graph.RefineStrength(0.5, 0, wB)}
	for i := range def {
		if math.Abs(def[i]-want[i]) > 1e-6 {
			t.Fatalf("default strengths %v, want %v", def, want)
		}
	}

	boost := refinedStrengths(t, s, 2, &graph.Refinement{Boost: 0.6, Penalty: 0.10})
	if !(boost[0] > def[0]+0.05 && boost[1] > def[1]+0.05) {
		t.Fatalf("corroboration_boost 0.6 gave entailed strengths %v, default %v", boost[:2], def[:2])
	}
	if boost[2] != def[2] || boost[3] != def[3] {
		t.Fatalf("corroboration_boost changed contradicted strengths: %v vs %v", boost[2:], def[2:])
	}

	penalty := refinedStrengths(t, s, 3, &graph.Refinement{Boost: 0.30, Penalty: 0.5})
	if !(penalty[2] < def[2]-0.05 && penalty[3] < def[3]-0.05) {
		t.Fatalf("contradiction_penalty 0.5 gave contradicted strengths %v, default %v", penalty[2:], def[2:])
	}
	if penalty[0] != def[0] {
		t.Fatalf("contradiction_penalty changed entailed strengths: %v vs %v", penalty[:2], def[:2])
	}

	if none := refinedStrengths(t, s, 4, &graph.Refinement{}); none != [4]float64{0.5, 0.5, 0.5, 0.5} {
		t.Fatalf("zero boost and penalty gave %v, want every base 0.5", none)
	}
}

// research.llm_evidence_strength reaches the evidence an evidence op
// writes; an unset strength (older workflow code) is LLMEvidenceStrength.
func TestApplyEvidenceStrength(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	for i, tc := range []struct{ set, want float64 }{{0, graph.LLMEvidenceStrength}, {0.7, 0.7}, {0.2, 0.2}} {
		sid := fmt.Sprintf("params-apply-%d", i)
		if err := s.CreateSession(ctx, graph.Session{ID: sid, Goal: "g", GoalDocEmb: graphtest.Unit(0), GoalQueryEmb: graphtest.Unit(1), Dim: graphtest.Dim},
			graph.Task{Description: "g", EmbedText: "g", Embedding: graphtest.Unit(0)}); err != nil {
			t.Fatal(err)
		}
		res, err := s.Apply(ctx, graph.ApplyRequest{SessionID: sid, Key: "apply/1", Iteration: 1, ActiveTask: graph.RootShortID, DedupThreshold: 0.95,
			EvidenceStrength: tc.set, Ops: []graph.Op{{Kind: graph.OpEvidence, Task: graph.RootShortID, Content: "llm fact", EmbedText: "f", Embedding: graphtest.Unit(5)}}})
		if err != nil || res.Evidence != 1 {
			t.Fatalf("apply: %+v, %v", res, err)
		}
		evs, err := s.Evidence(ctx, sid, "")
		if err != nil || len(evs) != 1 {
			t.Fatalf("evidence: %v, %v", evs, err)
		}
		if evs[0].Strength != tc.want {
			t.Errorf("EvidenceStrength %v: stored strength %v, want %v", tc.set, evs[0].Strength, tc.want)
		}
	}
}
