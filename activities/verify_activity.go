package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"sort"
	"strings"

	"go.temporal.io/sdk/activity"

	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/contract"
	"github.com/lethe-research/lethe/llm"
)

// verifySystem asks for the span first and the judgement after it: a
// small model that must copy the excerpt's words before it answers
// compares the sentence with what it copied (bench/verify).
const verifySystem = `You check the citations of a research report. Each item gives one sentence of the report and an excerpt of the source it cites.
For each item, first copy as "quote" the span of the excerpt, word for word, that states the sentence's fact ("" if the excerpt does not state it).
Then compare the sentence with your quote: "supported" is true when the quote states the same fact, or a fact that directly implies it, with the same names and numbers. It is false when the sentence says more than the quote, or something else, or changes a name, a number or who does what.
Answer with JSON only: {"verdicts":[{"i":<item number>,"quote":"...","supported":true|false}]} with one verdict per item.`

// verifyMinQuote is the shortest quote accepted as proof, in characters
// (normalised): a shorter span ("the cell") occurs in almost any source.
const verifyMinQuote = 12

// VerifyCitations judges one batch of cited pairs. It loads the evidence
// text of each cited source; a sentence that source contains (or whose
// quoted span it contains) is supported by containment, without a model
// call. The model judges only the rest, the sentences it wrote itself:
// it sees the passages of the source nearest the sentence, and a
// "supported" counts only when the quote it gives occurs in that source's
// stored evidence. An answer that cannot be read gets one repair call; a
// batch still unread is Unchecked. The verdicts are stored, so a retry
// after a crash does not ask again; with the second look (in.Recite) the
// first look's verdicts are stored before it, so a crash or an outage in
// the second look repeats only the second look.
func (a *Activities) VerifyCitations(ctx context.Context, in VerifyInput) (VerifyResult, error) {
	key := verifyKey(in)
	var res VerifyResult
	if ok, err := getBlob(ctx, a.Store, in.SessionID, key, &res); err != nil || ok {
		return res, err
	}
	sources, titles, err := a.sourceTexts(ctx, in.SessionID)
	if err != nil {
		return VerifyResult{}, err
	}
	looked, err := a.firstLook(ctx, in, key+"/first", sources, &res)
	if err != nil {
		return VerifyResult{}, err
	}
	recited := 0
	if in.Recite {
		if recited, err = a.reciteByModel(ctx, in, res.Verdicts, sources, titles, &res); err != nil {
			return VerifyResult{}, err
		}
	}
	logger(ctx, in.SessionID).Info("citation batch verified", "batch", in.Batch,
		"by_containment", looked.contained, "by_model", looked.judged, "moved", looked.moved, "first_look_stored", looked.stored, "recited_by_model", recited)
	return res, putBlob(ctx, a.Store, in.SessionID, key, res)
}

// looked counts what the first look did, for the log; stored is set when
// it was read back from an earlier attempt.
type looked struct {
	contained, judged, moved int
	stored                   bool
}

// firstLook sets res to the first look's verdicts: containment, then the
// model on the rest, then the moves the text proves. With the second
// look to come they are stored under key, and a retry reads them back
// rather than asking the model again (its calls and tokens come with
// them, counted once).
func (a *Activities) firstLook(ctx context.Context, in VerifyInput, key string, sources map[string][]string, res *VerifyResult) (looked, error) {
	if in.Recite {
		if ok, err := getBlob(ctx, a.Store, in.SessionID, key, res); err != nil || ok {
			return looked{stored: ok}, err
		}
	}
	contained, rest := SplitByContainment(in.Items, sources)
	var judged []VerifyVerdict
	if len(rest) > 0 {
		var err error
		if judged, err = a.judgeByModel(ctx, in, rest, sources, res); err != nil {
			return looked{}, err
		}
	}
	res.Verdicts = mergeVerdicts(in.Items, contained, judged)
	l := looked{contained: len(contained), judged: len(rest), moved: MoveUnsupported(in, res.Verdicts, sources)}
	if !in.Recite {
		return l, nil
	}
	return l, putBlob(ctx, a.Store, in.SessionID, key, *res)
}

// judgeByModel asks the model about the items (one repair call for an
// unreadable answer) and returns their verdicts, marked ViaModel.
func (a *Activities) judgeByModel(ctx context.Context, in VerifyInput, items []VerifyItem, sources map[string][]string, res *VerifyResult) ([]VerifyVerdict, error) {
	chars := orDefault(in.SourceChars, config.Defaults().Assembly.VerifySourceChars)
	user := verifyPrompt(items, sources, chars)
	req := llm.ChatRequest{System: verifySystem, User: user, MaxTokens: orDefault(in.MaxTokens, config.Defaults().LLM.ComposeTokens), NoThink: true}
	if in.Schema {
		req.Schema, req.SchemaName, req.SchemaStrict = verdictSchema, "citation_verdicts", !in.SchemaLoose
	}
	text, err := a.verifyCall(ctx, in, req, res)
	if err != nil {
		return nil, err
	}
	verdicts, perr := ParseVerdicts(text, items, sources)
	if perr != nil {
		res.RepairCalls++
		req.User = fmt.Sprintf("%s\n\nYour previous answer:\n%s\n\nIt could not be used: %v. Answer again with JSON only, one verdict per item.", user, truncate(text, 2000), perr)
		if text, err = a.verifyCall(ctx, in, req, res); err != nil {
			return nil, err
		}
		if verdicts, perr = ParseVerdicts(text, items, sources); perr != nil {
			logger(ctx, in.SessionID).Warn("citation verdicts unreadable after a repair; batch unchecked", "batch", in.Batch, "error", perr)
		}
	}
	for k := range verdicts {
		if verdicts[k].Status != contract.Unchecked {
			verdicts[k].Via = contract.ViaModel
		}
	}
	return verdicts, nil
}

// mergeVerdicts is one verdict per item, in item order, from the two
// routes; an item neither gave a verdict for is Unchecked.
func mergeVerdicts(items []VerifyItem, routes ...[]VerifyVerdict) []VerifyVerdict {
	byI := map[int]VerifyVerdict{}
	for _, vs := range routes {
		for _, v := range vs {
			byI[v.I] = v
		}
	}
	out := make([]VerifyVerdict, len(items))
	for k, it := range items {
		v, ok := byI[it.I]
		if !ok {
			v = VerifyVerdict{I: it.I, Status: contract.Unchecked}
		}
		out[k] = v
	}
	return out
}

// verifyCall is one no-think call; an outage or a shutdown is returned as
// it is (the Guard classifies it, the workflow waits it out), a refusal
// as non-retryable.
func (a *Activities) verifyCall(ctx context.Context, in VerifyInput, req llm.ChatRequest, res *VerifyResult) (string, error) {
	r, err := a.Chat.Complete(ctx, req, func(tokens int) { activity.RecordHeartbeat(ctx, tokens) })
	if err != nil {
		err = fmt.Errorf("verify citations batch %d: %w", in.Batch, err)
		if llm.IsRetryable(err) || ctx.Err() != nil {
			return "", err
		}
		return "", nonRetryable(ErrLLM, err)
	}
	res.Calls++
	res.Tokens += r.Usage.TotalTokens
	res.PromptTokens += r.Usage.PromptTokens
	res.CompletionTokens += r.Usage.CompletionTokens
	res.LatencyMS += r.Latency.Milliseconds()
	m := activity.GetMetricsHandler(ctx)
	m.Timer("lethe_llm_latency").Record(r.Latency)
	m.Counter("lethe_llm_calls_total").Inc(1)
	logger(ctx, in.SessionID).Info("citations judged", "batch", in.Batch,
		"prompt_tokens", r.Usage.PromptTokens, "completion_tokens", r.Usage.CompletionTokens, "latency_ms", r.Latency.Milliseconds())
	return r.Content, nil
}

// sourceTexts is the stored evidence text of each source URL of the
// session, the model's own notes left out (fromSource), and each URL's
// title (the first its evidence gives).
func (a *Activities) sourceTexts(ctx context.Context, session string) (map[string][]string, map[string]string, error) {
	ev, err := a.Store.Evidence(ctx, session, "")
	if err != nil {
		return nil, nil, fmt.Errorf("verify citations: read evidence: %w", err)
	}
	out, titles := map[string][]string{}, map[string]string{}
	for _, e := range ev {
		if fromSource(e) && strings.TrimSpace(e.Content) != "" {
			out[e.SourceURL] = append(out[e.SourceURL], e.Content)
			if titles[e.SourceURL] == "" {
				titles[e.SourceURL] = e.Title
			}
		}
	}
	return out, titles, nil
}

func verifyKey(in VerifyInput) string {
	h := fnv.New64a()
	b, _ := json.Marshal(in.Items)
	h.Write(b)
	return fmt.Sprintf("assembly/verify/%d-%x", in.Batch, h.Sum64())
}

var verdictSchema = []byte(`{"type":"object","properties":{"verdicts":{"type":"array","items":{"type":"object",` +
	`"properties":{"i":{"type":"integer"},"quote":{"type":"string"},"supported":{"type":"boolean"}},` +
	`"required":["i","quote","supported"],"additionalProperties":false}}},"required":["verdicts"],"additionalProperties":false}`)

// verifyPrompt lists the items: each sentence with the passages of its
// source nearest to it, bounded to chars.
func verifyPrompt(items []VerifyItem, sources map[string][]string, chars int) string {
	var b strings.Builder
	b.WriteString("Check these citations.\n")
	for _, it := range items {
		ex := Excerpt(it.Sentence, sources[it.URL], chars)
		if ex == "" {
			ex = "(no stored text for this source)"
		}
		fmt.Fprintf(&b, "\nItem %d\nSentence: %s\nSource [%d] excerpt: %s\n", it.I, it.Sentence, it.N, ex)
	}
	b.WriteString("\nFor each item: does the excerpt support the sentence? Answer with the JSON verdicts.\n")
	return b.String()
}

// Excerpt is the passages of a source nearest to the sentence (most words
// in common, ties to the earlier passage), in source order, joined by
// " … " and bounded to chars. Passages are the source's lines and
// sentences, cut at chars.
func Excerpt(sentence string, texts []string, chars int) string {
	var passages []string
	for _, t := range texts {
		for _, line := range strings.Split(t, "\n") {
			for _, p := range splitPassage(strings.Join(strings.Fields(line), " "), chars) {
				if p != "" {
					passages = append(passages, p)
				}
			}
		}
	}
	want := wordSet(sentence)
	score := make([]int, len(passages))
	order := make([]int, len(passages))
	for i, p := range passages {
		order[i] = i
		for w := range wordSet(p) {
			if want[w] {
				score[i]++
			}
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return score[order[a]] > score[order[b]] })
	var pick []int
	used := 0
	for _, i := range order {
		if used > 0 && used+len(passages[i])+3 > chars {
			continue
		}
		pick = append(pick, i)
		used += len(passages[i]) + 3
	}
	sort.Ints(pick)
	parts := make([]string, len(pick))
	for k, i := range pick {
		parts[k] = passages[i]
	}
	return truncate(strings.Join(parts, " … "), chars)
}

// splitPassage cuts a line into sentences (after ".", "!" or "?" and a
// space), and a sentence longer than chars runes into pieces of at most
// chars cut at a space, with "…" on both sides of each cut: an excerpt
// quoted in a report never ends mid-word ("by the VNC o [1]"), and the
// reader sees where words were left out. containment (ContainedIn) reads
// the "…" as a gap, so a cut piece still proves itself.
func splitPassage(line string, chars int) []string {
	var out []string
	start := 0
	for i := 0; i+1 < len(line); i++ {
		if strings.IndexByte(".!?", line[i]) >= 0 && line[i+1] == ' ' {
			out = append(out, cutPiece(line[start:i+1], chars)...)
			start = i + 1
		}
	}
	return append(out, cutPiece(line[start:], chars)...)
}

// minCutRunes is the shortest piece splitPassage makes when it looks for
// a space to cut at; a run of letters longer than that is cut inside.
const minCutRunes = 8

// cutPiece bounds one sentence to chars runes per piece, cutting at the
// last space that leaves a piece of at least half of chars.
func cutPiece(s string, chars int) []string {
	r := []rune(strings.TrimSpace(s))
	if chars < minCutRunes {
		return []string{string(r)}
	}
	var out []string
	for len(r) > chars {
		limit := chars - 1 // room for the "…"
		cut := limit
		for j := limit; j >= chars/2; j-- {
			if r[j] == ' ' {
				cut = j
				break
			}
		}
		out = append(out, strings.TrimRight(string(r[:cut]), " ")+"…")
		r = append([]rune("…"), []rune(strings.TrimLeft(string(r[cut:]), " "))...)
	}
	return append(out, string(r))
}

func wordSet(s string) map[string]bool {
	out := map[string]bool{}
	for w := range wordCounts(s) {
		out[w] = true
	}
	return out
}

type rawVerdict struct {
	I         int    `json:"i"`
	Supported bool   `json:"supported"`
	Quote     string `json:"quote"`
}

// ParseVerdicts reads the model's answer: {"verdicts":[…]} or a bare
// array, possibly in a code fence or after some text. A verdict for an
// unknown item is ignored; an item without one is Unchecked. A
// "supported" is Unsupported when its quote (at least verifyMinQuote
// characters) does not occur in the cited source's stored evidence, or
// does not show each number of the sentence near the words the sentence
// puts it near (numbersLocal: the 1.5B model quoted a table row to
// support its neighbour's port), or when no text of the source names
// what the sentence names (NamesIn: paths, commands, options). An answer with no verdict for any item
// is an error (the caller repairs once).
func ParseVerdicts(content string, items []VerifyItem, sources map[string][]string) ([]VerifyVerdict, error) {
	raw, err := decodeVerdicts(content)
	byI := map[int]rawVerdict{}
	for _, r := range raw {
		if _, dup := byI[r.I]; !dup {
			byI[r.I] = r
		}
	}
	out := make([]VerifyVerdict, len(items))
	found := 0
	for k, it := range items {
		out[k] = VerifyVerdict{I: it.I, Status: contract.Unchecked}
		r, ok := byI[it.I]
		if !ok {
			continue
		}
		found++
		out[k].Status = contract.Unsupported
		if r.Supported && QuoteInSource(r.Quote, sources[it.URL]) && numbersLocal(localTerms(it.Sentence), localTerms(r.Quote)) &&
			NamesIn(it.Sentence, sources[it.URL]) {
			out[k].Status, out[k].Quote = contract.Supported, truncate(strings.TrimSpace(r.Quote), 300)
		}
	}
	switch {
	case err != nil:
		return out, err
	case found == 0 && len(items) > 0:
		return out, errors.New("no verdict names an item of this batch")
	}
	return out, nil
}

func decodeVerdicts(content string) ([]rawVerdict, error) {
	s := strings.TrimSpace(content)
	i := strings.IndexAny(s, "{[")
	if i < 0 {
		return nil, errors.New("no JSON in the answer")
	}
	dec := json.NewDecoder(strings.NewReader(s[i:]))
	if s[i] == '[' {
		var arr []rawVerdict
		if err := dec.Decode(&arr); err != nil {
			return nil, fmt.Errorf("invalid JSON: %v", err)
		}
		return arr, nil
	}
	var obj struct {
		Verdicts []rawVerdict `json:"verdicts"`
	}
	if err := dec.Decode(&obj); err != nil {
		return nil, fmt.Errorf("invalid JSON: %v", err)
	}
	return obj.Verdicts, nil
}

// QuoteInSource says whether quote occurs in one of the source's texts,
// compared case-folded with spaces, quotes and dashes normalised and a
// leading or trailing ellipsis dropped.
func QuoteInSource(quote string, texts []string) bool {
	q := normalizeQuote(quote)
	q = strings.Trim(q, " .…\"'")
	if len([]rune(q)) < verifyMinQuote {
		return false
	}
	for _, t := range texts {
		if strings.Contains(normalizeQuote(t), q) {
			return true
		}
	}
	return false
}

var quoteFold = strings.NewReplacer("“", `"`, "”", `"`, "‘", "'", "’", "'", "–", "-", "—", "-", "\u00a0", " ")

func normalizeQuote(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(quoteFold.Replace(s)), " "))
}
