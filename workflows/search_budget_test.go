package workflows_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/lethe-research/lethe/llm/llmtest"
)

// rewordedSubjects are ten research subjects; rewordings asks for each in
// three wordings a search engine would answer alike (word order, case and
// punctuation, filler words): thirty web_search calls in one answer.
var rewordedSubjects = []string{
	"solid electrolyte dendrites", "lithium anode interface degradation", "garnet electrolyte cracking",
	"sulfide electrolyte moisture", "cathode particle cracking", "grain boundary lithium growth",
	"stack pressure battery failure", "polymer electrolyte conductivity", "thermal runaway solid cells",
	"interphase resistance growth",
}

func rewordings() []string {
	var out []string
	for _, s := range rewordedSubjects {
		out = append(out, s,
			fmt.Sprintf("What is %s?", s),
			fmt.Sprintf("  %s?! ", strings.ToUpper(reverseWords(s))))
	}
	return out
}

func reverseWords(s string) string {
	var words []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ' ' {
			words = append([]string{s[start:i]}, words...)
			start = i + 1
		}
	}
	out := words[0]
	for _, w := range words[1:] {
		out += " " + w
	}
	return out
}

// floodScript answers every turn with thirty searches of the same ten
// subjects and a continue: the attacker's "search each of these 30
// phrasings".
func floodScript(t *testing.T) llmtest.Script {
	t.Helper()
	ops := []map[string]any{}
	for _, q := range rewordings() {
		ops = append(ops, map[string]any{"op": "call", "task": "root", "tool": "web_search", "args": map[string]string{"query": q}})
	}
	ops = append(ops, map[string]any{"op": "continue", "task": "root"})
	reply, err := json.Marshal(map[string]any{"ops": ops})
	if err != nil {
		t.Fatal(err)
	}
	return llmtest.Script{EmbeddingDim: 256, Rules: []llmtest.Rule{
		{Name: "flood", Match: []string{"^=GOAL"}, Reply: string(reply)},
		{Name: "compose", Match: []string{"^Goal: "}, Reply: "## Findings\n\nDendrites [1]."},
	}}
}

// TestThirtyRewordedSearchesStayWithinTheIterationBudget: one model answer
// of thirty reworded searches starts at most
// research.max_searches_per_iteration research runs; every other call is
// counted as a duplicate or as over budget.
func TestThirtyRewordedSearchesStayWithinTheIterationBudget(t *testing.T) {
	r := runSession(t, floodScript(t), map[string]string{"budget.max_iterations": "1", "budget.min_iterations": "1", "loop.noop_limit": "0"})
	if r.err != nil {
		t.Fatal(r.err)
	}
	st := r.res.Stats
	t.Logf("%d calls: %d searches, %d duplicates, %d over budget", len(rewordings()), st.WebSearches, st.DuplicateCalls, st.SearchesOverBudget)
	max := r.cfg.Research.MaxSearchesPerIter
	if max <= 0 || max >= len(rewordedSubjects) {
		t.Fatalf("research.max_searches_per_iteration default %d: the test needs one below %d", max, len(rewordedSubjects))
	}
	if st.WebSearches > max {
		t.Fatalf("one answer of %d reworded calls started %d searches, budget %d per iteration (duplicates %d)",
			len(rewordings()), st.WebSearches, max, st.DuplicateCalls)
	}
	if st.DuplicateCalls < 2*st.WebSearches {
		t.Errorf("%d duplicates of %d searches: each searched subject's two rewordings should be duplicates", st.DuplicateCalls, st.WebSearches)
	}
	if st.WebSearches+st.DuplicateCalls+st.SearchesOverBudget != len(rewordings()) || st.SearchesOverBudget == 0 {
		t.Fatalf("searches %d + duplicates %d + over budget %d, want the %d calls accounted for and some over budget",
			st.WebSearches, st.DuplicateCalls, st.SearchesOverBudget, len(rewordings()))
	}
}

// TestSearchBudgetHoldsAcrossContinueAsNew: the session budget is kept in
// workflow state, so a session that continues as new after every iteration
// (a fresh run each time) still starts no more than research.max_searches
// searches in all, and no subject twice.
func TestSearchBudgetHoldsAcrossContinueAsNew(t *testing.T) {
	last, res, carried := chainScript(t, floodScript(t), map[string]string{
		"budget.max_iterations": "4", "budget.psi_threshold": "1", "budget.max_wall_clock": "24h",
		"temporal.continue_every": "1", "loop.noop_limit": "0",
		"research.max_searches": "8", "research.max_searches_per_iteration": "3",
	})
	if len(carried) < 3 {
		t.Fatalf("%d continuations, want one per iteration", len(carried))
	}
	if res.Stats.WebSearches != 8 || len(last.SearchKeys) != 8 {
		t.Fatalf("%d searches (%d keys) over %d runs, want the session budget of 8", res.Stats.WebSearches, len(last.SearchKeys), len(carried)+1)
	}
	seen := map[string]bool{}
	for _, k := range last.SearchKeys {
		if seen[k] {
			t.Fatalf("subject %q searched twice: %v", k, last.SearchKeys)
		}
		seen[k] = true
	}
}
