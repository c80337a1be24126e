package workflows

import (
	"math"
	"time"

	"github.com/lethe-research/lethe/algebra"
	"github.com/lethe-research/lethe/contract"
)

// The loop's decisions as pure functions of explicit inputs: what the
// workflow decides with is what it passes, nothing is read from state.

// budgetInput is what the budget manager decides with.
type budgetInput struct {
	Iteration, MaxIterations int
	Elapsed, MaxWallClock    time.Duration // elapsed less model waits
	Prev                     Signals       // the previous iteration's signals
	ZeroYield                int           // consecutive searches that found nothing
}

// budgetOutput is the budget manager's state for the coming iteration.
type budgetOutput struct {
	ResourceProgress, Pressure, Psi float64
	ThinkingBudget                  int
}

// budgetUpdate is the budget manager (seed 000 "Budget Management"):
//
//	r = ResourceProgress(iter/maxIter, elapsed/maxWall)   bottleneck of the two
//	c = ZeroYieldBoostStep(convergence, zeroYield, zero_yield_step)
//	p = BudgetHorizon(AcceleratedProgress(r, c), α)
//	ψ = PsiWith(psi gates, c, plateau, iter, minIter, p, r)
//
// and the thinking budget from novelty (1 before anything was observed:
// unfamiliar territory) and pressure.
func budgetUpdate(in budgetInput, b contract.Budget, th contract.Thinking) budgetOutput {
	var out budgetOutput
	iterFrac := float64(in.Iteration) / float64(in.MaxIterations)
	wallFrac := in.Elapsed.Seconds() / in.MaxWallClock.Seconds()
	out.ResourceProgress = algebra.ResourceProgress(iterFrac, wallFrac)
	conv := algebra.ZeroYieldBoostStep(in.Prev.Convergence, in.ZeroYield, b.ZeroYieldStep)
	out.Pressure = algebra.BudgetHorizon(algebra.AcceleratedProgress(out.ResourceProgress, conv), b.Alpha)
	out.Psi = algebra.PsiWith(b.PsiParams(), algebra.PsiInputs{
		Convergence:      conv,
		Plateau:          in.Prev.Plateau,
		Iterations:       float64(in.Iteration),
		MinIters:         float64(b.MinIterations),
		Pressure:         out.Pressure,
		ResourceProgress: out.ResourceProgress,
	})
	novelty := 1.0
	if in.Prev.Observed {
		novelty = in.Prev.Novelty
	}
	out.ThinkingBudget = algebra.ThinkingBudget(novelty, out.Pressure, th.MinTokens, th.MaxTokens)
	return out
}

// selectTask is step 3 (seed 000 step 2): for each ready task, the goal
// alignment of its embedding warped toward the gap direction by the angle
// θ = WarpAngle(pressure, maxWarp) (closed form of three cosines), then
// RankScore(GA, EvidenceDeficit(coverage), depth, n_productive)
// (contract.ReadyScore, which ReadState ranks the bounded view with). The
// highest score wins; ties keep the earlier task.
func selectTask(rs contract.ReadStateResult, pressure, maxWarp float64) string {
	info := map[string]contract.TaskInfo{}
	for _, t := range rs.Tasks {
		info[t.ShortID] = t
	}
	best, bestScore := "", math.Inf(-1)
	for _, r := range rs.Ready {
		depth, np := r.Depth, r.NProductive // the bounded view carries them here
		if t, ok := info[r.ShortID]; ok {
			depth, np = t.Depth, t.NProductive
		}
		score := contract.ReadyScore(r, depth, np, rs.GapGoalCos, pressure, maxWarp)
		if score > bestScore {
			best, bestScore = r.ShortID, score
		}
	}
	return best
}

// pack is step 6 (DESIGN.md §6): s_i = (1−w)·ppr_i/max(ppr) + w·GA_i with
// w = w0 + (w1−w0)·p², then the MIG knapsack with AdaGReS redundancy β
// adapted to the candidates' mean pairwise cosine between
// context.beta_min and context.beta_max, under the token budget.
// It returns the picked candidates, best score first.
func pack(ex contract.ExpandResult, pressure float64, c contract.Context) []contract.Candidate {
	n := len(ex.Candidates)
	if n == 0 {
		return nil
	}
	maxPPR := 0.0
	for _, cand := range ex.Candidates {
		maxPPR = math.Max(maxPPR, cand.PPR)
	}
	w := algebra.ContextWeight(pressure, c.GAWeightLow, c.GAWeightHigh)
	scores, tokens := make([]float64, n), make([]int, n)
	for i, cand := range ex.Candidates {
		norm := 0.0
		if maxPPR > 0 {
			norm = cand.PPR / maxPPR
		}
		scores[i] = algebra.BlendScore(norm, algebra.NormalizeCosine(cand.CosGoal), w)
		tokens[i] = cand.Tokens
	}
	picked := algebra.Pack(scores, tokens, ex.Sims.At, c.TokenBudget, algebra.AdaptiveBetaRange(ex.Sims.Mean(), c.BetaMin, c.BetaMax))
	sortByScore(picked, scores)
	out := make([]contract.Candidate, len(picked))
	for i, j := range picked {
		out[i] = ex.Candidates[j]
	}
	return out
}

func sortByScore(idx []int, scores []float64) {
	for i := 1; i < len(idx); i++ { // insertion sort: small, stable, deterministic
		for j := i; j > 0 && scores[idx[j]] > scores[idx[j-1]]; j-- {
			idx[j], idx[j-1] = idx[j-1], idx[j]
		}
	}
}

// tokenStop says whether the loop stops for budget.max_tokens before an
// iteration: it does when the tokens used plus the next iteration's
// estimate (what the last one spent) pass the limit less the share
// reserved for assembly:
//
//	used + next > (1 - reserve) * limit
func tokenStop(used, next, limit int, reserve float64) bool {
	return float64(used+next) > (1-reserve)*float64(limit)
}

// composePlan says which composition calls fit in the tokens left, in
// report order: a part is composed when its estimate (section tokens plus
// the output limit) still fits; a part that does not fit is left to the
// extractive report, and a later, smaller part may still fit.
func composePlan(estimates []int, left int) []bool {
	out := make([]bool, len(estimates))
	for i, e := range estimates {
		if e <= left {
			out[i] = true
			left -= e
		}
	}
	return out
}

// cost prices a session's tokens in dollars: prices are per million tokens.
func cost(prompt, completion, embedded int, cfg contract.Config) float64 {
	return (float64(prompt)*cfg.LLM.PricePrompt + float64(completion)*cfg.LLM.PriceCompletion +
		float64(embedded)*cfg.Embed.PricePerMTok) / 1e6
}
