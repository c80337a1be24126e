package workflows

import (
	"fmt"
	"math"
	"time"

	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/workflow"

	"github.com/lethe-research/lethe/activities"
	"github.com/lethe-research/lethe/algebra"
	"github.com/lethe-research/lethe/research"
)

// Research stop reasons.
const (
	ResearchConverged  = "converged"
	ResearchEmptyQueue = "empty_queue"
	ResearchTimeBudget = "time_budget"
	ResearchPageBudget = "page_budget"
)

// WebResearch is the second loop of "two loops, one algebra": discover URLs
// for one query, then fetch → transcribe → ingest batches of the best-ranked
// URLs until its own ψ passes the research threshold, the queue empties, or
// its time budget (from the session's pressure and time left) runs out.
func WebResearch(ctx workflow.Context, in activities.ResearchInput) (activities.ResearchResult, error) {
	cfg := in.Config
	lg := log.With(workflow.GetLogger(ctx), "session", in.SessionID, "iteration", in.Iteration, "query", in.Call.Query)
	start := workflow.Now(ctx)
	budget := researchTime(cfg.Research.MinTime, cfg.Research.MaxTime, in.Pressure, in.TimeLeftS)

	var disc activities.DiscoverResult
	dq := activities.DiscoverInput{SessionID: in.SessionID, Query: in.Call.Query, Limit: cfg.Research.DiscoverLimit}
	if err := workflow.ExecuteActivity(graphCtx(ctx, cfg), activities.NameDiscover, dq).Get(ctx, &disc); err != nil {
		return activities.ResearchResult{}, fmt.Errorf("discover: %w", err)
	}
	queue := research.RankCandidates(disc.Candidates, nil)
	res := activities.ResearchResult{StopReason: ResearchEmptyQueue}
	prevConv := 0.0
	for len(queue) > 0 {
		if res.Pages >= cfg.Research.MaxPages {
			res.StopReason = ResearchPageBudget
			break
		}
		if workflow.Now(ctx).Sub(start) >= budget {
			res.StopReason = ResearchTimeBudget
			break
		}
		n := min(cfg.Research.BatchSize, len(queue), cfg.Research.MaxPages-res.Pages)
		batch := queue[:n]
		queue = queue[n:]
		urls := make([]string, n)
		for i, c := range batch {
			urls[i] = c.URL
		}
		key := fmt.Sprintf("research/%d/%d/%d", in.Iteration, in.Call.Index, res.Batches)
		var fr activities.FetchResult
		if err := workflow.ExecuteActivity(fetchCtx(ctx, cfg), activities.NameFetch, activities.FetchInput{SessionID: in.SessionID, Key: key, URLs: urls}).Get(ctx, &fr); err != nil {
			lg.Warn("fetch batch failed; skipped", "error", err)
			res.Batches++
			continue
		}
		var ing activities.IngestResult
		iin := activities.IngestInput{SessionID: in.SessionID, Key: key, Task: in.Call.Task, Iteration: in.Iteration}
		if err := workflow.ExecuteActivity(graphCtx(ctx, cfg), activities.NameIngest, iin).Get(ctx, &ing); err != nil {
			return res, fmt.Errorf("ingest %s: %w", key, err)
		}
		res.Batches++
		res.Pages += len(fr.Pages)
		res.NewEvidence += ing.New
		// Same algebra as the agent loop; the temporal signal is information-gain
		// saturation: are new pages still useful?
		conv := algebra.ConvergenceScore(algebra.ResearchConvergenceWeights(), ing.GA, 1-ing.MeanIG, ing.Coverage)
		plateau := algebra.PlateauIndicator(conv-prevConv, algebra.DefaultPlateauTol)
		prevConv = conv
		progress := algebra.ResourceProgress(float64(res.Pages)/float64(cfg.Research.MaxPages), workflow.Now(ctx).Sub(start).Seconds()/budget.Seconds())
		res.Psi = algebra.Psi(algebra.PsiInputs{
			Convergence: conv, Plateau: plateau, Iterations: float64(res.Batches), MinIters: 1,
			Pressure: algebra.BudgetHorizon(progress, cfg.Budget.Alpha), ResourceProgress: progress,
		})
		lg.Info("research batch", "batch", res.Batches, "new", ing.New, "mean_ig", ing.MeanIG, "psi", res.Psi)
		if res.Psi > cfg.Research.PsiThreshold {
			res.StopReason = ResearchConverged
			break
		}
	}
	return res, nil
}

// researchTime interpolates the research budget between max_time (no
// pressure) and min_time (full pressure), never past the session's time left.
func researchTime(lo, hi time.Duration, pressure, leftS float64) time.Duration {
	p := algebra.Clamp01(pressure)
	d := hi.Seconds() - (hi.Seconds()-lo.Seconds())*p
	d = math.Max(lo.Seconds(), math.Min(d, leftS))
	return time.Duration(d * float64(time.Second))
}
