package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/lethe-research/lethe/contract"
	"github.com/lethe-research/lethe/din"
)

// changeCutOps: an invalid answer that the output limit cut inside its ops
// list keeps the ops written whole before the cut (din.CutOps) when they
// are valid, instead of a repair call (docs/cut-answers.md).
const changeCutOps = "cut-answers"

// keepCut returns the valid ops of an answer cut by the output limit
// (out.Cut), or, when it keeps none, the errors for its repair prompt:
// first that the limit cut the answer, then what is wrong with the ops it
// wrote whole, or errs (the whole answer's) when it wrote none whole or
// din.keep_cut_ops is off. The version marker is recorded only when ops are
// kept, so a session that never meets a cut answer records none.
func (s *session) keepCut(ctx workflow.Context, iter int, out contract.ReasonResult, k din.Known, lim din.Limits, errs []din.Error) ([]din.Op, []din.Error) {
	cut := []din.Error{din.CutError(out.CompletionTokens)}
	obj, n := din.CutOps(out.Content)
	if n == 0 || !s.cfg.DIN.KeepCutOps {
		return nil, append(cut, errs...)
	}
	ops, whole, restated := din.ParseCounted(obj, k, lim)
	if len(whole) > 0 || workflow.GetVersion(ctx, changeCutOps, workflow.DefaultVersion, 1) < 1 {
		if len(whole) == 0 { // a session from before the change repairs as it did
			whole = errs
		}
		return nil, append(cut, whole...)
	}
	s.st.Stats.CutAnswers++
	s.countRestated(iter, restated)
	s.log.Info("answer cut by the output limit; keeping the ops before the cut", "iteration", iter, "ops", len(ops),
		"completion_tokens", out.CompletionTokens)
	return ops, nil
}
