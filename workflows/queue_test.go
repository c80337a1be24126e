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

// TestResearchQueueFusesProviderRank: a research run fetches the pages
// the provider ranks first for its query before those whose snippet is
// merely nearest the goal (changeQueueFusion, queue.RankFused with k =
// 10): the provider's first two, not its ninth and tenth, which goal
// cosine alone puts first; a run recorded before the change keeps the
// goal-cosine order.
func TestResearchQueueFusesProviderRank(t *testing.T) {
	for _, tc := range []struct {
		name    string
		version workflow.Version
		want    []string
	}{
		{"fused", 1, []string{"corpus:///a.html?passage=1", "corpus:///a.html?passage=2"}},
		{"recorded before the change", workflow.DefaultVersion, []string{"corpus:///a.html?passage=9", "corpus:///a.html?passage=10"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := researchFetches(t, tc.version); fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("fetched %v, want %v", got, tc.want)
			}
		})
	}
}

// researchFetches runs WebResearch over five candidates, two pages at
// most, at the given version of changeQueueFusion, and returns the URLs
// fetched in order.
func researchFetches(t *testing.T, version workflow.Version) []string {
	cands := []contract.URLCandidate{
		{URL: "corpus:///a.html?passage=1", GoalCos: 0.50, Rank: 1},
		{URL: "corpus:///a.html?passage=2", GoalCos: 0.45, Rank: 2},
		{URL: "corpus:///a.html?passage=3", GoalCos: 0.40, Rank: 3},
		{URL: "corpus:///a.html?passage=9", GoalCos: 0.90, Rank: 9},
		{URL: "corpus:///a.html?passage=10", GoalCos: 0.85, Rank: 10},
	}
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
	env.OnGetVersion("queue-rank-fusion", workflow.DefaultVersion, 1).Return(version)
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
