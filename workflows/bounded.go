package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/lethe-research/lethe/contract"
	"github.com/lethe-research/lethe/din"
)

// changeBoundedView (lane payloads, #14; docs/bounded-view.md): the task
// list no longer crosses into the workflow. ReadState returns the ready set
// (ranked, capped at loop.view_ready) and status counts, and runs as a
// local activity, as Observe does, so the end of one iteration and the
// start of the next share one workflow task; FocusView replaces Focus and
// returns the focus's neighbourhood (capped at loop.view_neighbour per
// relation), which is all the DIN-Read shows, the tree query keeps and
// continue-as-new carries.
const changeBoundedView = "bounded-view"

// localCtx is graphCtx for a local activity: a short store read or an
// idempotent store write that runs in the worker that runs the workflow
// task, recorded as one marker instead of a scheduled, started and
// completed activity and a workflow task around it.
func localCtx(ctx workflow.Context, cfg contract.Config, format string, args ...any) workflow.Context {
	return workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: cfg.Temporal.ActivityTimeout,
		// Without it the SDK bounds every attempt together by one
		// start-to-close, and a store down for seconds (a Neo4j restart)
		// fails the session instead of being retried like graphCtx's
		// activities: room for the retry policy's backoffs (about 7.5
		// minutes over 20 attempts) on top.
		ScheduleToCloseTimeout: cfg.Temporal.ActivityTimeout + localRetryWindow,
		RetryPolicy:            retry(20),
		Summary:                fmt.Sprintf(format, args...),
	})
}

// localRetryWindow is what retry(20)'s backoffs add up to, rounded up:
// 1+2+4+8+16 s, then 30 s for each of the other 14 waits.
const localRetryWindow = 8 * time.Minute

// execLocal runs a local activity, waiting out outages like exec.
func (s *session) execLocal(ctx, lctx workflow.Context, activity, in, out any) error {
	return s.wait.run(ctx, func() workflow.Future { return workflow.ExecuteLocalActivity(lctx, activity, in) }, out)
}

// readView is step 2 in the bounded view: the ready set ranked with the
// pressure step 1 set, cut at loop.view_ready.
func (s *session) readView(ctx workflow.Context, iter int) (contract.ReadStateResult, error) {
	var rs contract.ReadStateResult
	in := contract.ReadStateInput{SessionID: s.id, Iteration: iter, View: &contract.ViewParams{
		Ready: s.cfg.Loop.ViewReady, Pressure: s.st.Pressure, MaxWarp: s.cfg.Algebra.MaxWarpAngle}}
	err := s.execLocal(ctx, localCtx(ctx, s.cfg, "iteration %d: read ready set (best %d)", iter, s.cfg.Loop.ViewReady), acts.ReadState, in, &rs)
	return rs, err
}

// focusView is steps 3b-5 with the neighbourhood of the focus. It runs
// as a local activity when local (changeLocalSteps and no NLI: with NLI
// its SIMILAR_TO sync makes chat calls, which belong on a scheduled
// activity with its own timeout and heartbeat).
func (s *session) focusView(ctx workflow.Context, iter int, sel string, local bool) (contract.FocusViewResult, error) {
	var fv contract.FocusViewResult
	in := contract.FocusViewInput{Neighbour: s.cfg.Loop.ViewNeighbour, Focus: contract.FocusInput{SessionID: s.id, Iteration: iter, Task: sel,
		Similar: contract.SimilarFor(s.cfg), Context: s.cfg.Context, ChunkChars: s.cfg.Research.ChunkChars}}
	if err := s.step(ctx, local, focusCtx(ctx, s.cfg), acts.FocusView, in, &fv, "iteration %d: focus on %s (mark active, sync SIMILAR_TO, PPR context, neighbourhood)", iter, sel); err != nil {
		return fv, fmt.Errorf("iteration %d focus on %s: %w", iter, sel, err)
	}
	return fv, nil
}

// boundedKnown is what validation knows in the bounded view: the tasks
// shown (the focus ACTIVE) and the tasks the evidence lines name. An id
// outside is unknown to the model, and validation says so; a new id that
// names a task outside is renamed by ApplyOps (ApplyInput.Rename).
func boundedKnown(hood []contract.TaskInfo, named []contract.TaskRef, sel string) din.Known {
	k := known(withStatus(hood, sel, contract.TaskActive), sel)
	for _, r := range named {
		if _, ok := k.Status[r.ShortID]; !ok {
			k.Status[r.ShortID] = r.Status
		}
	}
	return k
}

// changeLocalSteps (lane load, #14; docs/local-steps.md): the store steps
// between two model calls run as local activities in the workflow task
// that the model call's completion starts: ApplyOps, the query dedup
// (CheckQuery), a revert to PENDING, and FocusView unless NLI is on. With
// ReadState and Observe already local (changeBoundedView), an iteration
// without tool calls is one workflow task and one scheduled activity (the
// model call) instead of three of each. Each step is idempotent by
// (session, iteration, step), so a workflow task retried on another
// worker repeats it safely.
const changeLocalSteps = "local-steps"

// changeLocalStart and changeLocalEnds (#14, docs/local-steps.md) extend
// local steps to the session's start (HealthCheck, Bootstrap) and its
// assembly's store steps (CollectSections, Finalize): a session's start is
// then one workflow task up to its first model call, and its assembly one
// per model call. At 200 sessions started together the start was the
// largest share of the overhead (docs/scaling.md). Both steps are
// idempotent: Bootstrap resets the session before creating it, and
// nothing else has written to it when it runs; CollectSections reads;
// Finalize's writes are conditional.
const (
	changeLocalStart = "local-start"
	changeLocalEnds  = "local-ends"
)

// probeLocalCtx runs HealthCheck as a local activity with probeCtx's
// bounds: one attempt of a minute, whose failure fails the session's start.
func probeLocalCtx(ctx workflow.Context, summary string) workflow.Context {
	return workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout:    time.Minute,
		ScheduleToCloseTimeout: time.Minute,
		RetryPolicy:            retry(1),
		Summary:                summary,
	})
}

// step runs a store step as a local activity (local) or as an activity
// scheduled with the options of base, each with the same summary.
func (s *session) step(ctx workflow.Context, local bool, base workflow.Context, activity, in, out any, format string, args ...any) error {
	if local {
		return s.execLocal(ctx, localCtx(ctx, s.cfg, format, args...), activity, in, out)
	}
	return s.exec(ctx, summarized(base, format, args...), activity, in, out)
}
