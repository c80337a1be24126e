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

// keepCut returns the valid ops of an answer cut by the output limit, or
// false when the answer was not cut, nothing whole came before the cut, or
// what came is not valid on its own (then the repair call asks again, as
// for any invalid answer). The version marker is recorded only when ops
// are kept, so a session that never meets a cut answer records none.
func (s *session) keepCut(ctx workflow.Context, iter int, out contract.ReasonResult, k din.Known, lim din.Limits) ([]din.Op, bool) {
	if !out.Cut || !s.cfg.DIN.KeepCutOps {
		return nil, false
	}
	obj, n := din.CutOps(out.Content)
	if n == 0 {
		return nil, false
	}
	ops, errs := din.Parse(obj, k, lim)
	if len(errs) > 0 || workflow.GetVersion(ctx, changeCutOps, workflow.DefaultVersion, 1) < 1 {
		return nil, false
	}
	s.st.Stats.CutAnswers++
	s.log.Info("answer cut by the output limit; keeping the ops before the cut", "iteration", iter, "ops", len(ops),
		"completion_tokens", out.CompletionTokens)
	return ops, true
}
