package algebra

import (
	"math"
	"testing"
)

// Session parameters reach the algebra: each function that takes one
// gives the old constant's result at the default, and a different value
// gives a different result.

func TestAdaptiveBetaRange(t *testing.T) {
	tests := []struct {
		name         string
		mu, lo, hi   float64
		want         float64
		sameAsLegacy bool // lo, hi are the defaults: AdaptiveBeta must agree bit for bit
	}{
		{"defaults, diverse pool", 0, BetaMin, BetaMax, 0.5, true},
		{"defaults, redundant pool", 1, BetaMin, BetaMax, 1, true},
		{"defaults, middle", 0.5, BetaMin, BetaMax, 0.75, true},
		{"defaults, NaN", math.NaN(), BetaMin, BetaMax, 0.5, true},
		{"defaults, clamped above", 2, BetaMin, BetaMax, 1, true},
		{"lower floor", 0, 0.2, 1, 0.2, false},
		{"lower floor, middle", 0.5, 0.2, 1, 0.6, false},
		{"lower ceiling", 1, 0.5, 0.8, 0.8, false},
		{"fixed beta", 0.3, 0.7, 0.7, 0.7, false},
		{"no penalty", 0.9, 0, 0, 0, false},
		{"negative mean clamps to lo", -0.4, 0.3, 0.9, 0.3, false},
	}
	for _, tc := range tests {
		got := AdaptiveBetaRange(tc.mu, tc.lo, tc.hi)
		if !near(got, tc.want, 1e-15) {
			t.Errorf("%s: AdaptiveBetaRange(%v, %v, %v) = %v, want %v", tc.name, tc.mu, tc.lo, tc.hi, got, tc.want)
		}
		if tc.sameAsLegacy && got != AdaptiveBeta(tc.mu) {
			t.Errorf("%s: AdaptiveBetaRange = %v, AdaptiveBeta = %v", tc.name, got, AdaptiveBeta(tc.mu))
		}
	}
}

// The β bounds change what Pack picks: with a near-duplicate pair, β_max
// = 1 drops the duplicate, β_max = 0.2 (weak redundancy penalty) keeps it.
func TestBetaBoundsChangePack(t *testing.T) {
	sims := PairSims{N: 3, V: []float32{0.95, 0.1, 0.1}} // 0 and 1 near-duplicates
	scores := []float64{0.9, 0.85, 0.5}
	tokens := []int{100, 100, 100}
	budget := 200
	mu := sims.Mean()
	strong := Pack(scores, tokens, sims.At, budget, AdaptiveBetaRange(mu, BetaMin, BetaMax))
	weak := Pack(scores, tokens, sims.At, budget, AdaptiveBetaRange(mu, 0.1, 0.2))
	if len(strong) != 2 || strong[0] != 0 || strong[1] != 2 {
		t.Fatalf("default bounds picked %v, want [0 2] (duplicate dropped)", strong)
	}
	if len(weak) != 2 || weak[0] != 0 || weak[1] != 1 {
		t.Fatalf("bounds [0.1, 0.2] picked %v, want [0 1] (duplicate kept)", weak)
	}
}

func TestZeroYieldBoostStep(t *testing.T) {
	for _, n := range []int{-1, 0, 1, 3, 20} {
		for _, s := range []float64{0, 0.3, 0.95} {
			if a, b := ZeroYieldBoost(s, n), ZeroYieldBoostStep(s, n, ZeroYieldStep); a != b {
				t.Errorf("ZeroYieldBoost(%v, %d) = %v, step form %v", s, n, a, b)
			}
		}
	}
	if got := ZeroYieldBoostStep(0.3, 3, 0.1); !near(got, 0.6, 1e-15) {
		t.Errorf("step 0.1, 3 iterations: %v, want 0.6", got)
	}
	if got := ZeroYieldBoostStep(0.3, 3, 0); got != 0.3 {
		t.Errorf("step 0: %v, want the score", got)
	}
}

// PsiWith with DefaultPsiParams is Psi; moving a gate moves ψ.
func TestPsiParamsReachPsi(t *testing.T) {
	in := PsiInputs{Convergence: 0.4, Plateau: 0.8, Iterations: 5, MinIters: 3, Pressure: 0.8, ResourceProgress: 0.7}
	def := PsiWith(DefaultPsiParams(), in)
	if def != Psi(in) {
		t.Fatalf("PsiWith(defaults) = %v, Psi = %v", def, Psi(in))
	}
	p := DefaultPsiParams()
	p.PressureCenter = 0.6
	if got := PsiWith(p, in); !(got > def) {
		t.Errorf("pressure centre 0.6: ψ = %v, want above %v", got, def)
	}
	p = DefaultPsiParams()
	p.QualityThreshold = 0.8 // quality 0.32 is now low: pressure attenuated
	if got := PsiWith(p, in); !(got < def) {
		t.Errorf("quality threshold 0.8: ψ = %v, want below %v", got, def)
	}
}

func TestStateEmbeddingWeighted(t *testing.T) {
	ev := refMatrix(12, 16, 21, "decay")
	task := refNormals(22, 16)
	active := [][]float64{refNormals(23, 16)}
	def := StateEmbedding(ev, task, active, DefaultStateRecency)
	if got := StateEmbeddingWeighted(ev, task, active, DefaultStateRecency, DefaultStateWeights()); !sameFloats(got, def) {
		t.Fatal("StateEmbeddingWeighted with the default weights differs from StateEmbedding")
	}
	taskOnly := StateEmbeddingWeighted(ev, task, active, DefaultStateRecency, StateWeights{Task: 1})
	if !near(Cosine(taskOnly, task), 1, 1e-12) {
		t.Errorf("task weight only: cos(state, task) = %v, want 1", Cosine(taskOnly, task))
	}
	if got := StateEmbeddingWeighted(ev, nil, nil, DefaultStateRecency, StateWeights{Task: 1}); got != nil {
		t.Errorf("only a zero-weighted part present: state %v, want nil", got)
	}
}

// SignalInputs.Params: nil and the explicit defaults give bit-identical
// observations; attention k, τ, recency, state weights and the novelty
// weight each change what they drive.
func TestSignalParams(t *testing.T) {
	d := 48
	rows := refMatrix(80, d, 31, "decay")
	goal := refNormals(32, d)
	for j := range goal {
		goal[j] += 2 * rows[0][j]
	}
	strengths := make([]float64, len(rows))
	for i := range strengths {
		strengths[i] = 0.3 + 0.7*float64(i%5)/4
	}
	prev := ComputeIterationSignals(SignalInputs{Evidence: rows[:60], Strengths: strengths[:60], Goal: goal, Task: rows[3], NewEvidence: 60, K: 8, Seed: 1})
	run := func(p *SignalParams) SignalObservation {
		return ComputeIterationSignals(SignalInputs{
			Evidence: rows, Strengths: strengths, Goal: goal, Task: rows[3], Active: [][]float64{rows[9]},
			PrevState: prev.State, PrevSVD: prev.SVD, NewEvidence: 20, K: 8, Seed: 1, Params: p,
		})
	}
	def := DefaultSignalParams()
	a, b := run(nil), run(&def)
	if a.GA != b.GA || a.Novelty != b.Novelty || a.Stability != b.Stability || !sameFloats(a.State, b.State) {
		t.Fatal("nil Params and DefaultSignalParams differ")
	}
	if def.AttentionK != DefaultAttentionTopK || def.AttentionTau != DefaultAttentionTemperature || def.StateRecency != DefaultStateRecency ||
		def.StateWeights != (StateWeights{StateEvidenceWeight, StateTaskWeight, StateActiveWeight}) || def.NoveltyDistanceWeight != 0.5 {
		t.Fatalf("DefaultSignalParams = %+v", def)
	}
	for _, tc := range []struct {
		name    string
		set     func(*SignalParams)
		differs func(o SignalObservation) bool
	}{
		{"attention_k", func(p *SignalParams) { p.AttentionK = 60 }, func(o SignalObservation) bool { return o.GA != a.GA }},
		{"attention_tau", func(p *SignalParams) { p.AttentionTau = 1 }, func(o SignalObservation) bool { return o.GA != a.GA }},
		{"state_recency", func(p *SignalParams) { p.StateRecency = 0 }, func(o SignalObservation) bool { return !sameFloats(o.State, a.State) }},
		{"state_weights", func(p *SignalParams) { p.StateWeights = StateWeights{Evidence: 0.2, Task: 0.6, Active: 0.2} }, func(o SignalObservation) bool { return !sameFloats(o.State, a.State) }},
		{"novelty_weight_distance", func(p *SignalParams) { p.NoveltyDistanceWeight = 1 }, func(o SignalObservation) bool {
			return o.Novelty != a.Novelty && near(o.Novelty, Clamp01(o.SubspaceDistance), 1e-15)
		}},
	} {
		p := DefaultSignalParams()
		tc.set(&p)
		if o := run(&p); !tc.differs(o) {
			t.Errorf("%s: the observation did not change (GA %v, novelty %v)", tc.name, o.GA, o.Novelty)
		}
	}
}
