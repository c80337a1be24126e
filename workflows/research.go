package workflows

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/workflow"

	"github.com/lethe-research/lethe/algebra"
	"github.com/lethe-research/lethe/contract"
	"github.com/lethe-research/lethe/research/queue"
)

// Research stop reasons (contract).
const (
	ResearchConverged  = contract.ResearchConverged
	ResearchEmptyQueue = contract.ResearchEmptyQueue
	ResearchTimeBudget = contract.ResearchTimeBudget
	ResearchPageBudget = contract.ResearchPageBudget
)

// changeFollow: links found on fetched pages enter the research queue, up
// to research.follow_depth hops (issue #13); runs recorded before it do
// not follow links.
const changeFollow = "follow-links"

// changeHeldLast: candidates whose URL the session already holds evidence
// from (URLCandidate.Held, set by Discover) are queued after the others
// (queue.HeldLast); runs recorded before it keep the goal-cosine order.
const changeHeldLast = "held-sources-last"

// WebResearch is the second loop of "two loops, one algebra": discover URLs
// for one query, then fetch → transcribe → ingest batches of the best-ranked
// URLs until its own ψ passes the research threshold, the queue empties, or
// its time budget (from the session's pressure and time left) runs out.
func WebResearch(ctx workflow.Context, in contract.ResearchInput) (contract.ResearchResult, error) {
	r := newResearchRun(ctx, in)
	stopCh := workflow.GetSignalChannel(ctx, SignalStop)
	workflow.Go(ctx, func(ctx workflow.Context) { // the session was told to stop: end a wait for a model
		for stopCh.Receive(ctx, nil) {
			r.stops++
		}
	})
	r.follow = workflow.GetVersion(ctx, changeFollow, workflow.DefaultVersion, 1) == 1 &&
		in.Config.Research.FollowDepth > 0 && in.Config.Research.FollowLinks > 0
	r.heldLast = workflow.GetVersion(ctx, changeHeldLast, workflow.DefaultVersion, 1) == 1
	queue, err := r.discover(ctx)
	if err != nil || r.res.ModelGaveUp {
		return r.result(), err
	}
	cfg := in.Config.Research
	for len(queue) > 0 {
		if r.res.Pages >= cfg.MaxPages {
			r.res.StopReason = ResearchPageBudget
			break
		}
		if r.elapsed(ctx) >= r.budget {
			r.res.StopReason = ResearchTimeBudget
			break
		}
		n := min(cfg.BatchSize, len(queue), cfg.MaxPages-r.res.Pages)
		ing, pages, ok, err := r.batch(ctx, queue[:n])
		queue = r.enqueue(queue[n:], queue[:n], ing.Links)
		if err != nil || r.res.ModelGaveUp {
			return r.result(), err
		}
		if ok && r.score(ctx, ing, pages) > cfg.PsiThreshold {
			r.res.StopReason = ResearchConverged
			break
		}
	}
	return r.result(), nil
}

// researchRun is one WebResearch run's state: its result so far, its
// time budget, the convergence of the previous batch, and the time spent
// waiting for a model server (not research time).
type researchRun struct {
	in       contract.ResearchInput
	lg       log.Logger
	res      contract.ResearchResult
	start    time.Time
	budget   time.Duration
	waited   time.Duration
	prevConv float64
	wait     *waiter
	stops    int             // stop signals from the session
	follow   bool            // links on fetched pages enter the queue (changeFollow)
	heldLast bool            // held sources are queued last (changeHeldLast)
	fetched  map[string]bool // URLs taken from the queue, never queued again
}

func newResearchRun(ctx workflow.Context, in contract.ResearchInput) *researchRun {
	cfg := in.Config
	r := &researchRun{
		in:      in,
		lg:      log.With(workflow.GetLogger(ctx), "session", in.SessionID, "iteration", in.Iteration, "query", in.Call.Query),
		res:     contract.ResearchResult{StopReason: ResearchEmptyQueue},
		start:   workflow.Now(ctx),
		fetched: map[string]bool{},
		budget:  researchTime(cfg.Research.MinTime, cfg.Research.MaxTime, in.Pressure, in.TimeLeftS),
	}
	r.wait = newWaiter(cfg, &r.waited, &r.res.ModelGaveUp, func(ctx workflow.Context, mw *ModelWait) { showResearchWait(ctx, cfg, in.Call.Query, mw) })
	r.wait.stops, r.wait.anyStop = func() int { return r.stops }, true
	return r
}

func (r *researchRun) exec(ctx, actx workflow.Context, activity, input, out any) error {
	return r.wait.run(ctx, func() workflow.Future { return workflow.ExecuteActivity(actx, activity, input) }, out)
}

func (r *researchRun) elapsed(ctx workflow.Context) time.Duration {
	return workflow.Now(ctx).Sub(r.start) - r.waited
}

func (r *researchRun) result() contract.ResearchResult {
	r.res.ModelWaitMS = r.waited.Milliseconds()
	return r.res
}

// outage ends the run when a model server stayed down past the tolerance:
// it returns what it found so far, not an error.
func (r *researchRun) outage(err error) bool {
	if isOutage(err) {
		r.res.StopReason = StopModelUnavailable
		return true
	}
	return false
}

// changeProviders: Discover walks the research.providers chain, one call
// per provider on its family's rate-limited task queue, until one answers
// (docs/providers.md); before, one Discover merged every configured
// provider on the default queue.
const changeProviders = "search-provider-chain"

// discover asks the providers for URLs and ranks them by goal cosine.
func (r *researchRun) discover(ctx workflow.Context) ([]contract.URLCandidate, error) {
	if workflow.GetVersion(ctx, changeProviders, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return r.discoverMerged(ctx)
	}
	cfg := r.in.Config
	chain := cfg.Research.ProviderList()
	if len(chain) == 0 {
		r.lg.Warn("discover: no search provider (research.providers, research.corpus_dir, research.searxng_url)")
		return nil, nil
	}
	var errs []error
	for _, p := range chain {
		var disc contract.DiscoverResult
		dq := contract.DiscoverInput{SessionID: r.in.SessionID, Query: r.in.Call.Query, Limit: cfg.Research.DiscoverLimit,
			Provider: p, MaxRetryAfter: cfg.Research.SearchMaxRetryAfter,
			CorpusCandidates: cfg.Research.CorpusCandidates, CorpusRRFK: cfg.Research.CorpusRRFK}
		err := r.exec(ctx, summarized(discoverCtx(ctx, cfg, p), "discover %q on %s", r.in.Call.Query, p), acts.Discover, dq, &disc)
		r.res.EmbedTokens += disc.EmbedTokens
		switch {
		case err != nil && r.outage(err):
			return nil, nil
		case err != nil && ctx.Err() != nil:
			return nil, err
		case err != nil:
			r.lg.Warn("discover: provider failed; asking the next", "provider", p, "error", err)
			errs = append(errs, fmt.Errorf("%s: %w", p, err))
		case len(disc.Candidates) > 0:
			r.res.Provider = p
			return r.rank(disc.Candidates, nil), nil
		default:
			r.lg.Info("discover: provider found nothing; asking the next", "provider", p)
		}
		r.res.Skipped = append(r.res.Skipped, p)
	}
	if len(errs) == len(chain) {
		return nil, fmt.Errorf("discover: every provider failed: %w", errors.Join(errs...))
	}
	return nil, nil
}

// discoverMerged is discover as sessions started before changeProviders
// recorded it: one Discover on the default queue, every configured
// provider merged.
func (r *researchRun) discoverMerged(ctx workflow.Context) ([]contract.URLCandidate, error) {
	cfg := r.in.Config
	var disc contract.DiscoverResult
	dq := contract.DiscoverInput{SessionID: r.in.SessionID, Query: r.in.Call.Query, Limit: cfg.Research.DiscoverLimit,
		CorpusCandidates: cfg.Research.CorpusCandidates, CorpusRRFK: cfg.Research.CorpusRRFK}
	if err := r.exec(ctx, summarized(graphCtx(ctx, cfg), "discover %q", r.in.Call.Query), acts.Discover, dq, &disc); err != nil {
		if r.outage(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("discover: %w", err)
	}
	r.res.EmbedTokens += disc.EmbedTokens
	return r.rank(disc.Candidates, nil), nil
}

// batch fetches, transcribes and ingests one batch of URLs. ok is false
// when the fetch failed (the batch is skipped, not the run).
func (r *researchRun) batch(ctx workflow.Context, batch []contract.URLCandidate) (ing contract.IngestResult, pages int, ok bool, err error) {
	cfg, in := r.in.Config, r.in
	urls := make([]string, len(batch))
	for i, c := range batch {
		urls[i] = c.URL
	}
	key := fmt.Sprintf("research/%d/%d/%d", in.Iteration, in.Call.Index, r.res.Batches)
	var fr contract.FetchResult
	fctx := summarized(fetchCtx(ctx, cfg), "fetch batch %d: %d pages", r.res.Batches, len(urls))
	if err := workflow.ExecuteActivity(fctx, acts.Fetch, contract.FetchInput{SessionID: in.SessionID, Key: key, URLs: urls}).Get(ctx, &fr); err != nil {
		r.lg.Warn("fetch batch failed; skipped", "error", err)
		r.res.Batches++
		return ing, 0, false, nil
	}
	transcribe(ctx, r.lg, in.SessionID, key, fr.Pages, cfg)
	iin := contract.IngestInput{SessionID: in.SessionID, Key: key, Task: in.Call.Task, Iteration: in.Iteration,
		Query: in.Call.Query, Params: contract.IngestParamsOf(cfg)}
	iin.LinkDepth, iin.MaxLinks = r.linkDepths(batch)
	if err := r.exec(ctx, summarized(graphCtx(ctx, cfg), "ingest batch %d", r.res.Batches), acts.Ingest, iin, &ing); err != nil {
		if r.outage(err) {
			return ing, 0, false, nil
		}
		return ing, 0, false, fmt.Errorf("ingest %s: %w", key, err)
	}
	r.res.EmbedTokens += ing.EmbedTokens
	return ing, len(fr.Pages), true, nil
}

// linkDepths is, for each page of the batch, the depth its links get, 0
// where they are not followed (the page is at research.follow_depth).
func (r *researchRun) linkDepths(batch []contract.URLCandidate) ([]int, int) {
	if !r.follow {
		return nil, 0
	}
	cfg := r.in.Config.Research
	depths := make([]int, len(batch))
	follows := false
	for i, c := range batch {
		if c.Depth < cfg.FollowDepth {
			depths[i], follows = c.Depth+1, true
		}
	}
	if !follows {
		return nil, 0
	}
	return depths, cfg.FollowLinks
}

// enqueue marks the batch as fetched and ranks the links found on its
// pages into the rest of the queue, by goal cosine like Discover's
// candidates; a URL already fetched is never queued again.
func (r *researchRun) enqueue(rest, batch, links []contract.URLCandidate) []contract.URLCandidate {
	for _, c := range batch {
		r.fetched[c.URL] = true
	}
	if !r.follow || len(links) == 0 {
		return rest
	}
	return r.rank(append(append([]contract.URLCandidate(nil), rest...), links...), r.fetched)
}

// rank orders the queue by goal cosine, with held sources last since
// changeHeldLast.
func (r *researchRun) rank(c []contract.URLCandidate, seen map[string]bool) []contract.URLCandidate {
	ranked := queue.RankCandidates(c, seen)
	if r.heldLast {
		return queue.HeldLast(ranked)
	}
	return ranked
}

// score counts an ingested batch and returns the run's ψ: the same
// algebra as the agent loop, with information-gain saturation (are new
// pages still useful?) as the temporal signal.
func (r *researchRun) score(ctx workflow.Context, ing contract.IngestResult, pages int) float64 {
	cfg := r.in.Config
	r.res.Batches++
	r.res.Pages += pages
	r.res.NewEvidence += ing.New + ing.Linked // new to the task: its yield, even when the session held the content
	conv := algebra.ConvergenceScore(cfg.Algebra.ResearchWeights(), ing.GA, 1-ing.MeanIG, ing.Coverage)
	plateau := algebra.PlateauIndicator(conv-r.prevConv, cfg.Algebra.PlateauTol)
	r.prevConv = conv
	progress := algebra.ResourceProgress(float64(r.res.Pages)/float64(cfg.Research.MaxPages), r.elapsed(ctx).Seconds()/r.budget.Seconds())
	r.res.Psi = algebra.PsiWith(cfg.Budget.PsiParams(), algebra.PsiInputs{
		Convergence: conv, Plateau: plateau, Iterations: float64(r.res.Batches), MinIters: float64(cfg.Research.MinBatches),
		Pressure: algebra.BudgetHorizon(progress, cfg.Budget.Alpha), ResourceProgress: progress,
	})
	r.lg.Info("research batch", "batch", r.res.Batches, "new", ing.New, "linked", ing.Linked, "mean_ig", ing.MeanIG, "psi", r.res.Psi)
	return r.res.Psi
}

// showResearchWait shows a research run's wait for its model server on the
// run's own workflow page and search attributes (LetheStatus), so that
// LetheStatus="waiting_for_model" finds it too; w nil: no longer waiting.
func showResearchWait(ctx workflow.Context, cfg contract.Config, query string, w *ModelWait) {
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
func transcribe(ctx workflow.Context, lg log.Logger, session, key string, pages []contract.PageRef, cfg contract.Config) {
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
		fs = append(fs, pending{p.URL, workflow.ExecuteActivity(tctx, acts.Transcribe,
			contract.TranscribeInput{SessionID: session, Key: key, Page: i, URL: p.URL})})
	}
	for _, p := range fs {
		var tr contract.TranscribeResult
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
func sttCtx(ctx workflow.Context, cfg contract.Config) workflow.Context {
	perMedia := cfg.Research.WhisperTimeout + time.Minute
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           cfg.Temporal.QueueResearch(),
		StartToCloseTimeout: perMedia * time.Duration(max(1, cfg.Research.MaxMediaPerPage)),
		HeartbeatTimeout:    heartbeat(cfg),
		RetryPolicy:         retry(2),
	})
}
