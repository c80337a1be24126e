package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/config/load"
	"github.com/lethe-research/lethe/contract"
	"github.com/lethe-research/lethe/din"
	"github.com/lethe-research/lethe/eval/questions"
	"github.com/lethe-research/lethe/eval/score"
	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/llm"
	"github.com/lethe-research/lethe/research"
)

// The evaluation's activities (docs/eval.md): the two baselines, the
// scoring of one answer and the outputs. The baselines call the same chat
// client as a session's Reason and Compose (the model under test); the
// judge gets a client of its own, possibly on another server.

// chunk is one retrieved passage with the title it came from.
type chunk struct{ title, text string }

// retrieve searches the corpus for query, chunks the best documents and
// returns the k chunks that rank highest against query.
func (a *Activities) retrieve(ctx context.Context, query string, e config.Eval, k int) ([]chunk, error) {
	if a.Corpus == nil {
		return nil, nonRetryable(ErrConfig, errors.New("baseline: no corpus configured (research.corpus_dir)"))
	}
	hits, err := a.Corpus.Search(ctx, query, e.SearchDocs)
	if err != nil {
		return nil, fmt.Errorf("baseline search %q: %w", query, err)
	}
	var all []chunk
	var texts []string
	for _, h := range hits {
		doc, err := a.Corpus.Open(h.URL)
		if err != nil {
			activity.GetLogger(ctx).Warn("baseline: corpus document unreadable", "url", h.URL, "error", err)
			continue
		}
		for _, c := range research.Chunk(doc.Text, research.ChunkConfig{TargetChars: e.ChunkChars, MaxChars: e.ChunkChars}) {
			all = append(all, chunk{title: firstNonEmpty(doc.Title, h.Title, h.URL), text: c})
			texts = append(texts, c)
		}
	}
	var out []chunk
	for _, i := range score.Rank(query, texts, k) {
		out = append(out, all[i])
	}
	return out, nil
}

// answer is one no-think call of the model under test, counted in res.
func (a *Activities) answer(ctx context.Context, system, user string, maxTokens int, res *SystemAnswer) (string, error) {
	return a.complete(ctx, llm.ChatRequest{System: system, User: user, MaxTokens: maxTokens, NoThink: true}, res)
}

func (a *Activities) complete(ctx context.Context, req llm.ChatRequest, res *SystemAnswer) (string, error) {
	r, err := a.Chat.Complete(ctx, req, nil)
	if err != nil {
		if llm.IsRetryable(err) || ctx.Err() != nil {
			return "", fmt.Errorf("baseline call: %w", err)
		}
		return "", nonRetryable(ErrLLM, fmt.Errorf("baseline call: %w", err))
	}
	res.Calls++
	res.PromptTokens += r.Usage.PromptTokens
	res.CompletionTokens += r.Usage.CompletionTokens
	return r.Content, nil
}

func sourceTexts(cs []chunk) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.title + ": " + c.text
	}
	return out
}

// BaselineRAG is the single-shot baseline: the corpus's top-k chunks for
// the question, then one answer call with numbered sources. It has no side
// effects, so a retry is a fresh attempt and only one result is recorded.
func (a *Activities) BaselineRAG(ctx context.Context, in BaselineInput) (SystemAnswer, error) {
	start := time.Now()
	e := in.Eval
	cs, err := a.retrieve(ctx, in.Question, e, e.TopK)
	if err != nil {
		return SystemAnswer{}, err
	}
	res := SystemAnswer{Sources: sourceTexts(cs), Queries: []string{in.Question}}
	if res.Answer, err = a.answer(ctx, score.AnswerSystem, score.AnswerPrompt(in.Question, res.Sources), e.AnswerTokens, &res); err != nil {
		return SystemAnswer{}, err
	}
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// BaselineLoop is the fixed-depth baseline in the manner of GPT
// Researcher: one call plans eval.loop_queries sub-queries, each is
// searched in the corpus (eval.loop_k chunks each, duplicates dropped),
// one call answers from all of them. The plan is held to din.PlanSchema
// as the session's seed plan is (in.Schema), so that the two plan alike;
// a plan that does not parse falls back to the question itself as the
// only query.
func (a *Activities) BaselineLoop(ctx context.Context, in BaselineInput) (SystemAnswer, error) {
	start := time.Now()
	e := in.Eval
	res := SystemAnswer{}
	req := llm.ChatRequest{System: din.PlanSystem, User: din.PlanPrompt(in.Question, e.LoopQueries), MaxTokens: 256, NoThink: true}
	if in.Schema {
		withPlanSchema(&req, e.LoopQueries, in.SchemaLoose)
	}
	plan, err := a.complete(ctx, req, &res)
	if err != nil {
		return SystemAnswer{}, err
	}
	qs, perr := din.ParsePlan(plan, e.LoopQueries)
	if perr != nil || len(qs) == 0 {
		activity.GetLogger(ctx).Warn("loop baseline: plan unusable, searching the question", "qid", in.QID, "error", perr)
		qs = []string{in.Question}
	}
	res.Queries = qs
	seen := map[string]bool{}
	var cs []chunk
	for _, q := range qs {
		got, err := a.retrieve(ctx, q, e, e.LoopK)
		if err != nil {
			return SystemAnswer{}, err
		}
		for _, c := range got {
			if !seen[c.text] {
				seen[c.text] = true
				cs = append(cs, c)
			}
		}
	}
	res.Sources = sourceTexts(cs)
	if res.Answer, err = a.answer(ctx, score.AnswerSystem, score.AnswerPrompt(in.Question, res.Sources), e.AnswerTokens, &res); err != nil {
		return SystemAnswer{}, err
	}
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// judge is the chat client of the judge: the worker's judge endpoint (or
// its chat server) with the worker's key, never an endpoint from the input,
// which would receive the key; greedy decoding for reproducible grades.
func (a *Activities) judge(in ScoreInput) *llm.ChatClient {
	base := firstNonEmpty(a.Cfg.Eval.JudgeBaseURL, a.Cfg.LLM.BaseURL)
	key := firstNonEmpty(a.Cfg.Eval.JudgeAPIKey, a.Cfg.LLM.APIKey)
	setting := load.Setting("eval.judge_api_key") + ", or " + load.Setting("llm.api_key") + " when that is empty"
	return llm.NewChatClient(llm.ChatConfig{BaseURL: base, Model: in.JudgeModel, APIKey: key, KeySetting: setting,
		Timeout: a.Cfg.LLM.Timeout, Temperature: 0, Seed: 1}, a.HTTP)
}

// Score scores one system's answer to one question (docs/eval.md): gold
// containment, the judge's grade, citation precision (batched entailment
// of each cited sentence against its sources' text), citation recall and
// evidence recall. Outages come back as retryable errors; an answer the
// judge gives that does not parse is recorded, not retried.
func (a *Activities) Score(ctx context.Context, in ScoreInput) (EvalRecord, error) {
	if err := contract.CheckEvalID(in.EvalID); err != nil {
		return EvalRecord{}, nonRetryable(ErrInvalidInput, err)
	}
	q, ans := questions.Question(in.Question), in.Answer
	body := score.Body(ans.Answer)
	rec := EvalRecord{
		Index: in.Index, Question: q.ID, Kind: q.Kind, System: in.System, Answer: truncate(contract.SanitizeReport(body), in.Eval.RecordAnswerChars),
		Contains: q.Contains(body), Calls: ans.Calls, PromptTokens: ans.PromptTokens, CompletionTokens: ans.CompletionTokens, Seconds: ans.Seconds,
	}
	rec.UnverifiedOnly = rec.Contains && !q.Contains(score.Verified(body))
	texts, read, err := a.scoredSources(ctx, in)
	if err != nil {
		return EvalRecord{}, err
	}
	rec.EvidenceRecall = questions.Evidence(q, read)
	ss := score.Sentences(ans.Answer)
	rec.Factual, rec.Citing = score.Recall(ss)
	judge := a.judge(in)
	backed, err := a.citations(ctx, judge, in.Eval, ss, texts, &rec)
	if err != nil {
		return EvalRecord{}, err
	}
	rec.Backed = q.Contains(strings.Join(backed, "\n"))
	j, calls, err := score.Judge(ctx, askFunc(judge), q.Question, q.Answer, body, in.Eval.JudgeAnswerChars)
	rec.JudgeCalls += calls
	switch {
	case errors.Is(err, score.ErrJudgeAnswer):
		rec.JudgeError = truncate(err.Error(), 200)
	case err != nil:
		return EvalRecord{}, judgeErr(ctx, err)
	default:
		rec.Judge, rec.JudgeReason = j.Score, truncate(j.Reason, 300)
	}
	rec.JudgeQuote = truncate(j.Quote, 500)
	a.keepRecord(ctx, a.Cfg.Eval.OutDir, in.EvalID, rec)
	return rec, nil
}

func recordPath(outDir, evalID string, index int, system string) string {
	return filepath.Join(outDir, unsafeName.ReplaceAllString(evalID, "_"), "records", fmt.Sprintf("%04d-%s.json", index, unsafeName.ReplaceAllString(system, "_")))
}

// keepRecord writes the whole record (answer and judge's reason included)
// to the output directory: the workflow keeps slim records in history and
// WriteEvalOutputs puts the texts back from here. A failed write loses
// only those texts, so it is logged, not fatal.
func (a *Activities) keepRecord(ctx context.Context, outDir, evalID string, rec EvalRecord) {
	p := recordPath(outDir, evalID, rec.Index, rec.System)
	b, err := json.Marshal(rec)
	if err == nil {
		if err = os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
			err = os.WriteFile(p, b, 0o644)
		}
	}
	if err != nil {
		activity.GetLogger(ctx).Warn("eval: record not kept; its answer will be missing from the outputs", "path", p, "error", err)
	}
}

// fullRecord puts back the texts keepRecord saved for r, if any.
func fullRecord(outDir, evalID string, r EvalRecord) EvalRecord {
	b, err := os.ReadFile(recordPath(outDir, evalID, r.Index, r.System))
	if err != nil {
		return r
	}
	var full EvalRecord
	if json.Unmarshal(b, &full) != nil || full.Question != r.Question {
		return r
	}
	r.Answer, r.JudgeReason = full.Answer, full.JudgeReason
	return r
}

// askFunc is the judge client as score.Judge calls it: greedy, no
// thinking, the answer's text.
func askFunc(c *llm.ChatClient) score.Ask {
	return func(ctx context.Context, system, user string, maxTokens int) (string, error) {
		r, err := c.Complete(ctx, llm.ChatRequest{System: system, User: user, MaxTokens: maxTokens, NoThink: true}, nil)
		return r.Content, err
	}
}

func judgeErr(ctx context.Context, err error) error {
	if llm.IsRetryable(err) || ctx.Err() != nil {
		return fmt.Errorf("judge: %w", err)
	}
	return nonRetryable(ErrLLM, fmt.Errorf("judge: %w", err))
}

// scoredSources returns the texts of each source number and every text
// the system read. A session's are its evidence in the graph store
// (bounded by eval.evidence_max_chars), one text per evidence row of the
// source's URL, without the notes the model wrote (fromSource: it did not
// read them, and they are no source's text); a baseline's are the chunks
// it was given.
func (a *Activities) scoredSources(ctx context.Context, in ScoreInput) (map[int][]string, []string, error) {
	texts := map[int][]string{}
	if in.SessionID == "" {
		for i, s := range in.Answer.Sources {
			texts[i+1] = []string{s}
		}
		return texts, in.Answer.Sources, nil
	}
	ev, err := a.Store.Evidence(ctx, in.SessionID, "")
	if err != nil {
		return nil, nil, fmt.Errorf("score: evidence of %s: %w", in.SessionID, err)
	}
	byURL := map[string][]string{}
	var read []string
	left := in.Eval.EvidenceMaxChars
	for _, e := range ev {
		if left <= 0 {
			break
		}
		if e.Kind == graph.KindLLM {
			continue
		}
		c := truncate(e.Content, left)
		left -= len(c)
		read = append(read, c)
		byURL[e.SourceURL] = append(byURL[e.SourceURL], c)
	}
	for _, s := range in.Sources {
		if b := byURL[s.URL]; b != nil {
			texts[s.N] = b
		}
	}
	return texts, read, nil
}

// citations scores every cited sentence against the texts of its
// sources (docs/eval.md, Metrics). A sentence citing only numbers with no
// text is unsupported without a call; one contained in a text of a source
// it cites (the session's own containment rule, ContainedIn) is supported
// without a call; the rest go to the judge in batches of eval.judge_batch.
// It returns the supported sentences.
func (a *Activities) citations(ctx context.Context, judge *llm.ChatClient, e config.Eval, ss []score.Sentence, texts map[int][]string, rec *EvalRecord) ([]string, error) {
	var backed []string
	norm := map[int][]string{}
	var claims []score.Claim
	for _, s := range ss {
		if len(s.Cites) == 0 {
			continue
		}
		rec.Cited++
		var src, normSrc []string
		for _, n := range s.Cites {
			if _, ok := norm[n]; !ok {
				for _, t := range texts[n] {
					norm[n] = append(norm[n], NormalizeContain(t))
				}
			}
			src, normSrc = append(src, texts[n]...), append(normSrc, norm[n]...)
		}
		if len(src) == 0 {
			rec.NoteUnsupported(s.Text)
			continue
		}
		if _, ok := ContainedIn(s.Text, normSrc); ok {
			rec.Supported++
			rec.Contained++
			backed = append(backed, s.Text)
			continue
		}
		claims = append(claims, score.Claim{Sentence: s.Text, Evidence: score.Window(strings.Join(src, "\n\n"), s.Text, e.JudgeEvidenceChars)})
	}
	batch := max(1, e.JudgeBatch)
	for i := 0; i < len(claims); i += batch {
		if err := judgeClaims(ctx, judge, claims[i:min(len(claims), i+batch)], rec, &backed); err != nil {
			return nil, err
		}
	}
	return backed, nil
}

// judgeClaims asks the judge about a batch of claims. A batch whose
// answer does not parse (cut at its token budget, malformed) is split in
// halves and asked again, down to single claims, and a claim the parsed
// answer gives no verdict for is asked again alone: one bad answer no
// longer makes a whole batch unsupported. A single claim still without a
// verdict (after askEntail's second try when its answer was cut) is
// counted unjudged (and unsupported).
func judgeClaims(ctx context.Context, judge *llm.ChatClient, claims []score.Claim, rec *EvalRecord, backed *[]string) error {
	supported, judged, perr, err := askEntail(ctx, judge, claims, rec)
	if err != nil {
		return err
	}
	switch {
	case perr != nil && len(claims) == 1:
		rec.Unjudged++
		rec.CitationError = truncate(perr.Error(), 200)
		rec.NoteUnsupported(claims[0].Sentence)
		return nil
	case perr != nil:
		h := len(claims) / 2
		if err := judgeClaims(ctx, judge, claims[:h], rec, backed); err != nil {
			return err
		}
		return judgeClaims(ctx, judge, claims[h:], rec, backed)
	}
	for i, c := range claims {
		switch {
		case supported[i]:
			rec.Supported++
			*backed = append(*backed, c.Sentence)
		case judged[i]:
			rec.NoteUnsupported(c.Sentence)
		case len(claims) == 1:
			rec.Unjudged++
			rec.CitationError = "the judge gave no verdict on the claim"
			rec.NoteUnsupported(c.Sentence)
		default:
			if err := judgeClaims(ctx, judge, []score.Claim{c}, rec, backed); err != nil {
				return err
			}
		}
	}
	return nil
}

// askEntail is one call of the citation check. A single claim whose
// answer was cut at its budget before its JSON closed is asked once more,
// with score.EntailRetryTokens and score.EntailShorter after the prompt:
// splitting cannot help a claim alone, and the 1.5B judge sometimes
// quotes a whole passage where it was asked for 12 words, which leaves
// the claim unjudged ("unbalanced JSON object").
func askEntail(ctx context.Context, judge *llm.ChatClient, claims []score.Claim, rec *EvalRecord) (supported, judged []bool, perr, err error) {
	req := llm.ChatRequest{System: score.EntailSystem, User: score.EntailPrompt(claims), MaxTokens: score.EntailTokens(len(claims)), NoThink: true}
	for again := false; ; again = true {
		r, err := judge.Complete(ctx, req, nil)
		if err != nil {
			return nil, nil, nil, judgeErr(ctx, err)
		}
		rec.JudgeCalls++
		supported, judged, perr = score.ParseVerdicts(r.Content, len(claims))
		if perr == nil || again || len(claims) > 1 || r.FinishReason != "length" {
			return supported, judged, perr, nil
		}
		req.User += "\n\n" + score.EntailShorter
		req.MaxTokens = score.EntailRetryTokens
	}
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// WriteEvalOutputs writes the table (results.md), one JSON record per
// question and system (results.jsonl) and the accuracy-against-tokens plot
// (accuracy-tokens.svg) under out_dir/<eval id>/. Rewriting is harmless,
// so a retry is too.
func (a *Activities) WriteEvalOutputs(ctx context.Context, in EvalOutputsInput) (EvalOutputsResult, error) {
	if err := contract.CheckEvalID(in.EvalID); err != nil {
		return EvalOutputsResult{}, nonRetryable(ErrInvalidInput, err)
	}
	in.OutDir = a.Cfg.Eval.OutDir // the worker's directory, never the input's
	recs := make([]EvalRecord, len(in.Records))
	for i, r := range in.Records {
		recs[i] = fullRecord(in.OutDir, in.EvalID, r)
	}
	score.SortRecords(recs, in.Systems)
	sums := score.Summarize(recs, in.Systems)
	dir := filepath.Join(in.OutDir, unsafeName.ReplaceAllString(in.EvalID, "_"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return EvalOutputsResult{}, outputsError(fmt.Errorf("eval outputs: %w", err))
	}
	lines, err := score.JSONL(recs)
	if err != nil {
		return EvalOutputsResult{}, nonRetryable(ErrInvalidInput, err)
	}
	head := fmt.Sprintf("# Evaluation %s\n\n%d questions; systems: %s.\n\n", in.EvalID, countQuestions(recs), strings.Join(in.Systems, ", "))
	files := map[string]string{
		"results.md":          head + score.Table(sums, recs),
		"results.jsonl":       lines,
		"accuracy-tokens.svg": score.Plot(sums),
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			return EvalOutputsResult{}, outputsError(fmt.Errorf("eval outputs: write %s: %w", name, err))
		}
	}
	return EvalOutputsResult{Dir: dir, Summaries: sums, Table: score.Table(sums, nil)}, nil
}

// outputsError classifies a failure to write the outputs: a path that is
// not a directory, a permission or a read-only file system stays so until
// someone fixes it, so retrying it is pointless (ErrConfig: the workflow
// then waits for its retry-outputs signal); anything else (a full disk, an
// I/O error) may pass and is retried.
func outputsError(err error) error {
	if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.EROFS) {
		return nonRetryable(ErrConfig, err)
	}
	return err
}

func countQuestions(recs []EvalRecord) int {
	seen := map[string]bool{}
	for _, r := range recs {
		seen[r.Question] = true
	}
	return len(seen)
}
