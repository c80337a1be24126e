package workflows

import (
	"fmt"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/lethe-research/lethe/contract"
)

// changeVerify adds the verified-citations stage after the report's body
// is written, on every path (composed, root shortcut, extractive): one
// VerifyCitations activity per batch of cited pairs (docs/citations.md).
const changeVerify = "verify-citations"

// verified is what the stage gives the report and the result.
type verified struct {
	counts contract.CitationCounts
	cited  map[int]bool
	footer string
	// added are sources the session read that re-cited sentences now
	// cite, numbered after the report's (VerifyVerdict.MovedURL).
	added []contract.Source
}

// verifyCitations judges every cited (sentence, source) pair of the body
// in batches (in parallel; the worker's LLM slots bound them), removes the
// unsupported citations and marks the sentences left with none. A batch
// that fails, or a model that stays down past the tolerance, leaves its
// citations as written and unchecked: verification never loses the
// report. The body comes back as one part.
func (s *session) verifyCitations(ctx workflow.Context, body []string, sources []contract.Source) ([]string, verified, error) {
	parts := make([]string, 0, len(body))
	for _, p := range body {
		parts = append(parts, strings.TrimSpace(p))
	}
	text := strings.Join(parts, "\n\n")
	sents := contract.SplitSentences(text)
	pairs := contract.CitedPairs(sents)
	urls := map[int]string{}
	for _, src := range sources {
		urls[src.N] = src.URL
	}
	status := map[int]string{}
	a := s.cfg.Assembly
	batches := contract.VerifyBatches(pairs, a.VerifyBatchTokens, a.VerifySourceChars, s.cfg.LLM.ComposeTokens)
	results := make([]contract.VerifyResult, len(batches))
	errs := make([]error, len(batches))
	wg := workflow.NewWaitGroup(ctx)
	left := s.cfg.Budget.MaxTokens - s.st.TokensUsed() // budget.max_tokens is a hard limit (docs/token-budget.md)
	overBudget := 0
	for i, b := range batches {
		if left -= contract.BatchTokens(b, a.VerifySourceChars, s.cfg.LLM.ComposeTokens); left < 0 { // its pairs stay unchecked
			overBudget++
			continue
		}
		in := contract.VerifyInput{
			SessionID: s.id, Batch: i + 1, SourceChars: a.VerifySourceChars, MaxTokens: s.cfg.LLM.ComposeTokens,
			Schema: s.cfg.LLM.JSONSchema, SchemaLoose: s.cfg.LLM.JSONSchemaLoose, Sources: verifySources(sources),
			Recite: s.cfg.Assembly.ReciteRead,
		}
		for _, p := range b {
			if urls[p.N] == "" { // not a source of the report: nothing can support it
				status[p.I] = contract.Unsupported
				continue
			}
			in.Items = append(in.Items, contract.VerifyItem{I: p.I, Sentence: p.Text, N: p.N, URL: urls[p.N]})
		}
		if len(in.Items) == 0 {
			continue
		}
		wg.Add(1)
		workflow.Go(ctx, func(ctx workflow.Context) {
			defer wg.Done()
			lctx := summarized(composeCtx(ctx, s.cfg), "verify citations, batch %d of %d", i+1, len(batches))
			errs[i] = s.exec(ctx, lctx, acts.VerifyCitations, in, &results[i])
		})
	}
	wg.Wait(ctx)
	if err := ctx.Err(); err != nil {
		return body, verified{}, err
	}
	unreached := 0
	via, moved := map[int]string{}, map[int]int{}
	add := newSourceAdder(sources)
	for i, r := range results {
		if errs[i] != nil {
			s.log.Error("citation batch not verified; its citations stand unchecked", "batch", i+1, "error", errs[i])
			unreached++
			continue
		}
		s.countVerify(r)
		for _, v := range r.Verdicts {
			status[v.I], via[v.I], moved[v.I] = v.Status, v.Via, v.Moved
			if v.Moved == 0 && v.MovedURL != "" {
				moved[v.I] = add.number(v.MovedURL, v.MovedTitle)
			}
		}
	}
	out, counts := contract.ApplyVerdictsMoving(text, sents, status, moved)
	counts.Contained, counts.ModelSupported = splitSupported(len(pairs), status, via)
	v := verified{counts: counts, cited: map[int]bool{}, footer: counts.Footer(), added: add.added}
	if unreached > 0 {
		v.footer += " The model could not be asked about some citations (see the worker log)."
	}
	if overBudget > 0 {
		v.footer += fmt.Sprintf(" %d of %d verification batches were left out: budget.max_tokens was reached.", overBudget, len(batches))
	}
	for _, n := range contract.MarkedNumbers(out) {
		v.cited[n] = true
	}
	s.log.Info("citations verified", "pairs", counts.Pairs, "supported", counts.Supported, "unsupported", counts.Unsupported,
		"unchecked", counts.Unchecked, "marked", counts.Marked, "moved", counts.Moved, "by_containment", counts.Contained, "by_model", counts.ModelSupported,
		"batches", len(batches))
	return []string{out}, v, nil
}

// splitSupported counts the supported pairs by route: proved by the text
// (containment or coverage), or judged by the model (a verdict recorded before
// containment existed has no route and was the model's).
func splitSupported(pairs int, status, via map[int]string) (contained, model int) {
	for i := 0; i < pairs; i++ { // by index: no map iteration in workflow code
		if status[i] != contract.Supported {
			continue
		}
		if via[i] == contract.ViaContainment || via[i] == contract.ViaCoverage {
			contained++
		} else {
			model++
		}
	}
	return contained, model
}

func (s *session) countVerify(r contract.VerifyResult) {
	s.st.Stats.LLMCalls += r.Calls
	s.st.Stats.RepairCalls += r.RepairCalls
	s.st.Tokens += r.Tokens
	s.st.Stats.PromptTokens += r.PromptTokens
	s.st.Stats.CompletionToken += r.CompletionTokens
	s.st.Stats.LLMLatencyMS += r.LatencyMS
}

// sourceAdder numbers the sources a re-cited sentence moves to that the
// report does not list yet, after its highest number, in the order the
// verdicts name them (batch order, then item order: deterministic).
type sourceAdder struct {
	next  int
	byURL map[string]int
	added []contract.Source
}

func newSourceAdder(sources []contract.Source) *sourceAdder {
	a := &sourceAdder{next: 1, byURL: map[string]int{}}
	for _, src := range sources {
		a.next = max(a.next, src.N+1)
		if src.URL != "" {
			a.byURL[src.URL] = src.N
		}
	}
	return a
}

func (a *sourceAdder) number(url, title string) int {
	if n, ok := a.byURL[url]; ok {
		return n
	}
	n := a.next
	a.next++
	a.byURL[url] = n
	a.added = append(a.added, contract.Source{N: n, URL: url, Title: title})
	return n
}

// verifySources are the report's numbered sources, for re-citing a
// sentence its own source does not hold (VerifyVerdict.Moved).
func verifySources(sources []contract.Source) []contract.VerifySource {
	out := make([]contract.VerifySource, 0, len(sources))
	for _, src := range sources {
		if src.URL != "" {
			out = append(out, contract.VerifySource{N: src.N, URL: src.URL})
		}
	}
	return out
}
