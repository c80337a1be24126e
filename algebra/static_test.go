package algebra

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestCosine(t *testing.T) {
	tests := []struct {
		a, b []float64
		want float64
	}{
		{[]float64{1, 0}, []float64{0, 1}, 0},
		{[]float64{1, 2}, []float64{2, 4}, 1},
		{[]float64{1, 2}, []float64{-1, -2}, -1},
		{[]float64{0, 0}, []float64{1, 1}, 0},
		{[]float64{1}, []float64{1, 1}, 0},
		{nil, nil, 0},
	}
	for _, tc := range tests {
		if got := Cosine(tc.a, tc.b); !near(got, tc.want, 1e-15) {
			t.Errorf("Cosine(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
		a, b := ToFloat32(tc.a), ToFloat32(tc.b)
		if got := Cosine32(a, b); !near(got, tc.want, 1e-7) {
			t.Errorf("Cosine32(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
		if na, nb := Norm32(a), Norm32(b); na > 0 && nb > 0 && len(a) == len(b) {
			if got := Dot32(a, b) / (na * nb); !near(got, tc.want, 1e-7) {
				t.Errorf("Dot32/Norm32(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
			}
		}
	}
}

func TestDot32Norm32(t *testing.T) {
	tests := []struct {
		a, b      []float32
		dot, norm float64
	}{
		{[]float32{3, 4}, []float32{1, 2}, 11, 5},
		{[]float32{1}, []float32{1, 1}, 0, 1},
		{nil, nil, 0, 0},
	}
	for _, tc := range tests {
		if got := Dot32(tc.a, tc.b); got != tc.dot {
			t.Errorf("Dot32(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.dot)
		}
		if got := Norm32(tc.a); got != tc.norm {
			t.Errorf("Norm32(%v) = %v, want %v", tc.a, got, tc.norm)
		}
	}
}

func TestCosineAgainstNumpy(t *testing.T) {
	ref := mustRef(t).Cosine
	for i, a := range ref.Vectors {
		for j, b := range ref.Vectors {
			if got := Cosine(a, b); !near(got, ref.Matrix[i][j], 1e-12) {
				t.Errorf("Cosine(v%d, v%d) = %v, numpy %v", i, j, got, ref.Matrix[i][j])
			}
		}
	}
}

func TestNormalize(t *testing.T) {
	v := []float64{3, 4}
	n := Normalize(v)
	if n[0] != 0.6 || n[1] != 0.8 || v[0] != 3 {
		t.Errorf("Normalize = %v (input %v)", n, v)
	}
	z := Normalize([]float64{0, 0})
	if z[0] != 0 || z[1] != 0 {
		t.Errorf("Normalize(0) = %v", z)
	}
}

func TestWarp(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for trial := 0; trial < 200; trial++ {
		d := 3 + trial%30
		e := gaussianVec(r, d) // not unit: Warp normalises
		dir := gaussianVec(r, d)
		theta := r.Float64() * DefaultMaxWarpAngle
		w := Warp(e, dir, theta)
		if !near(Norm(w), 1, 1e-14) {
			t.Fatalf("|warp| = %v, want 1", Norm(w))
		}
		// geodesic: the angle to e is θ, and the warp lies in span(e, d)
		if c := Cosine(w, e); !near(c, math.Cos(theta), 1e-12) {
			t.Fatalf("cos(warp, e) = %v, want cos θ = %v", c, math.Cos(theta))
		}
		// moving toward d: the angle to d shrinks by θ (while θ < ∠(e,d))
		ang := math.Acos(Cosine(e, dir))
		if theta < ang {
			if got := math.Acos(Cosine(w, dir)); !near(got, ang-theta, 1e-7) {
				t.Fatalf("∠(warp, d) = %v, want %v", got, ang-theta)
			}
		}
	}
	e := []float64{1, 2, 2}
	unit := []float64{1.0 / 3, 2.0 / 3, 2.0 / 3}
	for _, tc := range []struct {
		name  string
		d     []float64
		theta float64
	}{
		{"θ = 0", []float64{0, 1, 0}, 0},
		{"d ∥ e", []float64{2, 4, 4}, 0.4},
		{"d anti-parallel", []float64{-1, -2, -2}, 0.4},
		{"d zero", []float64{0, 0, 0}, 0.4},
		{"d wrong length", []float64{1, 0}, 0.4},
	} {
		w := Warp(e, tc.d, tc.theta)
		for i := range w {
			if !near(w[i], unit[i], 1e-15) {
				t.Errorf("%s: Warp = %v, want identity %v", tc.name, w, unit)
				break
			}
		}
	}
	if w := Warp([]float64{0, 0}, []float64{1, 0}, 0.3); w[0] != 0 || w[1] != 0 {
		t.Errorf("Warp(0) = %v, want 0", w)
	}
}

func TestFloatConversions(t *testing.T) {
	v := []float64{1.5, -2.25, 1e-3}
	f := ToFloat32(v)
	b := ToFloat64(f)
	for i := range v {
		if !near(b[i], v[i], 1e-9) {
			t.Errorf("round trip %v → %v", v, b)
		}
	}
	if len(ToFloat32(nil)) != 0 || len(ToFloat64(nil)) != 0 {
		t.Error("nil conversions")
	}
}
