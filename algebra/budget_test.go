package algebra

import (
	"math"
	"testing"
)

func TestResourceProgress(t *testing.T) {
	tests := []struct{ it, wall, want float64 }{
		{0.2, 0.5, 0.5}, {0.7, 0.1, 0.7}, {1.5, 0.1, 1}, {-1, -1, 0}, {math.NaN(), 0.3, 0.3},
	}
	for _, tc := range tests {
		if got := ResourceProgress(tc.it, tc.wall); got != tc.want {
			t.Errorf("ResourceProgress(%v, %v) = %v, want %v", tc.it, tc.wall, got, tc.want)
		}
	}
}

func TestAcceleratedProgress(t *testing.T) {
	tests := []struct{ rp, conv, want float64 }{
		{0.4, 0, 0.4},  // identity without convergence
		{0, 1, 0},      // start stays at 0
		{1, 1, 1},      // exhausted stays exhausted
		{0.5, 1, 0.75}, // max acceleration conv/4 at rp = 0.5
		{0.5, 0.4, 0.6},
	}
	for _, tc := range tests {
		if got := AcceleratedProgress(tc.rp, tc.conv); !near(got, tc.want, 1e-15) {
			t.Errorf("AcceleratedProgress(%v, %v) = %v, want %v", tc.rp, tc.conv, got, tc.want)
		}
	}
	// monotone in both arguments, within [rp, 1]
	for i := 0; i <= 20; i++ {
		for j := 0; j <= 20; j++ {
			rp, c := float64(i)/20, float64(j)/20
			a := AcceleratedProgress(rp, c)
			if a < rp-1e-15 || a > 1 {
				t.Fatalf("AcceleratedProgress(%v,%v) = %v outside [rp,1]", rp, c, a)
			}
			if i > 0 && a < AcceleratedProgress(float64(i-1)/20, c) {
				t.Fatalf("not monotone in rp at (%v,%v)", rp, c)
			}
			if j > 0 && a < AcceleratedProgress(rp, float64(j-1)/20) {
				t.Fatalf("not monotone in conv at (%v,%v)", rp, c)
			}
		}
	}
}

func TestZeroYieldBoost(t *testing.T) {
	tests := []struct {
		score float64
		n     int
		want  float64
	}{
		{0, 3, 0.24}, // seed: 0.24 after 3 consecutive zero-yield iterations
		{0.5, 0, 0.5},
		{0.5, 1, 0.58},
		{0.9, 3, 1},
		{0.2, -4, 0.2},
	}
	for _, tc := range tests {
		if got := ZeroYieldBoost(tc.score, tc.n); !near(got, tc.want, 1e-15) {
			t.Errorf("ZeroYieldBoost(%v, %d) = %v, want %v", tc.score, tc.n, got, tc.want)
		}
	}
}

func TestPlateauIndicator(t *testing.T) {
	tests := []struct{ delta, tol, want, eps float64 }{
		{0, 0.05, 0.997, 0.001},
		{0.05, 0.05, 0.5, 1e-12},
		{-0.05, 0.05, 0.5, 1e-12},
		{0.1, 0.05, 0.003, 0.001},
		{0.05, 0, 0.5, 1e-12}, // default tol
	}
	for _, tc := range tests {
		if got := PlateauIndicator(tc.delta, tc.tol); !near(got, tc.want, tc.eps) {
			t.Errorf("PlateauIndicator(%v, %v) = %v, want %v", tc.delta, tc.tol, got, tc.want)
		}
	}
}

func TestPsiParts(t *testing.T) {
	p := DefaultPsiParams()
	if p.QualityThreshold != 0.15 || p.IterTemperature != 4 || p.PressureCenter != 0.85 ||
		p.PressureTemperature != 8 || p.ResourceCenter != 0.95 || p.ResourceTemperature != 12 {
		t.Errorf("DefaultPsiParams = %+v", p)
	}
	// iter_readiness = soft_gate(iterations, min_iters − 0.5, T = 4)
	if got := IterReadiness(2.5, 3); got != 0.5 {
		t.Errorf("IterReadiness(2.5, 3) = %v, want 0.5", got)
	}
	if got, want := IterReadiness(3, 3), 0.5*(1+math.Tanh(1)); !near(got, want, 1e-15) {
		t.Errorf("IterReadiness(3, 3) = %v, want %v", got, want)
	}
	if got := IterReadiness(0, 3); got > 0.01 {
		t.Errorf("IterReadiness(0, 3) = %v, want ≈ 0", got)
	}
	// pressure_urgency
	if got := PressureUrgency(0.85, 0); !near(got, 0.5, 1e-3) {
		t.Errorf("PressureUrgency(0.85, 0) = %v, want ≈ 0.5", got)
	}
	if got := PressureUrgency(0, 0.95); !near(got, 0.5, 1e-12) {
		t.Errorf("PressureUrgency(0, 0.95) = %v, want 0.5", got)
	}
	if got, want := PressureUrgency(0.9, 0.97), math.Max(SoftGate(0.9, 0.85, 8), SoftGate(0.97, 0.95, 12)); got != want {
		t.Errorf("PressureUrgency = %v, want %v", got, want)
	}
	// quality gate: ≈ full strength above 0.15, ≈ 0 at 0
	tests := []struct{ conv, plateau, want, tol float64 }{
		{0, 1, 0.05, 1e-12},
		{0.15, 1, 0.95, 1e-12},
		{0.3, 0.5, 0.95, 1e-12},
		{0.075, 1, 0.5, 1e-12},
		{0.6, 1, 1, 1e-4},
	}
	for _, tc := range tests {
		if got := QualityGate(tc.conv, tc.plateau); !near(got, tc.want, tc.tol) {
			t.Errorf("QualityGate(%v, %v) = %v, want %v", tc.conv, tc.plateau, got, tc.want)
		}
	}
}

func TestPsi(t *testing.T) {
	const agent, research = 0.82, 0.70
	tests := []struct {
		name      string
		in        PsiInputs
		terminate bool // ψ > 0.82
	}{
		{"strong convergence", PsiInputs{Convergence: 0.95, Plateau: 1, Iterations: 10, MinIters: 3}, true},
		{"strong convergence, too early", PsiInputs{Convergence: 0.95, Plateau: 1, Iterations: 1, MinIters: 3}, false},
		{"pressure alone", PsiInputs{Convergence: 0, Plateau: 1, Iterations: 10, MinIters: 3, Pressure: 1, ResourceProgress: 1}, false},
		{"pressure + moderate quality", PsiInputs{Convergence: 0.4, Plateau: 1, Iterations: 10, MinIters: 3, Pressure: 1, ResourceProgress: 1}, true},
		{"moderate both", PsiInputs{Convergence: 0.5, Plateau: 1, Iterations: 10, MinIters: 3, Pressure: 0.5, ResourceProgress: 0.6}, false},
	}
	for _, tc := range tests {
		psi := Psi(tc.in)
		if psi < 0 || psi > 1 {
			t.Errorf("%s: ψ = %v outside [0,1]", tc.name, psi)
		}
		if (psi > agent) != tc.terminate {
			t.Errorf("%s: ψ = %.4f, terminate(>0.82) = %v, want %v", tc.name, psi, psi > agent, tc.terminate)
		}
	}
	// pressure alone never reaches the research threshold either
	if psi := Psi(PsiInputs{Pressure: 1, ResourceProgress: 1, Iterations: 100, MinIters: 3, Plateau: 1}); psi > 0.06 || psi > research {
		t.Errorf("pressure alone: ψ = %v, want ≤ 0.05", psi)
	}
	// Monotone non-decreasing in pressure at fixed convergence (and in
	// resource progress), on a grid.
	for _, conv := range []float64{0, 0.1, 0.15, 0.3, 0.6, 0.9, 1} {
		for _, rp := range []float64{0, 0.5, 0.9, 0.97, 1} {
			prev := -1.0
			for i := 0; i <= 100; i++ {
				in := PsiInputs{Convergence: conv, Plateau: 0.9, Iterations: 5, MinIters: 3, Pressure: float64(i) / 100, ResourceProgress: rp}
				psi := Psi(in)
				if psi < prev {
					t.Fatalf("ψ not monotone in pressure at conv=%v rp=%v p=%v: %v < %v", conv, rp, in.Pressure, psi, prev)
				}
				prev = psi
			}
		}
	}
	// monotone in convergence at fixed pressure
	for _, p := range []float64{0, 0.5, 0.9, 1} {
		prev := -1.0
		for i := 0; i <= 100; i++ {
			psi := Psi(PsiInputs{Convergence: float64(i) / 100, Plateau: 1, Iterations: 5, MinIters: 3, Pressure: p, ResourceProgress: p})
			if psi < prev {
				t.Fatalf("ψ not monotone in convergence at p=%v", p)
			}
			prev = psi
		}
	}
}

func TestThinkingBudget(t *testing.T) {
	const lo, hi = 6144, 12288
	tests := []struct {
		novelty, pressure float64
		want              int
	}{
		{1, 0, hi}, // early, high novelty: max
		{0, 0, lo}, // no novelty: min
		{1, 1, lo}, // heavy pressure: min
		{0.5, 0, 9216},
		{0.5, 0.5, 7680},
		{2, -1, hi}, // clamped
		{math.NaN(), math.NaN(), lo},
	}
	for _, tc := range tests {
		if got := ThinkingBudget(tc.novelty, tc.pressure, lo, hi); got != tc.want {
			t.Errorf("ThinkingBudget(%v, %v) = %d, want %d", tc.novelty, tc.pressure, got, tc.want)
		}
	}
	if got := ThinkingBudget(1, 0, 500, 100); got != 500 {
		t.Errorf("max < min: %d, want 500", got)
	}
	for i := 0; i <= 10; i++ {
		for j := 0; j <= 10; j++ {
			b := ThinkingBudget(float64(i)/10, float64(j)/10, lo, hi)
			if b < lo || b > hi {
				t.Fatalf("budget %d outside [%d,%d]", b, lo, hi)
			}
			if j > 0 && b > ThinkingBudget(float64(i)/10, float64(j-1)/10, lo, hi) {
				t.Fatalf("budget grows with pressure")
			}
		}
	}
}

func TestConvergenceScore(t *testing.T) {
	for _, w := range []ConvergenceWeights{AgentConvergenceWeights(), ResearchConvergenceWeights()} {
		if s := w.GA + w.Temporal + w.Coverage; !near(s, 1, 1e-15) {
			t.Errorf("weights %+v sum to %v", w, s)
		}
		if got := ConvergenceScore(w, 1, 1, 1); !near(got, 1, 1e-15) {
			t.Errorf("all ones: %v", got)
		}
		if got := ConvergenceScore(w, 0, 0, 0); got != 0 {
			t.Errorf("all zeros: %v", got)
		}
		if got := ConvergenceScore(w, 5, -3, math.NaN()); got < 0 || got > 1 {
			t.Errorf("out of range inputs gave %v", got)
		}
	}
	w := ConvergenceWeights{GA: 2, Temporal: 1, Coverage: 1}
	if got := ConvergenceScore(w, 1, 0, 0); got != 0.5 {
		t.Errorf("normalised blend = %v, want 0.5", got)
	}
	if got := ConvergenceScore(ConvergenceWeights{}, 1, 1, 1); got != 0 {
		t.Errorf("zero weights = %v, want 0", got)
	}
	if got := ConvergenceScore(AgentConvergenceWeights(), 0.5, 0.8, 0.2); !near(got, 0.4*0.5+0.35*0.8+0.25*0.2, 1e-15) {
		t.Errorf("agent blend = %v", got)
	}
}

func TestEMA(t *testing.T) {
	e := EMA{Value: 0.4}
	// holds its value at zero confidence, for any observation
	for _, obs := range []float64{0, 1, 100, math.NaN()} {
		if got := e.Update(obs, 0, DefaultEMAAlpha); got != e {
			t.Errorf("Update(%v, conf 0) = %v, want hold at %v", obs, got, e)
		}
	}
	if got := e.Update(1, 1, 0.3); !near(got.Value, 0.58, 1e-15) {
		t.Errorf("Update(1, 1, 0.3) = %v, want 0.58", got.Value)
	}
	if got := e.Update(1, 0.5, 0.3); !near(got.Value, 0.49, 1e-15) {
		t.Errorf("Update(1, 0.5, 0.3) = %v, want 0.49", got.Value)
	}
	if got := e.Update(1, 7, 2); got.Value != 1 {
		t.Errorf("clamped α·conf = 1 should jump to obs, got %v", got.Value)
	}
	// converges to a constant observation
	for range 100 {
		e = e.Update(0.9, 1, DefaultEMAAlpha)
	}
	if !near(e.Value, 0.9, 1e-12) {
		t.Errorf("EMA did not converge: %v", e.Value)
	}
}

func TestTrackers(t *testing.T) {
	tr := InitialTrackers()
	if tr.Stability.Value != 0.5 || tr.Residual.Value != 1 || tr.Eigengap.Value != 0 {
		t.Errorf("InitialTrackers = %+v", tr)
	}
	held := tr.Update(ObservedScalars{Stability: 0.9, Residual: 0.2, Eigengap: 0.7}, DefaultEMAAlpha)
	if held != tr {
		t.Errorf("zero confidences must hold: %+v", held)
	}
	got := tr.Update(ObservedScalars{Stability: 1, StabilityConf: 1, Residual: 0, ResidualConf: 0.5, Eigengap: 1, SVDConf: 0}, 0.3)
	if !near(got.Stability.Value, 0.65, 1e-15) || !near(got.Residual.Value, 0.85, 1e-15) || got.Eigengap.Value != 0 {
		t.Errorf("Update = %+v", got)
	}
}

func TestPsiWithMatchesParts(t *testing.T) {
	for _, in := range []PsiInputs{
		{Convergence: 0.3, Plateau: 0.8, Iterations: 4, MinIters: 3, Pressure: 0.9, ResourceProgress: 0.7},
		{Convergence: 0.9, Plateau: 1, Iterations: 2, MinIters: 5, Pressure: 0.2, ResourceProgress: 0.99},
	} {
		cs := in.Convergence * in.Plateau * IterReadiness(in.Iterations, in.MinIters)
		eff := PressureUrgency(in.Pressure, in.ResourceProgress) * QualityGate(in.Convergence, in.Plateau)
		want := 1 - (1-cs)*(1-eff)
		if got := Psi(in); !near(got, want, 1e-15) {
			t.Errorf("Psi(%+v) = %v, want %v", in, got, want)
		}
	}
}
