package workflows

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/lethe-research/lethe/algebra"
	"github.com/lethe-research/lethe/contract"
)

// assemble collects the sections (DFS + MMR, in an activity), splits them
// with group_by_budget, composes each group with one no-think LLM call whose
// citations are checked, then finalizes the graph. Composition never loses
// the research: a part the model cannot write (down past the tolerance, or
// failing) is replaced by its material, and the stop reason says so.
func (s *session) assemble(ctx workflow.Context) (SessionResult, error) {
	s.phase = "assembling"
	s.publish(ctx, StatusAssembling)
	s.localEnd = workflow.GetVersion(ctx, changeLocalEnds, workflow.DefaultVersion, 1) == 1
	var col contract.CollectResult
	if err := s.step(ctx, s.localEnd, graphCtx(ctx, s.cfg), acts.CollectSections, contract.CollectInput{SessionID: s.id, Assembly: s.cfg.Assembly}, &col, "collect report sections (DFS, MMR order)"); err != nil {
		return SessionResult{}, fmt.Errorf("collect sections: %w", err)
	}
	res := SessionResult{SessionID: s.id, Iterations: s.st.Iteration, Psi: s.st.Psi, Models: s.st.Models}
	var body []string
	cited := map[int]bool{}
	switch {
	case col.RootDone && strings.TrimSpace(col.RootResult) != "":
		for _, part := range s.rootParts(ctx, col) {
			body = append(body, part.Markdown)
			res.RemovedCitations += part.RemovedCitations
			for _, n := range part.Cited {
				cited[n] = true
			}
		}
	case len(col.Sections) == 0:
		body = append(body, "No findings were recorded before the session stopped.")
	default:
		var parts []contract.ComposeResult
		var failure string
		if workflow.GetVersion(ctx, changeSynthesis, workflow.DefaultVersion, 1) == 1 && s.cfg.Assembly.Synthesis {
			parts, failure = s.synthesize(ctx, col)
		} else {
			parts, failure = s.composeAll(ctx, col)
		}
		for _, part := range parts {
			body = append(body, part.Markdown)
			res.RemovedCitations += part.RemovedCitations
			for _, n := range part.Cited {
				cited[n] = true
			}
		}
		if failure != "" {
			s.stop, res.Error = StopComposeFailed, failure
			body = append([]string{composeFailedNote(failure)}, body...)
		}
	}
	footer := ""
	if workflow.GetVersion(ctx, changeVerify, workflow.DefaultVersion, 1) == 1 && s.cfg.Assembly.VerifyCitations {
		var v verified
		var err error
		if body, v, err = s.verifyCitations(ctx, body, col.Sources); err != nil {
			return SessionResult{}, err
		}
		cited, footer = v.cited, v.footer
		col.Sources = append(col.Sources, v.added...)
		res.CitationPrecision = v.counts.Precision()
		res.CitationsSupported, res.CitationsUnsupported = v.counts.Supported, v.counts.Unsupported
		res.CitationsUnchecked, res.SentencesMarked, res.SentencesRecited = v.counts.Unchecked, v.counts.Marked, v.counts.Moved
		res.CitationsContained, res.CitationsByModel = v.counts.Contained, v.counts.ModelSupported
	}
	// Number the sources by first appearance in the final (verified) body
	// and list exactly the cited ones; the result's Sources carry the same
	// numbers, so the eval scorer and the UI map [n] as the reader does.
	// Pure rendering: no command changes.
	body, sources := contract.RenumberCitations(body, col.Sources)
	if len(cited) > 0 || len(sources) < len(col.Sources) {
		cited = map[int]bool{}
		for _, src := range sources {
			cited[src.N] = true
		}
	}
	res.StopReason = s.stop
	res.Citations = len(cited)
	res.Sources = sources
	s.report = renderReport(s.in.Goal, body, sources, cited, s.stop, footer)
	res.Report = boundReport(s.report, s.cfg.Temporal.MaxPayloadBytes, s.id)

	s.phase = "finalizing"
	fin, err := s.finalize(ctx)
	if err != nil {
		return SessionResult{}, err
	}
	res.Tasks, res.TasksDone, res.TasksFailed, res.Evidence = fin.Tasks, fin.Done, fin.Failed, fin.Evidence
	// Finalize closed every open task: the counts the last iteration read
	// are behind the graph now, and the final search attributes and
	// details are published from these.
	s.st.Counts, s.st.Evidence = map[string]int{"DONE": fin.Done, "FAILED": fin.Failed}, fin.Evidence
	res.Stats = s.st.Stats
	res.Tokens, res.EmbedTokens = s.st.TokensUsed(), s.st.EmbedTokens
	res.CostUSD = cost(s.st.Stats.PromptTokens, s.st.Stats.CompletionToken, s.st.EmbedTokens, s.cfg)
	res.ModelWaitedS = s.st.ModelWaited.Seconds()
	s.phase = "done"
	return res, nil
}

// composeAll composes every group in parallel. A group whose composition
// fails (after waiting out an outage up to the tolerance) gets the
// extractive text of its sections instead; failure then says why.
func (s *session) composeAll(ctx workflow.Context, col contract.CollectResult) ([]contract.ComposeResult, string) {
	tokens := make([]int, len(col.Sections))
	for i, sec := range col.Sections {
		tokens[i] = sec.Tokens
	}
	return s.composeGroups(ctx, algebra.GroupByBudget(tokens, s.cfg.Assembly.GroupTokens), tokens, false)
}

// composeGroups composes each group of sections in parallel (as one
// section's prose with synthesis), with the extractive fallback; tokens
// are the sections' estimates, for the token budget.
func (s *session) composeGroups(ctx workflow.Context, groups [][]int, tokens []int, synthesis bool) ([]contract.ComposeResult, string) {
	parts := make([]contract.ComposeResult, len(groups))
	errs := make([]error, len(groups))
	afford := s.affordable(ctx, groups, tokens)
	wg := workflow.NewWaitGroup(ctx)
	for i, g := range groups {
		if !afford[i] {
			errs[i] = errOverBudget
			continue
		}
		in := contract.ComposeInput{
			SessionID: s.id, Goal: s.in.Goal, Instructions: s.in.Instructions,
			Sections: g, Part: i + 1, Parts: len(groups), MaxTokens: s.cfg.LLM.ComposeTokens,
		}
		if synthesis {
			in.Synthesis, in.Facts, in.FactFollow = true, s.cfg.Assembly.SectionFacts, s.cfg.Assembly.FactFollow
		}
		wg.Add(1)
		workflow.Go(ctx, func(ctx workflow.Context) {
			defer wg.Done()
			lctx := summarized(composeCtx(ctx, s.cfg), "compose part %d of %d", i+1, len(groups))
			errs[i] = s.exec(ctx, lctx, acts.Compose, in, &parts[i])
		})
	}
	wg.Wait(ctx)
	failure := ""
	for i, in := range groups {
		if errs[i] == nil {
			s.countCompose(parts[i])
			continue
		}
		switch {
		case errs[i] == errOverBudget:
			s.log.Info("token budget spent; the part is extractive", "part", i+1)
		case failure == "":
			failure = fmt.Sprintf("composition of part %d of %d failed: %v", i+1, len(groups), errs[i])
			fallthrough
		default:
			s.log.Error("composition failed; the part is extractive", "part", i+1, "error", errs[i])
		}
		ex := contract.ComposeInput{SessionID: s.id, Goal: s.in.Goal, Sections: in, Part: i + 1, Parts: len(groups)}
		if err := s.exec(ctx, summarized(graphCtx(ctx, s.cfg), "extractive part %d of %d", i+1, len(groups)), acts.Extract, ex, &parts[i]); err != nil {
			s.log.Error("extractive part failed", "part", i+1, "error", err)
			parts[i] = contract.ComposeResult{Markdown: "(This part could not be read back from the graph store.)"}
		}
	}
	return parts, failure
}

// errOverBudget marks a part left uncomposed because its call could pass
// budget.max_tokens; it gets the extractive text, with no failure.
var errOverBudget = errors.New("token budget spent")

// affordable says which groups the token budget can compose. Sessions
// under their limit record no version marker: the check asks GetVersion
// only when some group is over.
func (s *session) affordable(ctx workflow.Context, groups [][]int, tokens []int) []bool {
	est := make([]int, len(groups))
	for i, g := range groups {
		for _, j := range g {
			est[i] += tokens[j]
		}
		est[i] += s.cfg.LLM.ComposeTokens
	}
	afford := composePlan(est, s.cfg.Budget.MaxTokens-s.st.TokensUsed())
	for _, ok := range afford {
		if !ok && workflow.GetVersion(ctx, changeTokenBudget, workflow.DefaultVersion, 1) < 1 {
			return composePlan(est, math.MaxInt)
		}
	}
	return afford
}

func (s *session) countCompose(part contract.ComposeResult) {
	if !part.NoCall {
		s.st.Stats.LLMCalls++
	}
	s.st.Stats.LLMCalls += part.RepairCalls
	s.st.Stats.RepairCalls += part.RepairCalls
	s.st.Tokens += part.Tokens
	s.st.Stats.PromptTokens += part.PromptTokens
	s.st.Stats.CompletionToken += part.CompletionTokens
	s.st.Stats.LLMLatencyMS += part.LatencyMS
}

// composeFailedNote heads an extractive report: what happened, and how to
// get the composed report once the model is back.
func composeFailedNote(failure string) string {
	return "> **Note: this report is extractive.** " + strings.ReplaceAll(failure, "\n", " ") +
		"\n> Each section below is the material it would have been written from, with its sources." +
		" To compose it once the model server is back, reset the workflow to the workflow task before its first Compose activity" +
		" (see docs/operations.md, \"Re-composing a report\")."
}

// finalize closes the graph. Filling missing result embeddings needs the
// embedding server; when it stays down past the tolerance, the graph is
// closed without them rather than not at all.
func (s *session) finalize(ctx workflow.Context) (contract.FinalizeResult, error) {
	var fin contract.FinalizeResult
	err := s.step(ctx, s.localEnd, graphCtx(ctx, s.cfg), acts.Finalize, contract.FinalizeInput{SessionID: s.id, Similar: contract.SimilarOf(s.cfg.Algebra)}, &fin, "finalize the graph")
	if isOutage(err) {
		s.log.Warn("embedding server down at finalize; result embeddings left empty", "error", err)
		in := contract.FinalizeInput{SessionID: s.id, SkipEmbeddings: true, Similar: contract.SimilarOf(s.cfg.Algebra)}
		if s.localEnd {
			err = workflow.ExecuteLocalActivity(localCtx(ctx, s.cfg, "finalize the graph without result embeddings"), acts.Finalize, in).Get(ctx, &fin)
		} else {
			err = workflow.ExecuteActivity(graphCtx(ctx, s.cfg), acts.Finalize, in).Get(ctx, &fin)
		}
	}
	if err != nil {
		return fin, fmt.Errorf("finalize: %w", err)
	}
	return fin, nil
}

// boundReport keeps the result under the payload bound: a report over
// three quarters of it (the rest is for sources and counts) is cut at a line
// and says where the whole one is. The whole report stays in the workflow's
// state, where the report query reads it (queries are not recorded in
// history, so they do not grow it).
func boundReport(report string, maxPayload int, id string) string {
	limit := maxPayload * 3 / 4
	if maxPayload <= 0 || len(report) <= limit {
		return report
	}
	note := fmt.Sprintf("\n\n> The report is %d bytes, more than a workflow result holds (temporal.max_payload_bytes = %d). "+
		"The whole report: `temporal workflow query --workflow-id %s --name report`.\n", len(report), maxPayload, id)
	cut := report[:max(0, limit-len(note))]
	if i := strings.LastIndexByte(cut, '\n'); i > 0 {
		cut = cut[:i]
	}
	return strings.ToValidUTF8(cut, "") + note
}

// renderReport is the Markdown report: the goal as title, the composed
// parts, and the numbered sources that the parts cite (all collected
// sources when nothing was cited, so the reader still sees the material).
func renderReport(goal string, body []string, sources []contract.Source, cited map[int]bool, stop, footer string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", strings.TrimSpace(goal))
	for _, part := range body {
		b.WriteString(strings.TrimSpace(part))
		b.WriteString("\n\n")
	}
	list := make([]contract.Source, 0, len(sources))
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
	if footer != "" {
		fmt.Fprintf(&b, "_%s_\n\n", footer)
	}
	fmt.Fprintf(&b, "_Session stopped: %s._\n", stop)
	// Pages (titles, text) and the model wrote into it: cleaned before
	// anyone prints or opens it (the result, the report query, the
	// starter's file).
	return contract.SanitizeReport(b.String())
}
