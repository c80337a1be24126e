package workflows

import (
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/lethe-research/lethe/contract"
)

// EvaluationWorkflow is the registered name of the Evaluation workflow.
const EvaluationWorkflow = "Evaluation"

// The systems an evaluation compares (docs/eval.md).
const (
	SystemLethe = "lethe"
	SystemRAG   = "rag"
	SystemLoop  = "loop"
)

// Evaluation statuses of LetheStatus: StatusWaitingOutputs while the
// outputs cannot be written and the evaluation waits for
// SignalRetryOutputs.
const (
	StatusEvaluating     = "evaluating"
	StatusWaitingOutputs = "waiting_for_output_dir"
)

// SignalRetryOutputs makes an evaluation waiting in StatusWaitingOutputs
// write its outputs again. It carries nothing: the fix (the directory,
// its permissions, the worker's config) is made on the worker's side.
const SignalRetryOutputs = "retry-outputs"

// The Evaluation workflow's input, state, progress and result live in
// contract (docs/contract.md).
type (
	EvalInput    = contract.EvalInput
	EvalState    = contract.EvalState
	EvalResult   = contract.EvalResult
	EvalProgress = contract.EvalProgress
	SystemStatus = contract.SystemStatus
)

type evaluation struct {
	id      string
	in      EvalInput
	cfg     contract.Config
	st      *EvalState
	phase   string
	running []string
	log     log.Logger
	// outputsError is the last WriteEvalOutputs failure while the
	// evaluation waits for SignalRetryOutputs.
	outputsError string
}

// Evaluation runs every question as a child ResearchSession and as the
// two baselines, scores each answer and writes the outputs. Every step is
// an activity or a child with a deterministic id, so a killed worker or a
// restarted server resumes where it was; a system that fails on a
// question is recorded as failed and the evaluation goes on.
func Evaluation(ctx workflow.Context, in EvalInput) (res EvalResult, err error) {
	e := &evaluation{id: workflow.GetInfo(ctx).WorkflowExecution.ID, in: in, st: in.State, phase: "configuring"}
	e.log = log.With(workflow.GetLogger(ctx), "evaluation", e.id)
	if in.Config != nil {
		e.cfg = *in.Config // whether LetheStatus may be upserted, should the input be refused
	}
	defer func() { e.markFailed(ctx, err) }()
	if e.st == nil {
		e.st = &EvalState{StartedAt: workflow.Now(ctx)}
	}
	if len(e.in.Systems) == 0 {
		e.in.Systems = []string{SystemLethe, SystemRAG, SystemLoop}
	}
	if err := ValidateEval(e.in); err != nil {
		return EvalResult{}, err
	}
	if err := checkEvalID(ctx, e.id); err != nil {
		return EvalResult{}, err
	}
	if err := workflow.SetQueryHandler(ctx, QueryProgress, func() (EvalProgress, error) { return e.progress(), nil }); err != nil {
		return EvalResult{}, err
	}
	if err := e.resolveConfig(ctx); err != nil {
		return EvalResult{}, err
	}
	e.phase = "running"
	e.publish(ctx)
	more, err := e.runQuestions(ctx)
	if err != nil {
		return EvalResult{}, err
	}
	if more {
		st := *e.st
		st.Runs++
		e.log.Info("continuing as new", "records", len(st.Records))
		return EvalResult{}, workflow.NewContinueAsNewError(ctx, EvaluationWorkflow, EvalInput{
			Questions: e.in.Questions, Systems: e.in.Systems, Config: &e.cfg, State: &st,
		})
	}
	res = e.result()
	dir, outErr, err := e.writeOutputs(ctx)
	if err != nil {
		return EvalResult{}, err
	}
	res.Dir, res.OutputsError = dir, outErr
	e.phase = "done"
	e.publish(ctx)
	return res, nil
}

// ValidateEval checks an evaluation's input as the workflow does before it
// runs anything: questions with ids and texts, each id once, and known
// systems, each once (none: all three). The eval command calls it before
// it starts a workflow, so bad input is an error at the prompt, not a
// failed run in the UI.
func ValidateEval(in EvalInput) error {
	if len(in.Questions) == 0 {
		return invalid("no questions")
	}
	seen := map[string]bool{}
	for i, q := range in.Questions {
		switch {
		case strings.TrimSpace(q.ID) == "" || strings.Contains(q.ID, "/"):
			return invalid(fmt.Sprintf("question %d: id %q must be non-empty and without '/'", i, q.ID))
		case seen[q.ID]:
			return invalid(fmt.Sprintf("question id %q appears twice", q.ID))
		case strings.TrimSpace(q.Question) == "":
			return invalid(fmt.Sprintf("question %s is empty", q.ID))
		}
		seen[q.ID] = true
	}
	dup := map[string]bool{}
	for _, s := range in.Systems {
		if s != SystemLethe && s != SystemRAG && s != SystemLoop {
			return invalid(fmt.Sprintf("unknown system %q (lethe, rag, loop)", s))
		}
		if dup[s] {
			return invalid(fmt.Sprintf("system %q listed twice", s))
		}
		dup[s] = true
	}
	return nil
}

// resolveConfig takes the recorded config or resolves one from Params,
// like a session.
func (e *evaluation) resolveConfig(ctx workflow.Context) error {
	if e.in.Config != nil {
		if err := e.in.Config.Validate(); err != nil {
			return temporal.NewNonRetryableApplicationError(err.Error(), contract.ErrConfig, nil)
		}
	}
	cfg, carry, err := resolveInputConfig(ctx, e.in.Config, e.in.Params, "an evaluation's")
	if err != nil {
		e.cfg.Temporal.SearchAttributes = attributesRegistered(err)
		return err
	}
	e.cfg = cfg
	e.in.Config, e.in.Params = &carry, nil
	return nil
}

// runQuestions runs the questions without a full set of records, at most
// eval.parallelism at once. It returns true when this run has started
// eval.continue_every questions (or the server suggests it) and should
// continue as new once those finished.
func (e *evaluation) runQuestions(ctx workflow.Context) (bool, error) {
	inFlight, started := 0, 0
	par := max(1, e.cfg.Eval.Parallelism)
	for i, q := range e.in.Questions {
		if e.complete(i) {
			continue
		}
		if started >= e.cfg.Eval.ContinueEvery || workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
			return true, workflow.Await(ctx, func() bool { return inFlight == 0 })
		}
		if err := workflow.Await(ctx, func() bool { return inFlight < par }); err != nil {
			return false, err
		}
		inFlight++
		started++
		e.running = append(e.running, q.ID)
		workflow.Go(ctx, func(ctx workflow.Context) {
			defer func() { inFlight-- }()
			e.question(ctx, i, q)
			e.running = without(e.running, q.ID)
			e.publish(ctx)
		})
	}
	return false, workflow.Await(ctx, func() bool { return inFlight == 0 })
}

func without(xs []string, x string) []string {
	var out []string
	for _, y := range xs {
		if y != x {
			out = append(out, y)
		}
	}
	return out
}

func (e *evaluation) has(i int, system string) bool {
	for _, r := range e.st.Records {
		if r.Index == i && r.System == system {
			return true
		}
	}
	return false
}

func (e *evaluation) complete(i int) bool {
	for _, s := range e.in.Systems {
		if !e.has(i, s) {
			return false
		}
	}
	return true
}

// question runs every system still missing a record for question i side
// by side, each followed by its Score.
func (e *evaluation) question(ctx workflow.Context, i int, q contract.EvalQuestion) {
	wg := workflow.NewWaitGroup(ctx)
	for _, sys := range e.in.Systems {
		if e.has(i, sys) {
			continue
		}
		wg.Add(1)
		workflow.Go(ctx, func(ctx workflow.Context) {
			defer wg.Done()
			rec := e.system(ctx, i, q, sys)
			e.keep(rec)
			e.publish(ctx)
		})
	}
	wg.Wait(ctx)
}

// keep adds a record to the state without the texts that live in the
// output directory, so history and continue-as-new stay small.
func (e *evaluation) keep(r contract.EvalRecord) {
	r.Answer, r.JudgeReason = "", ""
	e.st.Records = append(e.st.Records, r)
}

// system runs one system on one question and scores it; a failure is a
// failed record, never a failed evaluation.
func (e *evaluation) system(ctx workflow.Context, i int, q contract.EvalQuestion, sys string) contract.EvalRecord {
	in := contract.ScoreInput{
		EvalID: e.id, Index: i, Question: q, System: sys, Eval: e.cfg.Eval,
		JudgeModel: firstSet(e.cfg.Eval.JudgeModel, e.cfg.LLM.Model),
	}
	var err error
	switch sys {
	case SystemLethe:
		err = e.lethe(ctx, q, &in)
	case SystemRAG:
		err = workflow.ExecuteActivity(summarized(evalCtx(ctx, e.cfg, 2), "rag baseline: %s", q.ID), acts.BaselineRAG, e.baselineInput(q)).Get(ctx, &in.Answer)
	case SystemLoop:
		err = workflow.ExecuteActivity(summarized(evalCtx(ctx, e.cfg, 2), "loop baseline: %s", q.ID), acts.BaselineLoop, e.baselineInput(q)).Get(ctx, &in.Answer)
	}
	if err != nil {
		e.log.Warn("system failed on question", "system", sys, "question", q.ID, "error", err)
		return failedRecord(i, q, sys, in.Answer, err)
	}
	var rec contract.EvalRecord
	if err := workflow.ExecuteActivity(summarized(evalCtx(ctx, e.cfg, 10), "score %s on %s", sys, q.ID), acts.Score, in).Get(ctx, &rec); err != nil {
		e.log.Warn("scoring failed", "system", sys, "question", q.ID, "error", err)
		return failedRecord(i, q, sys, in.Answer, fmt.Errorf("score: %w", err))
	}
	return rec
}

func (e *evaluation) baselineInput(q contract.EvalQuestion) contract.BaselineInput {
	return contract.BaselineInput{EvalID: e.id, QID: q.ID, Question: q.Question, Eval: e.cfg.Eval,
		Schema: e.cfg.LLM.JSONSchema, SchemaLoose: e.cfg.LLM.JSONSchemaLoose}
}

// lethe runs the question as a child session with the evaluation's config;
// the child's id is <eval id>/<question id>/lethe, so a replayed or resumed
// evaluation finds the same child instead of starting another.
func (e *evaluation) lethe(ctx workflow.Context, q contract.EvalQuestion, in *contract.ScoreInput) error {
	id := fmt.Sprintf("%s/%s/%s", e.id, q.ID, SystemLethe)
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:    id,
		TaskQueue:     e.cfg.Temporal.TaskQueue,
		RetryPolicy:   &temporal.RetryPolicy{MaximumAttempts: 1},
		StaticSummary: fmt.Sprintf("lethe on %s: %s", q.ID, truncateRunes(q.Question, 120)),
	})
	start := workflow.Now(ctx)
	cfg := e.cfg
	var res SessionResult
	if err := workflow.ExecuteChildWorkflow(cctx, SessionWorkflow, SessionInput{Goal: q.Question, Config: &cfg}).Get(ctx, &res); err != nil {
		return err
	}
	in.SessionID, in.Sources = id, res.Sources
	in.Answer = contract.SystemAnswer{
		Answer: res.Report, Calls: res.Stats.LLMCalls, PromptTokens: res.Stats.PromptTokens,
		CompletionTokens: res.Stats.CompletionToken, Seconds: workflow.Now(ctx).Sub(start).Seconds(),
	}
	return nil
}

func failedRecord(i int, q contract.EvalQuestion, sys string, a contract.SystemAnswer, err error) contract.EvalRecord {
	return contract.EvalRecord{
		Index: i, Question: q.ID, Kind: q.Kind, System: sys, Failed: true, Error: truncateRunes(errorText(err), 300),
		Calls: a.Calls, PromptTokens: a.PromptTokens, CompletionTokens: a.CompletionTokens, Seconds: a.Seconds,
	}
}

func firstSet(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// evalRetry retries the evaluation's model activities through a model
// outage (the Guard classifies a timeout or a refused connection as
// ModelUnavailable, which a session waits out itself): the server retries
// them for up to llm.outage_tolerance, backing off to
// llm.outage_max_backoff; what is still failing then is a failed record.
func evalRetry(cfg contract.Config) *temporal.RetryPolicy {
	var types []string
	for _, t := range nonRetryable {
		if t != contract.ErrModelUnavailable {
			types = append(types, t)
		}
	}
	return &temporal.RetryPolicy{
		InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: cfg.LLM.OutageMaxBackoff,
		NonRetryableErrorTypes: types,
	}
}

// evalCtx is for a baseline (retrieval and up to two model calls) or a
// Score (a few judge calls), each call bounded by llm.timeout.
func evalCtx(ctx workflow.Context, cfg contract.Config, calls int) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:              cfg.Temporal.QueueLLM(),
		StartToCloseTimeout:    time.Duration(calls)*cfg.LLM.Timeout + 2*time.Minute,
		ScheduleToCloseTimeout: time.Duration(calls)*cfg.LLM.Timeout + 2*time.Minute + cfg.LLM.OutageTolerance,
		HeartbeatTimeout:       heartbeat(cfg),
		RetryPolicy:            evalRetry(cfg),
	})
}
