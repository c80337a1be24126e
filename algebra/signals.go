package algebra

import (
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
)

// compute_iteration_signals (seed 003 "Signal Pipeline"): the activity side
// of step 12. It turns the evidence matrix and the previous iteration's
// state into one SignalObservation of scalars (plus the vectors the
// activity stores in the graph: state, basis, gap direction). The workflow
// feeds obs.Scalars() to Trackers.Update.

// Defaults of SignalInputs.
const (
	DefaultSVDRank     = 16 // K
	DefaultMinEvidence = 3  // MinEvidence
)

// SignalParams are the session's parameters of the signal pipeline
// (algebra.attention_k, algebra.attention_tau, algebra.state_recency,
// algebra.state_weight_*, algebra.novelty_weight_distance).
type SignalParams struct {
	AttentionK            int          `json:"attention_k"`
	AttentionTau          float64      `json:"attention_tau"`
	StateRecency          float64      `json:"state_recency"`
	StateWeights          StateWeights `json:"state_weights"`
	NoveltyDistanceWeight float64      `json:"novelty_distance"`
	// Incremental are Observe's incremental-signal settings; zero values
	// (inputs recorded before them) mean the defaults.
	Incremental IncrementalParams `json:"incremental,omitzero"`
}

// IncrementalParams are algebra.signals_keep, algebra.signals_recompute_every
// and algebra.novelty_window (docs/incremental-signals.md).
type IncrementalParams struct {
	Keep           int `json:"keep,omitempty"`
	RecomputeEvery int `json:"recompute_every,omitempty"`
	NoveltyWindow  int `json:"novelty_window,omitempty"`
}

// Defaults of IncrementalParams.
const (
	DefaultSignalsKeep           = 4
	DefaultSignalsRecomputeEvery = 20
	DefaultNoveltyWindow         = 4
)

// WithDefaults fills zero fields with the defaults.
func (p IncrementalParams) WithDefaults() IncrementalParams {
	if p.Keep <= 0 {
		p.Keep = DefaultSignalsKeep
	}
	if p.RecomputeEvery <= 0 {
		p.RecomputeEvery = DefaultSignalsRecomputeEvery
	}
	if p.NoveltyWindow <= 0 {
		p.NoveltyWindow = DefaultNoveltyWindow
	}
	return p
}

// DefaultNoveltyDistanceWeight is the default share of novelty from the
// subspace turn (the rest is the new evidence's information gain).
const DefaultNoveltyDistanceWeight = 0.5

// DefaultSignalParams are the parameters' defaults: top-10 attention at
// τ = 0.1, recency 2, state weights 0.5/0.3/0.2, novelty ½ turn + ½ gain.
func DefaultSignalParams() SignalParams {
	return SignalParams{
		AttentionK: DefaultAttentionTopK, AttentionTau: DefaultAttentionTemperature, StateRecency: DefaultStateRecency,
		StateWeights: DefaultStateWeights(), NoveltyDistanceWeight: DefaultNoveltyDistanceWeight,
		Incremental: IncrementalParams{Keep: DefaultSignalsKeep, RecomputeEvery: DefaultSignalsRecomputeEvery, NoveltyWindow: DefaultNoveltyWindow},
	}
}

// SignalInputs are the arrays one signal computation needs. Evidence rows
// are ordered oldest → newest and the last NewEvidence rows are the ones
// added since the previous computation. Strengths (optional, per evidence
// row) weight the evidence GA. Goal is the goal query embedding, Task the
// current task's embedding, Active the other ACTIVE tasks' embeddings.
// PrevState and PrevSVD are the previous iteration's State and SVD (nil /
// EmptySVD on the first iteration). K is the SVD rank (0: DefaultSVDRank),
// MinEvidence the minimum number of rows for a non-empty SVD (0:
// DefaultMinEvidence), Seed the fixed seed of the randomized SVD. Params
// are the session's signal parameters (nil: DefaultSignalParams).
type SignalInputs struct {
	Evidence    [][]float64
	Strengths   []float64
	Goal        []float64
	Task        []float64
	Active      [][]float64
	PrevState   []float64
	PrevSVD     SharedSVD
	NewEvidence int
	// NewRows, when set (one flag per Evidence row), marks the rows that are
	// new since the previous computation, wherever they sit; it overrides
	// NewEvidence. The caller decides what counts as new (Observe: evidence
	// ingested this iteration, not model-written, not merely linked).
	NewRows     []bool
	K           int
	MinEvidence int
	Seed        uint64
	Params      *SignalParams
}

// params are in.Params, or the defaults.
func (in SignalInputs) params() SignalParams {
	if in.Params == nil {
		return DefaultSignalParams()
	}
	return *in.Params
}

// SignalObservation is one iteration's raw signals (before EMA smoothing).
// Every scalar is in [0, 1].
type SignalObservation struct {
	// NEvidence is the number of evidence rows.
	NEvidence int
	// GA is the confidence-ramped goal alignment, GATask the task-level GA
	// ½(1 + cos(task, goal)) (0 without a task), GAEvidence the
	// attention-weighted evidence GA.
	GA, GATask, GAEvidence float64
	// Coverage is the goal's coverage by the evidence subspace.
	Coverage float64
	// Stability is ½(1 + cos(PrevState, State)); StabilityConf =
	// ev_confidence · prior_confidence (see ComputeIterationSignals).
	Stability, StabilityConf float64
	// Residual is the normalised chord distance from the evidence centroid
	// to the goal; ResidualConf = ev_confidence.
	Residual, ResidualConf float64
	// Eigengap is (σ0 − σ1)/σ0; SVDConf the SVD confidence ramp.
	Eigengap, SVDConf float64
	// SubspaceDistance is the chordal distance from PrevSVD to SVD (1 when
	// either is empty).
	SubspaceDistance float64
	// Novelty drives the next iteration's thinking budget.
	Novelty float64
	// State is the state embedding (unit vector, nil without inputs).
	State []float64
	// SVD is this iteration's SharedSVD, stored for the next iteration.
	SVD SharedSVD
	// Gap is the least-covered goal direction, the next iteration's warp
	// direction (unit vector).
	Gap []float64
}

// Scalars returns the observations the EMA trackers consume.
func (o SignalObservation) Scalars() ObservedScalars {
	return ObservedScalars{
		Stability: o.Stability, StabilityConf: o.StabilityConf,
		Residual: o.Residual, ResidualConf: o.ResidualConf,
		Eigengap: o.Eigengap, SVDConf: o.SVDConf,
	}
}

// ComputeIterationSignals runs the four-stage signal pipeline (seed 003):
//
//  1. Spectral: SVD = ComputeSVD(evidence, K, MinEvidence, &PrevSVD (warm
//     start when non-empty), Seed); Coverage = SVD.Coverage(goal);
//     Eigengap = SVD.Eigengap(); SubspaceDistance = ChordalDistance(PrevSVD,
//     SVD); Gap = SVD.GapDirection(goal).
//  2. Goal alignment: GATask = NormalizeCosine(cos(task, goal)) (0 without
//     a task); GAEvidence = AttentionGA(cos(e_i, goal), strengths,
//     AttentionK, AttentionTau); GA = GoalAlignment(GATask, GAEvidence, n).
//  3. Temporal: State = StateEmbeddingWeighted(evidence, task, active,
//     StateRecency, StateWeights); Stability = Stability(PrevState, State);
//     Residual = ResidualDistance(centroid, goal) (1 without evidence).
//     Confidences (continuous ramps, no warm-up flags):
//     ev_conf = 1 − e^{−n};
//     prior_conf = (1 − e^{−(n − NewEvidence)}) when PrevState exists, else
//     0 (the previous state was itself computed from n − NewEvidence rows);
//     StabilityConf = ev_conf·prior_conf; ResidualConf = ev_conf;
//     SVDConf = (1 − e^{−n/K}) when the SVD is non-empty, else 0, with K
//     the requested rank (K rows give 0.63, 3K rows 0.95).
//  4. Novelty (drives the next thinking budget), w = NoveltyDistanceWeight
//     (default ½):
//     Novelty = w·SubspaceDistance + (1 − w)·IG_new,
//     IG_new = MeanInformationGain(new rows, older rows) (0 when
//     NewEvidence = 0). High when the evidence subspace turned (1 on the
//     first iterations, where PrevSVD is empty) or the new evidence points
//     in new directions; low when nothing new arrived and the subspace
//     stayed put.
//
// AttentionK, AttentionTau, StateRecency, StateWeights and
// NoveltyDistanceWeight are in.Params (DefaultSignalParams when nil).
func ComputeIterationSignals(in SignalInputs) SignalObservation {
	K := in.K
	if K <= 0 {
		K = DefaultSVDRank
	}
	minEv := in.MinEvidence
	if minEv <= 0 {
		minEv = DefaultMinEvidence
	}
	d := len(in.Goal)
	if d == 0 && len(in.Evidence) > 0 {
		d = len(in.Evidence[0])
	}
	p := in.params()
	ev, strengths, isNew := signalRows(in, d)
	o := SignalObservation{NEvidence: len(ev)}
	o.spectralStage(in, ev, d, K, minEv)
	norms := o.alignmentStage(in, ev, strengths, d, p)
	o.temporalStage(in, ev, countTrue(isNew), d, p)
	o.noveltyStage(ev, norms, isNew, d, p.NoveltyDistanceWeight)
	return o
}

// signalRows keeps the evidence rows of the working dimension, in order, with
// their strengths (nil when the caller gave none) and how many of them are
// new. Rows of another dimension are dropped rather than rejected, so one
// stray embedding cannot stop a session's signals; counting new rows after
// the filter keeps prior_conf consistent with the rows actually used.
func signalRows(in SignalInputs, d int) (ev [][]float64, strengths []float64, isNew []bool) {
	ev = make([][]float64, 0, len(in.Evidence))
	newStart := len(in.Evidence) - max(in.NewEvidence, 0)
	for i, r := range in.Evidence {
		if len(r) != d || d == 0 {
			continue
		}
		ev = append(ev, r)
		if in.Strengths != nil {
			s := 1.0
			if i < len(in.Strengths) {
				s = in.Strengths[i]
			}
			strengths = append(strengths, s)
		}
		if in.NewRows != nil {
			isNew = append(isNew, i < len(in.NewRows) && in.NewRows[i])
		} else {
			isNew = append(isNew, i >= newStart)
		}
	}
	return ev, strengths, isNew
}

// countTrue is the number of set flags.
func countTrue(b []bool) int {
	n := 0
	for _, x := range b {
		if x {
			n++
		}
	}
	return n
}

// spectralStage is stage 1. The previous SVD warm-starts this one only when
// it is non-empty and of the working dimension, so a change of embedding
// model cannot feed a mismatched basis into the randomized SVD.
func (o *SignalObservation) spectralStage(in SignalInputs, ev [][]float64, d, K, minEv int) {
	var warm *SharedSVD
	if in.PrevSVD.valid(d) {
		warm = &in.PrevSVD
	}
	o.SVD = ComputeSVD(ev, K, minEv, warm, in.Seed)
	if o.SVD.Dim == 0 {
		o.SVD.Dim = d
	}
	o.spectralFrom(in.PrevSVD, in.Goal, len(ev), K)
}

// spectralFrom fills stage 1's signals from o.SVD, computed (or folded)
// from n rows at requested rank K.
func (o *SignalObservation) spectralFrom(prev SharedSVD, goal []float64, n, K int) {
	o.Coverage = o.SVD.Coverage(goal)
	o.Eigengap = o.SVD.Eigengap()
	o.SubspaceDistance = ChordalDistance(prev, o.SVD)
	o.Gap = o.SVD.GapDirection(goal)
	if o.SVD.K > 0 && K > 0 {
		o.SVDConf = Confidence(float64(n) / float64(K))
	}
}

// alignmentStage is stage 2. It returns the evidence row norms because stage
// 4 needs them too and they are the costly part on a full evidence matrix.
func (o *SignalObservation) alignmentStage(in SignalInputs, ev [][]float64, strengths []float64, d int, p SignalParams) []float64 {
	n := len(ev)
	gu := Normalize(in.Goal)
	gOK := Dot(gu, gu) > 0
	b64 := blas64.Implementation()
	norms := make([]float64, n)
	cos := make([]float64, n)
	for i, r := range ev {
		norms[i] = b64.Dnrm2(d, r, 1)
		if gOK && norms[i] > 0 {
			cos[i] = clampCos(b64.Ddot(d, r, 1, gu, 1) / norms[i])
		}
	}
	if len(in.Task) == d && d > 0 && Dot(in.Task, in.Task) > 0 && gOK {
		o.GATask = NormalizeCosine(Cosine(in.Task, in.Goal))
	}
	if n > 0 {
		o.GAEvidence = AttentionGA(cos, strengths, p.AttentionK, p.AttentionTau)
	}
	o.GA = GoalAlignment(o.GATask, o.GAEvidence, n)
	return norms
}

// temporalStage is stage 3. Stability gets a confidence only when the
// previous state is comparable, so the tracker holds instead of reading the
// 0.5 "no information" value as drift; the residual reuses the SVD's mean
// when it has one rather than recomputing the centroid.
func (o *SignalObservation) temporalStage(in SignalInputs, ev [][]float64, nNew, d int, p SignalParams) {
	n := len(ev)
	o.State = StateEmbeddingWeighted(ev, in.Task, in.Active, p.StateRecency, p.StateWeights)
	o.Stability = Stability(in.PrevState, o.State)
	evConf := Confidence(float64(n))
	if len(in.PrevState) > 0 && len(in.PrevState) == len(o.State) {
		o.StabilityConf = evConf * Confidence(float64(n-nNew))
	}
	o.Residual = 1
	if n > 0 {
		centroid := o.SVD.Mean
		if len(centroid) != d {
			centroid = Centroid(ev)
		}
		o.Residual = ResidualDistance(centroid, in.Goal)
	}
	o.ResidualConf = evConf
}

// noveltyStage is stage 4, w the subspace turn's share; without new rows
// there is no information gain to measure (IG_new = 0). The new rows are
// compared against every other row, and in their own order against each
// other, wherever they sit in ev (the rows are only re-sliced, not copied).
func (o *SignalObservation) noveltyStage(ev [][]float64, norms []float64, isNew []bool, d int, w float64) {
	var igNew float64
	if nNew := countTrue(isNew); nNew > 0 {
		rows := make([][]float64, 0, len(ev))
		rn := make([]float64, 0, len(ev))
		for pass := 0; pass < 2; pass++ { // older rows first, then the new ones
			for i := range ev {
				if isNew[i] == (pass == 1) {
					rows, rn = append(rows, ev[i]), append(rn, norms[i])
				}
			}
		}
		igNew = meanIGNormed(rows, rn, len(rows)-nNew, d)
	}
	o.Novelty = Clamp01(w*o.SubspaceDistance + (1-w)*igNew)
}

// meanIGNormed is MeanInformationGain(ev[old:], ev[:old]) using the
// precomputed row norms and SIMD dots (activity side). The older rows are
// streamed once (outer loop) against the few new rows, which stay in cache;
// the sequential within-batch comparisons follow.
func meanIGNormed(ev [][]float64, norms []float64, old, d int) float64 {
	b64 := blas64.Implementation()
	n := len(ev)
	if old >= n {
		return 0
	}
	best := make([]float64, n-old)
	// New rows as float32 once; each older row converted into one reused
	// buffer, then float32 SIMD dots (cosines to ≈1e−6, ample for IG).
	b32 := blas32.Implementation()
	nw := make([][]float32, n-old)
	for i := old; i < n; i++ {
		nw[i-old] = ToFloat32(ev[i])
	}
	buf := make([]float32, d)
	for j := 0; j < old; j++ {
		if norms[j] == 0 {
			continue
		}
		for p, x := range ev[j][:d] {
			buf[p] = float32(x)
		}
		for i := old; i < n; i++ {
			if norms[i] == 0 {
				continue
			}
			c := float64(b32.Sdot(d, nw[i-old], 1, buf, 1)) / (norms[i] * norms[j])
			if c > best[i-old] {
				best[i-old] = c
			}
		}
	}
	var sum float64
	for i := old; i < n; i++ {
		if norms[i] == 0 {
			continue // zero row: IG 0
		}
		for j := old; j < i; j++ {
			if norms[j] == 0 {
				continue
			}
			c := b64.Ddot(d, ev[i], 1, ev[j], 1) / (norms[i] * norms[j])
			if c > best[i-old] {
				best[i-old] = c
			}
		}
		sum += 1 - Clamp01(best[i-old])
	}
	return Clamp01(sum / float64(n-old))
}
