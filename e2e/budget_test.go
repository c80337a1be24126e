package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/lethe-research/lethe/internal/lethetest"
	"github.com/lethe-research/lethe/llm/llmtest"
	"github.com/lethe-research/lethe/workflows"
)

// TestTokenBudgetOnTheServer: a session with a low budget.max_tokens stops
// with token_budget and a full report, and LetheTokens finds it with the
// query the README shows.
func TestTokenBudgetOnTheServer(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Script{EmbeddingDim: 256, Rules: []llmtest.Rule{
		{Name: "search", Match: []string{"^=GOAL"}, Reply: `{"ops":[{"op":"call","task":"root","tool":"web_search","args":{"query":"solid electrolyte dendrites interface degradation"}},{"op":"continue","task":"root"}]}`},
		{Name: "compose", Match: []string{"^Goal: "}, Reply: "## Findings\n\nDendrites and interfaces [1]."},
	}})
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	const id, queue, limit = "token-budget-1", "lethe-token-budget", 12000
	params := lethetest.Params(srv.URL(), dir)
	params["temporal.task_queue"] = queue
	w := startWorker(t, params)
	defer w.stop(9)
	c := dial(t)
	cfg := lethetest.Config(t, srv.URL(), dir, map[string]string{"temporal.task_queue": queue,
		"budget.max_tokens": fmt.Sprint(limit), "budget.max_iterations": "10", "budget.psi_threshold": "0.99",
		"loop.noop_limit": "0"}) // the repeated, deduplicated query changes nothing: no no-op stop here
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: queue}, workflows.SessionWorkflow,
		workflows.SessionInput{Goal: goal, Config: &cfg})
	if err != nil {
		t.Fatal(err)
	}
	var res workflows.SessionResult
	if err := run.Get(ctx, &res); err != nil {
		w.dumpLog(t)
		t.Fatal(err)
	}
	if res.StopReason != workflows.StopTokenBudget || res.Tokens > limit || res.Tokens == 0 || res.Report == "" {
		t.Fatalf("stop %q, %d tokens of %d, report %d bytes", res.StopReason, res.Tokens, limit, len(res.Report))
	}
	q := fmt.Sprintf("WorkflowId = '%s' AND LetheTokens > %d", id, res.Tokens/2)
	deadline := time.Now().Add(30 * time.Second)
	for {
		l, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: q})
		if err != nil {
			t.Fatalf("list %q: %v", q, err)
		}
		if len(l.Executions) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("query %q found %d sessions", q, len(l.Executions))
		}
		time.Sleep(200 * time.Millisecond)
	}
	none := fmt.Sprintf("WorkflowId = '%s' AND LetheTokens > %d", id, limit)
	if l, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: none}); err != nil || len(l.Executions) != 0 {
		t.Errorf("query %q: %v, %v", none, l, err)
	}
}
