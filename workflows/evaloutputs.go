package workflows

import (
	"errors"
	"fmt"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/lethe-research/lethe/contract"
	"github.com/lethe-research/lethe/eval/score"
)

// changeOutputsWait: a WriteEvalOutputs that fails past its retries makes
// the evaluation wait for SignalRetryOutputs (at most eval.outputs_wait)
// instead of failing it. Only the failure path records the marker, so a
// history whose outputs were written replays unchanged, and one that
// failed there replays its failure.
const changeOutputsWait = "eval-outputs-wait"

// phaseWaitingOutputs is the progress phase of StatusWaitingOutputs.
const phaseWaitingOutputs = "waiting for output dir"

// result is the evaluation's result without its output directory: the
// table and summaries come from the records the workflow holds (the
// answers' texts are not needed for them), so no file error can lose them.
func (e *evaluation) result() EvalResult {
	recs := append([]contract.EvalRecord(nil), e.st.Records...)
	score.SortRecords(recs, e.in.Systems)
	sums := score.Summarize(recs, e.in.Systems)
	failed := 0
	for _, r := range recs {
		if r.Failed {
			failed++
		}
	}
	return EvalResult{EvalID: e.id, Table: score.Table(sums, nil), Summaries: sums, Failed: failed}
}

// writeOutputs runs WriteEvalOutputs (its retry policy covers transient
// errors) until it succeeds, returning the directory. When it fails past
// its retries (a path that is a file, a permission), the evaluation shows
// StatusWaitingOutputs with the error and waits for SignalRetryOutputs,
// then tries again; after eval.outputs_wait without a signal it returns
// the error as text, and the evaluation ends with its table and no files.
// Hours of finished questions are never lost to a directory.
func (e *evaluation) writeOutputs(ctx workflow.Context) (dir, outErr string, err error) {
	retryCh := workflow.GetSignalChannel(ctx, SignalRetryOutputs)
	in := contract.EvalOutputsInput{EvalID: e.id, Systems: e.in.Systems, Records: e.st.Records, OutDir: e.cfg.Eval.OutDir}
	for {
		e.phase = "writing outputs"
		e.publish(ctx)
		var out contract.EvalOutputsResult
		err := workflow.ExecuteActivity(summarized(graphCtx(ctx, e.cfg), "write table, JSONL and plot"), acts.WriteEvalOutputs, in).Get(ctx, &out)
		if err == nil {
			e.outputsError = ""
			return out.Dir, "", nil
		}
		if workflow.GetVersion(ctx, changeOutputsWait, workflow.DefaultVersion, 1) < 1 {
			return "", "", fmt.Errorf("write outputs: %w", err)
		}
		e.outputsError = errorText(err)
		e.log.Warn("outputs not written; waiting for the retry-outputs signal",
			"error", e.outputsError, "out_dir", in.OutDir, "wait", e.cfg.Eval.OutputsWait)
		e.phase = phaseWaitingOutputs
		e.publish(ctx)
		if !e.awaitRetry(ctx, retryCh) {
			e.log.Warn("no retry-outputs signal in eval.outputs_wait: ending without output files", "error", e.outputsError)
			return "", e.outputsError, nil
		}
		e.log.Info("retry-outputs signal: writing the outputs again")
	}
}

// awaitRetry waits for SignalRetryOutputs for at most eval.outputs_wait
// and says whether it came. A signal sent before the wait counts.
func (e *evaluation) awaitRetry(ctx workflow.Context, retryCh workflow.ReceiveChannel) bool {
	if retryCh.ReceiveAsync(nil) {
		return true
	}
	if e.cfg.Eval.OutputsWait <= 0 {
		return false
	}
	tctx, cancel := workflow.WithCancel(ctx)
	defer cancel()
	got := false
	sel := workflow.NewSelector(ctx)
	sel.AddReceive(retryCh, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, nil); got = true })
	sel.AddFuture(workflow.NewTimer(tctx, e.cfg.Eval.OutputsWait), func(workflow.Future) {})
	sel.Select(ctx)
	return got
}

// errorText is an activity error's own message, without the SDK's
// wrapping ("activity error (type: ..., scheduledEventID: ...)").
func errorText(err error) string {
	var ae *temporal.ApplicationError
	if errors.As(err, &ae) && ae.Message() != "" {
		return ae.Message()
	}
	return err.Error()
}
