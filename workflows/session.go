package workflows

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/lethe-research/lethe/algebra"
	"github.com/lethe-research/lethe/contract"
	"github.com/lethe-research/lethe/din"
)

// session is one run of the ResearchSession workflow: its input, resolved
// configuration and the state it carries.
type session struct {
	id    string
	in    SessionInput
	cfg   contract.Config
	st    *SessionState
	phase string
	stop  string
	log   log.Logger
	wait  *waiter // waits out model outages; nil until the config is resolved
	stops int     // stop signals received by this run
	// report is the whole report once assembled (the report query); the
	// result carries it cut when it is over the payload bound.
	report string
	// children are the research runs under way, told of a stop.
	children []workflow.ChildWorkflowFuture
	// localEnd: assembly's store steps run as local activities
	// (changeLocalEnds), asked once when assembly starts.
	localEnd bool
	// failure is the error the session failed with, for its details.
	failure string
}

// ResearchSession is the durable research session: bootstrap → iterate →
// assemble → finalize. Its state (budget, EMA trackers, previous signals)
// lives in workflow history, its graph in the graph store.
func ResearchSession(ctx workflow.Context, in SessionInput) (res SessionResult, err error) {
	id := workflow.GetInfo(ctx).WorkflowExecution.ID
	s := &session{id: id, in: in, st: in.State, phase: "configuring"}
	s.log = log.With(workflow.GetLogger(ctx), "session", id)
	if s.st == nil {
		s.st = &SessionState{}
	}
	if in.Config != nil {
		s.cfg = *in.Config // whether LetheStatus may be upserted, should the input be refused
	}
	defer func() { s.markFailed(ctx, err) }()
	return s.run(ctx)
}

// run is the session from its input to its result.
func (s *session) run(ctx workflow.Context) (SessionResult, error) {
	if err := s.start(ctx); err != nil {
		return SessionResult{}, err
	}
	stopCh := workflow.GetSignalChannel(ctx, SignalStop)
	// A stop must reach a session that waits for its model server, not
	// only the loop's next termination check, and its research runs, which
	// may be the ones waiting.
	workflow.Go(ctx, func(ctx workflow.Context) {
		for stopCh.Receive(ctx, nil) {
			s.st.StopRequested = true
			s.stops++
			for _, f := range s.children {
				f.SignalChildWorkflow(ctx, SignalStop, nil) // a finished child ignores it
			}
		}
	})
	reason, err := s.loop(ctx, stopCh)
	if isOutage(err) {
		s.log.Warn("model server stayed down; assembling what exists", "error", err)
		s.releaseCurrent(ctx)
		reason, err = StopModelUnavailable, nil
		if s.st.StopRequested {
			reason = StopRequested
		}
	}
	if err != nil {
		if temporal.IsCanceledError(err) || errors.Is(ctx.Err(), workflow.ErrCanceled) {
			return s.cancelled(ctx, err)
		}
		return SessionResult{}, err
	}
	if reason == "" { // continue-as-new
		return SessionResult{}, s.continueAsNew(ctx, stopCh)
	}
	s.stop = reason
	s.log.Info("loop finished", "reason", reason, "iterations", s.st.Iteration, "psi", s.st.Psi)
	res, err := s.assemble(ctx)
	if err == nil {
		s.publish(ctx, StatusDone) // from the finalized counts: the search attributes equal the result
	}
	if err != nil {
		if errors.Is(ctx.Err(), workflow.ErrCanceled) {
			return s.cancelled(ctx, err)
		}
		return SessionResult{}, err
	}
	return res, nil
}

// start checks the input, resolves the config and, on the session's
// first run, bootstraps it.
func (s *session) start(ctx workflow.Context) error {
	in := s.in
	if strings.TrimSpace(in.Goal) == "" {
		return invalid("goal is empty")
	}
	if err := s.registerControl(ctx); err != nil {
		return err
	}
	if err := s.resolveConfig(ctx); err != nil {
		return err
	}
	s.wait = newWaiter(s.cfg, &s.st.ModelWaited, &s.st.ModelGaveUp, func(ctx workflow.Context, _ *ModelWait) { s.publish(ctx, s.status()) })
	s.wait.stops = func() int { return s.stops }
	if n := utf8.RuneCountInString(in.Goal); n > s.cfg.Session.GoalMaxChars {
		return invalid(fmt.Sprintf("goal has %d characters, more than session.goal_max_chars = %d", n, s.cfg.Session.GoalMaxChars))
	}
	if n := utf8.RuneCountInString(in.Instructions); n > s.cfg.Session.InstructionsMaxChars {
		return invalid(fmt.Sprintf("instructions have %d characters, more than session.instructions_max_chars = %d", n, s.cfg.Session.InstructionsMaxChars))
	}
	if !s.st.Bootstrapped {
		return s.bootstrap(ctx)
	}
	return nil
}

func invalid(msg string) error {
	return temporal.NewNonRetryableApplicationError("invalid input: "+msg, contract.ErrInvalidInput, nil)
}

// resolveConfig uses the config recorded in the input, or asks the worker to
// resolve its own with the session's overrides; either way the parameters
// are fixed in history for the whole session.
func (s *session) resolveConfig(ctx workflow.Context) error {
	if s.in.Config != nil {
		if len(s.in.Params) > 0 {
			return invalid("give either config or params, not both")
		}
		if err := s.in.Config.Validate(); err != nil {
			return temporal.NewNonRetryableApplicationError(err.Error(), contract.ErrConfig, nil)
		}
	}
	cfg, carry, err := resolveInputConfig(ctx, s.in.Config, s.in.Params, "a session's")
	if err != nil {
		s.cfg.Temporal.SearchAttributes = attributesRegistered(err)
		return err
	}
	s.cfg = cfg
	s.in.Config, s.in.Params = &carry, nil
	return nil
}

func (s *session) bootstrap(ctx workflow.Context) error {
	s.phase = "bootstrap"
	local := workflow.GetVersion(ctx, changeLocalStart, workflow.DefaultVersion, 1) == 1
	var health contract.HealthResult
	in := contract.HealthInput{SessionID: s.id, Providers: s.cfg.Research.ProviderList()}
	const probe = "probe chat, embedding and graph services"
	var hf workflow.Future
	if local {
		hf = workflow.ExecuteLocalActivity(probeLocalCtx(ctx, probe), acts.HealthCheck, in)
	} else {
		hf = workflow.ExecuteActivity(summarized(probeCtx(ctx, s.cfg), probe), acts.HealthCheck, in)
	}
	if err := hf.Get(ctx, &health); err != nil {
		return fmt.Errorf("health check: %w", err)
	}
	for _, w := range health.Warnings {
		s.log.Warn("search provider unavailable at start", "warning", w)
	}
	var b contract.BootstrapResult
	if err := s.step(ctx, local, graphCtx(ctx, s.cfg), acts.Bootstrap, contract.BootstrapInput{SessionID: s.id, Goal: s.in.Goal}, &b, "create session graph and root task"); err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}
	s.st.Bootstrapped = true
	s.st.Trackers = algebra.InitialTrackers()
	s.st.Dim = b.Dim
	s.st.StartedAt = workflow.Now(ctx)
	s.st.Models = map[string]string{"chat": b.ChatModel, "embed": b.EmbedModel}
	s.publish(ctx, StatusRunning)
	s.log.Info("session bootstrapped", "dim", b.Dim, "chat_model", b.ChatModel, "embed_model", b.EmbedModel)
	return nil
}

// loop runs iterations until a stop reason, or returns "" when the run
// should continue as new.
func (s *session) loop(ctx workflow.Context, stopCh workflow.ReceiveChannel) (string, error) {
	s.phase = "iterating"
	for {
		drainStop(stopCh, s.st)
		if reason := s.checkTermination(ctx); reason != "" {
			return reason, nil
		}
		if s.seedSearch(ctx) {
			continue
		}
		reason, err := s.iterate(ctx)
		if err != nil {
			return "", err
		}
		if reason != "" {
			return reason, nil
		}
		s.st.RunIterations++
		if s.st.RunIterations >= s.cfg.Temporal.ContinueEvery || workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
			return "", nil
		}
	}
}

// exec runs an activity, waiting out model outages (see waiter).
func (s *session) exec(ctx, actx workflow.Context, activity, in, out any) error {
	return s.wait.run(ctx, func() workflow.Future { return workflow.ExecuteActivity(actx, activity, in) }, out)
}

// releaseCurrent sends the task in focus back to PENDING when the loop
// stops without finishing its iteration (a model outage past the
// tolerance): the iteration did not happen, so the task was not worked on.
func (s *session) releaseCurrent(ctx workflow.Context) {
	if s.st.Current == "" {
		return
	}
	in := contract.StatusInput{SessionID: s.id, Task: s.st.Current, From: []contract.TaskStatus{contract.TaskActive}, To: contract.TaskPending}
	if err := workflow.ExecuteActivity(graphCtx(ctx, s.cfg), acts.SetStatus, in).Get(ctx, nil); err != nil {
		s.log.Warn("release task after outage failed", "task", s.st.Current, "error", err)
	}
}

// elapsed is the session's wall-clock time, less the time it waited for
// a model server: an outage does not spend the session's budget.
func (s *session) elapsed(ctx workflow.Context) time.Duration {
	return workflow.Now(ctx).Sub(s.st.StartedAt) - s.st.ModelWaited
}

// status is LetheStatus for the session's phase, or waiting_for_model.
func (s *session) status() string {
	switch {
	case s.wait != nil && s.wait.current != nil:
		return StatusWaiting
	case s.phase == "assembling" || s.phase == "finalizing":
		return StatusAssembling
	}
	return StatusRunning
}

func drainStop(ch workflow.ReceiveChannel, st *SessionState) {
	for {
		var v any
		ok, _ := ch.ReceiveAsyncWithMoreFlag(&v)
		if !ok {
			return
		}
		st.StopRequested = true
	}
}

// continueAsNew hands the state to a fresh run once every handler finished
// and pending signals are folded into the state.
func (s *session) continueAsNew(ctx workflow.Context, stopCh workflow.ReceiveChannel) error {
	if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil {
		return err
	}
	drainStop(stopCh, s.st)
	st := *s.st
	st.RunIterations = 0
	st.Runs++
	s.log.Info("continuing as new", "iteration", st.Iteration)
	return workflow.NewContinueAsNewError(ctx, SessionWorkflow, SessionInput{
		Goal: s.in.Goal, Instructions: s.in.Instructions, Config: &s.cfg, State: &st,
	})
}

// cancelled finalizes the graph in a disconnected context, so a cancelled
// session leaves no ACTIVE task behind, and reports the cancellation.
func (s *session) cancelled(ctx workflow.Context, cause error) (SessionResult, error) {
	s.stop = StopCancelled
	s.phase = "cancelled"
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	s.publish(dctx, StatusCancelled)
	var fin contract.FinalizeResult
	if err := workflow.ExecuteActivity(graphCtx(dctx, s.cfg), acts.Finalize, contract.FinalizeInput{SessionID: s.id, Similar: contract.SimilarOf(s.cfg.Algebra)}).Get(dctx, &fin); err != nil {
		s.log.Error("finalize after cancel failed", "error", err)
	}
	return SessionResult{}, cause
}

func (s *session) progress() (Progress, error) {
	return Progress{
		SessionID: s.id, Goal: s.in.Goal, Phase: s.phase, Iteration: s.st.Iteration,
		MaxIterations: s.st.MaxIterations(s.cfg.Budget.MaxIterations), CurrentTask: s.st.Current,
		MaxWallClock: s.st.MaxWallClock(s.cfg.Budget.MaxWallClock).String(), Runs: s.st.Runs, Guides: s.st.Guides,
		Pressure: s.st.Pressure, Psi: s.st.Psi, Tasks: s.st.Counts, Evidence: s.st.Evidence,
		LastOps: s.st.LastOps, StopReason: s.stop, Stats: s.st.Stats, Waiting: s.wait.current,
		ModelWaited: s.st.ModelWaited.String(),
	}, nil
}

// known is what validation needs of the session's tasks: every short id with
// its status, and the task the answer is for.
func known(tasks []contract.TaskInfo, active string) din.Known {
	k := din.Known{Status: make(map[string]contract.TaskStatus, len(tasks)), Active: active}
	for _, t := range tasks {
		k.Status[t.ShortID] = t.Status
	}
	return k
}

func countStatuses(tasks []contract.TaskInfo) map[string]int {
	c := map[string]int{}
	for _, t := range tasks {
		c[string(t.Status)]++
	}
	return c
}

func rootDone(tasks []contract.TaskInfo) bool {
	for _, t := range tasks {
		if t.ShortID == contract.RootShortID {
			return t.Status == contract.TaskDone
		}
	}
	return false
}
