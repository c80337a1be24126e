package activities_test

import (
	"slices"
	"strings"
	"testing"

	"go.temporal.io/sdk/testsuite"

	"github.com/lethe-research/lethe/activities"
	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/contract"
	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/graph/embedded"
	"github.com/lethe-research/lethe/llm/llmtest"
)

// summaryGoal is dr-018 of the question set: the answer sits in a table
// row the goal's own search read, on the root, while the model's subtask
// researched something else.
const summaryGoal = "Which port does the secure IMAP service imaps use?"

// summarySession holds the root's evidence (the answer, and an unrelated
// page) and a researched leaf whose evidence does not answer the goal.
func summarySession(t *testing.T, env *testsuite.TestActivityEnvironment, store *embedded.Store, sid string) {
	t.Helper()
	dim := bootstrapWithSubtask(t, env, store, sid, summaryGoal, "pop", "Testing a TLS POP3 service")
	root := []graph.Evidence{
		{Content: "Port numbers of services.\n| imaps | 993 | IMAP over TLS |", SourceURL: "corpus:///services.html", Title: "Services",
			Strength: 0.6, Embedding: llmtest.Embedding("which port does the secure imap service imaps use", dim), CreatedIter: 0},
		{Content: "Roses want six hours of sun and a rich soil.", SourceURL: "corpus:///garden.html", Title: "Garden",
			Strength: 0.9, Embedding: llmtest.Embedding("roses sun soil garden", dim), CreatedIter: 0},
	}
	if _, err := store.AddEvidence(t.Context(), sid, "ingest/root", graph.RootShortID, root); err != nil {
		t.Fatal(err)
	}
	leaf := []graph.Evidence{{Content: "To test the TLS/SSL enabled POP3 service you need a TLS/SSL enabled telnet client.", SourceURL: "corpus:///pop.html",
		Title: "POP3", Strength: 0.8, Embedding: llmtest.Embedding("pop3 tls telnet client", dim), CreatedIter: 1}}
	if _, err := store.AddEvidence(t.Context(), sid, "ingest/pop", "pop", leaf); err != nil {
		t.Fatal(err)
	}
}

// bootstrapWithSubtask starts session sid on goal and gives its root one
// subtask; it returns the embedding dimension.
func bootstrapWithSubtask(t *testing.T, env *testsuite.TestActivityEnvironment, store *embedded.Store, sid, goal, task, desc string) int {
	t.Helper()
	if _, err := env.ExecuteActivity(acts.Bootstrap, activities.BootstrapInput{SessionID: sid, Goal: goal}); err != nil {
		t.Fatal(err)
	}
	sess, err := store.GetSession(t.Context(), sid)
	if err != nil {
		t.Fatal(err)
	}
	dim := len(sess.GoalQueryEmb)
	embed := strings.ToLower(desc)
	if _, err := store.Apply(t.Context(), graph.ApplyRequest{SessionID: sid, Key: "apply/1", Iteration: 1, ActiveTask: graph.RootShortID, Ops: []graph.Op{
		{Kind: graph.OpCreate, Task: task, Description: desc, EmbedText: embed, Embedding: llmtest.Embedding(embed, dim)},
	}}); err != nil {
		t.Fatal(err)
	}
	return dim
}

// TestSummaryReadsGoalFacts: the summary call sees, beside the report's
// sections, the evidence sentences that answer the goal itself, taken
// from the root's evidence nearest the goal (assembly.summary_evidence)
// and numbered as sources of the report, so a summary can state and cite
// an answer no section held. With assembly.summary_facts at 0 it reads
// the sections only, as before.
func TestSummaryReadsGoalFacts(t *testing.T) {
	script := llmtest.Script{Rules: []llmtest.Rule{
		{Name: "answer", Match: []string{`^Summarize this report`, `(?m)^Facts for the goal:\n(?:.*\n)*?\[(?P<n>\d+)\] [^\n]*993`}, Expand: true,
			Reply: "The secure IMAP service imaps uses port 993 [${n}]."},
		{Name: "sections-only", Match: []string{`^Summarize this report`}, Reply: "The report covers a POP3 client [1]."},
	}}
	env, store, _, model := newScriptedEnv(t, t.TempDir(), nil, script)
	asm := config.Defaults().Assembly
	asm.SummaryEvidence = 1 // the root's one item nearest the goal: the services row, not the garden
	summarySession(t, env, store, "sum")
	v, err := env.ExecuteActivity(acts.CollectSections, activities.CollectInput{SessionID: "sum", Assembly: asm})
	if err != nil {
		t.Fatal(err)
	}
	var col activities.CollectResult
	if err := v.Get(&col); err != nil {
		t.Fatal(err)
	}
	if len(col.Sections) != 1 || col.Sections[0].Title != "Testing a TLS POP3 service" {
		t.Fatalf("sections %+v: want the researched leaf only (the seeds' rule)", col.Sections)
	}
	urls := map[string]int{}
	for _, s := range col.Sources {
		urls[s.URL] = s.N
	}
	if urls["corpus:///services.html"] == 0 || urls["corpus:///garden.html"] != 0 {
		t.Fatalf("sources %+v: want the goal's nearest root item numbered, the garden not", col.Sources)
	}
	summarize := func(facts int) activities.ComposeResult {
		t.Helper()
		v, err := env.ExecuteActivity(acts.Summarize, activities.SummarizeInput{SessionID: "sum", Goal: summaryGoal,
			Report: "## Testing a TLS POP3 service\n\nA POP3 test needs a TLS client [1].", Facts: facts, FactFollow: asm.FactFollow})
		if err != nil {
			t.Fatal(err)
		}
		var res activities.ComposeResult
		if err := v.Get(&res); err != nil {
			t.Fatal(err)
		}
		return res
	}
	n := urls["corpus:///services.html"]
	got := summarize(asm.SummaryFacts)
	if !strings.Contains(got.Markdown, "993") || len(got.Cited) != 1 || got.Cited[0] != n || got.RemovedCitations != 0 {
		t.Fatalf("summary %+v: want the goal fact stated and cited as [%d]", got, n)
	}
	got = summarize(0)
	if strings.Contains(got.Markdown, "993") {
		t.Fatalf("summary_facts 0: %q, want the sections only", got.Markdown)
	}
	reqs := model.Requests()
	if last := reqs[len(reqs)-1].User; strings.Contains(last, "Facts for the goal") {
		t.Fatalf("summary_facts 0 still shows facts:\n%s", last)
	}
}

// TestSummaryAnswersFromPassages: with assembly.summary_passages the
// summary call sees the root's passages for the goal whole, under
// "Sources for the goal", in place of the facts and without the report
// (the goal last), numbered as sources of the report, and its citation of
// the passage stands.
func TestSummaryAnswersFromPassages(t *testing.T) {
	script := llmtest.Script{Rules: []llmtest.Rule{
		{Name: "answer", Match: []string{`^Sources for the goal:\n`, `(?m)^\[(?P<n>\d+)\] Port numbers of services\.\n\| imaps \| 993`, `(?m)^Goal: .*\n\nAnswer the goal now`}, Expand: true,
			Reply: "The secure IMAP service imaps uses port 993 [${n}]."},
		{Name: "other", Match: []string{`^Summarize this report`}, Reply: "The report covers a POP3 client [1]."},
		{Name: "answer-other", Match: []string{`^Sources for the goal:`}, Reply: "The sources cover a POP3 client [1]."},
	}}
	env, store, _, model := newScriptedEnv(t, t.TempDir(), nil, script)
	asm := config.Defaults().Assembly
	summarySession(t, env, store, "pas")
	if _, err := env.ExecuteActivity(acts.CollectSections, activities.CollectInput{SessionID: "pas", Assembly: asm}); err != nil {
		t.Fatal(err)
	}
	v, err := env.ExecuteActivity(acts.Summarize, activities.SummarizeInput{SessionID: "pas", Goal: summaryGoal,
		Report: "## Testing a TLS POP3 service\n\nA POP3 test needs a TLS client [1].", Facts: asm.SummaryFacts, FactFollow: asm.FactFollow, Passages: asm.SummaryPassages})
	if err != nil {
		t.Fatal(err)
	}
	var got activities.ComposeResult
	if err := v.Get(&got); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got.Markdown, "993") || len(got.Cited) != 1 || got.RemovedCitations != 0 {
		t.Fatalf("summary %+v: want the passage's answer stated and cited; prompt:\n%s", got, model.Requests()[len(model.Requests())-1].User)
	}
	reqs := model.Requests()
	last := reqs[len(reqs)-1].User
	if strings.Contains(last, "Facts for the goal") || strings.Contains(last, "A POP3 test needs a TLS client") || !strings.Contains(last, "Roses want six hours") {
		t.Fatalf("summary prompt: want the root's passages whole, no facts and no report:\n%s", last)
	}
}

// TestGoalPassages: the passages come by the fused rank of the goal's
// embedding order and BM25, whole, at most k, repeats dropped.
func TestGoalPassages(t *testing.T) {
	goal := "Which port does the secure IMAP service imaps use?"
	ps := []activities.Passage{
		{N: 1, Text: "Mail clients read mail over IMAP or POP3."},                        // nearest by embedding
		{N: 2, Text: "Roses want six hours of sun."},                                     // no goal word
		{N: 3, Text: "| imaps | 993 | IMAP over TLS |\n| pop3s | 995 | POP3 over TLS |"}, // BM25's best
		{N: 1, Text: "Mail clients read mail over IMAP or POP3."},                        // a repeat
	}
	long := activities.Passage{N: 4, Text: strings.Repeat("imaps port ", 400)}
	cases := []struct {
		name string
		ps   []activities.Passage
		k    int
		want []int
	}{
		{"k 0 gives none", ps, 0, nil},
		{"none given", nil, 3, nil},
		{"fused order", ps, 3, []int{1, 3, 2}},
		{"bm25 lifts the second over the first", []activities.Passage{
			{N: 5, Text: "Roses want six hours of sun."},
			{N: 6, Text: "The secure IMAP service imaps uses port 993."},
			{N: 7, Text: "IMAP keeps mail on the server."},
		}, 3, []int{6, 5, 7}},
		{"repeats dropped", ps, 5, []int{1, 3, 2}},
		{"cut to the bound", []activities.Passage{long}, 1, []int{4}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := activities.GoalPassages(goal, c.ps, c.k)
			var ns []int
			for _, p := range got {
				ns = append(ns, p.N)
				if n := len([]rune(p.Text)); n > contract.SummaryPassageChars+1 {
					t.Errorf("passage %d has %d runes, want at most %d", p.N, n, contract.SummaryPassageChars+1)
				}
			}
			if !slices.Equal(ns, c.want) {
				t.Fatalf("GoalPassages = %v, want %v", ns, c.want)
			}
		})
	}
}

// collectedSummarySession is summarySession with its sections collected
// (one section, the POP3 task's): it returns the POP3 page's source
// number.
func collectedSummarySession(t *testing.T, env *testsuite.TestActivityEnvironment, store *embedded.Store, sid string) int {
	t.Helper()
	summarySession(t, env, store, sid)
	v, err := env.ExecuteActivity(acts.CollectSections, activities.CollectInput{SessionID: sid, Assembly: config.Defaults().Assembly})
	if err != nil {
		t.Fatal(err)
	}
	var col activities.CollectResult
	if err := v.Get(&col); err != nil || len(col.Sections) != 1 || col.Sections[0].Title != "Testing a TLS POP3 service" {
		t.Fatalf("sections %+v %v", col.Sections, err)
	}
	for _, s := range col.Sources {
		if s.URL == "corpus:///pop.html" {
			return s.N
		}
	}
	t.Fatalf("no source corpus:///pop.html in %+v", col.Sources)
	return 0
}
