package activities

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/lethe-research/lethe/algebra"
	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/llm"

	"go.temporal.io/sdk/activity"
)

// heartbeating makes a SIMILAR_TO sync heartbeat between its steps when it
// runs in an activity (SyncSimilar, Focus, Finalize): a large first sync or
// many NLI batches must not look like a dead worker.
func heartbeating(ctx context.Context, gp graph.SimilarParams) graph.SimilarParams {
	if activity.IsActivity(ctx) {
		gp.Progress = func() { activity.RecordHeartbeat(ctx, "sync similar") }
	}
	return gp
}

// signalsDoc is what Observe stores under (session, iteration) and the next
// iteration reads back: the SVD basis, the state embedding, the gap
// direction and the observation itself.
type signalsDoc struct {
	Obs   Observation
	SVD   algebra.SharedSVD
	State []float64
	Gap   []float64
	// Agg are the running aggregates after this iteration, without their
	// SVD (that is SVD above, stored once); nil in blobs written before
	// incremental signals (docs/incremental-signals.md).
	Agg *algebra.SignalState
}

func signalsKey(iter int) string { return fmt.Sprintf("signals/%d", iter) }

// prevSignals returns iteration iter-1's stored signals, or the algebraic
// zero (empty basis, gap = goal) before the first observation.
func (a *Activities) prevSignals(ctx context.Context, s graph.Session, iter int) (signalsDoc, error) {
	var doc signalsDoc
	ok, err := getBlob(ctx, a.Store, s.ID, signalsKey(iter-1), &doc)
	if err != nil {
		return doc, err
	}
	return withPrior(doc, ok, s), nil
}

// withPrior is a read signals document (found: ok) completed with the
// algebraic prior where it says nothing: an empty basis and the goal as
// the gap.
func withPrior(doc signalsDoc, ok bool, s graph.Session) signalsDoc {
	goal := algebra.ToFloat64(s.GoalQueryEmb)
	if !ok {
		doc.SVD = algebra.EmptySVD(len(goal))
	}
	if len(doc.Gap) == 0 {
		doc.Gap = goal
	}
	return doc
}

// ReadState is Tx1: the tasks (no vectors), the ready set with the three
// cosines of the closed-form warp and each task's evidence coverage. With
// in.View it is the bounded view instead (readView). It reads no evidence
// rows, only their per-task counts.
func (a *Activities) ReadState(ctx context.Context, in ReadStateInput) (ReadStateResult, error) {
	if in.View != nil {
		return a.readView(ctx, in)
	}
	s, err := a.Store.GetSession(ctx, in.SessionID)
	if err != nil {
		return ReadStateResult{}, fmt.Errorf("read state session: %w", err)
	}
	tasks, err := a.Store.Tasks(ctx, in.SessionID)
	if err != nil {
		return ReadStateResult{}, fmt.Errorf("read state tasks: %w", err)
	}
	ready, err := a.Store.ReadySet(ctx, in.SessionID)
	if err != nil {
		return ReadStateResult{}, fmt.Errorf("read state ready set: %w", err)
	}
	// Counts only: the evidence rows themselves are not read (#14).
	perTask, err := a.Store.EvidenceCounts(ctx, in.SessionID)
	if err != nil {
		return ReadStateResult{}, fmt.Errorf("read state evidence counts: %w", err)
	}
	total, err := a.Store.EvidenceCount(ctx, in.SessionID)
	if err != nil {
		return ReadStateResult{}, fmt.Errorf("read state evidence count: %w", err)
	}
	prev, err := a.prevSignals(ctx, s, in.Iteration)
	if err != nil {
		return ReadStateResult{}, err
	}
	goal := algebra.ToFloat64(s.GoalQueryEmb)
	out := ReadStateResult{Evidence: total, GapGoalCos: algebra.Cosine(prev.Gap, goal)}
	for _, t := range tasks {
		out.Tasks = append(out.Tasks, info(t, perTask[t.ShortID]))
	}
	for _, t := range ready {
		e := algebra.ToFloat64(t.Embedding)
		out.Ready = append(out.Ready, ReadyTask{
			ShortID: t.ShortID, CosGoal: algebra.Cosine(e, goal), CosGap: algebra.Cosine(e, prev.Gap),
			Coverage: prev.SVD.Coverage(e),
		})
	}
	return out, nil
}

func info(t graph.Task, evidence int) TaskInfo {
	ti := TaskInfo{
		ShortID: t.ShortID, Description: truncate(t.Description, 300), Status: t.Status, Depth: t.Depth,
		NProductive: t.NProductive, Evidence: evidence, Result: truncate(t.ResultSummary, 300),
	}
	if t.Parent != "" {
		ti.Parent = graph.ShortIDOf(t.Parent)
	}
	for _, d := range t.DependsOn {
		ti.DependsOn = append(ti.DependsOn, graph.ShortIDOf(d))
	}
	return ti
}

// SetStatus moves a task between statuses (MarkActive, and the revert to
// PENDING after a failed call). Repeating it is harmless.
func (a *Activities) SetStatus(ctx context.Context, in StatusInput) error {
	if _, err := a.Store.SetStatus(ctx, in.SessionID, in.Task, in.From, in.To); err != nil {
		return fmt.Errorf("set status %s -> %s: %w", in.Task, in.To, err)
	}
	return nil
}

// SyncSimilar refreshes SIMILAR_TO edges so that PPR can traverse links
// between evidence ingested in the previous iteration, and, with NLI on,
// labels new pairs with the chat model (docs/nli.md). A model outage during
// labelling is returned after the edges are committed (the labels gained so
// far are cached), so the workflow waits it out and the retry asks only for
// the rest; an unusable answer is logged and its pairs wait for a later sync.
func (a *Activities) SyncSimilar(ctx context.Context, in SyncSimilarInput) (SyncSimilarResult, error) {
	nli := a.classifier(in.Similar)
	var classifier graph.NLIClassifier
	if nli != nil {
		classifier = nli
	}
	st, err := graph.SyncSimilar(ctx, a.Store, in.SessionID, heartbeating(ctx, graphParams(in.Similar)), classifier)
	if err != nil {
		return SyncSimilarResult{}, fmt.Errorf("sync similar: %w", err)
	}
	res := SyncSimilarResult{Edges: st.Edges, Compared: st.Compared, Classified: st.Classified, Cached: st.Cached, Deferred: st.Deferred, NLIError: st.NLIError}
	if nli == nil {
		return res, nil
	}
	logger(ctx, in.SessionID).Info("SIMILAR_TO labelled", "iteration", in.Iteration, "edges", st.Edges, "classified", st.Classified,
		"reused", st.Reused, "cached", st.Cached, "deferred", st.Deferred, "refined", st.Refined, "calls", nli.calls,
		"prompt_tokens", nli.prompt, "completion_tokens", nli.completed, "nli_error", st.NLIError)
	if nli.outage != nil {
		return res, fmt.Errorf("sync similar: label pairs: %w", nli.outage)
	}
	return res, nil
}

// Focus is steps 3b-5 of an iteration in one activity: the selected task
// becomes ACTIVE, SIMILAR_TO is synced, and PPR expands the context from
// the task. One round trip instead of three: each step is idempotent, so
// the whole is, and a retry after a crash repeats nothing that matters.
func (a *Activities) Focus(ctx context.Context, in FocusInput) (ExpandResult, error) {
	if err := a.SetStatus(ctx, StatusInput{SessionID: in.SessionID, Task: in.Task, From: []graph.Status{graph.Pending}, To: graph.Active}); err != nil {
		return ExpandResult{}, fmt.Errorf("focus: %w", err)
	}
	focused := make(chan struct{})
	close(focused)
	ex, _, err := a.syncExpand(ctx, in, focused)
	return ex, err
}

// Expand runs PPR from the selected task over all edge types, with
// transition weights max(cos, 0) of the endpoint embeddings, and returns the
// best evidence candidates and their pairwise cosines. It reads only the
// task's neighbourhood, as far as the push reaches (expand_local.go).
func (a *Activities) Expand(ctx context.Context, in ExpandInput) (ExpandResult, error) {
	return a.expand(ctx, in, nil)
}

func (a *Activities) expand(ctx context.Context, in ExpandInput, counts map[string]int) (ExpandResult, error) {
	// The session (for its goal, at the end) is read beside the walk's
	// first round: a round trip each on Neo4j.
	var (
		s    graph.Session
		errS error
		wg   sync.WaitGroup
	)
	wg.Go(func() { s, errS = a.Store.GetSession(ctx, in.SessionID) })
	def := config.Defaults()
	c := contextOf(in.Context, def.Context)
	sel := graph.TaskID(in.SessionID, in.Task)
	ev, pr, idx, stats, err := localPPR(ctx, a.Store, in.SessionID, sel, c, counts)
	wg.Wait()
	if errS != nil {
		return ExpandResult{}, fmt.Errorf("expand session: %w", errS)
	}
	if err != nil {
		return ExpandResult{}, err
	}
	logPush(ctx, in.SessionID, in.Task, stats)
	cands, err := withTexts(ctx, a.Store, in.SessionID, topByPPR(ev, pr, idx, c.MaxCandidates))
	if err != nil {
		return ExpandResult{}, err
	}
	return a.candidates(cands, sel, algebra.ToFloat64(s.GoalQueryEmb), 2*orDefault(in.ChunkChars, def.Research.ChunkChars)), nil
}

// expandExact is Expand as it was before the local push: the whole session
// read, power iteration over it. It is the reference of the tests and the
// "before" of the benchmark.
func (a *Activities) expandExact(ctx context.Context, in ExpandInput) (ExpandResult, error) {
	s, err := a.Store.GetSession(ctx, in.SessionID)
	if err != nil {
		return ExpandResult{}, fmt.Errorf("expand session: %w", err)
	}
	tasks, err := a.Store.Tasks(ctx, in.SessionID)
	if err != nil {
		return ExpandResult{}, fmt.Errorf("expand tasks: %w", err)
	}
	ev, err := a.Store.Evidence(ctx, in.SessionID, "")
	if err != nil {
		return ExpandResult{}, fmt.Errorf("expand evidence: %w", err)
	}
	if len(ev) == 0 {
		return ExpandResult{}, nil
	}
	edges, err := a.Store.Edges(ctx, in.SessionID)
	if err != nil {
		return ExpandResult{}, fmt.Errorf("expand edges: %w", err)
	}
	sel := graph.TaskID(in.SessionID, in.Task)
	g, idx := pprGraph(tasks, ev, edges)
	def := config.Defaults()
	c := orDefault(in.Context, def.Context)
	pr := algebra.PPR(g, pprSeeds(g, idx[sel]), c.PPRAlpha, c.PPRTol, c.PPRMaxIter)
	cands := topByPPR(ev, pr, idx, c.MaxCandidates)
	return a.candidates(cands, sel, algebra.ToFloat64(s.GoalQueryEmb), 2*orDefault(in.ChunkChars, def.Research.ChunkChars)), nil
}

// pprGraph is the graph PPR walks: every task and evidence node, every
// edge between two of them weighted by the cosine of its endpoints'
// embeddings (DESIGN.md §6), edges with a cosine ≤ 0 left out.
func pprGraph(tasks []graph.Task, ev []graph.Evidence, edges []graph.Edge) (algebra.CSR, map[string]int) {
	idx := map[string]int{}
	var vecs [][]float32
	for _, t := range tasks {
		idx[t.ID] = len(vecs)
		vecs = append(vecs, t.Embedding)
	}
	for _, e := range ev {
		idx[e.ID] = len(vecs)
		vecs = append(vecs, e.Embedding)
	}
	var from, to []int
	var w []float64
	for _, e := range edges {
		i, ok1 := idx[e.From]
		j, ok2 := idx[e.To]
		if !ok1 || !ok2 {
			continue
		}
		if c := algebra.Cosine32(vecs[i], vecs[j]); c > 0 {
			from, to, w = append(from, i), append(to, j), append(w, c)
		}
	}
	return algebra.BuildCSR(len(vecs), from, to, w, true), idx
}

// pprSeeds are the selected task and its direct neighbours.
func pprSeeds(g algebra.CSR, sel int) []int {
	seeds := []int{sel}
	for k := g.RowPtr[sel]; k < g.RowPtr[sel+1]; k++ {
		seeds = append(seeds, g.Col[k])
	}
	return seeds
}

type pprScored struct {
	e   graph.Evidence
	ppr float64
}

// topByPPR keeps the evidence PPR reached, highest score first, at most
// max of it; ties in store order (CreatedIter, then id), whatever the
// order of ev. It sorts positions, not records: the local walk reaches
// tens of thousands of items of a large session.
func topByPPR(ev []graph.Evidence, pr []float64, idx map[string]int, max int) []pprScored {
	var pos []int
	score := make([]float64, len(ev))
	for i, e := range ev {
		if score[i] = pr[idx[e.ID]]; score[i] > 0 {
			pos = append(pos, i)
		}
	}
	slices.SortFunc(pos, func(a, b int) int {
		if c := cmp.Compare(score[b], score[a]); c != 0 {
			return c
		}
		if c := cmp.Compare(ev[a].CreatedIter, ev[b].CreatedIter); c != 0 {
			return c
		}
		return cmp.Compare(ev[a].ID, ev[b].ID)
	})
	cands := make([]pprScored, 0, min(len(pos), max))
	for _, i := range pos[:min(len(pos), max)] {
		cands = append(cands, pprScored{ev[i], score[i]})
	}
	return cands
}

// candidates is what packing needs of each candidate, and their pairwise
// cosines. Shared evidence is shown under the task in focus when it
// supports it. Everything here came from a page or a model, so it is
// bounded again: 64 candidates always fit in the activity result.
func (a *Activities) candidates(cands []pprScored, sel string, goal []float64, maxChars int) ExpandResult {
	out := ExpandResult{}
	vs := make([][]float64, len(cands))
	r := a.Cfg.Research
	for i, c := range cands {
		vs[i] = algebra.ToFloat64(c.e.Embedding)
		task := c.e.TaskID
		if slices.Contains(c.e.Also, sel) {
			task = sel
		}
		text := truncate(c.e.Content, maxChars)
		out.Candidates = append(out.Candidates, Candidate{
			Ref: c.e.ID, Task: graph.ShortIDOf(task), Text: text, Source: boundURL(c.e.SourceURL, r.MaxURLBytes),
			Title: truncate(c.e.Title, r.MaxTitleChars), Tokens: llm.EstimateTokens(text), PPR: c.ppr, CosGoal: algebra.Cosine(vs[i], goal),
		})
	}
	out.Sims = algebra.NewPairSims(vs)
	return out
}

// newRows marks the evidence rows that are new for the novelty signal:
// fetched content this iteration ingested (CreatedIter = iter). Content the
// session already held and only linked to another task keeps its first
// iteration and is not new; neither is what the model wrote itself (an
// evidence op): the novelty is the research's, and the model restating
// what it read is not unfamiliar territory. The workflow's count of new
// evidence (ObserveInput.NewEvidence) includes both, and says nothing of
// where the rows sit; it is not used.
func newRows(ev []graph.Evidence, iter int) []bool {
	out := make([]bool, len(ev))
	for i, e := range ev {
		out[i] = e.CreatedIter == iter && e.Kind != graph.KindLLM
	}
	return out
}
