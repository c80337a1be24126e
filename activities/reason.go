package activities

import (
	"context"
	"fmt"

	"go.temporal.io/sdk/activity"

	"github.com/lethe-research/lethe/din"
	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/llm"
	"github.com/lethe-research/lethe/research"
)

// Reason is one single-turn [system, user] call. It heartbeats while tokens
// stream; the thinking text is logged, never returned (it would grow history
// and must not be fed back).
func (a *Activities) Reason(ctx context.Context, in ReasonInput) (ReasonResult, error) {
	lg := logger(ctx, in.SessionID)
	req := llm.ChatRequest{System: in.System, User: in.User, MaxTokens: in.MaxTokens, ThinkingBudget: in.ThinkingBudget, NoThink: in.NoThink}
	switch {
	case in.Schema && in.PlanQueries > 0:
		withPlanSchema(&req, in.PlanQueries, in.SchemaLoose)
	case in.Schema:
		req.Schema, req.SchemaName, req.SchemaStrict = din.Schema(), "din_ops", true
		if in.SchemaLoose {
			req.Schema, req.SchemaStrict = din.LooseSchema(), false
		}
	}
	resp, err := a.Chat.Complete(ctx, req, func(tokens int) { activity.RecordHeartbeat(ctx, tokens) })
	if err != nil {
		if llm.IsRetryable(err) || ctx.Err() != nil { // an outage (Guard classifies it) or a worker shutting down
			return ReasonResult{}, fmt.Errorf("reason iteration %d: %w", in.Iteration, err)
		}
		return ReasonResult{}, nonRetryable(ErrLLM, fmt.Errorf("reason iteration %d: %w", in.Iteration, err))
	}
	m := activity.GetMetricsHandler(ctx)
	m.Timer("lethe_llm_latency").Record(resp.Latency)
	m.Counter("lethe_llm_calls_total").Inc(1)
	lg.Info("LLM answered", "iteration", in.Iteration, "attempt", in.Attempt, "model", resp.Model,
		"prompt_tokens", resp.Usage.PromptTokens, "completion_tokens", resp.Usage.CompletionTokens,
		"thinking_chars", len(resp.Thinking), "latency_ms", resp.Latency.Milliseconds())
	return ReasonResult{
		Content: resp.Content, ThinkingChars: len(resp.Thinking), PromptTokens: resp.Usage.PromptTokens,
		CompletionTokens: resp.Usage.CompletionTokens, LatencyMS: resp.Latency.Milliseconds(), Model: resp.Model,
		Cut: resp.FinishReason == "length",
	}, nil
}

// withPlanSchema holds a planning call for n queries to din.PlanSchema, in
// the loose form for a grammar decoder.
func withPlanSchema(req *llm.ChatRequest, n int, loose bool) {
	req.Schema, req.SchemaName, req.SchemaStrict = din.PlanSchema(n, !loose), "plan", !loose
}

// ApplyOps is Tx2: it embeds every embed_text in one batch, applies the ops
// in one transaction (idempotent per session and iteration) and resolves the
// tool calls to run once the write has committed.
func (a *Activities) ApplyOps(ctx context.Context, in ApplyInput) (ApplyOutput, error) {
	if in.Rename {
		var err error
		if in.Ops, err = a.renameUnseen(ctx, in); err != nil {
			return ApplyOutput{}, err
		}
	}
	var texts []string
	for _, op := range in.Ops {
		if op.EmbedText != "" {
			texts = append(texts, op.EmbedText)
		}
	}
	var embs [][]float32
	if len(texts) > 0 {
		var err error
		if embs, err = a.Embed.Embed(ctx, llm.Document, texts); err != nil {
			return ApplyOutput{}, fmt.Errorf("apply embed %d texts: %w", len(texts), err)
		}
	}
	fetched, err := a.fetchedSources(ctx, in.SessionID, in.Ops)
	if err != nil {
		return ApplyOutput{}, err
	}
	var ops []graph.Op
	var summary []string
	k := 0
	for _, op := range in.Ops {
		if op.Op == "evidence" && op.Source != "" && !fetched[op.Source] {
			// A page can tell the model to cite anything; an evidence
			// operation may only name a page this session read.
			logger(ctx, in.SessionID).Warn("evidence source dropped: not fetched by this session", "iteration", in.Iteration, "source", truncate(op.Source, 200))
			summary = append(summary, fmt.Sprintf("source %q dropped: not a page this session read", truncate(op.Source, 80)))
			op.Source = ""
		}
		var emb []float32
		if op.EmbedText != "" {
			emb, k = embs[k], k+1
		}
		summary = append(summary, summarize(op))
		if op.Op == "call" {
			continue
		}
		ops = append(ops, toGraphOp(op, emb))
	}
	res, err := a.Store.Apply(ctx, graph.ApplyRequest{
		SessionID: in.SessionID, Key: fmt.Sprintf("apply/%d", in.Iteration), Iteration: in.Iteration,
		ActiveTask: in.ActiveTask, Ops: ops, DedupThreshold: in.DedupThreshold, EvidenceStrength: in.EvidenceStrength,
	})
	if err != nil {
		return ApplyOutput{}, fmt.Errorf("apply ops iteration %d: %w", in.Iteration, err)
	}
	out := ApplyOutput{Result: res, Summary: summary}
	if res.RolledBack {
		return out, nil
	}
	for i, op := range in.Ops {
		if op.Op != "call" {
			continue
		}
		task := op.Task
		if m, ok := res.Mapped[task]; ok {
			task = m
		}
		out.Calls = append(out.Calls, ToolCall{Index: i, Task: task, Tool: op.Tool, Query: op.Args["query"]})
	}
	roots, err := a.Store.TasksByIDs(ctx, in.SessionID, []string{graph.RootShortID})
	if err != nil {
		return ApplyOutput{}, fmt.Errorf("apply read root: %w", err)
	}
	out.RootDone = len(roots) == 1 && roots[0].Status == graph.Done
	return out, nil
}

// fetchedSources says which of the sources the evidence operations name
// this session fetched (Store.FetchedSources: a lookup of those URLs, not
// a read of the session's evidence), read only when one names a source.
func (a *Activities) fetchedSources(ctx context.Context, session string, ops []din.Op) (map[string]bool, error) {
	var urls []string
	for _, op := range ops {
		if op.Op == "evidence" && op.Source != "" {
			urls = append(urls, op.Source)
		}
	}
	if len(urls) == 0 {
		return nil, nil
	}
	out, err := a.Store.FetchedSources(ctx, session, urls)
	if err != nil {
		return nil, fmt.Errorf("apply read fetched sources: %w", err)
	}
	return out, nil
}

func toGraphOp(op din.Op, emb []float32) graph.Op {
	g := graph.Op{
		Kind: graph.OpKind(op.Op), Task: op.Task, Description: op.Description, EmbedText: op.EmbedText,
		Embedding: emb, Parent: op.Parent, DependsOn: op.DependsOn, On: op.On, Result: op.Result,
		Reason: op.Reason, Content: op.Content, Source: op.Source,
	}
	if op.Op == "create" {
		g.Task = op.ID
	}
	return g
}

func summarize(op din.Op) string {
	switch op.Op {
	case "create":
		return fmt.Sprintf("create %s: %s", op.ID, truncate(op.Description, 80))
	case "call":
		return fmt.Sprintf("call %s on %s: %s", op.Tool, op.Task, truncate(op.Args["query"], 80))
	case "complete":
		return fmt.Sprintf("complete %s: %s", op.Task, truncate(op.Result, 80))
	case "fail":
		return fmt.Sprintf("fail %s: %s", op.Task, truncate(op.Reason, 80))
	case "evidence":
		return fmt.Sprintf("evidence on %s: %s", op.Task, truncate(op.Content, 80))
	case "depend":
		return fmt.Sprintf("depend %s on %s", op.Task, op.On)
	}
	return fmt.Sprintf("%s %s", op.Op, op.Task)
}

// queryEntry is one recorded web_search query of a session.
type queryEntry struct {
	Call   string // "iteration/index": identifies the decision, so a retry repeats it
	Record research.QueryRecord
}

// CheckQuery is the two-level dedup of tool calls: the exact
// {task}:{tool}:{params} key, then cosine ≥ threshold against earlier
// queries of the same task. The decision and the history are one write.
func (a *Activities) CheckQuery(ctx context.Context, in CheckQueryInput) (CheckQueryResult, error) {
	var hist []queryEntry
	if _, err := getBlob(ctx, a.Store, in.SessionID, "queries", &hist); err != nil {
		return CheckQueryResult{}, err
	}
	id := fmt.Sprintf("%d/%d", in.Iteration, in.Call.Index)
	records := make([]research.QueryRecord, 0, len(hist))
	for _, h := range hist {
		if h.Call == id {
			return CheckQueryResult{}, nil // recorded before a crash: it was not a duplicate
		}
		records = append(records, h.Record)
	}
	embs, err := a.Embed.Embed(ctx, llm.Query, []string{in.Call.Query})
	if err != nil {
		return CheckQueryResult{}, fmt.Errorf("check query embed: %w", err)
	}
	key := research.QueryKey(in.Call.Task, in.Call.Tool, map[string]string{"query": in.Call.Query})
	if dup, why := research.IsDuplicateQuery(key, embs[0], records, in.Threshold); dup {
		logger(ctx, in.SessionID).Info("duplicate query skipped", "iteration", in.Iteration, "query", in.Call.Query, "reason", why)
		return CheckQueryResult{Duplicate: true, Reason: why}, nil
	}
	hist = append(hist, queryEntry{Call: id, Record: research.QueryRecord{Key: key, Task: in.Call.Task, Query: in.Call.Query, Embedding: embs[0]}})
	return CheckQueryResult{}, putBlob(ctx, a.Store, in.SessionID, "queries", hist)
}
