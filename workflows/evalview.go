package workflows

import (
	"errors"
	"fmt"
	"strings"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// progress is the running state per system, computed with plain loops in
// the order the systems were given.
func (e *evaluation) progress() EvalProgress {
	p := EvalProgress{EvalID: e.id, Phase: e.phase, Questions: len(e.in.Questions), Running: e.running, Runs: e.st.Runs,
		OutputsError: e.outputsError}
	for i := range e.in.Questions {
		if e.complete(i) {
			p.Done++
		}
	}
	for _, s := range e.in.Systems {
		st := SystemStatus{System: s}
		for _, r := range e.st.Records {
			if r.System != s {
				continue
			}
			st.Records++
			if r.Failed {
				st.Failed++
			}
			if r.Contains {
				st.Contains++
				if !r.UnverifiedOnly {
					st.Verified++
				}
			}
			if r.Backed {
				st.Backed++
			}
			st.Judge += r.Judge
			st.Cited += r.Cited
			st.Supported += r.Supported
			st.Unjudged += r.Unjudged
			st.Tokens += r.PromptTokens + r.CompletionTokens
		}
		if st.Records > 0 {
			st.Contains /= float64(st.Records)
			st.Verified /= float64(st.Records)
			st.Backed /= float64(st.Records)
			st.Judge /= float64(st.Records)
		}
		p.Systems = append(p.Systems, st)
	}
	return p
}

// publish shows the evaluation's progress in the UI: LetheStatus and
// LetheIteration (questions done) as search attributes, a Markdown table
// as current details.
func (e *evaluation) publish(ctx workflow.Context) {
	p := e.progress()
	if e.cfg.Temporal.SearchAttributes {
		status := StatusEvaluating
		switch e.phase {
		case "done":
			status = StatusDone
		case phaseWaitingOutputs:
			status = StatusWaitingOutputs
		case "failed":
			status = StatusFailed
		}
		if err := workflow.UpsertTypedSearchAttributes(ctx, AttrStatus.ValueSet(status), AttrIteration.ValueSet(int64(p.Done))); err != nil {
			e.log.Warn("search attribute upsert failed", "error", err)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "### Lethe evaluation: %s\n\n%d of %d questions done", e.phase, p.Done, p.Questions)
	if len(p.Running) > 0 {
		fmt.Fprintf(&b, "; running: %s", strings.Join(p.Running, ", "))
	}
	if e.phase == phaseWaitingOutputs {
		fmt.Fprintf(&b, "\n\nThe outputs were not written: %s. Fix it on the worker's side, then `temporal workflow signal --workflow-id %s --name %s`; after %s without a signal the evaluation ends with the table in its result and no files.",
			p.OutputsError, e.id, SignalRetryOutputs, e.cfg.Eval.OutputsWait)
	}
	b.WriteString("\n\n| system | scored | failed | correct (contains) | correct (verified) | correct (backed) | correct (judge) | citations supported | unjudged | tokens |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, s := range p.Systems {
		fmt.Fprintf(&b, "| %s | %d | %d | %.2f | %.2f | %.2f | %.2f | %d of %d | %d | %d |\n", s.System, s.Records, s.Failed, s.Contains, s.Verified, s.Backed, s.Judge, s.Supported, s.Cited, s.Unjudged, s.Tokens)
	}
	workflow.SetCurrentDetails(ctx, b.String())
}

// markFailed publishes LetheStatus=failed when the evaluation ends with an
// error (not continue-as-new, not a cancellation), as the session's
// markFailed does and for the same reasons, under the same version marker.
func (e *evaluation) markFailed(ctx workflow.Context, err error) {
	if err == nil || workflow.IsContinueAsNewError(err) || temporal.IsCanceledError(err) || errors.Is(ctx.Err(), workflow.ErrCanceled) {
		return
	}
	e.phase = "failed"
	e.log.Error("evaluation failed", "error", err)
	if e.cfg.Temporal.SearchAttributes && workflow.GetVersion(ctx, changeFailedStatus, workflow.DefaultVersion, 1) < 1 {
		return
	}
	e.publish(ctx)
}
