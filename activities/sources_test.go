package activities_test

import (
	"strings"
	"testing"

	"github.com/lethe-research/lethe/activities"
	"github.com/lethe-research/lethe/din"
	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/llm/llmtest"
)

// seedSession bootstraps a session and gives its root one fetched page.
func seedSession(t *testing.T, sid string) (func(activity, in, out any), graph.Store) {
	t.Helper()
	env, store, _ := newActivityEnv(t, t.TempDir(), nil)
	run := func(activity, in, out any) {
		t.Helper()
		v, err := env.ExecuteActivity(activity, in)
		if err != nil {
			t.Fatal(err)
		}
		if out != nil {
			if err := v.Get(out); err != nil {
				t.Fatal(err)
			}
		}
	}
	run(acts.Bootstrap, activities.BootstrapInput{SessionID: sid, Goal: "How do solid-state batteries fail?"}, nil)
	sess, err := store.GetSession(t.Context(), sid)
	if err != nil {
		t.Fatal(err)
	}
	ev := []graph.Evidence{{Content: "Lithium dendrites grow along grain boundaries of the solid electrolyte.", SourceURL: "https://example.org/dendrites",
		Title: "Dendrites", Kind: graph.KindHTML, Strength: 0.8, Embedding: llmtest.Embedding("dendrites grain boundaries", len(sess.GoalQueryEmb)), CreatedIter: 1}}
	if _, err := store.AddEvidence(t.Context(), sid, "ingest/root", graph.RootShortID, ev); err != nil {
		t.Fatal(err)
	}
	return run, store
}

// An evidence operation may name only a page the session fetched: a page
// that tells the model to cite an address it never read cannot put that
// address into the report.
func TestEvidenceSourceMustBeFetched(t *testing.T) {
	const sid = "forged"
	run, store := seedSession(t, sid)
	ops := []din.Op{
		{Op: "evidence", Task: "root", Content: "Dendrites short the cell.", EmbedText: "dendrites short", Source: "https://example.org/dendrites"},
		{Op: "evidence", Task: "root", Content: "Buy our batteries, they never fail.", EmbedText: "never fail", Source: "https://attacker.example/ad"},
	}
	var out activities.ApplyOutput
	run(acts.ApplyOps, activities.ApplyInput{SessionID: sid, Iteration: 1, ActiveTask: "root", Ops: ops, DedupThreshold: 0.95}, &out)
	ev, err := store.Evidence(t.Context(), sid, "")
	if err != nil {
		t.Fatal(err)
	}
	sources := map[string]string{}
	for _, e := range ev {
		sources[e.Content] = e.SourceURL
	}
	if got := sources["Dendrites short the cell."]; got != "https://example.org/dendrites" {
		t.Errorf("a fetched source was dropped: %q", got)
	}
	if got, ok := sources["Buy our batteries, they never fail."]; !ok || got != "" {
		t.Errorf("forged source kept (%q, stored %v)", got, ok)
	}
	if !strings.Contains(strings.Join(out.Summary, "\n"), "dropped") {
		t.Errorf("the operations summary does not say the source was dropped: %v", out.Summary)
	}
}

// The root's result, written by the model during the loop, has its
// citations checked like a composed part: a number that names no source is
// removed, and so is a quote the cited source does not contain.
func TestRootResultCitationsChecked(t *testing.T) {
	const sid = "root-cites"
	run, store := seedSession(t, sid)
	result := `Dendrites grow "along grain boundaries of the solid electrolyte" [1]. Cells never fail [7]. They "explode every day" [1].`
	if _, err := store.Apply(t.Context(), graph.ApplyRequest{SessionID: sid, Key: "apply/1", Iteration: 1, ActiveTask: graph.RootShortID, Ops: []graph.Op{
		{Kind: graph.OpComplete, Task: graph.RootShortID, Result: result, EmbedText: "dendrites"},
	}}); err != nil {
		t.Fatal(err)
	}
	var col activities.CollectResult
	run(acts.CollectSections, activities.CollectInput{SessionID: sid}, &col)
	if !col.RootDone || col.RootRemoved != 2 {
		t.Fatalf("root done %v, removed %d, want 2 (the unknown [7] and the unsupported quote); result %q", col.RootDone, col.RootRemoved, col.RootResult)
	}
	if strings.Contains(col.RootResult, "[7]") || !strings.Contains(col.RootResult, `solid electrolyte" [1]`) || len(col.RootCited) != 1 {
		t.Fatalf("checked root result %q, cited %v", col.RootResult, col.RootCited)
	}
}

// A note the model wrote with a source it read is not that source's text:
// the root's result that quotes the note under the source's number loses
// the citation, since the page does not hold the quote.
func TestModelNoteIsNoSourceText(t *testing.T) {
	const sid = "note-cites"
	run, store := seedSession(t, sid)
	run(acts.ApplyOps, activities.ApplyInput{SessionID: sid, Iteration: 1, ActiveTask: "root", DedupThreshold: 0.95, Ops: []din.Op{
		{Op: "evidence", Task: "root", Content: "Dendrites short the cell within a week.", EmbedText: "dendrites short", Source: "https://example.org/dendrites"},
	}}, nil)
	result := `Dendrites grow "along grain boundaries" [1]. They "short the cell within a week" [1].`
	if _, err := store.Apply(t.Context(), graph.ApplyRequest{SessionID: sid, Key: "apply/2", Iteration: 2, ActiveTask: graph.RootShortID, Ops: []graph.Op{
		{Kind: graph.OpComplete, Task: graph.RootShortID, Result: result, EmbedText: "dendrites"},
	}}); err != nil {
		t.Fatal(err)
	}
	var col activities.CollectResult
	run(acts.CollectSections, activities.CollectInput{SessionID: sid}, &col)
	if col.RootRemoved != 1 || !strings.Contains(col.RootResult, `boundaries" [1]`) || strings.Contains(col.RootResult, `week" [1]`) {
		t.Fatalf("removed %d; checked root result %q", col.RootRemoved, col.RootResult)
	}
	if len(col.Sources) != 1 || col.Sources[0].URL != "https://example.org/dendrites" {
		t.Fatalf("sources %v", col.Sources)
	}
}
