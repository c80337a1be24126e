package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/lethe-research/lethe/contract"
)

// changeSeedSearch: a session's first act is a search of its goal
// (research.seed_search), before the model's first turn.
const changeSeedSearch = "seed-search"

// seedSearch runs one research of the goal itself for the root task, once,
// before the first iteration. The model's first DIN-Read then shows
// evidence to reason from, and a session whose model never asks for a
// search (a small model writing from its own knowledge) still reads what
// a single-shot retrieval of the question would: in the local evaluation
// such a session read nothing and its report cited nothing
// (docs/eval.md). The query is recorded like a model's, so a model that
// asks for the same search later is told it is a duplicate instead of
// running it twice. It reports whether it ran: the loop then checks its
// termination again (a stop or an outage during the seed).
func (s *session) seedSearch(ctx workflow.Context) bool {
	if s.st.Seeded || s.st.Iteration != 0 || s.st.Stats.WebSearches != 0 {
		return false
	}
	if workflow.GetVersion(ctx, changeSeedSearch, workflow.DefaultVersion, 1) != 1 || !s.cfg.Research.SeedSearch {
		return false
	}
	s.st.Seeded = true
	call := contract.ToolCall{Task: contract.RootShortID, Tool: "web_search", Query: s.in.Goal}
	n := s.runCalls(ctx, 0, []contract.ToolCall{call}, false)
	s.log.Info("seed search of the goal done", "new_evidence", n)
	return true
}
