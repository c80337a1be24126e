package workflows_test

import (
	"bytes"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/lethe-research/lethe/din"
	"github.com/lethe-research/lethe/llm/llmtest"
	"github.com/lethe-research/lethe/workflows"
)

// ownKnowledge is a small model's first turn that never searches: it
// completes the root from what it believes (evaluation question dr-053).
const ownKnowledge = `{"ops":[{"op":"complete","task":"root","result":"Solid-state batteries fail when lithium dendrites grow through the solid electrolyte.","embed_text":"battery failure"}]}`

// TestSeedSearch: with research.seed_search on, a session searches its
// goal before the model's first turn, so a model that never asks for a
// search still has evidence, its first DIN-Read shows that evidence, and
// the report cites the corpus. Off, the same model reads nothing.
func TestSeedSearch(t *testing.T) {
	on := runSession(t, llmtest.Script{Default: ownKnowledge}, map[string]string{"research.seed_search": "true"})
	if on.err != nil {
		t.Fatal(on.err)
	}
	if on.res.Stats.WebSearches != 1 || on.res.Evidence == 0 {
		t.Fatalf("seeded session: %d searches, %d evidence; want 1 search and evidence", on.res.Stats.WebSearches, on.res.Evidence)
	}
	var p []string
	for _, q := range chatPrompts(on.llm) {
		if strings.Contains(q, "=GOAL") { // the planning call comes first
			p = append(p, q)
		}
	}
	if len(p) == 0 || strings.Contains(p[0], din.UnresearchedHint) || !regexp.MustCompile(`(?m)^E e\d+ `).MatchString(p[0]) {
		t.Fatalf("the first DIN-Read should show the seed's evidence and no unresearched hint:\n%s", p[0])
	}
	if !strings.Contains(on.res.Report, "corpus://") {
		t.Errorf("the seeded report has no corpus source:\n%s", on.res.Report)
	}

	off := runSession(t, llmtest.Script{Default: ownKnowledge}, map[string]string{"research.seed_search": "false"})
	if off.err != nil {
		t.Fatal(off.err)
	}
	if off.res.Stats.WebSearches != 0 || off.res.Evidence != 0 {
		t.Fatalf("unseeded session: %d searches, %d evidence; want none", off.res.Stats.WebSearches, off.res.Evidence)
	}
}

// TestSeedSearchIsNotRepeated: a model whose first turn asks for the goal
// itself gets the seed's query dedup, not a second identical search.
func TestSeedSearchIsNotRepeated(t *testing.T) {
	script := llmtest.Script{Rules: []llmtest.Rule{
		{Name: "search-goal", Match: []string{`(?m)^=GOAL`}, Not: []string{`(?m)^T answer `},
			Reply: `{"ops":[{"op":"call","task":"root","tool":"web_search","args":{"query":"` + goal + `"}},{"op":"create","id":"answer","description":"Summarise the failure modes","embed_text":"failure modes"}]}`},
		{Name: "done", Reply: ownKnowledge},
	}}
	r := runSession(t, script, map[string]string{"research.seed_search": "true", "budget.max_iterations": "3"})
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.res.Stats.WebSearches != 1 || r.res.Stats.DuplicateCalls != 1 {
		t.Fatalf("%d searches, %d duplicate calls; want the seed only and the model's repeat skipped (rules %v)",
			r.res.Stats.WebSearches, r.res.Stats.DuplicateCalls, rulesUsed(r.llm))
	}
	if r.res.StopReason == workflows.StopModelUnavailable {
		t.Fatalf("stop %q", r.res.StopReason)
	}
}

// TestStopDuringSeedSearch: a stop that arrives while the seed search
// waits for a down embedding server ends the wait, and the session
// assembles without asking the model for a first turn.
func TestStopDuringSeedSearch(t *testing.T) {
	embeds := 0
	r := runFaulty(t, "battery_root_done", map[string]string{"research.seed_search": "true"}, func(chat int, req *http.Request) bool {
		if !isEmbed(req) {
			return false
		}
		embeds++
		return embeds > 2 // up for the bootstrap, down from the seed's research on
	}, func(env *testsuite.TestWorkflowEnvironment) {
		env.RegisterDelayedCallback(func() { env.SignalWorkflow(workflows.SignalStop, nil) }, 5*time.Minute)
	})
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.res.StopReason != workflows.StopRequested || r.res.Iterations != 0 {
		t.Fatalf("stop %q after %d iterations, want stop_requested after 0", r.res.StopReason, r.res.Iterations)
	}
	for _, p := range chatPrompts(r.llm) {
		if strings.Contains(p, "=GOAL") {
			t.Fatalf("the model was asked for a turn after the stop:\n%s", p)
		}
	}
	if w := r.res.ModelWaitedS; w < 60 || w > 900 {
		t.Fatalf("waited %.0f s: the stop (at 5 min) did not end the seed's wait", w)
	}
}

// TestSeededSubtasksCiteTheSeed: a model that plans two subtasks on the
// seed's evidence and completes them without searching (the 1.5B model on
// dr-029) gets sections that state and cite what the seed read, not only
// its own uncited results: a DONE task without evidence shows its nearest
// researched ancestor's.
func TestSeededSubtasksCiteTheSeed(t *testing.T) {
	script := llmtest.Script{Rules: []llmtest.Rule{
		{Name: "plan", Match: []string{`(?m)^=GOAL`}, Not: []string{`(?m)^T dendrites `},
			Reply: `{"ops":[{"op":"create","id":"dendrites","description":"How do lithium dendrites short the cell","embed_text":"lithium dendrites short circuit"},{"op":"create","id":"interface","description":"How does the cathode interface degrade","embed_text":"cathode interface degradation"}]}`},
		{Name: "dendrites-done", Match: []string{`^YOUR TASK: \[dendrites\]`},
			Reply: `{"ops":[{"op":"complete","task":"dendrites","result":"Dendrites grow through the electrolyte.","embed_text":"dendrites"}]}`},
		{Name: "interface-done", Match: []string{`^YOUR TASK: \[interface\]`},
			Reply: `{"ops":[{"op":"complete","task":"interface","result":"The interface degrades.","embed_text":"interface"}]}`},
		{Name: "prose", Reply: "The section cites nothing."},
	}}
	r := runSession(t, script, map[string]string{"research.seed_search": "true", "budget.max_iterations": "4"})
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.res.Stats.WebSearches != 1 {
		t.Fatalf("%d searches, want the seed only; rules %v", r.res.Stats.WebSearches, rulesUsed(r.llm))
	}
	body, _, _ := strings.Cut(r.res.Report, "\n## Sources")
	for _, title := range []string{"## How do lithium dendrites short the cell", "## How does the cathode interface degrade"} {
		_, sec, ok := strings.Cut(body, title)
		if !ok {
			t.Fatalf("no section %q in the report:\n%s", title, r.res.Report)
		}
		if i := strings.Index(sec, "\n## "); i >= 0 {
			sec = sec[:i]
		}
		if !regexp.MustCompile(`\[\d+\]`).MatchString(sec) {
			t.Errorf("section %q cites nothing:%s", title, sec)
		}
	}
}

// planRule answers the seed's planning call (din.PlanSystem).
func planRule(reply string, status int) llmtest.Rule {
	return llmtest.Rule{Name: "plan", System: []string{`^You plan research\.`}, Reply: reply, Status: status}
}

// TestSeedPlan: the seed also searches the queries of one planning call,
// so both parts of a two-part goal are read before the model's first
// turn; a plan query that repeats the goal is a duplicate, not a second
// search. With research.seed_queries at 0 there is no planning call.
func TestSeedPlan(t *testing.T) {
	plan := `{"queries":["lithium dendrite growth through solid electrolytes","cathode interface degradation in solid-state cells","` + goal + `"]}`
	script := llmtest.Script{Rules: []llmtest.Rule{planRule(plan, 0), {Name: "done", Reply: ownKnowledge}}}
	// One page per search: the goal's search alone reads one part.
	params := func(n string) map[string]string {
		return map[string]string{"research.seed_search": "true", "research.seed_queries": n, "research.max_pages": "1"}
	}
	on := runSession(t, script, params("3"))
	if on.err != nil {
		t.Fatal(on.err)
	}
	if used := rulesUsed(on.llm); used["plan"] != 1 {
		t.Fatalf("planning calls %v, want one", used)
	}
	if on.res.Stats.WebSearches != 3 || on.res.Stats.DuplicateCalls != 1 {
		t.Fatalf("%d searches, %d duplicates; want the goal and two planned queries, the goal's repeat skipped",
			on.res.Stats.WebSearches, on.res.Stats.DuplicateCalls)
	}
	goalOnly := runSession(t, script, params("0"))
	if goalOnly.err != nil {
		t.Fatal(goalOnly.err)
	}
	if used := rulesUsed(goalOnly.llm); used["plan"] != 0 || goalOnly.res.Stats.WebSearches != 1 {
		t.Fatalf("seed_queries 0: calls %v, %d searches; want no plan and the goal's search", used, goalOnly.res.Stats.WebSearches)
	}
	if on.res.Evidence <= goalOnly.res.Evidence {
		t.Fatalf("planned seed read %d evidence, the goal alone %d: the plan's searches added nothing", on.res.Evidence, goalOnly.res.Evidence)
	}
	if on.res.Stats.LLMCalls != goalOnly.res.Stats.LLMCalls+1 || on.res.Tokens <= goalOnly.res.Tokens {
		t.Fatalf("the planning call is not counted: %d calls / %d tokens against %d / %d",
			on.res.Stats.LLMCalls, on.res.Tokens, goalOnly.res.Stats.LLMCalls, goalOnly.res.Tokens)
	}
}

// TestSeedPlanSendsPlanSchema: with llm.json_schema on, the planning call
// is held to din.PlanSchema for research.seed_queries queries, in the form
// llm.json_schema_loose picks (a 1.5B model asked for JSON in free text
// answered half its plans with prose); off, it is free text as before.
func TestSeedPlanSendsPlanSchema(t *testing.T) {
	plan := `{"queries":["lithium dendrite growth","cathode interface degradation"]}`
	for _, c := range []struct{ schema, loose bool }{{true, false}, {true, true}, {false, false}} {
		t.Run(fmt.Sprintf("schema=%v,loose=%v", c.schema, c.loose), func(t *testing.T) {
			script := llmtest.Script{Rules: []llmtest.Rule{planRule(plan, 0), {Name: "done", Reply: ownKnowledge}}}
			r := runSession(t, script, map[string]string{"research.seed_search": "true", "research.seed_queries": "2",
				"llm.json_schema": fmt.Sprint(c.schema), "llm.json_schema_loose": fmt.Sprint(c.loose)})
			if r.err != nil {
				t.Fatal(r.err)
			}
			plans := 0
			for _, q := range r.llm.Requests() {
				if !strings.HasPrefix(q.System, "You plan research.") {
					continue
				}
				plans++
				name, strict, schema := decodeChatBody(t, q.Body).schema()
				switch {
				case !c.schema && schema != nil:
					t.Errorf("llm.json_schema off, yet the plan carried %s", schema)
				case c.schema && schema == nil:
					t.Error("llm.json_schema on, yet the plan is free text")
				case c.schema && (strict == c.loose || !bytes.Equal(schema, din.PlanSchema(2, !c.loose))):
					t.Errorf("plan schema %q strict %v: %s; want din.PlanSchema(2, %v)", name, strict, schema, !c.loose)
				}
			}
			if plans != 1 || r.res.Stats.WebSearches != 3 {
				t.Fatalf("%d planning calls, %d searches; want one plan and the goal's search with its two queries", plans, r.res.Stats.WebSearches)
			}
		})
	}
}

// TestSeedPlanFailureSearchesTheGoal: a planning call the server refuses,
// or an answer that is not a plan, leaves the goal's search; the session
// goes on to the model's turn as without a plan.
func TestSeedPlanFailureSearchesTheGoal(t *testing.T) {
	for name, rule := range map[string]llmtest.Rule{
		"refused":  planRule(`{"error":"bad request"}`, 400),
		"not json": planRule("I would search for dendrites and interfaces.", 0),
	} {
		t.Run(name, func(t *testing.T) {
			script := llmtest.Script{Rules: []llmtest.Rule{rule, {Name: "done", Reply: ownKnowledge}}}
			r := runSession(t, script, map[string]string{"research.seed_search": "true", "research.seed_queries": "3"})
			if r.err != nil {
				t.Fatal(r.err)
			}
			if r.res.Stats.WebSearches != 1 || r.res.Evidence == 0 || r.res.StopReason != workflows.StopRootDone {
				t.Fatalf("%d searches, %d evidence, stop %q; want the goal's search and the model's turn",
					r.res.Stats.WebSearches, r.res.Evidence, r.res.StopReason)
			}
		})
	}
}

// TestSeedPlanWaitsOutChatOutage: the chat server down when the seed
// plans is waited out like any model call; the plan then runs, and the
// wait does not count against the session's wall clock.
func TestSeedPlanWaitsOutChatOutage(t *testing.T) {
	plan := `{"queries":["lithium dendrite growth through solid electrolytes","cathode interface degradation in solid-state cells"]}`
	script := llmtest.Script{Rules: []llmtest.Rule{planRule(plan, 0), {Name: "done", Reply: ownKnowledge}}}
	cuts := 0
	r := runFaultyScript(t, script, map[string]string{"research.seed_search": "true", "research.seed_queries": "2", "research.max_pages": "1"},
		func(chat int, req *http.Request) bool {
			if isChat(req) && cuts < 5 {
				cuts++
				return true
			}
			return false
		})
	if r.err != nil {
		t.Fatal(r.err)
	}
	if cuts != 5 || r.res.Stats.WebSearches != 3 || r.res.Stats.FailedCalls != 0 || r.res.StopReason != workflows.StopRootDone {
		t.Fatalf("%d cuts, %d searches, %d failed calls, stop %q; want the outage waited out and the plan searched",
			cuts, r.res.Stats.WebSearches, r.res.Stats.FailedCalls, r.res.StopReason)
	}
	if r.res.ModelWaitedS <= 0 {
		t.Fatalf("model_waited_s %.1f: the wait was not recorded", r.res.ModelWaitedS)
	}
}
