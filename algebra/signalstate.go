package algebra

import (
	"cmp"
	"math"
	"slices"

	"gonum.org/v1/gonum/blas/blas64"
)

// Running aggregates of the signal pipeline (docs/incremental-signals.md).
// A SignalState summarises every evidence row folded into it, in order, so
// that the next observation needs only the rows that arrived since:
//
//   - N and Sum (the centroid Sum/N, the residual's input);
//   - SVD, the PCA at rank 2k (k = Rank), updated by UpdateSVD; the signals
//     read its first k triplets (SignalSVD). The k extra directions are
//     where energy that the truncation would drop accumulates until it
//     ranks: without them, directions that grow slowly never enter the
//     basis and the subspace turns about half as much per iteration as the
//     batch SVD's (docs/incremental-signals.md);
//   - the recency moments of the state embedding's evidence part: with
//     row ordinal i (0-based) and t_i = i/Scale, Scale = max(N − 1, 1),
//     Moments[m] = Σ t_i^m ê_i and Weights[m] = Σ t_i^m over the non-zero
//     rows (ê the unit row). The recency centroid of StateEmbedding is
//     Σ e^{r t_i} ê_i / Σ e^{r t_i}, and e^{r t} = Σ_m (r t)^m / m!, so
//     c_e = Σ_m (r^m/m!) Moments[m] / Σ_m (r^m/m!) Weights[m]. Growing N to
//     N' rescales the stored moments by (Scale/Scale')^m. The series is cut
//     where e^r · r^{M}/M! < 1e−12 (recencyTerms: 21 terms at r = 2);
//   - Top, the AttentionK rows best aligned with the goal (cosine, the
//     strength when folded, ordinal), all AttentionGA reads.
//
// It is a plain value: Fold returns a new one and never aliases the old.
type SignalState struct {
	Dim, N   int
	Sum      []float64
	SVD      SharedSVD
	Recency  float64
	Scale    float64
	Moments  [][]float64
	Weights  []float64
	TopK     int
	Top      []TopRow
	Rank     int // requested SVD rank k; SVD keeps up to 2k (oversample)
	MinRows  int // MinEvidence
	ColdIter int // iteration of the last recompute from all rows (the caller's bookkeeping)
}

// TopRow is one best-aligned evidence row.
type TopRow struct {
	Cos, Strength float64
	Row           int
}

// recencyTerms is the number of Taylor terms of e^{r t}, t ∈ [0, 1], whose
// cut relative to the smallest weight e^0 is below 1e−12 after the e^r
// spread between the newest and the oldest row: 1 for r = 0, 21 for r = 2,
// 90 for r = 20 (the parameter's maximum).
func recencyTerms(r float64) int {
	r = math.Abs(r)
	term, spread := 1.0, math.Exp(r)
	for m := 1; m < 400; m++ {
		term *= r / float64(m)
		if term*spread < 1e-12 {
			return m
		}
	}
	return 400
}

// NewSignalState is the state of no rows for dimension dim, SVD rank k,
// at least minRows rows for a non-empty SVD, and the session's parameters.
func NewSignalState(dim, k, minRows int, p SignalParams) SignalState {
	t := recencyTerms(p.StateRecency)
	s := SignalState{Dim: dim, Sum: make([]float64, dim), SVD: EmptySVD(dim), Recency: p.StateRecency, Scale: 1,
		Moments: make([][]float64, t), Weights: make([]float64, t), TopK: p.AttentionK, Rank: k, MinRows: minRows}
	for m := range s.Moments {
		s.Moments[m] = make([]float64, dim)
	}
	return s
}

// Compatible reports whether s can be extended for a session with these
// settings: same dimension, rank, minimum and parameters, and a non-empty
// SVD (an EmptySVD holds no scatter to update; below MinRows the caller
// recomputes from all rows, which are few then).
func (s SignalState) Compatible(dim, k, minRows int, p SignalParams) bool {
	return s.Dim == dim && dim > 0 && s.Rank == k && s.MinRows == minRows && s.Recency == p.StateRecency &&
		s.TopK == p.AttentionK && s.SVD.valid(dim) && len(s.SVD.Mean) == dim && s.SVD.Rows == s.N &&
		len(s.Moments) == recencyTerms(p.StateRecency) && len(s.Sum) == dim
}

// clone is a deep copy, so that folding never writes into a stored state.
func (s SignalState) clone() SignalState {
	c := s
	c.Sum = slices.Clone(s.Sum)
	c.Weights = slices.Clone(s.Weights)
	c.Top = slices.Clone(s.Top)
	c.Moments = make([][]float64, len(s.Moments))
	for m, v := range s.Moments {
		c.Moments[m] = slices.Clone(v)
	}
	return c
}

// foldAggregates adds rows (all of length Dim, in order) to N, Sum, the
// moments and Top; the SVD is the caller's. goal need not be unit.
func (s *SignalState) foldAggregates(rows [][]float64, strengths []float64, goal []float64) {
	n2 := s.N + len(rows)
	scale := math.Max(float64(n2-1), 1)
	if f := s.Scale / scale; f != 1 {
		pow := 1.0
		for m := range s.Moments {
			for j := range s.Moments[m] {
				s.Moments[m][j] *= pow
			}
			s.Weights[m] *= pow
			pow *= f
		}
	}
	s.Scale = scale
	gu := Normalize(goal)
	gOK := len(gu) == s.Dim && Dot(gu, gu) > 0
	b64 := blas64.Implementation()
	for i, r := range rows {
		ord := s.N + i
		for j, x := range r {
			s.Sum[j] += x
		}
		nr := b64.Dnrm2(s.Dim, r, 1)
		if nr > 0 {
			t, pow := float64(ord)/scale, 1.0
			for m := range s.Moments {
				b64.Daxpy(s.Dim, pow/nr, r, 1, s.Moments[m], 1)
				s.Weights[m] += pow
				pow *= t
			}
		}
		var c float64
		if gOK && nr > 0 {
			c = clampCos(b64.Ddot(s.Dim, r, 1, gu, 1) / nr)
		}
		st := 1.0 // as signalRows: a row without a given strength counts 1
		if i < len(strengths) {
			st = strengths[i]
		}
		s.Top = append(s.Top, TopRow{Cos: c, Strength: st, Row: ord})
	}
	s.N = n2
	s.keepTop()
}

// keepTop orders Top best first (cosine descending, NaN last, earlier row
// first on ties: topIndices' order) and keeps TopK rows (all when TopK ≤ 0).
func (s *SignalState) keepTop() {
	slices.SortFunc(s.Top, func(a, b TopRow) int {
		an, bn := math.IsNaN(a.Cos), math.IsNaN(b.Cos)
		switch {
		case an && !bn:
			return 1
		case bn && !an:
			return -1
		case !an && a.Cos != b.Cos:
			return cmp.Compare(b.Cos, a.Cos)
		}
		return cmp.Compare(a.Row, b.Row)
	})
	if s.TopK > 0 && len(s.Top) > s.TopK {
		s.Top = s.Top[:s.TopK]
	}
}

// ColdSignalState builds the state from all rows (of length dim; others
// skipped, as ComputeIterationSignals does), the SVD by ComputeSVD warm-
// started from warm when that is usable. strengths are per row (nil: 1).
func ColdSignalState(rows [][]float64, strengths []float64, goal []float64, dim, k, minRows int, p SignalParams, warm *SharedSVD, seed uint64) SignalState {
	s := NewSignalState(dim, k, minRows, p)
	keep, ks := dimRows(rows, strengths, dim)
	s.foldAggregates(keep, ks, goal)
	if warm != nil && !warm.valid(dim) {
		warm = nil
	}
	s.SVD = ComputeSVD(keep, oversampled(k), minRows, warm, seed)
	if s.SVD.Dim == 0 {
		s.SVD.Dim = dim
	}
	return s
}

// Fold returns s with rows appended (rows of another length skipped): the
// aggregates exactly, the SVD by UpdateSVD. s must be Compatible.
func (s SignalState) Fold(rows [][]float64, strengths []float64, goal []float64) SignalState {
	c := s.clone()
	keep, ks := dimRows(rows, strengths, s.Dim)
	c.foldAggregates(keep, ks, goal)
	c.SVD = UpdateSVD(s.SVD, keep, oversampled(s.Rank))
	return c
}

// oversampled is the rank the running SVD keeps for signals of rank k: a
// design constant (2k), like ComputeSVD's Krylov depths, not a parameter.
func oversampled(k int) int { return 2 * k }

// SignalSVD is the SVD the signals read: the first Rank triplets of the
// running one (an alias, not a copy).
func (s SignalState) SignalSVD() SharedSVD {
	return TruncateSVD(s.SVD, s.Rank)
}

// TruncateSVD keeps the first k triplets of s (aliasing its slices).
func TruncateSVD(s SharedSVD, k int) SharedSVD {
	if s.K <= k {
		return s
	}
	o := s
	o.K, o.Sigma, o.Basis = k, s.Sigma[:k], s.Basis[:k*s.Dim]
	return o
}

// dimRows keeps the rows of length dim and their strengths (nil stays nil).
func dimRows(rows [][]float64, strengths []float64, dim int) ([][]float64, []float64) {
	keep := make([][]float64, 0, len(rows))
	var ks []float64
	for i, r := range rows {
		if len(r) != dim || dim == 0 {
			continue
		}
		keep = append(keep, r)
		if strengths != nil {
			st := 1.0
			if i < len(strengths) {
				st = strengths[i]
			}
			ks = append(ks, st)
		}
	}
	return keep, ks
}

// RecencyCentroid is c_e of StateEmbedding from the moments (nil without
// a non-zero row).
func (s SignalState) RecencyCentroid() []float64 {
	if len(s.Moments) == 0 {
		return nil
	}
	num := make([]float64, s.Dim)
	var den float64
	coef := 1.0
	for m := range s.Moments {
		for j, x := range s.Moments[m] {
			num[j] += coef * x
		}
		den += coef * s.Weights[m]
		coef *= s.Recency / float64(m+1)
	}
	if !(den > 0) {
		return nil
	}
	for j := range num {
		num[j] /= den
	}
	return num
}

// Centroid is the mean of the folded rows (nil for none).
func (s SignalState) Centroid() []float64 {
	if s.N == 0 {
		return nil
	}
	c := make([]float64, s.Dim)
	for j, x := range s.Sum {
		c[j] = x / float64(s.N)
	}
	return c
}

// StateSignalInputs are what one observation needs besides the state: the
// previous iteration's SVD and state embedding, the goal, the task and the
// other ACTIVE tasks, and the novelty rows: New (this iteration's fetched
// rows, in order) and Held (the rows they are compared with).
type StateSignalInputs struct {
	State     SignalState
	PrevSVD   SharedSVD
	PrevState []float64
	Goal      []float64
	Task      []float64
	Active    [][]float64
	Held, New [][]float64
	Params    *SignalParams
}

// ObserveState is ComputeIterationSignals over a SignalState: the same four
// stages and formulas, with the evidence read from the aggregates. With a
// state built by ColdSignalState and Held = every older row it equals
// ComputeIterationSignals up to the recency series' 1e−12 cut (tested);
// docs/incremental-signals.md says where a folded state differs.
func ObserveState(in StateSignalInputs) SignalObservation {
	s := in.State
	p := DefaultSignalParams()
	if in.Params != nil {
		p = *in.Params
	}
	o := SignalObservation{NEvidence: s.N, SVD: s.SignalSVD()}
	o.spectralFrom(in.PrevSVD, in.Goal, s.N, s.Rank)
	if len(in.Task) == s.Dim && s.Dim > 0 && Dot(in.Task, in.Task) > 0 && Dot(in.Goal, in.Goal) > 0 {
		o.GATask = NormalizeCosine(Cosine(in.Task, in.Goal))
	}
	if s.N > 0 && len(s.Top) > 0 {
		cos, st := make([]float64, len(s.Top)), make([]float64, len(s.Top))
		for i, t := range s.Top {
			cos[i], st[i] = t.Cos, t.Strength
		}
		o.GAEvidence = AttentionGA(cos, st, p.AttentionK, p.AttentionTau)
	}
	o.GA = GoalAlignment(o.GATask, o.GAEvidence, s.N)
	held, _ := dimRows(in.Held, nil, s.Dim)
	nw, _ := dimRows(in.New, nil, s.Dim)
	o.State = stateFromCentroid(s.RecencyCentroid(), in.Task, in.Active, p.StateWeights)
	o.Stability = Stability(in.PrevState, o.State)
	evConf := Confidence(float64(s.N))
	if len(in.PrevState) > 0 && len(in.PrevState) == len(o.State) {
		o.StabilityConf = evConf * Confidence(float64(s.N-len(nw)))
	}
	o.Residual = 1
	if s.N > 0 {
		c := s.SVD.Mean
		if len(c) != s.Dim {
			c = s.Centroid()
		}
		o.Residual = ResidualDistance(c, in.Goal)
	}
	o.ResidualConf = evConf
	rows := append(append(make([][]float64, 0, len(held)+len(nw)), held...), nw...)
	norms := make([]float64, len(rows))
	for i, r := range rows {
		norms[i] = Norm(r)
	}
	isNew := make([]bool, len(rows))
	for i := len(held); i < len(rows); i++ {
		isNew[i] = true
	}
	o.noveltyStage(rows, norms, isNew, s.Dim, p.NoveltyDistanceWeight)
	return o
}

// stateFromCentroid is StateEmbeddingWeighted with the evidence part's
// recency centroid given (nil: no evidence part).
func stateFromCentroid(ce, task []float64, active [][]float64, w StateWeights) []float64 {
	var ev [][]float64
	if ce != nil {
		ev = [][]float64{ce}
	}
	d := stateDim(ev, task, active)
	if d == 0 {
		return nil
	}
	state := make([]float64, d)
	var wsum float64
	if len(ce) == d {
		for j, x := range ce {
			state[j] += w.Evidence * x
		}
		wsum += w.Evidence
	}
	wsum += addTaskPart(state, task, w.Task)
	wsum += addActivePart(state, active, w.Active)
	if wsum == 0 {
		return nil
	}
	out := Normalize(state)
	if Dot(out, out) == 0 {
		return nil
	}
	return out
}
