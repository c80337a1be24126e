package workflows_test

import (
	"context"
	"fmt"
	"testing"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/contract"
	"github.com/lethe-research/lethe/workflows"
)

// TestResearchQueueHeldLast: a research run spends its pages on sources
// the session does not hold yet (changeHeldLast): with two pages, the two
// best unheld candidates, not the held ones goal cosine puts first; a run
// recorded before the change keeps the goal-cosine order; when only held
// candidates are left, they are still fetched.
func TestResearchQueueHeldLast(t *testing.T) {
	cands := []contract.URLCandidate{
		{URL: "corpus:///a.html?passage=1", GoalCos: 0.90, Held: true},
		{URL: "corpus:///a.html?passage=2", GoalCos: 0.85, Held: true},
		{URL: "corpus:///a.html?passage=3", GoalCos: 0.50},
		{URL: "corpus:///a.html?passage=4", GoalCos: 0.40},
	}
	for _, tc := range []struct {
		name    string
		version workflow.Version
		cands   []contract.URLCandidate
		want    []string
	}{
		{"held last", 1, cands, []string{"corpus:///a.html?passage=3", "corpus:///a.html?passage=4"}},
		{"recorded before the change", workflow.DefaultVersion, cands, []string{"corpus:///a.html?passage=1", "corpus:///a.html?passage=2"}},
		{"one unheld, then the best held", 1, cands[:3], []string{"corpus:///a.html?passage=3", "corpus:///a.html?passage=1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := researchFetches(t, tc.version, tc.cands); fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("fetched %v, want %v", got, tc.want)
			}
		})
	}
}

// researchFetches runs WebResearch over the candidates, two pages at most,
// at the given version of changeHeldLast, and returns the URLs fetched in
// order.
func researchFetches(t *testing.T, version workflow.Version, cands []contract.URLCandidate) []string {
	var fetched []string
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(workflows.WebResearch, workflow.RegisterOptions{Name: workflows.ResearchWorkflow})
	env.RegisterActivityWithOptions(func(_ context.Context, in contract.DiscoverInput) (contract.DiscoverResult, error) {
		return contract.DiscoverResult{Candidates: cands, Provider: in.Provider}, nil
	}, activity.RegisterOptions{Name: "Discover"})
	env.RegisterActivityWithOptions(func(_ context.Context, in contract.FetchInput) (contract.FetchResult, error) {
		var out contract.FetchResult
		for _, u := range in.URLs {
			fetched = append(fetched, u)
			out.Pages = append(out.Pages, contract.PageRef{URL: u, Chars: 100})
		}
		return out, nil
	}, activity.RegisterOptions{Name: "Fetch"})
	env.RegisterActivityWithOptions(func(_ context.Context, in contract.IngestInput) (contract.IngestResult, error) {
		return contract.IngestResult{New: 1, Chunks: 1, MeanIG: 0.9}, nil
	}, activity.RegisterOptions{Name: "Ingest"})
	env.OnGetVersion("held-sources-last", workflow.DefaultVersion, 1).Return(version)
	cfg := config.Defaults()
	cfg.Research.Providers, cfg.Research.CorpusDir = "corpus", "/nonexistent"
	cfg.Research.MaxPages, cfg.Research.BatchSize, cfg.Research.FollowDepth = 2, 1, 0
	cfg.Research.PsiThreshold = 2 // never converged: the page budget ends the run
	env.ExecuteWorkflow(workflows.ResearchWorkflow, contract.ResearchInput{SessionID: "s", Call: contract.ToolCall{Task: "root", Tool: "web_search", Query: "q"},
		TimeLeftS: 600, Config: cfg})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	return fetched
}
