package activities

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/lethe-research/lethe/algebra"
	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/graph"
)

// Observe is step 12 (docs/incremental-signals.md): the iteration's raw
// signals from running aggregates kept in the signals blob, folded with
// the evidence created since the previous observation, or recomputed from
// all evidence when there is no usable previous blob (the first
// iterations, a reset past pruned blobs, changed settings) and every
// algebra.signals_recompute_every iterations. It stores the blob of this
// iteration and deletes the one algebra.signals_keep iterations back. A
// retry returns the stored observation.
func (a *Activities) Observe(ctx context.Context, in ObserveInput) (Observation, error) {
	obs, st, err := a.observe(ctx, in)
	if err != nil {
		return Observation{}, err
	}
	if st.path != "" {
		logger(ctx, in.SessionID).Info("signals observed", "iteration", in.Iteration, "path", st.path, "rows_read", st.read,
			"rows_folded", st.folded, "evidence", obs.NEvidence)
	}
	return obs, nil
}

// observeStats says what one observation did, for the log and the tests.
type observeStats struct {
	path   string // "incremental" or "cold"; "" for a stored observation
	read   int    // evidence rows read from the store
	folded int    // rows folded into the aggregates (cold: all)
}

// observeSetup is what both paths need: the session's settings resolved.
type observeSetup struct {
	in         ObserveInput
	s          graph.Session
	goal       []float64
	d, k, minE int
	sp         algebra.SignalParams
	inc        algebra.IncrementalParams
	prev       signalsDoc
	prevOK     bool
}

func (a *Activities) observe(ctx context.Context, in ObserveInput) (Observation, observeStats, error) {
	done, su, tasks, window, err := a.observeReads(ctx, in)
	if err != nil || done != nil {
		return done.obs(), observeStats{}, err
	}
	var (
		agg       algebra.SignalState
		held, nws [][]float64
		st        observeStats
	)
	if su.incremental() {
		agg, held, nws, st, err = foldSince(su, window)
	} else {
		agg, held, nws, st, err = a.recomputeAll(ctx, su)
	}
	if err != nil {
		return Observation{}, observeStats{}, err
	}
	sin := algebra.StateSignalInputs{State: agg, PrevSVD: su.prev.SVD, PrevState: su.prev.State, Goal: su.goal,
		Held: held, New: nws, Params: &su.sp}
	for _, t := range tasks {
		switch {
		case t.ShortID == in.Task:
			sin.Task = algebra.ToFloat64(t.Embedding)
		case t.Status == graph.Active:
			sin.Active = append(sin.Active, algebra.ToFloat64(t.Embedding))
		}
	}
	o := algebra.ObserveState(sin)
	obs := Observation{
		NEvidence: o.NEvidence, GA: o.GA, Coverage: o.Coverage, Stability: o.Stability, StabilityConf: o.StabilityConf,
		Residual: o.Residual, ResidualConf: o.ResidualConf, Eigengap: o.Eigengap, SVDConf: o.SVDConf,
		SubspaceDistance: o.SubspaceDistance, Novelty: o.Novelty,
	}
	agg.SVD = svdTail(agg.SVD, o.SVD.K) // the leading triplets are stored once, as doc.SVD
	doc := signalsDoc{Obs: obs, SVD: o.SVD, State: o.State, Gap: o.Gap, Agg: &agg}
	// The new blob and the pruning of the one signals_keep back are one
	// commit: each commit of the embedded store is two fsyncs.
	b, err := gobBytes(signalsKey(in.Iteration), doc)
	if err != nil {
		return Observation{}, observeStats{}, err
	}
	w := graph.Writes{Blobs: map[string][]byte{signalsKey(in.Iteration): b}}
	if old := in.Iteration - su.inc.Keep; old >= 0 && old != in.Iteration {
		w.DeleteBlobs = []string{signalsKey(old)}
	}
	if err := a.Store.Commit(ctx, in.SessionID, w); err != nil {
		return Observation{}, observeStats{}, fmt.Errorf("observe: write signals: %w", err)
	}
	return obs, st, nil
}

// observeReads reads the iteration's signals blob (done: not nil when
// this iteration was observed already, a retry after the commit), the
// setup, the observed tasks and the evidence of the novelty window, at
// once: on Neo4j each read is a transaction, and the two signals blobs
// (this iteration's and the previous one's) share one. The others are
// wasted only on such a retry, whose answer stands whatever they found,
// and the window when the path turns out cold (every RecomputeEvery
// iterations, which read every row anyway).
func (a *Activities) observeReads(ctx context.Context, in ObserveInput) (*signalsDoc, observeSetup, []graph.Task, windowRead, error) {
	var (
		blobs            map[string][]byte
		s                graph.Session
		tasks            []graph.Task
		window           windowRead
		errB, errS, errT error
		wg               sync.WaitGroup
	)
	doneKey, prevKey := signalsKey(in.Iteration), signalsKey(in.Iteration-1)
	wg.Go(func() {
		if blobs, errB = a.Store.GetBlobs(ctx, in.SessionID, []string{doneKey, prevKey}); errors.Is(errB, graph.ErrNotFound) {
			blobs, errB = nil, nil // no session: the session read says so
		}
	})
	wg.Go(func() { s, errS = a.Store.GetSession(ctx, in.SessionID) })
	wg.Go(func() { tasks, errT = a.observedTasks(ctx, in.SessionID, in.Task) })
	wg.Go(func() { window = a.readWindow(ctx, in) })
	wg.Wait()
	if errB != nil {
		return nil, observeSetup{}, nil, window, fmt.Errorf("read signals blobs: %w", errB)
	}
	if data, ok := blobs[doneKey]; ok {
		var done signalsDoc
		if err := decodeBlob(doneKey, data, &done); err != nil {
			return nil, observeSetup{}, nil, window, err
		}
		return &done, observeSetup{}, nil, window, nil
	}
	if errS != nil {
		return nil, observeSetup{}, nil, window, errors.Join(fmt.Errorf("observe session: %w", errS), errT)
	}
	su, err := newObserveSetup(in, s, prevKey, blobs)
	return nil, su, tasks, window, errors.Join(err, errT)
}

// windowRead is the evidence of the novelty window (CreatedIter ≥
// iteration − NoveltyWindow), or why it could not be read: an error the
// incremental path reports and the cold path never needs.
type windowRead struct {
	from int
	ev   []graph.Evidence
	err  error
}

func (a *Activities) readWindow(ctx context.Context, in ObserveInput) windowRead {
	w := windowRead{from: in.Iteration - signalParams(in).Incremental.WithDefaults().NoveltyWindow}
	if w.ev, w.err = a.Store.EvidenceSince(ctx, in.SessionID, w.from); w.err != nil {
		w.err = fmt.Errorf("observe evidence since %d: %w", w.from, w.err)
	}
	return w
}

// signalParams are the signal settings of an observation (an older
// input without them: the defaults).
func signalParams(in ObserveInput) algebra.SignalParams {
	if in.Signals != nil {
		return *in.Signals
	}
	return algebra.DefaultSignalParams()
}

// obs is the stored observation (nil: none).
func (d *signalsDoc) obs() Observation {
	if d == nil {
		return Observation{}
	}
	return d.Obs
}

// observedTasks are the focused task and the other ACTIVE ones, in Tasks
// order: the only tasks the state embedding reads. Store.Tasks was every
// task's embeddings, every iteration; the outline that replaced it was a
// row per task; the ACTIVE ones come from the status index.
//
// The focus is read beside the ACTIVE ones, not after them: it is seldom
// among them (ApplyOps has usually completed it), and the two reads are
// a round trip each on Neo4j.
func (a *Activities) observedTasks(ctx context.Context, sid, focus string) ([]graph.Task, error) {
	var (
		tasks, f   []graph.Task
		errA, errF error
		wg         sync.WaitGroup
	)
	wg.Go(func() { tasks, errA = a.Store.TasksWithStatus(ctx, sid, graph.Active) })
	if focus != "" {
		wg.Go(func() { f, errF = a.Store.TasksByIDs(ctx, sid, []string{focus}) })
	}
	wg.Wait()
	if errA != nil {
		return nil, fmt.Errorf("observe active tasks: %w", errA)
	}
	if focus == "" || slices.ContainsFunc(tasks, func(t graph.Task) bool { return t.ShortID == focus }) {
		return tasks, nil
	}
	if errF != nil {
		return nil, fmt.Errorf("observe focus task: %w", errF)
	}
	tasks = append(tasks, f...)
	graph.SortTasks(tasks)
	return tasks, nil
}

// newObserveSetup is the setup of an observation: the session, the
// previous signals blob (blobs[prevKey], when there is one) and the
// settings (zero values of older inputs: the defaults).
func newObserveSetup(in ObserveInput, s graph.Session, prevKey string, blobs map[string][]byte) (observeSetup, error) {
	su := observeSetup{in: in, s: s, sp: signalParams(in),
		k: orDefault(in.SVDK, config.Defaults().Algebra.SVDK), minE: orDefault(in.MinEvidence, config.Defaults().Algebra.MinEvidence)}
	if data, ok := blobs[prevKey]; ok {
		if err := decodeBlob(prevKey, data, &su.prev); err != nil {
			return observeSetup{}, err
		}
		su.prevOK = true
	}
	su.goal = algebra.ToFloat64(su.s.GoalQueryEmb)
	su.inc = su.sp.Incremental.WithDefaults()
	su.d = len(su.goal)
	if su.prev.Agg != nil {
		su.prev.Agg.SVD = joinSVD(su.prev.SVD, su.prev.Agg.SVD)
	}
	if !su.prevOK {
		su.prev.SVD = algebra.EmptySVD(su.d)
	}
	return su, nil
}

// incremental reports whether the previous blob's aggregates can be
// extended: they exist, match the session's settings, and the last
// recompute from all evidence is less than RecomputeEvery iterations back.
func (su observeSetup) incremental() bool {
	p := su.prev.Agg
	return su.prevOK && p != nil && p.Compatible(su.d, su.k, su.minE, su.sp) &&
		su.in.Iteration-p.ColdIter < su.inc.RecomputeEvery && p.ColdIter < su.in.Iteration
}

// foldSince takes the evidence of the novelty window, which includes
// everything created since the previous observation (CreatedIter ≥
// iteration: Observe is the last step of an iteration), and folds the
// latter into the previous aggregates.
func foldSince(su observeSetup, w windowRead) (algebra.SignalState, [][]float64, [][]float64, observeStats, error) {
	iter := su.in.Iteration
	if w.err != nil {
		return algebra.SignalState{}, nil, nil, observeStats{}, w.err
	}
	ev := w.ev
	var rows [][]float64
	var str []float64
	for _, e := range ev {
		if e.CreatedIter >= iter {
			rows, str = append(rows, algebra.ToFloat64(e.Embedding)), append(str, e.Strength)
		}
	}
	agg := su.prev.Agg.Fold(rows, str, su.goal)
	held, nws := noveltyRows(ev, iter, w.from)
	return agg, held, nws, observeStats{path: "incremental", read: len(ev), folded: len(rows)}, nil
}

// recomputeAll builds the aggregates from every evidence row (the SVD warm-
// started from the previous basis, as the batch pipeline does). It reads
// the rows without their contents (Store.EvidenceRows): at 100k evidence,
// decoding every record was 3.5 of the recompute's 5 s.
func (a *Activities) recomputeAll(ctx context.Context, su observeSetup) (algebra.SignalState, [][]float64, [][]float64, observeStats, error) {
	ev, err := a.Store.EvidenceRows(ctx, su.in.SessionID)
	if err != nil {
		return algebra.SignalState{}, nil, nil, observeStats{}, fmt.Errorf("observe evidence: %w", err)
	}
	rows := make([][]float64, len(ev))
	str := make([]float64, len(ev))
	for i, e := range ev {
		rows[i], str[i] = algebra.ToFloat64(e.Embedding), e.Strength
	}
	d := su.d
	if d == 0 && len(rows) > 0 {
		d = len(rows[0])
	}
	var warm *algebra.SharedSVD
	switch {
	case su.prev.Agg != nil:
		warm = &su.prev.Agg.SVD // the oversampled basis
	case su.prevOK:
		warm = &su.prev.SVD
	}
	agg := algebra.ColdSignalState(rows, str, su.goal, d, su.k, su.minE, su.sp, warm, 1) // fixed seed of the randomized SVD (determinism)
	agg.ColdIter = su.in.Iteration
	held, nws := noveltyRows(ev, su.in.Iteration, su.in.Iteration-su.inc.NoveltyWindow)
	return agg, held, nws, observeStats{path: "cold", read: len(ev), folded: len(ev)}, nil
}

// noveltyRows splits the evidence created since `from` into the rows new
// for the novelty (newRows: fetched this iteration) and the rows they are
// compared with (the rest of the window), both in store order.
func noveltyRows(ev []graph.Evidence, iter, from int) (held, nws [][]float64) {
	isNew := newRows(ev, iter)
	for i, e := range ev {
		switch {
		case isNew[i]:
			nws = append(nws, algebra.ToFloat64(e.Embedding))
		case e.CreatedIter >= from:
			held = append(held, algebra.ToFloat64(e.Embedding))
		}
	}
	return held, nws
}

// svdTail is the running SVD's triplets past the first k (the signals'
// SVD), with no Mean: what the blob stores besides doc.SVD.
func svdTail(s algebra.SharedSVD, k int) algebra.SharedSVD {
	t := algebra.SharedSVD{Dim: s.Dim, Rows: s.Rows}
	if s.K > k {
		t.K, t.Sigma, t.Basis = s.K-k, s.Sigma[k:s.K], s.Basis[k*s.Dim:s.K*s.Dim]
	}
	return t
}

// joinSVD is the running SVD again from the signals' SVD and the tail.
func joinSVD(head, tail algebra.SharedSVD) algebra.SharedSVD {
	j := head
	if tail.K > 0 && tail.Dim == head.Dim {
		j.K = head.K + tail.K
		j.Sigma = append(append([]float64(nil), head.Sigma...), tail.Sigma...)
		j.Basis = append(append([]float64(nil), head.Basis...), tail.Basis...)
	}
	return j
}
