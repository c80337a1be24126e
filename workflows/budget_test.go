package workflows_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/lethe-research/lethe/llm/llmtest"
	"github.com/lethe-research/lethe/workflows"
)

// searching keeps the loop busy: every iteration searches, nothing
// converges before the token budget does.
func searching() llmtest.Script {
	return llmtest.Script{EmbeddingDim: 256, Rules: []llmtest.Rule{
		{Name: "search", Match: []string{"^=GOAL"}, Reply: `{"ops":[{"op":"call","task":"root","tool":"web_search","args":{"query":"solid electrolyte dendrites interface degradation"}},{"op":"continue","task":"root"}]}`},
		{Name: "compose", Match: []string{"^Goal: "}, Reply: "## Findings\n\nDendrites and interfaces [1]."},
	}}
}

// TestTokenBudgetStopsTheLoop: budget.max_tokens is a hard limit. A first
// session measures what an iteration costs; a second, limited to about
// three iterations' worth, stops with token_budget, never spends past the
// limit and still writes a report. With no reserve left for assembly, the
// report is extractive and the stop reason still says why.
func TestTokenBudgetStopsTheLoop(t *testing.T) {
	// The repeated query is deduplicated after the first iteration, so the
	// answers change nothing: the no-op stop (loop.noop_limit) is off here,
	// where the point is the token budget.
	free := runSession(t, searching(), map[string]string{"budget.max_iterations": "6", "budget.psi_threshold": "0.99", "loop.noop_limit": "0"})
	if free.err != nil {
		t.Fatal(free.err)
	}
	if free.res.StopReason != workflows.StopMaxIterations || free.res.Tokens == 0 {
		t.Fatalf("unlimited run: stop %q, %d tokens", free.res.StopReason, free.res.Tokens)
	}
	perIter := free.res.Tokens / (free.res.Iterations + 1) // composition is about one more call
	for _, c := range []struct {
		name      string
		reserve   string
		composed  bool
		maxTokens int
	}{
		{"with a reserve for assembly", "0.3", true, perIter * 4},
		{"no reserve: assembly is extractive", "0", false, perIter*3 + perIter/2},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := runSession(t, searching(), map[string]string{"budget.max_iterations": "6", "budget.psi_threshold": "0.99", "loop.noop_limit": "0",
				"budget.max_tokens": strconv.Itoa(c.maxTokens), "budget.token_reserve": c.reserve})
			if r.err != nil {
				t.Fatal(r.err)
			}
			if r.res.StopReason != workflows.StopTokenBudget {
				t.Fatalf("stop reason %q after %d iterations and %d tokens (limit %d)", r.res.StopReason, r.res.Iterations, r.res.Tokens, c.maxTokens)
			}
			if r.res.Tokens > c.maxTokens {
				t.Errorf("spent %d tokens, limit %d", r.res.Tokens, c.maxTokens)
			}
			if r.res.Iterations == 0 || r.res.Iterations >= free.res.Iterations {
				t.Errorf("%d iterations under the limit, %d without", r.res.Iterations, free.res.Iterations)
			}
			if r.res.Error != "" || !strings.Contains(r.res.Report, "[1]") {
				t.Errorf("report (error %q):\n%s", r.res.Error, r.res.Report)
			}
			composed := strings.Contains(r.res.Report, "Dendrites and interfaces")
			if composed != c.composed {
				t.Errorf("composed %v, want %v:\n%s", composed, c.composed, r.res.Report)
			}
		})
	}
}

// TestCostPricesTheTokens: the result prices prompt, completion and
// embedded tokens at the configured prices per million.
func TestCostPricesTheTokens(t *testing.T) {
	r := runSession(t, searching(), map[string]string{"budget.max_iterations": "3", "budget.psi_threshold": "0.99",
		"llm.price_prompt_per_mtok": "3", "llm.price_completion_per_mtok": "15", "embed.price_per_mtok": "0.02"})
	if r.err != nil {
		t.Fatal(r.err)
	}
	s := r.res.Stats
	want := (float64(s.PromptTokens)*3 + float64(s.CompletionToken)*15 + float64(r.res.EmbedTokens)*0.02) / 1e6
	if r.res.EmbedTokens == 0 || r.res.CostUSD == 0 || r.res.CostUSD != want {
		t.Errorf("cost %v, want %v (prompt %d, completion %d, embedded %d)", r.res.CostUSD, want, s.PromptTokens, s.CompletionToken, r.res.EmbedTokens)
	}
	if r.res.Tokens != s.PromptTokens+s.CompletionToken+r.res.EmbedTokens {
		t.Errorf("tokens %d, want prompt %d + completion %d + embedded %d", r.res.Tokens, s.PromptTokens, s.CompletionToken, r.res.EmbedTokens)
	}
}
