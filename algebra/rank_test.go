package algebra

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestWarpAngle(t *testing.T) {
	tests := []struct{ p, want float64 }{
		{0, 0}, {1, 0.5}, {0.5, 0.25}, {2, 0.5}, {-1, 0},
	}
	for _, tc := range tests {
		if got := WarpAngle(tc.p, DefaultMaxWarpAngle); got != tc.want {
			t.Errorf("WarpAngle(%v) = %v, want %v", tc.p, got, tc.want)
		}
	}
}

func randUnit(r *rand.Rand, d int) []float64 { return Normalize(gaussianVec(r, d)) }

// TestWarpedCosineClosedForm: the closed form equals Cosine(Warp(e,d,θ), g)
// on random unit vectors.
func TestWarpedCosineClosedForm(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for trial := 0; trial < 500; trial++ {
		d := 2 + trial%40
		e, dir, g := randUnit(r, d), randUnit(r, d), randUnit(r, d)
		if trial%7 == 0 { // correlated inputs too
			for i := range dir {
				dir[i] = 0.9*e[i] + 0.1*dir[i]
			}
			dir = Normalize(dir)
		}
		theta := r.Float64() * 1.2
		want := Cosine(Warp(e, dir, theta), g)
		got := WarpedCosine(Dot(e, g), Dot(e, dir), Dot(dir, g), theta)
		if !near(got, want, 1e-9) {
			t.Fatalf("trial %d (d=%d, θ=%v): closed form %v, explicit %v", trial, d, theta, got, want)
		}
	}
}

func TestWarpedCosineAgainstNumpy(t *testing.T) {
	w := mustRef(t).Warp
	got := WarpedCosine(w.CosEG, w.CosED, w.CosDG, w.Theta)
	if !near(got, w.CosWarpGoal, 1e-12) {
		t.Errorf("WarpedCosine = %v, numpy %v", got, w.CosWarpGoal)
	}
	v := Warp(w.E, w.D, w.Theta)
	for i := range v {
		if !near(v[i], w.Warp[i], 1e-12) {
			t.Fatalf("Warp = %v, numpy %v", v, w.Warp)
		}
	}
}

func TestWarpedCosineIdentities(t *testing.T) {
	tests := []struct {
		name                       string
		cEG, cED, cDG, theta, want float64
	}{
		{"θ = 0", 0.3, 0.2, 0.9, 0, 0.3},
		{"d = e", 0.3, 1, 0.3, 0.5, 0.3},
		{"d = −e", 0.3, -1, -0.3, 0.5, 0.3},
		// orthonormal e, d in the plane of g: rotating by θ gives cos(α−θ)
		{"planar", math.Cos(1.0), 0, math.Sin(1.0), 0.4, math.Cos(0.6)},
		{"clamped inputs", 1.5, 0, 0, 0.3, math.Cos(0.3)},
	}
	for _, tc := range tests {
		if got := WarpedCosine(tc.cEG, tc.cED, tc.cDG, tc.theta); !near(got, tc.want, 1e-12) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestScalarsOfRanking(t *testing.T) {
	if NormalizeCosine(-1) != 0 || NormalizeCosine(0) != 0.5 || NormalizeCosine(1) != 1 || NormalizeCosine(1.2) != 1 {
		t.Error("NormalizeCosine")
	}
	tests := []struct{ cov, want float64 }{
		{1, 0.05}, {0, 1}, {0.5, 0.525}, {2, 0.05}, {-1, 1},
	}
	for _, tc := range tests {
		if got := EvidenceDeficit(tc.cov); !near(got, tc.want, 1e-15) {
			t.Errorf("EvidenceDeficit(%v) = %v, want %v", tc.cov, got, tc.want)
		}
	}
	if DepthWeight(0) != 1 || DepthWeight(1) != 0.5 || DepthWeight(3) != 0.25 || DepthWeight(-2) != 1 {
		t.Error("DepthWeight")
	}
	if DiminishingReturns(0) != 1 || !near(DiminishingReturns(3), 0.5, 1e-15) || DiminishingReturns(-1) != 1 {
		t.Error("DiminishingReturns")
	}
	// ε floor: with zero GA, depth and diminishing returns still order tasks
	a := RankScore(0, 1, 0, 0)
	b := RankScore(0, 1, 0, 3)
	c := RankScore(0, 1, 1, 0)
	if a != TaskGAFloor || !(a > b) || !(a > c) || b <= 0 {
		t.Errorf("RankScore floor: %v %v %v", a, b, c)
	}
	if got := RankScore(0.8, 0.5, 1, 3); !near(got, 0.8*0.5*0.5*0.5, 1e-15) {
		t.Errorf("RankScore = %v", got)
	}
	// context weight shift with p²
	if got := ContextWeight(0.5, 0.2, 0.6); !near(got, 0.3, 1e-15) {
		t.Errorf("ContextWeight(0.5) = %v, want 0.3", got)
	}
	if ContextWeight(0, 0.2, 0.6) != 0.2 || ContextWeight(1, 0.2, 0.6) != 0.6 || ContextWeight(3, 0.2, 0.6) != 0.6 {
		t.Error("ContextWeight endpoints")
	}
	if got := BlendScore(0.4, 0.8, 0.25); !near(got, 0.5, 1e-15) {
		t.Errorf("BlendScore = %v", got)
	}
	if got := ArgMax([]float64{0.1, math.NaN(), 0.7, 0.7, 0.2}); got != 2 {
		t.Errorf("ArgMax = %d, want 2", got)
	}
	if ArgMax(nil) != -1 {
		t.Error("ArgMax(nil)")
	}
}
