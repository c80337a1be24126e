package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"go.temporal.io/sdk/activity"

	"github.com/lethe-research/lethe/din"
	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/llm"
)

// NLI labels as the model writes them (graph normalises them to its
// entailment/contradiction/neutral).
const (
	nliSupports    = "SUPPORTS"
	nliContradicts = "CONTRADICTS"
	nliNeutral     = "NEUTRAL"
)

// nliSystem is the classifier's instruction. The question is symmetric
// (do the two passages agree?), because a SIMILAR_TO edge has one label and
// the refinement counts it for both ends.
const nliSystem = `You compare pairs of evidence passages found while researching a question.
For each numbered pair, decide how passage A and passage B relate:
- SUPPORTS: they state the same fact or claim, or one implies the other.
- CONTRADICTS: they make claims that cannot both be true.
- NEUTRAL: anything else (different facts, related topic only, or unclear).
Judge only what the passages say, not what you know.
Answer with one JSON object and nothing else:
{"labels":[{"pair":1,"label":"SUPPORTS"},{"pair":2,"label":"NEUTRAL"}]}
with exactly one entry per pair.`

// nliSchema constrains the answer when llm.json_schema is on. Every field
// is required, so the strict and the loose form are the same.
var nliSchema = []byte(`{"type":"object","properties":{"labels":{"type":"array","items":{"type":"object","properties":{"pair":{"type":"integer"},"label":{"type":"string","enum":["SUPPORTS","CONTRADICTS","NEUTRAL"]}},"required":["pair","label"],"additionalProperties":false}}},"required":["labels"],"additionalProperties":false}`)

// nliPrompt numbers the pairs from 1, each passage cut at chars runes.
func nliPrompt(pairs []graph.TextPair, chars int) string {
	var b strings.Builder
	for i, p := range pairs {
		fmt.Fprintf(&b, "Pair %d\nA: %s\nB: %s\n\n", i+1, oneLine(truncate(p.Premise, chars)), oneLine(truncate(p.Hypothesis, chars)))
	}
	b.WriteString("Label every pair: SUPPORTS, CONTRADICTS or NEUTRAL.")
	return b.String()
}

// oneLine folds a passage onto one line, so that a passage cannot forge a
// "Pair n" header of its own.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// errMalformedNLI is an answer that carries no usable label.
var errMalformedNLI = errors.New("NLI answer has no usable labels")

// parseNLILabels reads the model's answer for n pairs: the labels of pairs
// 1..n in order, as graph labels. A well-formed answer that leaves a pair
// out (or labels it with an unknown word) makes that pair neutral: the
// model saw it and stated no relation, and leaving it unlabelled would ask
// the same pair again at every sync, ahead of every weaker one. An answer
// with no usable label at all is errMalformedNLI: nothing is labelled and
// the pairs are asked again later.
func parseNLILabels(content string, n int) ([]string, error) {
	obj, err := din.Extract(content)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errMalformedNLI, err)
	}
	var ans struct {
		Labels []json.RawMessage `json:"labels"`
	}
	if err := json.Unmarshal([]byte(obj), &ans); err != nil {
		return nil, fmt.Errorf("%w: %v", errMalformedNLI, err)
	}
	out := make([]string, n)
	found := 0
	for i, raw := range ans.Labels {
		pair, label := nliEntry(raw, i)
		if pair < 1 || pair > n || out[pair-1] != "" {
			continue // out of range, or a repeat: the first answer holds
		}
		if l := graphLabel(label); l != "" {
			out[pair-1] = l
			found++
		}
	}
	if found == 0 {
		return nil, fmt.Errorf("%w: %d entries for %d pairs", errMalformedNLI, len(ans.Labels), n)
	}
	for i := range out {
		if out[i] == "" {
			out[i] = graph.LabelNeutral
		}
	}
	return out, nil
}

// nliEntry reads one entry: {"pair":k,"label":"…"}, or a bare label string
// standing for pair i+1 (small models often drop the object).
func nliEntry(raw json.RawMessage, i int) (int, string) {
	var e struct {
		Pair  int    `json:"pair"`
		Label string `json:"label"`
	}
	if err := json.Unmarshal(raw, &e); err == nil {
		return e.Pair, e.Label
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return i + 1, s
	}
	return 0, ""
}

func graphLabel(l string) string {
	switch strings.ToUpper(strings.TrimSpace(l)) {
	case nliSupports:
		return graph.LabelEntailment
	case nliContradicts:
		return graph.LabelContradiction
	case nliNeutral:
		return graph.LabelNeutral
	}
	return ""
}

// llmNLI is the chat model as a graph.NLIClassifier. It remembers a model
// outage, which graph.SyncSimilar treats like any classifier failure (the
// edges are kept unlabelled), so that the activity can return it: the
// Guard turns it into ModelUnavailable and the workflow waits it out.
type llmNLI struct {
	chat *llm.ChatClient
	p    NLIParams
	mu   sync.Mutex
	// outage is the first model outage seen; calls, prompt and completion
	// count the answered calls and their tokens.
	outage                   error
	calls, prompt, completed int
}

// Classify implements graph.NLIClassifier: one no-think call per batch
// (a label is a short judgement, and a small local model thinking about
// each batch would cost more than the reasoning call of the iteration).
func (c *llmNLI) Classify(ctx context.Context, pairs []graph.TextPair) ([]string, error) {
	req := llm.ChatRequest{System: nliSystem, User: nliPrompt(pairs, c.p.Chars), NoThink: true, MaxTokens: 64 + 24*len(pairs)}
	if c.p.Schema {
		req.Schema, req.SchemaName, req.SchemaStrict = nliSchema, "nli_labels", !c.p.SchemaLoose
	}
	resp, err := c.chat.Complete(ctx, req, func(tokens int) {
		if activity.IsActivity(ctx) {
			activity.RecordHeartbeat(ctx, tokens)
		}
	})
	if err != nil {
		if _, ok := llm.AsOutage(ctx, err); ok {
			c.mu.Lock()
			if c.outage == nil {
				c.outage = err
			}
			c.mu.Unlock()
		}
		return nil, fmt.Errorf("nli: %w", err)
	}
	c.mu.Lock()
	c.calls++
	c.prompt += resp.Usage.PromptTokens
	c.completed += resp.Usage.CompletionTokens
	c.mu.Unlock()
	return parseNLILabels(resp.Content, len(pairs))
}

// classifier is the NLI classifier of a sync with parameters p: nil (no
// labelling) when the session runs without NLI.
func (a *Activities) classifier(p SimilarParams) *llmNLI {
	if p.NLI == nil || a.Chat == nil {
		return nil
	}
	return &llmNLI{chat: a.Chat, p: *p.NLI}
}
