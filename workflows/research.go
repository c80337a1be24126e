package workflows

import (
	"fmt"
	"math"
	"strings"
	"time"

	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/workflow"

	"github.com/lethe-research/lethe/activities"
	"github.com/lethe-research/lethe/algebra"
	"github.com/lethe-research/lethe/config"
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
	var waited time.Duration // waiting for a model server is not research time
	res := activities.ResearchResult{StopReason: ResearchEmptyQueue}
	w := newWaiter(cfg, &waited, &res.ModelGaveUp, func(ctx workflow.Context, mw *ModelWait) { showResearchWait(ctx, cfg, in.Call.Query, mw) })
	exec := func(actx workflow.Context, activity string, input, out any) error {
		return w.run(ctx, func() workflow.Future { return workflow.ExecuteActivity(actx, activity, input) }, out)
	}
	done := func() activities.ResearchResult { res.ModelWaitMS = waited.Milliseconds(); return res }
	elapsed := func() time.Duration { return workflow.Now(ctx).Sub(start) - waited }

	var disc activities.DiscoverResult
	dq := activities.DiscoverInput{SessionID: in.SessionID, Query: in.Call.Query, Limit: cfg.Research.DiscoverLimit}
	if err := exec(summarized(graphCtx(ctx, cfg), "discover %q", in.Call.Query), activities.NameDiscover, dq, &disc); err != nil {
		if isOutage(err) {
			res.StopReason = StopModelUnavailable
			return done(), nil
		}
		return activities.ResearchResult{}, fmt.Errorf("discover: %w", err)
	}
	queue := research.RankCandidates(disc.Candidates, nil)
	prevConv := 0.0
	for len(queue) > 0 {
		if res.Pages >= cfg.Research.MaxPages {
			res.StopReason = ResearchPageBudget
			break
		}
		if elapsed() >= budget {
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
		fctx := summarized(fetchCtx(ctx, cfg), "fetch batch %d: %d pages", res.Batches, n)
		if err := workflow.ExecuteActivity(fctx, activities.NameFetch, activities.FetchInput{SessionID: in.SessionID, Key: key, URLs: urls}).Get(ctx, &fr); err != nil {
			lg.Warn("fetch batch failed; skipped", "error", err)
			res.Batches++
			continue
		}
		transcribe(ctx, lg, in.SessionID, key, fr.Pages, cfg)
		var ing activities.IngestResult
		iin := activities.IngestInput{SessionID: in.SessionID, Key: key, Task: in.Call.Task, Iteration: in.Iteration}
		if err := exec(summarized(graphCtx(ctx, cfg), "ingest batch %d", res.Batches), activities.NameIngest, iin, &ing); err != nil {
			if isOutage(err) {
				res.StopReason = StopModelUnavailable
				return done(), nil
			}
			return done(), fmt.Errorf("ingest %s: %w", key, err)
		}
		res.Batches++
		res.Pages += len(fr.Pages)
		res.NewEvidence += ing.New + ing.Linked // new to the task: its yield, even when the session held the content
		// Same algebra as the agent loop; the temporal signal is information-gain
		// saturation: are new pages still useful?
		conv := algebra.ConvergenceScore(algebra.ResearchConvergenceWeights(), ing.GA, 1-ing.MeanIG, ing.Coverage)
		plateau := algebra.PlateauIndicator(conv-prevConv, algebra.DefaultPlateauTol)
		prevConv = conv
		progress := algebra.ResourceProgress(float64(res.Pages)/float64(cfg.Research.MaxPages), elapsed().Seconds()/budget.Seconds())
		res.Psi = algebra.Psi(algebra.PsiInputs{
			Convergence: conv, Plateau: plateau, Iterations: float64(res.Batches), MinIters: 1,
			Pressure: algebra.BudgetHorizon(progress, cfg.Budget.Alpha), ResourceProgress: progress,
		})
		lg.Info("research batch", "batch", res.Batches, "new", ing.New, "linked", ing.Linked, "mean_ig", ing.MeanIG, "psi", res.Psi)
		if res.Psi > cfg.Research.PsiThreshold {
			res.StopReason = ResearchConverged
			break
		}
	}
	return done(), nil
}

// showResearchWait shows a research run's wait for its model server on the
// run's own workflow page and search attributes (LetheStatus), so that
// LetheStatus="waiting_for_model" finds it too; w nil: no longer waiting.
func showResearchWait(ctx workflow.Context, cfg config.Config, query string, w *ModelWait) {
	status := "researching"
	if w != nil {
		status = StatusWaiting
	}
	if cfg.Temporal.SearchAttributes {
		_ = workflow.UpsertTypedSearchAttributes(ctx, AttrStatus.ValueSet(status)) // visibility never breaks research
	}
	var b strings.Builder
	fmt.Fprintf(&b, "### Lethe web research: %s\n\n**Query:** %s\n\n", status, query)
	if w != nil {
		b.WriteString("| | |\n|---|---|\n")
		writeWait(&b, workflow.Now(ctx), w)
	}
	workflow.SetCurrentDetails(ctx, b.String())
}

// researchTime interpolates the research budget between max_time (no
// pressure) and min_time (full pressure), never past the session's time left.
func researchTime(lo, hi time.Duration, pressure, leftS float64) time.Duration {
	p := algebra.Clamp01(pressure)
	d := hi.Seconds() - (hi.Seconds()-lo.Seconds())*p
	d = math.Max(lo.Seconds(), math.Min(d, leftS))
	return time.Duration(d * float64(time.Second))
}

// transcribe runs the Transcribe activity for every page of the batch that
// came with media, in parallel, and waits for all of them. A failure is
// logged and skipped: the page's text is ingested either way (DESIGN.md §9
// "STT fails → logged, page text used").
func transcribe(ctx workflow.Context, lg log.Logger, session, key string, pages []activities.PageRef, cfg config.Config) {
	type pending struct {
		url string
		f   workflow.Future
	}
	var fs []pending
	for i, p := range pages {
		if p.Media == "" || p.Error != "" {
			continue
		}
		tctx := summarized(sttCtx(ctx, cfg), "transcribe media of %s", p.URL)
		fs = append(fs, pending{p.URL, workflow.ExecuteActivity(tctx, activities.NameTranscribe,
			activities.TranscribeInput{SessionID: session, Key: key, Page: i, URL: p.URL})})
	}
	for _, p := range fs {
		var tr activities.TranscribeResult
		if err := p.f.Get(ctx, &tr); err != nil {
			lg.Warn("transcription failed; page text used", "page", p.url, "error", err)
			continue
		}
		if tr.Failed > 0 || tr.Skipped > 0 {
			lg.Warn("some media not transcribed", "page", p.url, "failed", tr.Failed, "skipped", tr.Skipped)
		}
	}
}

// sttCtx is for Transcribe: on the research queue (where ffmpeg and the
// captured files are), long enough for whisper on a CPU, heartbeating
// between media, few attempts (a failure only loses a transcript).
func sttCtx(ctx workflow.Context, cfg config.Config) workflow.Context {
	perMedia := cfg.Research.WhisperTimeout + time.Minute
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           cfg.Temporal.QueueResearch(),
		StartToCloseTimeout: perMedia * time.Duration(max(1, cfg.Research.MaxMediaPerPage)),
		HeartbeatTimeout:    heartbeat(cfg),
		RetryPolicy:         retry(2),
	})
}
