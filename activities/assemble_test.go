package activities_test

import (
	"testing"

	"go.temporal.io/sdk/testsuite"

	"github.com/lethe-research/lethe/activities"
	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/graph/embedded"
	"github.com/lethe-research/lethe/llm/llmtest"
)

// TestCollectSections covers the two ways sections arise: the seeds' rule
// (DONE tasks and researched leaves) and the fallback when the evidence
// sits only on inner tasks, so that a report never says "no findings" over
// a graph that holds evidence.
func TestCollectSections(t *testing.T) {
	env, store, _ := newActivityEnv(t, t.TempDir(), nil)
	collect := func(sid string) activities.CollectResult {
		t.Helper()
		v, err := env.ExecuteActivity(acts.CollectSections, activities.CollectInput{SessionID: sid})
		if err != nil {
			t.Fatal(err)
		}
		var res activities.CollectResult
		if err := v.Get(&res); err != nil {
			t.Fatal(err)
		}
		return res
	}
	// A session whose only search ran for the root, which then got an
	// unresearched subtask; and the same with a researched leaf.
	setup := func(sid string, leafEvidence bool) {
		t.Helper()
		dim := bootstrapWithSubtask(t, env, store, sid, "How do solid-state batteries fail?", "mech", "Failure mechanisms")
		ev := []graph.Evidence{{Content: "Lithium dendrites grow along grain boundaries.", SourceURL: "corpus:///dendrites.md", Title: "Dendrites",
			Strength: 0.8, Embedding: llmtest.Embedding("dendrites grain boundaries", dim), CreatedIter: 1}}
		if _, err := store.AddEvidence(t.Context(), sid, "ingest/root", graph.RootShortID, ev); err != nil {
			t.Fatal(err)
		}
		if leafEvidence {
			ev[0].Content = "Cathode interfaces lose contact during cycling."
			if _, err := store.AddEvidence(t.Context(), sid, "ingest/mech", "mech", ev); err != nil {
				t.Fatal(err)
			}
		}
	}

	setup("inner-only", false)
	res := collect("inner-only")
	if len(res.Sections) != 1 || len(res.Sources) != 1 || res.Sections[0].Title != "How do solid-state batteries fail?" {
		t.Errorf("evidence on the root only: %+v, want the root's evidence as the one section", res)
	}

	setup("with-leaf", true)
	res = collect("with-leaf")
	if len(res.Sections) != 1 || res.Sections[0].Title != "Failure mechanisms" {
		t.Errorf("with a researched leaf: %+v, want the leaf's section only (the seeds' rule)", res)
	}
}

// newActivityEnv wires the real activities (embedded store under dir, the
// scripted model server) into the SDK's activity test environment; extra
// overrides parameters. Everything is closed when the test ends.
func newActivityEnv(t *testing.T, dir string, extra map[string]string) (*testsuite.TestActivityEnvironment, *embedded.Store, *activities.Activities) {
	t.Helper()
	env, store, a, _ := newResearchEnv(t, dir, extra)
	return env, store, a
}

// acts names activities by method value, as workflow code does; the
// environment runs the registered ones.
var acts *activities.Activities
