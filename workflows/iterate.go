package workflows

import (
	"fmt"
	"math"
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/lethe-research/lethe/algebra"
	"github.com/lethe-research/lethe/contract"
	"github.com/lethe-research/lethe/din"
)

// checkTermination is step 1: hard limits first, then the budget manager's
// ψ from the previous iteration's signals. It also sets the pressure and the
// thinking budget the coming iteration runs with.
func (s *session) checkTermination(ctx workflow.Context) string {
	st, b := s.st, s.cfg.Budget
	switch {
	case st.RootDone:
		return StopRootDone
	case st.StopRequested:
		return StopRequested
	case st.ModelGaveUp:
		return StopModelUnavailable
	case s.cfg.Loop.NoopLimit > 0 && st.NoOps >= s.cfg.Loop.NoopLimit:
		return StopNoProgress
	case st.Iteration >= st.MaxIterations(b.MaxIterations):
		return StopMaxIterations
	case tokenStop(st.TokensUsed(), st.IterTokens, b.MaxTokens, b.TokenReserve) &&
		workflow.GetVersion(ctx, changeTokenBudget, workflow.DefaultVersion, 1) == 1:
		return StopTokenBudget
	}
	elapsed := s.elapsed(ctx)
	if elapsed.Seconds() >= b.OOMCap*st.MaxWallClock(b.MaxWallClock).Seconds() {
		return StopWallClockCap
	}
	s.updateBudget(elapsed)
	if st.Prev.Observed && st.Psi > b.PsiThreshold {
		return StopConverged
	}
	return ""
}

// updateBudget is the budget manager (seed 000 "Budget Management") on
// the session's state.
func (s *session) updateBudget(elapsed time.Duration) {
	st := s.st
	out := budgetUpdate(budgetInput{
		Iteration: st.Iteration, MaxIterations: st.MaxIterations(s.cfg.Budget.MaxIterations),
		Elapsed: elapsed, MaxWallClock: st.MaxWallClock(s.cfg.Budget.MaxWallClock),
		Prev: st.Prev, ZeroYield: st.ZeroYield,
	}, s.cfg.Budget, s.cfg.Thinking)
	st.ResourceProgress, st.Pressure, st.Psi, st.ThinkingBudget = out.ResourceProgress, out.Pressure, out.Psi, out.ThinkingBudget
}

// iterate runs steps 2-12 of one iteration. It returns a stop reason when
// the graph itself says the loop is over.
func (s *session) iterate(ctx workflow.Context) (string, error) {
	iter := s.st.Iteration + 1
	gctx := graphCtx(ctx, s.cfg)
	tokensBefore, usedBefore := s.st.Tokens, s.st.TokensUsed()
	defer func() { s.st.IterTokens = s.st.TokensUsed() - usedBefore }()

	bounded := workflow.GetVersion(ctx, changeBoundedView, workflow.DefaultVersion, 1) == 1
	local := bounded && workflow.GetVersion(ctx, changeLocalSteps, workflow.DefaultVersion, 1) == 1
	var rs contract.ReadStateResult
	var err error
	if bounded {
		rs, err = s.readView(ctx, iter)
	} else {
		err = s.exec(ctx, summarized(gctx, "iteration %d: read ready set", iter), acts.ReadState, contract.ReadStateInput{SessionID: s.id, Iteration: iter}, &rs)
	}
	if err != nil {
		return "", fmt.Errorf("iteration %d read state: %w", iter, err)
	}
	if bounded {
		s.st.Counts, s.st.Evidence, s.st.RootDone = rs.Counts, rs.Evidence, rs.RootDone
	} else {
		s.st.Counts, s.st.Evidence, s.st.Tasks = countStatuses(rs.Tasks), rs.Evidence, rs.Tasks
		s.st.RootDone = rootDone(rs.Tasks)
	}
	if s.st.RootDone {
		return StopRootDone, nil
	}
	if len(rs.Ready) == 0 {
		return StopNoReadyTasks, nil
	}

	sel := s.selectTask(rotateAfterNoop(rs, s.st.NoOps, s.st.NoOpTask))
	s.st.Current = sel
	var ex contract.ExpandResult
	var k din.Known
	if bounded {
		fv, err := s.focusView(ctx, iter, sel, local && !s.cfg.Algebra.SimilarNLI)
		if err != nil {
			return "", err
		}
		// The view shows the focus as ReadState saw it (PENDING), as before.
		ex, rs.Tasks, s.st.Tasks = fv.Expand, withStatus(fv.Tasks, sel, contract.TaskPending), fv.Tasks
		k = boundedKnown(fv.Tasks, fv.Named, sel)
	} else {
		if ex, err = s.focus(ctx, iter, sel); err != nil {
			return "", err
		}
		k = known(withStatus(rs.Tasks, sel, contract.TaskActive), sel)
	}
	read := s.view(rs, sel, s.pack(ex))
	user := din.Render(read)
	s.st.Guides = nil // shown in this DIN-Read
	if workflow.GetVersion(ctx, changeEvidenceDeps, workflow.DefaultVersion, 1) == 1 {
		k.EvidenceRefs = evidenceRefs(read)
	}
	k.Restated = workflow.GetVersion(ctx, changeRestated, workflow.DefaultVersion, 1) == 1
	k.CorpusSources = workflow.GetVersion(ctx, changeCorpusSources, workflow.DefaultVersion, 1) == 1

	ops, ok, err := s.reason(ctx, iter, user, k)
	if err != nil {
		return "", fmt.Errorf("iteration %d reason: %w", iter, err)
	}
	newEvidence, hadCalls, searches := 0, false, s.st.Stats.WebSearches
	if ok {
		var out contract.ApplyOutput
		in := contract.ApplyInput{SessionID: s.id, Iteration: iter, ActiveTask: sel, Ops: ops, DedupThreshold: s.cfg.Algebra.TaskDedupThreshold,
			EvidenceStrength: s.cfg.Research.LLMEvidenceStrength, Rename: bounded}
		if err := s.step(ctx, local, gctx, acts.ApplyOps, in, &out, "iteration %d: apply %d ops", iter, len(ops)); err != nil {
			return "", fmt.Errorf("iteration %d apply: %w", iter, err)
		}
		s.st.LastOps = out.Summary
		s.st.Stats.AppliedOps += out.Result.Applied
		newEvidence += out.Result.Evidence
		if out.Result.RolledBack {
			s.st.Stats.RolledBack++
			ok = false
			s.log.Warn("write rolled back", "iteration", iter, "reason", out.Result.Reason)
		} else {
			s.st.RootDone = out.RootDone
			hadCalls = len(out.Calls) > 0
			newEvidence += s.runCalls(ctx, iter, out.Calls, local)
			if workflow.GetVersion(ctx, changeNoop, workflow.DefaultVersion, 1) == 1 {
				s.noteProgress(iter, sel, changedNothing(ops, out.Result, s.st.Stats.WebSearches-searches))
			}
		}
	}
	if !ok { // failed call, unrepairable answer or rolled-back write: the task goes back, the iteration counts
		back := contract.StatusInput{SessionID: s.id, Task: sel, From: []contract.TaskStatus{contract.TaskActive}, To: contract.TaskPending}
		if err := s.step(ctx, local, gctx, acts.SetStatus, back, nil, "iteration %d: %s back to PENDING", iter, sel); err != nil {
			return "", fmt.Errorf("iteration %d revert %s: %w", iter, sel, err)
		}
	}
	return "", s.observe(ctx, iter, sel, newEvidence, hadCalls, s.st.Tokens-tokensBefore, bounded)
}

// Workflow changes that alter the commands a session issues go behind
// workflow.GetVersion (docs/versioning.md): running sessions replay their
// recorded path, new sessions take the new one.
const (
	// changeFocus merges MarkActive, SyncSimilar and Expand into one Focus
	// activity: two round trips (about ten history events) fewer per
	// iteration.
	changeFocus = "focus-one-activity"
	// changeTokenBudget makes budget.max_tokens a hard limit; asked only
	// when the limit is reached, so sessions that never reach it record no
	// marker.
	changeTokenBudget = "token-budget"
)

// focus is steps 3b-5: the selected task becomes ACTIVE, SIMILAR_TO is
// synced, and PPR expands the context from the task.
func (s *session) focus(ctx workflow.Context, iter int, sel string) (contract.ExpandResult, error) {
	gctx := graphCtx(ctx, s.cfg)
	var ex contract.ExpandResult
	if workflow.GetVersion(ctx, changeFocus, workflow.DefaultVersion, 1) == 1 {
		in := contract.FocusInput{SessionID: s.id, Iteration: iter, Task: sel, Similar: contract.SimilarFor(s.cfg),
			Context: s.cfg.Context, ChunkChars: s.cfg.Research.ChunkChars}
		if err := s.exec(ctx, summarized(focusCtx(ctx, s.cfg), "iteration %d: focus on %s (mark active, sync SIMILAR_TO, PPR context)", iter, sel), acts.Focus, in, &ex); err != nil {
			return ex, fmt.Errorf("iteration %d focus on %s: %w", iter, sel, err)
		}
		return ex, nil
	}
	if err := s.exec(ctx, summarized(gctx, "iteration %d: select %s", iter, sel), acts.SetStatus, contract.StatusInput{SessionID: s.id, Task: sel, From: []contract.TaskStatus{contract.TaskPending}, To: contract.TaskActive}, nil); err != nil {
		return ex, fmt.Errorf("iteration %d mark %s active: %w", iter, sel, err)
	}
	if err := s.exec(ctx, summarized(gctx, "iteration %d: sync SIMILAR_TO", iter), acts.SyncSimilar, contract.SyncSimilarInput{SessionID: s.id, Iteration: iter, Similar: contract.SimilarOf(s.cfg.Algebra)}, nil); err != nil {
		return ex, fmt.Errorf("iteration %d sync similar: %w", iter, err)
	}
	if err := s.exec(ctx, summarized(gctx, "iteration %d: PPR context from %s", iter, sel), acts.Expand, contract.ExpandInput{SessionID: s.id, Task: sel, Context: s.cfg.Context, ChunkChars: s.cfg.Research.ChunkChars}, &ex); err != nil {
		return ex, fmt.Errorf("iteration %d expand: %w", iter, err)
	}
	return ex, nil
}

// changeEvidenceDeps (#12, docs/din-evidence-deps.md): validation reads a
// depends_on entry that names an evidence line of the read as absent
// (din.Known.EvidenceRefs). Before it, such an answer was invalid, and a
// session replaying from then keeps that path.
const changeEvidenceDeps = "din-evidence-deps"

// changeRestated (#12, docs/din-guards.md): validation drops a create that
// restates a task of the session (din.Known.Restated) when it is the
// answer's only error. Before it, such an answer went to repair.
const changeRestated = "din-restated-creates"

// changeCorpusSources (#12, docs/din-guards.md): an evidence op may name
// a corpus:/// address as its source (din.Known.CorpusSources), as the
// DIN-Read shows one. Before it, such an answer went to repair.
const changeCorpusSources = "din-corpus-sources"

// countRestated records the creates of existing tasks that validation
// dropped from an applied answer, which the answer itself no longer shows.
func (s *session) countRestated(iter, n int) {
	if n == 0 {
		return
	}
	s.st.Stats.RestatedCreates += n
	s.log.Info("creates of existing tasks dropped from the answer", "iteration", iter, "creates", n)
}

// evidenceRefs are the refs of the evidence lines a read shows.
func evidenceRefs(v din.View) map[string]bool {
	refs := make(map[string]bool, len(v.Evidence))
	for _, e := range v.Evidence {
		refs[e.Ref] = true
	}
	return refs
}

// noteProgress counts a no-op iteration (or ends a run of them) and logs it.
func (s *session) noteProgress(iter int, task string, noop bool) {
	trackProgress(s.st, task, noop)
	if noop {
		s.st.Stats.NoOpIterations++
		s.log.Warn("answer changed nothing", "iteration", iter, "task", task, "in_a_row", s.st.NoOps, "limit", s.cfg.Loop.NoopLimit)
	}
}

// selectTask is step 3 on the session's state.
func (s *session) selectTask(rs contract.ReadStateResult) string {
	return selectTask(rs, s.st.Pressure, s.cfg.Algebra.MaxWarpAngle)
}

// pack is step 6 on the session's state.
func (s *session) pack(ex contract.ExpandResult) []contract.Candidate {
	return pack(ex, s.st.Pressure, s.cfg.Context)
}

// countAnswer adds one answered chat call's tokens and latency to the
// session's totals.
func (s *session) countAnswer(out contract.ReasonResult) {
	s.st.Tokens += out.PromptTokens + out.CompletionTokens
	s.st.Stats.PromptTokens += out.PromptTokens
	s.st.Stats.CompletionToken += out.CompletionTokens
	s.st.Stats.LLMLatencyMS += out.LatencyMS
}

// reason is steps 8-9: the LLM call, parse and validate, and the repair loop
// with a halved thinking budget per attempt. ok is false when the call
// failed or no valid answer came back (the seed's rule: the iteration
// counts). A model outage is not such a failure: it is waited out, and
// past the tolerance it is returned as an error that stops the loop.
func (s *session) reason(ctx workflow.Context, iter int, user string, k din.Known) ([]din.Op, bool, error) {
	lim := din.DefaultLimits()
	lim.MaxOps, lim.MaxStringLen = s.cfg.DIN.MaxOps, s.cfg.DIN.MaxStringChars
	budget := s.st.ThinkingBudget
	prompt := user
	for attempt := 0; ; attempt++ {
		in := contract.ReasonInput{
			SessionID: s.id, Iteration: iter, Attempt: attempt, System: din.SystemPrompt(), User: prompt,
			ThinkingBudget: budget, MaxTokens: s.cfg.Thinking.OutputTokens, Schema: s.cfg.LLM.JSONSchema, SchemaLoose: s.cfg.LLM.JSONSchemaLoose,
		}
		var out contract.ReasonResult
		lctx := summarized(llmCtx(ctx, s.cfg), "iteration %d: reason (attempt %d, thinking %d)", iter, attempt, budget)
		s.st.Stats.LLMCalls++
		if attempt > 0 {
			s.st.Stats.RepairCalls++
		}
		if err := s.exec(ctx, lctx, acts.Reason, in, &out); err != nil {
			if isOutage(err) || keyRefused(err) || temporal.IsCanceledError(err) {
				return nil, false, err
			}
			s.st.Stats.FailedCalls++
			s.log.Warn("LLM call failed; task goes back to PENDING", "iteration", iter, "error", err)
			return nil, false, nil
		}
		s.countAnswer(out)
		ops, errs, restated := din.ParseCounted(out.Content, k, lim)
		if len(errs) == 0 {
			s.countRestated(iter, restated)
			return ops, true, nil
		}
		if out.Cut {
			if ops, errs = s.keepCut(ctx, iter, out, k, lim, errs); ops != nil {
				return ops, true, nil
			}
		}
		s.log.Warn("invalid DIN answer", "iteration", iter, "attempt", attempt, "errors", len(errs))
		if attempt >= s.cfg.LLM.MaxRepairAttempts {
			s.st.Stats.InvalidAnswers++
			return nil, false, nil
		}
		budget /= 2
		prompt = din.RepairPromptWithContext(user, out.Content, errs, attempt+1, s.cfg.LLM.MaxRepairAttempts)
	}
}

// runCalls is step 11: dedup each call, then run the research loops as
// child workflows in parallel. A failed research run yields nothing; it
// never fails the session.
func (s *session) runCalls(ctx workflow.Context, iter int, calls []contract.ToolCall, local bool) int {
	gctx := graphCtx(ctx, s.cfg)
	var futures []workflow.ChildWorkflowFuture
	elapsed := s.elapsed(ctx)
	left := math.Max(0, s.st.MaxWallClock(s.cfg.Budget.MaxWallClock).Seconds()-elapsed.Seconds())
	budget := len(calls) > 0 && workflow.GetVersion(ctx, changeSearchBudget, workflow.DefaultVersion, 1) == 1
	var turn searchTurn
	for _, c := range calls {
		if budget && !s.admitSearch(iter, c, &turn) {
			continue
		}
		var dup contract.CheckQueryResult
		in := contract.CheckQueryInput{SessionID: s.id, Iteration: iter, Call: c, Threshold: s.cfg.Research.QueryDedupThreshold}
		if err := s.step(ctx, local, gctx, acts.CheckQuery, in, &dup, "iteration %d: dedup query %q", iter, c.Query); err != nil {
			if isOutage(err) { // the loop stops at the next termination check (ModelGaveUp)
				s.log.Warn("embedding server down past the tolerance; call skipped", "iteration", iter, "error", err)
				continue
			}
			s.log.Warn("query dedup failed; call skipped", "iteration", iter, "query", c.Query, "error", err)
			continue
		}
		if dup.Duplicate {
			s.st.Stats.DuplicateCalls++
			continue
		}
		s.st.Stats.WebSearches++
		if budget {
			s.st.SearchKeys = append(s.st.SearchKeys, din.SearchKey(c.Query))
			turn.started++
		}
		cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
			WorkflowID:    fmt.Sprintf("%s/research/%d/%d", s.id, iter, c.Index),
			TaskQueue:     s.cfg.Temporal.TaskQueue,
			RetryPolicy:   &temporal.RetryPolicy{MaximumAttempts: 1},
			StaticSummary: fmt.Sprintf("web_search %q for %s", c.Query, c.Task),
		})
		futures = append(futures, workflow.ExecuteChildWorkflow(cctx, ResearchWorkflow, contract.ResearchInput{
			SessionID: s.id, Iteration: iter, Call: c, Pressure: s.st.Pressure, TimeLeftS: left, Config: s.cfg,
		}))
	}
	s.children = futures
	defer func() { s.children = nil }()
	total, waited := 0, time.Duration(0)
	for _, f := range futures {
		var r contract.ResearchResult
		if err := f.Get(ctx, &r); err != nil {
			s.log.Warn("research run failed", "iteration", iter, "error", err)
			continue
		}
		total += r.NewEvidence
		// The runs wait side by side: the session lost the longest wait.
		waited = max(waited, time.Duration(r.ModelWaitMS)*time.Millisecond)
		s.st.ModelGaveUp = s.st.ModelGaveUp || r.ModelGaveUp
		s.st.EmbedTokens += r.EmbedTokens
	}
	s.st.ModelWaited += waited
	s.st.Stats.NewEvidence += total
	return total
}

// changeSearchBudget: a web_search call whose din.SearchKey the session
// has searched already (for any task) is a duplicate, and the calls past
// research.max_searches_per_iteration or research.max_searches are
// dropped, before any activity runs.
const changeSearchBudget = "search-budget"

// searchTurn counts one runCalls' searches: started, and dropped for the
// budget (logged once, not once per call of a flood).
type searchTurn struct{ started, dropped int }

// admitSearch decides, from workflow state alone, whether call c may start
// a search. Every search is a paid query and a research run of up to
// research.max_pages fetches, and the per-task cosine dedup lets reworded
// queries through, so without a budget one answer of thirty phrasings
// costs thirty runs.
func (s *session) admitSearch(iter int, c contract.ToolCall, turn *searchTurn) bool {
	key := din.SearchKey(c.Query)
	if slices.Contains(s.st.SearchKeys, key) {
		s.st.Stats.DuplicateCalls++
		s.log.Info("search already made in this session; call skipped", "iteration", iter, "query", c.Query, "key", key)
		return false
	}
	r := s.cfg.Research
	if turn.started < r.MaxSearchesPerIter && s.st.Stats.WebSearches < r.MaxSearches {
		return true
	}
	s.st.Stats.SearchesOverBudget++
	if turn.dropped++; turn.dropped == 1 {
		s.log.Warn("search budget used; this and the answer's further new searches are dropped", "iteration", iter, "query", c.Query,
			"iteration_searches", turn.started, "max_per_iteration", r.MaxSearchesPerIter,
			"session_searches", s.st.Stats.WebSearches, "max_searches", r.MaxSearches)
	}
	return false
}

// observe is step 12: raw signals from the activity, then the EMA trackers
// and the convergence score in workflow state.
// In the bounded view (changeBoundedView) Observe is a local activity: it
// is idempotent (a retry returns the stored observation), and the next
// iteration's ReadState follows it in the same workflow task.
func (s *session) observe(ctx workflow.Context, iter int, task string, newEvidence int, hadCalls bool, tokens int, local bool) error {
	var o contract.Observation
	sig := s.cfg.Algebra.SignalParams()
	in := contract.ObserveInput{SessionID: s.id, Iteration: iter, Task: task, NewEvidence: newEvidence,
		SVDK: s.cfg.Algebra.SVDK, MinEvidence: s.cfg.Algebra.MinEvidence, Signals: &sig}
	var err error
	if local {
		err = s.execLocal(ctx, localCtx(ctx, s.cfg, "iteration %d: signals", iter), acts.Observe, in, &o)
	} else {
		err = s.exec(ctx, summarized(graphCtx(ctx, s.cfg), "iteration %d: signals", iter), acts.Observe, in, &o)
	}
	if err != nil {
		return fmt.Errorf("iteration %d observe: %w", iter, err)
	}
	st := s.st
	st.Trackers = st.Trackers.Update(algebra.ObservedScalars{
		Stability: o.Stability, StabilityConf: o.StabilityConf,
		Residual: o.Residual, ResidualConf: o.ResidualConf,
		Eigengap: o.Eigengap, SVDConf: o.SVDConf,
	}, s.cfg.Algebra.EMAAlpha)
	conv := algebra.ConvergenceScore(s.cfg.Algebra.AgentWeights(), o.GA, st.Trackers.Stability.Value, o.Coverage)
	st.Prev = Signals{
		Observed: true, GA: o.GA, Coverage: o.Coverage, Novelty: o.Novelty, NEvidence: o.NEvidence,
		Convergence: conv, Plateau: algebra.PlateauIndicator(conv-st.Prev.Convergence, s.cfg.Algebra.PlateauTol),
	}
	if hadCalls {
		if newEvidence == 0 {
			st.ZeroYield++
		} else {
			st.ZeroYield = 0
		}
	}
	st.Evidence = o.NEvidence
	st.Iteration = iter
	s.metrics(ctx, newEvidence, tokens)
	s.publish(ctx, StatusRunning)
	s.log.Info("iteration done", "iteration", iter, "task", task, "new_evidence", newEvidence,
		"convergence", st.Prev.Convergence, "pressure", st.Pressure, "psi", st.Psi)
	return nil
}

func withStatus(tasks []contract.TaskInfo, id string, status contract.TaskStatus) []contract.TaskInfo {
	out := append([]contract.TaskInfo(nil), tasks...)
	for i := range out {
		if out[i].ShortID == id {
			out[i].Status = status
		}
	}
	return out
}
