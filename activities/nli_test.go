package activities_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/lethe-research/lethe/activities"
	"github.com/lethe-research/lethe/config/load"
	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/graph/embedded"
	"github.com/lethe-research/lethe/graph/graphtest"
	"github.com/lethe-research/lethe/internal/lethetest"
	"github.com/lethe-research/lethe/llm/llmtest"
	"github.com/lethe-research/lethe/service"
)

// nliScript is the scripted chat model of the NLI tests. Pair 1 of every
// batch is the strongest edge (the agreeing pair), pair 2 the
// contradicting one; markers in the evidence choose the answer.
var nliScript = llmtest.Script{Rules: []llmtest.Rule{
	{Name: "down", Match: []string{`outage-marker`}, Status: 503},
	{Name: "malformed", Match: []string{`malformed-marker`}, Reply: "Both passages are about cracks, so they agree."},
	{Name: "slow", Match: []string{`slow-marker`}, DelayMS: 1500, Reply: `{"labels":[{"pair":1,"label":"SUPPORTS"},{"pair":2,"label":"CONTRADICTS"}]}`},
	{Name: "labels", Match: []string{`Pair 1`}, Reply: `{"labels":[{"pair":1,"label":"SUPPORTS"},{"pair":2,"label":"CONTRADICTS"}]}`},
}}

// TestSyncSimilarNLI runs the SyncSimilar activity with algebra.similar_nli
// on against the scripted model through the worker's Guard: labels reach
// the edges and move the strengths by the refinement (boost for the
// agreeing pair from two hosts, penalty for the contradicting one); a
// second sync asks nothing; a malformed answer leaves the edges unlabelled
// and the strengths alone without failing the sync; a slow answer is
// waited for while the activity heartbeats; a model answering 503 is a
// ModelUnavailable failure (the workflow waits it out), with the edges
// committed.
func TestSyncSimilarNLI(t *testing.T) {
	model := llmtest.NewServer(nliScript)
	t.Cleanup(model.Close)
	dir := t.TempDir()
	cfg := lethetest.Config(t, model.URL(), dir, map[string]string{"algebra.similar_nli": "true", "llm.stream": "true"})
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
	heartbeats := 0
	env.SetOnActivityHeartbeatListener(func(*activity.Info, converter.EncodedValues) { heartbeats++ })

	in := func(sid string) activities.SyncSimilarInput {
		return activities.SyncSimilarInput{SessionID: sid, Iteration: 1, Similar: activities.SimilarFor(cfg)}
	}
	sync := func(sid string) (activities.SyncSimilarResult, error) {
		var res activities.SyncSimilarResult
		v, err := env.ExecuteActivity(acts.SyncSimilar, in(sid))
		if err == nil {
			err = v.Get(&res)
		}
		return res, err
	}

	t.Run("labels", func(t *testing.T) {
		sid := nliSession(t, store, "nli-labels", "")
		before := model.ChatCount()
		res, err := sync(sid)
		if err != nil || res.Edges != 2 || res.Classified != 2 || res.NLIError != "" || model.ChatCount()-before != 1 {
			t.Fatalf("sync = %+v, %v (%d chat calls)", res, err, model.ChatCount()-before)
		}
		checkNLI(t, store, sid, true)
		res, err = sync(sid)
		if err != nil || res.Classified != 0 || model.ChatCount()-before != 1 {
			t.Fatalf("second sync = %+v, %v: asked the model again", res, err)
		}
	})
	t.Run("malformed answer", func(t *testing.T) {
		sid := nliSession(t, store, "nli-malformed", "malformed-marker ")
		res, err := sync(sid)
		if err != nil || res.Edges != 2 || res.Classified != 0 || res.NLIError == "" {
			t.Fatalf("sync = %+v, %v; want edges kept unlabelled and the error reported, not returned", res, err)
		}
		checkNLI(t, store, sid, false)
	})
	t.Run("slow answer", func(t *testing.T) {
		sid := nliSession(t, store, "nli-slow", "slow-marker ")
		heartbeats = 0
		start := time.Now()
		res, err := sync(sid)
		if err != nil || res.Classified != 2 || time.Since(start) < 1500*time.Millisecond {
			t.Fatalf("sync = %+v, %v after %s", res, err, time.Since(start))
		}
		if heartbeats == 0 {
			t.Fatal("no heartbeat while the model answered")
		}
		checkNLI(t, store, sid, true)
	})
	t.Run("model down", func(t *testing.T) {
		sid := nliSession(t, store, "nli-down", "outage-marker ")
		_, err := sync(sid)
		var app *temporal.ApplicationError
		if !errors.As(err, &app) || app.Type() != activities.ErrModelUnavailable {
			t.Fatalf("sync with the model answering 503: %v; want %s", err, activities.ErrModelUnavailable)
		}
		checkNLI(t, store, sid, false)
	})
}

// nliSession creates a session with two SIMILAR_TO pairs from independent
// hosts: an agreeing one (cosine 0.99) and a contradicting one (0.95),
// every base strength 0.5; marker goes into every text.
func nliSession(t *testing.T, s graph.Store, sid, marker string) string {
	t.Helper()
	ctx := t.Context()
	if err := s.CreateSession(ctx, graph.Session{ID: sid, Goal: "How do batteries fail?", GoalDocEmb: graphtest.Unit(0), GoalQueryEmb: graphtest.Unit(1), Dim: graphtest.Dim},
		graph.Task{Description: "How do batteries fail?", EmbedText: "g", Embedding: graphtest.Unit(0)}); err != nil {
		t.Fatal(err)
	}
	items := []graph.Evidence{
		{Content: marker + "Cracks start at grain boundaries.", SourceURL: "https://a.example/1", Strength: 0.5, Embedding: graphtest.Unit(2), CreatedIter: 1},
		{Content: marker + "Grain boundaries are where cracks begin.", SourceURL: "https://b.example/1", Strength: 0.5, Embedding: graphtest.Blend(2, 3, 0.99), CreatedIter: 1},
		{Content: marker + "Dendrites cannot grow in ceramics.", SourceURL: "https://c.example/1", Strength: 0.5, Embedding: graphtest.Unit(5), CreatedIter: 1},
		{Content: marker + "Dendrites grow through ceramic electrolytes.", SourceURL: "https://d.example/1", Strength: 0.5, Embedding: graphtest.Blend(5, 6, 0.95), CreatedIter: 1},
	}
	if _, err := s.AddEvidence(ctx, sid, "k", graph.RootShortID, items); err != nil {
		t.Fatal(err)
	}
	return sid
}

// checkNLI checks the labels and strengths of an nliSession after a sync:
// labelled (entailment on the 0.99 pair, contradiction on the 0.95 pair,
// strengths refined with the default boost and penalty) or not at all.
func checkNLI(t *testing.T, s graph.Store, sid string, labelled bool) {
	t.Helper()
	es, err := s.Edges(t.Context(), sid)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{}
	n := 0
	for _, e := range es {
		if e.Kind != graph.SimilarTo {
			continue
		}
		n++
		wantLabel, sup, against := "", 0.0, 0.0
		if labelled && e.Weight > 0.98 {
			wantLabel, sup = graph.LabelEntailment, e.Weight
		} else if labelled {
			wantLabel, against = graph.LabelContradiction, e.Weight
		}
		if e.Label != wantLabel {
			t.Errorf("edge %.2f label %q, want %q", e.Weight, e.Label, wantLabel)
		}
		want[e.From] = graph.RefineStrength(0.5, sup, against)
		want[e.To] = want[e.From]
	}
	if n != 2 {
		t.Fatalf("%d SIMILAR_TO edges, want 2", n)
	}
	ev, err := s.Evidence(t.Context(), sid, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ev {
		if math.Abs(e.Strength-want[e.ID]) > 1e-9 {
			t.Errorf("strength of %q = %v, want %v", e.Content, e.Strength, want[e.ID])
		}
	}
}
