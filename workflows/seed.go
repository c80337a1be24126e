package workflows

import (
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/lethe-research/lethe/contract"
	"github.com/lethe-research/lethe/din"
)

// changeSeedSearch: a session's first act is a search of its goal
// (research.seed_search), before the model's first turn.
const changeSeedSearch = "seed-search"

// changeSeedPlan: the seed also searches the queries of one planning call
// (research.seed_queries), docs/seed-search.md.
const changeSeedPlan = "seed-plan"

// seedPlanTokens bounds the planning call's answer: a few short queries in
// one JSON object, no reasoning.
const seedPlanTokens = 256

// seedSearch runs one research of the goal itself for the root task, once,
// before the first iteration. The model's first DIN-Read then shows
// evidence to reason from, and a session whose model never asks for a
// search (a small model writing from its own knowledge) still reads what
// a single-shot retrieval of the question would: in the local evaluation
// such a session read nothing and its report cited nothing
// (docs/eval.md). The queries are recorded like a model's, so a model that
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
	queries := []string{s.in.Goal}
	if s.cfg.Research.SeedQueries > 0 && workflow.GetVersion(ctx, changeSeedPlan, workflow.DefaultVersion, 1) == 1 {
		queries = append(queries, s.planSeed(ctx)...)
	}
	calls := make([]contract.ToolCall, len(queries))
	for i, q := range queries {
		calls[i] = contract.ToolCall{Index: i, Task: contract.RootShortID, Tool: "web_search", Query: q}
	}
	n := s.runCalls(ctx, 0, calls, false)
	s.log.Info("seed search done", "queries", len(calls), "new_evidence", n)
	return true
}

// planSeed asks the model once for research.seed_queries search queries
// for the goal, as the loop baseline plans (din.PlanSystem). A session
// that searches only its goal reads one part of a two-part question: in
// the local evaluation the multihop questions were where lethe lost to
// the baseline that plans (docs/eval.md). The plan is a hint, so a failed
// call or an answer that does not parse leaves the goal alone; a model
// outage past the tolerance also stops the session at its next check.
func (s *session) planSeed(ctx workflow.Context) []string {
	n := s.cfg.Research.SeedQueries
	in := contract.ReasonInput{SessionID: s.id, Iteration: 0, System: din.PlanSystem, User: din.PlanPrompt(s.in.Goal, n),
		MaxTokens: seedPlanTokens, NoThink: true, PlanQueries: n, Schema: s.cfg.LLM.JSONSchema, SchemaLoose: s.cfg.LLM.JSONSchemaLoose}
	var out contract.ReasonResult
	s.st.Stats.LLMCalls++
	if err := s.exec(ctx, summarized(llmCtx(ctx, s.cfg), "seed: plan %d search queries", n), acts.Reason, in, &out); err != nil {
		s.st.Stats.FailedCalls++
		s.st.ModelGaveUp = s.st.ModelGaveUp || isOutage(err)
		if !temporal.IsCanceledError(err) {
			s.log.Warn("seed plan call failed; searching the goal only", "error", err)
		}
		return nil
	}
	s.countAnswer(out)
	qs, err := din.ParsePlan(out.Content, n)
	if err != nil {
		s.log.Warn("seed plan unusable; searching the goal only", "error", err)
	}
	return qs
}
