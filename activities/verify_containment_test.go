package activities_test

import (
	"strings"
	"testing"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/lethe-research/lethe/activities"
	"github.com/lethe-research/lethe/config/load"
	"github.com/lethe-research/lethe/contract"
	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/graph/embedded"
	"github.com/lethe-research/lethe/graph/graphtest"
	"github.com/lethe-research/lethe/internal/lethetest"
	"github.com/lethe-research/lethe/llm/llmtest"
	"github.com/lethe-research/lethe/service"
)

// TestVerifyCitationsByContainment runs the VerifyCitations activity on a
// real store against the scripted model: sentences copied from their
// source are supported without a model call; in a mixed batch the model
// is shown only the abstractive sentence, and its verdict is marked as
// the model's; a verbatim sentence citing the wrong source still goes to
// the model; a sentence recomposed from its source's words is supported
// by coverage, without a call; a sentence copied from a note the model
// wrote with that source goes to the model, which sees the source's own
// text and not the note.
func TestVerifyCitationsByContainment(t *testing.T) {
	model := llmtest.NewServer(llmtest.Script{Rules: []llmtest.Rule{
		{Name: "verbatim-leak", Match: []string{`Item 0\n`}, Reply: `{"verdicts":[]}`},
		{Name: "note", Match: []string{`Item 5\nSentence: Dendrites set every cell on fire`}, Reply: `{"verdicts":[{"i":5,"supported":false,"quote":""}]}`},
		{Name: "judge", Match: []string{`^Check these citations`, `Item 2\nSentence: Cathode particles`},
			Reply: `{"verdicts":[{"i":2,"supported":true,"quote":"particles swell and lose contact"},{"i":3,"supported":false,"quote":""}]}`},
	}})
	t.Cleanup(model.Close)
	cfg := lethetest.Config(t, model.URL(), t.TempDir(), nil)
	store, err := embedded.Open(cfg.Graph.Path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	a, err := service.NewActivities(cfg, load.Sources{}, store, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.CloseResearch)
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{&activities.Guard{}}})
	env.RegisterActivityWithOptions(a, activity.RegisterOptions{SkipInvalidStructFunctions: true})

	sid := "verify-contain"
	if err := store.CreateSession(t.Context(), graph.Session{ID: sid, Goal: "How do batteries fail?", GoalDocEmb: graphtest.Unit(0), GoalQueryEmb: graphtest.Unit(1), Dim: graphtest.Dim},
		graph.Task{Description: "How do batteries fail?", EmbedText: "g", Embedding: graphtest.Unit(0)}); err != nil {
		t.Fatal(err)
	}
	if _, err := store.AddEvidence(t.Context(), sid, "k", graph.RootShortID, []graph.Evidence{
		{Content: "Lithium dendrites grow along grain boundaries\nof the solid electrolyte [4].", SourceURL: "https://a.example/1", Strength: 0.5, Embedding: graphtest.Unit(2), CreatedIter: 1},
		{Content: "On cycling, cathode particles swell and lose contact with the electrolyte.", SourceURL: "https://b.example/1", Strength: 0.5, Embedding: graphtest.Unit(3), CreatedIter: 1},
	}); err != nil {
		t.Fatal(err)
	}
	verify := func(batch int, items ...contract.VerifyItem) contract.VerifyResult {
		t.Helper()
		var res contract.VerifyResult
		v, err := env.ExecuteActivity(acts.VerifyCitations, contract.VerifyInput{SessionID: sid, Batch: batch, Items: items, SourceChars: 600, MaxTokens: 400,
			Sources: []contract.VerifySource{{N: 1, URL: "https://a.example/1"}, {N: 2, URL: "https://b.example/1"}}})
		if err == nil {
			err = v.Get(&res)
		}
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	verbatim := contract.VerifyItem{I: 0, N: 1, URL: "https://a.example/1", Sentence: "Lithium dendrites grow along grain boundaries of the solid electrolyte."}
	quoted := contract.VerifyItem{I: 1, N: 2, URL: "https://b.example/1", Sentence: `The study notes that "cathode particles swell and lose contact", which limits life.`}
	abstractive := contract.VerifyItem{I: 2, N: 2, URL: "https://b.example/1", Sentence: "Cathode particles lose contact as they swell."}
	wrongSource := contract.VerifyItem{I: 3, N: 2, URL: "https://b.example/1", Sentence: verbatim.Sentence}

	res := verify(1, verbatim, quoted)
	if model.ChatCount() != 0 || res.Calls != 0 || res.Tokens != 0 {
		t.Fatalf("contained sentences cost %d chat calls (%d tokens)", model.ChatCount(), res.Tokens)
	}
	want := []string{"supported/containment", "supported/containment"}
	if got := routes(res); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("verdicts %v, want %v", got, want)
	}
	res = verify(2, verbatim, abstractive, wrongSource)
	if model.ChatCount() != 1 || res.Calls != 1 {
		t.Fatalf("mixed batch: %d chat calls, want 1 (the model sees only the rest)", model.ChatCount())
	}
	want = []string{"supported/containment", "supported/model", "unsupported/model"}
	if got := routes(res); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("verdicts %v, want %v", got, want)
	}
	// The verbatim sentence citing the wrong source is moved to the one
	// that holds it; the others are not moved.
	if m := [3]int{res.Verdicts[0].Moved, res.Verdicts[1].Moved, res.Verdicts[2].Moved}; m != [3]int{0, 0, 1} {
		t.Fatalf("moves %v, want [0 0 1]", m)
	}
	if !strings.HasPrefix(res.Verdicts[2].Quote, "Lithium dendrites grow") {
		t.Fatalf("moved verdict's quote %q", res.Verdicts[2].Quote)
	}
	// A sentence recomposed from its source's words is covered: no call.
	recomposed := contract.VerifyItem{I: 4, N: 2, URL: "https://b.example/1", Sentence: "Cathode particles swell on cycling and lose their contact with the electrolyte."}
	res = verify(3, recomposed)
	if model.ChatCount() != 1 || res.Calls != 0 {
		t.Fatalf("a covered sentence cost %d chat calls", model.ChatCount()-1)
	}
	if got := routes(res); strings.Join(got, " ") != "supported/coverage" || !strings.HasPrefix(res.Verdicts[0].Quote, "On cycling, cathode particles") {
		t.Fatalf("recomposed sentence: verdicts %v, quote %q", got, res.Verdicts[0].Quote)
	}
	// The model's own note, stored with a source it read (an evidence op),
	// is not that source's text: a sentence copied from it is judged
	// against the page.
	const note = "Dendrites set every cell on fire within a week."
	if _, err := store.AddEvidence(t.Context(), sid, "apply/1", graph.RootShortID, []graph.Evidence{
		{Content: note, SourceURL: "https://a.example/1", Kind: graph.KindLLM, Strength: 0.5, Embedding: graphtest.Unit(4), CreatedIter: 2},
	}); err != nil {
		t.Fatal(err)
	}
	res = verify(4, contract.VerifyItem{I: 5, N: 1, URL: "https://a.example/1", Sentence: note})
	if got := routes(res); strings.Join(got, " ") != "unsupported/model" || res.Calls != 1 {
		t.Fatalf("a sentence from the model's note: verdicts %v, %d calls", got, res.Calls)
	}
	reqs := model.Requests()
	if _, excerpt, _ := strings.Cut(reqs[len(reqs)-1].User, "excerpt:"); strings.Contains(excerpt, "every cell") || !strings.Contains(excerpt, "grain boundaries") {
		t.Fatalf("the judge was shown %q as the source", excerpt)
	}
}

func routes(res contract.VerifyResult) []string {
	var out []string
	for _, v := range res.Verdicts {
		out = append(out, v.Status+"/"+v.Via)
	}
	return out
}
