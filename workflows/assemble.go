package workflows

import (
	"fmt"
	"sort"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/lethe-research/lethe/activities"
	"github.com/lethe-research/lethe/algebra"
)

// assemble collects the sections (DFS + MMR, in an activity), splits them
// with group_by_budget, composes each group with one no-think LLM call whose
// citations are checked, then finalizes the graph.
func (s *session) assemble(ctx workflow.Context) (SessionResult, error) {
	s.phase = "assembling"
	s.publish(ctx, StatusAssembling)
	gctx := graphCtx(ctx, s.cfg)
	var col activities.CollectResult
	if err := workflow.ExecuteActivity(gctx, activities.NameCollectSection, activities.CollectInput{SessionID: s.id}).Get(ctx, &col); err != nil {
		return SessionResult{}, fmt.Errorf("collect sections: %w", err)
	}
	res := SessionResult{SessionID: s.id, StopReason: s.stop, Iterations: s.st.Iteration, Psi: s.st.Psi, Models: s.st.Models}
	var body []string
	cited := map[int]bool{}
	switch {
	case col.RootDone && strings.TrimSpace(col.RootResult) != "":
		body = append(body, col.RootResult) // the LLM composed the answer during the loop
	case len(col.Sections) == 0:
		body = append(body, "No findings were recorded before the session stopped.")
	default:
		tokens := make([]int, len(col.Sections))
		for i, sec := range col.Sections {
			tokens[i] = sec.Tokens
		}
		groups := algebra.GroupByBudget(tokens, s.cfg.Assembly.GroupTokens)
		futures := make([]workflow.Future, len(groups))
		lctx := llmCtx(ctx, s.cfg)
		for i, g := range groups {
			futures[i] = workflow.ExecuteActivity(lctx, activities.NameCompose, activities.ComposeInput{
				SessionID: s.id, Goal: s.in.Goal, Instructions: s.in.Instructions,
				Sections: g, Part: i + 1, Parts: len(groups),
			})
		}
		for i, f := range futures {
			var part activities.ComposeResult
			if err := f.Get(ctx, &part); err != nil {
				return SessionResult{}, fmt.Errorf("compose part %d of %d: %w", i+1, len(groups), err)
			}
			body = append(body, part.Markdown)
			res.RemovedCitations += part.RemovedCitations
			s.st.Stats.LLMCalls += 1 + part.RepairCalls
			s.st.Stats.RepairCalls += part.RepairCalls
			s.st.Tokens += part.Tokens
			s.st.Stats.PromptTokens += part.PromptTokens
			s.st.Stats.CompletionToken += part.CompletionTokens
			s.st.Stats.LLMLatencyMS += part.LatencyMS
			for _, n := range part.Cited {
				cited[n] = true
			}
		}
	}
	res.Citations = len(cited)
	res.Sources = col.Sources
	res.Report = renderReport(s.in.Goal, body, col.Sources, cited, s.stop)

	s.phase = "finalizing"
	var fin activities.FinalizeResult
	if err := workflow.ExecuteActivity(gctx, activities.NameFinalize, activities.FinalizeInput{SessionID: s.id}).Get(ctx, &fin); err != nil {
		return SessionResult{}, fmt.Errorf("finalize: %w", err)
	}
	res.Tasks, res.TasksDone, res.TasksFailed, res.Evidence = fin.Tasks, fin.Done, fin.Failed, fin.Evidence
	res.Stats = s.st.Stats
	s.phase = "done"
	return res, nil
}

// renderReport is the Markdown report: the goal as title, the composed
// parts, and the numbered sources that the parts cite (all collected
// sources when nothing was cited, so the reader still sees the material).
func renderReport(goal string, body []string, sources []activities.Source, cited map[int]bool, stop string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", strings.TrimSpace(goal))
	for _, part := range body {
		b.WriteString(strings.TrimSpace(part))
		b.WriteString("\n\n")
	}
	list := make([]activities.Source, 0, len(sources))
	for _, src := range sources {
		if len(cited) == 0 || cited[src.N] {
			list = append(list, src)
		}
	}
	sort.Slice(list, func(i, j int) bool { return list[i].N < list[j].N })
	if len(list) > 0 {
		b.WriteString("## Sources\n\n")
		for _, src := range list {
			title := src.Title
			if title == "" {
				title = src.URL
			}
			fmt.Fprintf(&b, "[%d] %s — %s\n", src.N, title, src.URL)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "_Session stopped: %s._\n", stop)
	return b.String()
}
