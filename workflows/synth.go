package workflows

import (
	"fmt"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/lethe-research/lethe/contract"
)

// changeSynthesis writes the report as a synthesis: an outline, one prose
// paragraph per section (a Compose call each, from the section's extracted
// evidence sentences), then a Summarize call (docs/citations.md).
const changeSynthesis = "synthesis-report"

// changeRootSections composes the sections of a session that ended by root
// DONE too, the root's answer as the summary (rootParts).
const changeRootSections = "root-sections"

// synthesize is the outline, the sections in prose and the summary. A
// section the model cannot write is extractive (composeGroups); the
// summary is left out when its call fails or the report is extractive.
func (s *session) synthesize(ctx workflow.Context, col contract.CollectResult) ([]contract.ComposeResult, string) {
	groups := make([][]int, len(col.Sections))
	tokens := make([]int, len(col.Sections))
	for i, sec := range col.Sections {
		groups[i], tokens[i] = []int{i}, sec.Tokens
	}
	parts, failure := s.composeGroups(ctx, groups, tokens, true)
	out := append([]contract.ComposeResult{{Markdown: outline(col.Sections)}}, parts...)
	if failure != "" {
		return out, failure
	}
	texts := make([]string, len(parts))
	for i, p := range parts {
		texts[i] = p.Markdown
	}
	in := contract.SummarizeInput{
		SessionID: s.id, Goal: s.in.Goal, MaxTokens: s.cfg.LLM.ComposeTokens,
		Report: boundChars(strings.Join(texts, "\n\n"), s.cfg.Assembly.SummaryChars),
		Facts:  s.cfg.Assembly.SummaryFacts, FactFollow: s.cfg.Assembly.FactFollow,
		Passages: s.cfg.Assembly.SummaryPassages,
	}
	if est := contract.EstimateTokens(in.Report) + in.Passages*contract.PassageTokens + 2*s.cfg.LLM.ComposeTokens; s.st.TokensUsed()+est > s.cfg.Budget.MaxTokens {
		s.log.Info("token budget spent; the report has no summary", "estimate", est)
		return out, ""
	}
	var sum contract.ComposeResult
	if err := s.exec(ctx, summarized(composeCtx(ctx, s.cfg), "summarize the report"), acts.Summarize, in, &sum); err != nil {
		s.log.Warn("summary failed; the report has none", "error", err)
		return out, ""
	}
	s.countCompose(sum)
	if strings.TrimSpace(sum.Markdown) != "" {
		sum.Markdown = "## Summary\n\n" + sum.Markdown
		out = append(out, sum)
	}
	return out, ""
}

// rootParts is the report of a session that ended by root DONE. The model
// wrote its answer during the loop, and CollectSections has checked that
// answer's citations like a composed part's. Since changeRootSections the
// answer closes a synthesis like the composed path's (outline, one prose
// section per task) as its summary, in place of a Summarize call: a small
// model's root answer is a sentence or two, and the research behind it
// was missing from the report. Composition that fails leaves the answer
// alone, as before the change: the session has its answer, and a failing
// section must not turn root_done into compose_failed.
func (s *session) rootParts(ctx workflow.Context, col contract.CollectResult) []contract.ComposeResult {
	answer := contract.ComposeResult{Markdown: col.RootResult, Cited: col.RootCited, RemovedCitations: col.RootRemoved}
	if len(col.Sections) == 0 || !s.cfg.Assembly.Synthesis ||
		workflow.GetVersion(ctx, changeRootSections, workflow.DefaultVersion, 1) < 1 {
		return []contract.ComposeResult{answer}
	}
	groups := make([][]int, len(col.Sections))
	tokens := make([]int, len(col.Sections))
	for i, sec := range col.Sections {
		groups[i], tokens[i] = []int{i}, sec.Tokens
	}
	parts, failure := s.composeGroups(ctx, groups, tokens, true)
	if failure != "" {
		s.log.Warn("root DONE: sections not composed; the report is the root's answer", "error", failure)
		return []contract.ComposeResult{answer}
	}
	answer.Markdown = "## Summary\n\n" + answer.Markdown
	out := append([]contract.ComposeResult{{Markdown: outline(col.Sections)}}, parts...)
	return append(out, answer)
}

// outline is the report's first section: its sections' titles, in order.
func outline(secs []contract.SectionInfo) string {
	var b strings.Builder
	b.WriteString("## Outline\n")
	for i, sec := range secs {
		fmt.Fprintf(&b, "\n%d. %s", i+1, strings.Join(strings.Fields(sec.Title), " "))
	}
	return b.String()
}

// boundChars cuts s to at most n bytes at a line or space, on a rune boundary.
func boundChars(s string, n int) string {
	if n <= 0 || len(s) <= n {
		return s
	}
	cut := strings.ToValidUTF8(s[:n], "")
	if i := strings.LastIndexAny(cut, "\n "); i > n/2 {
		cut = cut[:i]
	}
	return cut
}
