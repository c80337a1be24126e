package workflows_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/lethe-research/lethe/din"
	"github.com/lethe-research/lethe/internal/lethetest"
	"github.com/lethe-research/lethe/llm/llmtest"
	"github.com/lethe-research/lethe/workflows"
)

const continueRoot = `{"ops":[{"op":"continue","task":"root"}]}`

// chatPrompts are the user messages of the chat calls, in order.
func chatPrompts(srv *llmtest.Server) []string {
	var out []string
	for _, q := range srv.Requests() {
		if q.Path == "/v1/chat/completions" {
			out = append(out, q.User)
		}
	}
	return out
}

// TestNoOpIterations: a model that answers `continue root` and nothing
// else is told so in the next DIN-Read, and after loop.noop_limit such
// iterations in a row the session stops with no_progress (and assembles
// what it has) instead of spending its iteration budget; with the limit
// at 0 it only warns. A model that takes the hint resets the count.
func TestNoOpIterations(t *testing.T) {
	hint := regexp.QuoteMeta(din.NoProgressHint)
	t.Run("stops at the limit", func(t *testing.T) {
		r := runSession(t, llmtest.Script{Default: continueRoot}, map[string]string{"budget.max_iterations": "6"})
		if r.err != nil {
			t.Fatal(r.err)
		}
		if r.res.StopReason != workflows.StopNoProgress || r.res.Iterations != 2 || r.res.Stats.NoOpIterations != 2 {
			t.Fatalf("stop %q after %d iterations, %d no-ops; want no_progress after 2", r.res.StopReason, r.res.Iterations, r.res.Stats.NoOpIterations)
		}
		p := chatPrompts(r.llm)
		if len(p) < 2 || strings.Contains(p[0], din.NoProgressHint) || !strings.Contains(p[1], din.NoProgressHint) {
			t.Fatalf("the no-progress hint belongs in the second prompt only; prompts:\n%s", strings.Join(p, "\n-----\n"))
		}
		if r.res.Report == "" {
			t.Fatal("no report assembled")
		}
	})
	t.Run("limit 0 only warns", func(t *testing.T) {
		r := runSession(t, llmtest.Script{Default: continueRoot}, map[string]string{"budget.max_iterations": "3", "loop.noop_limit": "0"})
		if r.err != nil {
			t.Fatal(r.err)
		}
		if r.res.StopReason != workflows.StopMaxIterations || r.res.Stats.NoOpIterations != 3 {
			t.Fatalf("stop %q, %d no-ops; want max_iterations, 3", r.res.StopReason, r.res.Stats.NoOpIterations)
		}
	})
	t.Run("the hint is taken", func(t *testing.T) {
		script := llmtest.Script{Rules: []llmtest.Rule{
			{Name: "after-hint", Match: []string{hint}, Reply: `{"ops":[{"op":"complete","task":"root","result":"Solid-state batteries fail by dendrites and interface degradation.","embed_text":"battery failure"}]}`},
			{Name: "idle", Reply: continueRoot},
		}}
		r := runSession(t, script, map[string]string{"budget.max_iterations": "6"})
		if r.err != nil {
			t.Fatal(r.err)
		}
		if r.res.StopReason != workflows.StopRootDone || r.res.Iterations != 2 || r.res.Stats.NoOpIterations != 1 {
			t.Fatalf("stop %q after %d iterations, %d no-ops; want root_done after 2 with 1; rules %v",
				r.res.StopReason, r.res.Iterations, r.res.Stats.NoOpIterations, rulesUsed(r.llm))
		}
	})
}

// A productive session never counts a no-op and ends as before.
func TestProductiveSessionHasNoNoOps(t *testing.T) {
	r := runSession(t, lethetest.Script(t, "battery_root_done"), nil)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.res.StopReason != workflows.StopRootDone || r.res.Stats.NoOpIterations != 0 {
		t.Fatalf("stop %q with %d no-ops; want root_done with none", r.res.StopReason, r.res.Stats.NoOpIterations)
	}
	for i, p := range chatPrompts(r.llm) {
		if strings.Contains(p, din.NoProgressHint) {
			t.Fatalf("prompt %d carries the no-progress hint", i)
		}
	}
}
