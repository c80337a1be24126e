package algebra

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestAttentionGA(t *testing.T) {
	tests := []struct {
		name      string
		cos, str  []float64
		k         int
		temp      float64
		want, tol float64
	}{
		{"empty", nil, nil, 5, 0.1, 0, 0},
		{"single", []float64{0.6}, nil, 5, 0.1, 0.8, 1e-15},
		{"equal", []float64{0.2, 0.2, 0.2}, nil, 0, 0.1, 0.6, 1e-15},
		{"hard attention", []float64{0.2, 0.8, -0.4}, nil, 0, 0, 0.9, 1e-15},
		{"top-1", []float64{0.2, 0.8, -0.4}, nil, 1, 0.1, 0.9, 1e-15},
		{"anti-aligned ≈ 0", []float64{-1, -1}, nil, 0, 0.1, 0, 1e-15},
		{"zero strength ignored", []float64{0.8, 0.0}, []float64{0, 1}, 0, 0.1, 0.5, 1e-15},
		{"all zero strengths", []float64{0.2, 0.2}, []float64{0, 0}, 0, 0.1, 0.6, 1e-15},
	}
	for _, tc := range tests {
		if got := AttentionGA(tc.cos, tc.str, tc.k, tc.temp); !near(got, tc.want, tc.tol) {
			t.Errorf("%s: AttentionGA = %v, want %v", tc.name, got, tc.want)
		}
	}
	// softmax weights: two items g = 0.9, 0.5 at τ = 0.1, strengths 1, 2
	g1, g2 := 0.9, 0.5
	w1, w2 := 1.0, 2*math.Exp((g2-g1)/0.1)
	want := (w1*g1 + w2*g2) / (w1 + w2)
	if got := AttentionGA([]float64{0.8, 0}, []float64{1, 2}, 0, 0.1); !near(got, want, 1e-15) {
		t.Errorf("weighted = %v, want %v", got, want)
	}
	// in [0,1] and between min and max of the kept g
	r := rand.New(rand.NewPCG(1, 1))
	for trial := 0; trial < 100; trial++ {
		n := 1 + r.IntN(40)
		c := make([]float64, n)
		s := make([]float64, n)
		lo, hi := 1.0, 0.0
		for i := range c {
			c[i] = 2*r.Float64() - 1
			s[i] = r.Float64()
			lo, hi = math.Min(lo, NormalizeCosine(c[i])), math.Max(hi, NormalizeCosine(c[i]))
		}
		ga := AttentionGA(c, s, DefaultAttentionTopK, DefaultAttentionTemperature)
		if ga < lo-1e-12 || ga > hi+1e-12 {
			t.Fatalf("AttentionGA %v outside [%v, %v]", ga, lo, hi)
		}
	}
}

func TestTopIndices(t *testing.T) {
	v := []float64{0.3, math.NaN(), 0.9, 0.3, 0.9, -1}
	got := topIndices(v, 4)
	want := []int{2, 4, 0, 3}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("topIndices = %v, want %v", got, want)
		}
	}
	if got := topIndices(v, 6); got[5] != 1 {
		t.Errorf("NaN should rank last: %v", got)
	}
}

func TestGoalAlignment(t *testing.T) {
	tests := []struct {
		task, ev float64
		n        int
		want     float64
	}{
		{0.9, 0.7, 0, 0}, // zero evidence → GA 0 (no data yet)
		{0.9, 0.7, 1, (1 - math.Exp(-1)) * 0.7},
		{0.9, 0.7, 3, (1 - math.Exp(-3)) * 0.7},
		{0.9, 2, 50, 1},
	}
	for _, tc := range tests {
		if got := GoalAlignment(tc.task, tc.ev, tc.n); !near(got, tc.want, 1e-15) {
			t.Errorf("GoalAlignment(%v, %v, %d) = %v, want %v", tc.task, tc.ev, tc.n, got, tc.want)
		}
	}
	if got := GoalAlignment(0.5, 1, 1); !near(got, 0.63, 0.005) {
		t.Errorf("one item: %v, want ≈ 0.63", got)
	}
	if got := GoalAlignment(0.5, 1, 3); !near(got, 0.95, 0.005) {
		t.Errorf("three items: %v, want ≈ 0.95", got)
	}
}

func TestRecencyWeights(t *testing.T) {
	w := RecencyWeights(3, 2)
	if !near(w[0], math.Exp(-2), 1e-15) || !near(w[1], math.Exp(-1), 1e-15) || w[2] != 1 {
		t.Errorf("RecencyWeights = %v", w)
	}
	if w := RecencyWeights(1, 2); w[0] != 1 {
		t.Errorf("single = %v", w)
	}
	if RecencyWeights(0, 2) != nil {
		t.Error("empty")
	}
}

func TestStateEmbedding(t *testing.T) {
	if StateEmbedding(nil, nil, nil, 2) != nil {
		t.Error("no inputs should give nil")
	}
	x, y := []float64{1, 0, 0}, []float64{0, 1, 0}
	// only the task
	s := StateEmbedding(nil, []float64{0, 0, 5}, nil, 2)
	if s[2] != 1 {
		t.Errorf("task only = %v", s)
	}
	// recency: the newest evidence dominates
	s = StateEmbedding([][]float64{x, y}, nil, nil, DefaultStateRecency)
	if !(s[1] > s[0]) || !near(Norm(s), 1, 1e-15) {
		t.Errorf("recency-weighted = %v", s)
	}
	want := Normalize([]float64{math.Exp(-2), 1, 0})
	for i := range want {
		if !near(s[i], want[i], 1e-15) {
			t.Fatalf("evidence centroid = %v, want %v", s, want)
		}
	}
	// blend: 0.5 evidence, 0.3 task, 0.2 active
	s = StateEmbedding([][]float64{x}, y, [][]float64{{0, 0, 2}}, 2)
	want = Normalize([]float64{0.5, 0.3, 0.2})
	for i := range want {
		if !near(s[i], want[i], 1e-15) {
			t.Fatalf("blend = %v, want %v", s, want)
		}
	}
}

func TestStability(t *testing.T) {
	a := []float64{1, 2, 3}
	tests := []struct {
		prev, curr []float64
		want       float64
	}{
		{a, a, 1},
		{a, []float64{-1, -2, -3}, 0},
		{[]float64{1, 0}, []float64{0, 1}, 0.5},
		{nil, a, 0.5},
		{a, nil, 0.5},
		{[]float64{0, 0, 0}, a, 0.5},
	}
	for _, tc := range tests {
		if got := Stability(tc.prev, tc.curr); !near(got, tc.want, 1e-15) {
			t.Errorf("Stability(%v, %v) = %v, want %v", tc.prev, tc.curr, got, tc.want)
		}
	}
}

func TestResidualDistance(t *testing.T) {
	tests := []struct {
		a, b []float64
		want float64
	}{
		{[]float64{1, 0}, []float64{2, 0}, 0},
		{[]float64{1, 0}, []float64{-1, 0}, 1},
		{[]float64{1, 0}, []float64{0, 1}, math.Sqrt(0.5)},
		{nil, []float64{0, 1}, 1},
	}
	for _, tc := range tests {
		if got := ResidualDistance(tc.a, tc.b); !near(got, tc.want, 1e-15) {
			t.Errorf("ResidualDistance(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestInformationGain(t *testing.T) {
	x, y := []float64{1, 0}, []float64{0, 1}
	tests := []struct {
		c    []float64
		held [][]float64
		want float64
	}{
		{x, nil, 1},
		{x, [][]float64{x}, 0},
		{x, [][]float64{y}, 1},
		{x, [][]float64{{-1, 0}}, 1},
		{x, [][]float64{{1, 1}}, 1 - math.Sqrt(0.5)},
		{[]float64{0, 0}, [][]float64{x}, 0},
	}
	for _, tc := range tests {
		if got := InformationGain(tc.c, tc.held); !near(got, tc.want, 1e-15) {
			t.Errorf("InformationGain(%v, %v) = %v, want %v", tc.c, tc.held, got, tc.want)
		}
	}
	// sequential: a duplicated new item counts once
	if got := MeanInformationGain([][]float64{y, y}, [][]float64{x}); !near(got, 0.5, 1e-15) {
		t.Errorf("MeanInformationGain(dup) = %v, want 0.5", got)
	}
	if got := MeanInformationGain(nil, [][]float64{x}); got != 0 {
		t.Errorf("MeanInformationGain(empty) = %v", got)
	}
	if got := MeanInformationGain([][]float64{x}, nil); got != 1 {
		t.Errorf("MeanInformationGain(nothing held) = %v", got)
	}
}
