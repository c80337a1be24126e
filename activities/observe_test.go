package activities_test

import (
	"math"
	"testing"

	"github.com/lethe-research/lethe/activities"
	"github.com/lethe-research/lethe/algebra"
	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/graph/graphtest"
)

// TestObserveNoveltyCountsIngestedRowsOnly: in iteration 2 the research
// ingested one page chunk, the model wrote one evidence item, and a chunk
// the session already held was linked to a second task. Only the ingested
// row is new for the novelty: with no previous basis (subspace distance 1)
// and the default weight ½, novelty = ½ + ½·IG(ingested row | the rest),
// whatever count the workflow passes.
func TestObserveNoveltyCountsIngestedRowsOnly(t *testing.T) {
	env, store, _ := newActivityEnv(t, t.TempDir(), nil)
	ctx := t.Context()
	sid := "observe-novelty"
	if err := store.CreateSession(ctx, graph.Session{ID: sid, Goal: "g", GoalDocEmb: graphtest.Unit(0), GoalQueryEmb: graphtest.Unit(1), Dim: graphtest.Dim},
		graph.Task{Description: "g", EmbedText: "g", Embedding: graphtest.Unit(0)}); err != nil {
		t.Fatal(err)
	}
	old := []graph.Evidence{
		{Content: "held one", Kind: graph.KindHTML, Strength: 0.5, Embedding: graphtest.Unit(2), CreatedIter: 1},
		{Content: "held two", Kind: graph.KindHTML, Strength: 0.5, Embedding: graphtest.Blend(2, 3, 0.8), CreatedIter: 1},
		{Content: "held three", Kind: graph.KindHTML, Strength: 0.5, Embedding: graphtest.Unit(4), CreatedIter: 1},
	}
	if _, err := store.AddEvidence(ctx, sid, "k1", graph.RootShortID, old); err != nil {
		t.Fatal(err)
	}
	ingested := graph.Evidence{Content: "ingested now", Kind: graph.KindHTML, Strength: 0.5, Embedding: graphtest.Unit(7), CreatedIter: 2}
	llm := graph.Evidence{Content: "written by the model", Kind: graph.KindLLM, Strength: 0.5, Embedding: graphtest.Unit(9), CreatedIter: 2}
	if _, err := store.AddEvidence(ctx, sid, "k2", graph.RootShortID, []graph.Evidence{ingested, llm}); err != nil {
		t.Fatal(err)
	}
	// A linked row: the same content found again (for the root here), which
	// keeps its first iteration.
	if r, err := store.AddEvidence(ctx, sid, "k3", graph.RootShortID, []graph.Evidence{{Content: "held three", Kind: graph.KindHTML, Embedding: graphtest.Unit(4), CreatedIter: 2}}); err != nil || r.Added != 0 {
		t.Fatalf("re-found content added %+v, %v", r, err)
	}
	v, err := env.ExecuteActivity(acts.Observe, activities.ObserveInput{SessionID: sid, Iteration: 2, Task: graph.RootShortID, NewEvidence: 3, SVDK: 2, MinEvidence: 2})
	if err != nil {
		t.Fatal(err)
	}
	var o activities.Observation
	if err := v.Get(&o); err != nil {
		t.Fatal(err)
	}
	var rest [][]float64
	for _, e := range []graph.Evidence{old[0], old[1], old[2], llm} {
		rest = append(rest, algebra.ToFloat64(e.Embedding))
	}
	ig := algebra.MeanInformationGain([][]float64{algebra.ToFloat64(ingested.Embedding)}, rest)
	if want := 0.5 + 0.5*ig; math.Abs(o.Novelty-want) > 1e-6 {
		t.Fatalf("novelty %v, want %v (the ingested row only)", o.Novelty, want)
	}
	if o.NEvidence != 5 {
		t.Fatalf("%d evidence rows, want 5", o.NEvidence)
	}
}
