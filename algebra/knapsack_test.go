package algebra

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestAdaptiveBeta(t *testing.T) {
	tests := []struct{ mu, want float64 }{
		{0, 0.5}, {1, 1}, {0.5, 0.75}, {-0.3, 0.5}, {2, 1}, {math.NaN(), 0.5},
	}
	for _, tc := range tests {
		if got := AdaptiveBeta(tc.mu); !near(got, tc.want, 1e-15) {
			t.Errorf("AdaptiveBeta(%v) = %v, want %v", tc.mu, got, tc.want)
		}
	}
}

func TestPack(t *testing.T) {
	// items 0 and 1 are duplicates; 2 is different
	sims := PairSims{N: 3, V: []float32{1, 0, 0}} // (0,1)=1, (0,2)=0, (1,2)=0
	scores := []float64{0.9, 0.9, 0.5}
	tokens := []int{100, 100, 100}
	got := Pack(scores, tokens, sims.At, 300, 1)
	if len(got) != 2 || got[0] != 0 || got[1] != 2 {
		t.Errorf("Pack with duplicate = %v, want [0 2] (tie → lower index, duplicate's gain 0)", got)
	}
	// without the redundancy penalty the duplicate is taken
	got = Pack(scores, tokens, nil, 300, 1)
	if len(got) != 3 || got[0] != 0 || got[1] != 1 || got[2] != 2 {
		t.Errorf("Pack without sim = %v, want [0 1 2]", got)
	}
	// per-token gain: a short good item beats a long better one
	got = Pack([]float64{1, 0.6}, []int{1000, 100}, nil, 1000, 0.5)
	if got[0] != 1 {
		t.Errorf("per-token order = %v", got)
	}
	// budget respected: after item 1 (100), item 0 (1000) no longer fits
	if len(got) != 1 {
		t.Errorf("budget overflow: %v", got)
	}
	// zero/negative/NaN scores never picked; zero tokens count as 1
	got = Pack([]float64{0, -1, math.NaN(), 0.1}, []int{1, 1, 1, 0}, nil, 10, 0.5)
	if len(got) != 1 || got[0] != 3 {
		t.Errorf("Pack(bad scores) = %v", got)
	}
	if Pack(nil, nil, nil, 10, 1) != nil || Pack([]float64{1}, []int{1}, nil, 0, 1) != nil {
		t.Error("empty inputs")
	}
}

func TestPackRandomInvariants(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	for trial := 0; trial < 50; trial++ {
		n := 1 + r.IntN(60)
		scores, tokens := make([]float64, n), make([]int, n)
		vecs := make([][]float64, n)
		for i := range scores {
			scores[i] = r.Float64()
			tokens[i] = 1 + r.IntN(300)
			vecs[i] = gaussianVec(r, 8)
		}
		ps := NewPairSims(vecs)
		budget := r.IntN(3000)
		got := Pack(scores, tokens, ps.At, budget, AdaptiveBeta(ps.Mean()))
		seen := map[int]bool{}
		used := 0
		for _, i := range got {
			if seen[i] {
				t.Fatalf("index %d picked twice", i)
			}
			seen[i] = true
			used += tokens[i]
		}
		if used > budget {
			t.Fatalf("used %d > budget %d", used, budget)
		}
		again := Pack(scores, tokens, ps.At, budget, AdaptiveBeta(ps.Mean()))
		if len(again) != len(got) {
			t.Fatal("not deterministic")
		}
		for i := range got {
			if got[i] != again[i] {
				t.Fatal("not deterministic")
			}
		}
	}
}

func TestPairSims(t *testing.T) {
	ref := mustRef(t).Cosine
	p := NewPairSims(ref.Vectors)
	n := len(ref.Vectors)
	if p.N != n || len(p.V) != n*(n-1)/2 {
		t.Fatalf("PairSims size %d/%d", p.N, len(p.V))
	}
	var sum float64
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			got := p.At(i, j)
			if math.Abs(got-ref.Matrix[i][j]) > 1e-6 {
				t.Errorf("At(%d,%d) = %v, numpy %v", i, j, got, ref.Matrix[i][j])
			}
			if got != p.At(j, i) {
				t.Errorf("not symmetric at (%d,%d)", i, j)
			}
			if i < j {
				sum += ref.Matrix[i][j]
			}
		}
	}
	if p.At(2, 2) != 1 || p.At(-1, 0) != 0 || p.At(0, n) != 0 {
		t.Error("diagonal / out of range")
	}
	if want := sum / float64(n*(n-1)/2); math.Abs(p.Mean()-want) > 1e-6 {
		t.Errorf("Mean = %v, want %v", p.Mean(), want)
	}
	if (PairSims{}).Mean() != 0 || NewPairSims(ref.Vectors[:1]).Mean() != 0 {
		t.Error("Mean of < 2 items")
	}
}

func TestGroupByBudget(t *testing.T) {
	tests := []struct {
		tokens []int
		budget int
		want   [][]int
	}{
		{nil, 10, nil},
		{[]int{3, 3, 3}, 10, [][]int{{0, 1, 2}}},
		{[]int{4, 4, 4}, 8, [][]int{{0, 1}, {2}}},
		{[]int{2, 20, 2, 2}, 10, [][]int{{0}, {1}, {2, 3}}}, // oversize item alone
		{[]int{5, 5}, 0, [][]int{{0}, {1}}},
		{[]int{-3, 10}, 10, [][]int{{0, 1}}},
	}
	for _, tc := range tests {
		got := GroupByBudget(tc.tokens, tc.budget)
		if len(got) != len(tc.want) {
			t.Errorf("GroupByBudget(%v, %d) = %v, want %v", tc.tokens, tc.budget, got, tc.want)
			continue
		}
		for g := range got {
			if len(got[g]) != len(tc.want[g]) {
				t.Errorf("GroupByBudget(%v, %d) = %v, want %v", tc.tokens, tc.budget, got, tc.want)
				break
			}
			for i := range got[g] {
				if got[g][i] != tc.want[g][i] {
					t.Errorf("GroupByBudget(%v, %d) = %v, want %v", tc.tokens, tc.budget, got, tc.want)
				}
			}
		}
	}
}

func benchCandidates(n int) ([]float64, []int, PairSims) {
	r := rand.New(rand.NewPCG(4, 2))
	scores, tokens := make([]float64, n), make([]int, n)
	vecs := make([][]float64, n)
	topic := gaussianVec(r, 64)
	for i := range scores {
		scores[i] = r.Float64()
		tokens[i] = 50 + r.IntN(450)
		v := gaussianVec(r, 64)
		for j := range v {
			v[j] += 1.5 * topic[j] // anisotropic: mean cosine ≈ 0.7
		}
		vecs[i] = v
	}
	return scores, tokens, NewPairSims(vecs)
}

// BenchmarkPack1000: 1,000 candidates of 50–500 tokens into a 16k-token
// context (≈60 picks).
func BenchmarkPack1000(b *testing.B) {
	scores, tokens, ps := benchCandidates(1000)
	beta := AdaptiveBeta(ps.Mean())
	b.ReportAllocs()
	for b.Loop() {
		Pack(scores, tokens, ps.At, 16000, beta)
	}
}

// BenchmarkPack1000All: worst case, the budget fits every candidate.
func BenchmarkPack1000All(b *testing.B) {
	scores, tokens, ps := benchCandidates(1000)
	beta := AdaptiveBeta(ps.Mean())
	b.ReportAllocs()
	for b.Loop() {
		Pack(scores, tokens, ps.At, 1<<30, beta)
	}
}

func BenchmarkNewPairSims200(b *testing.B) {
	r := rand.New(rand.NewPCG(4, 3))
	vecs := make([][]float64, 200)
	for i := range vecs {
		vecs[i] = gaussianVec(r, 1024)
	}
	b.ReportAllocs()
	for b.Loop() {
		NewPairSims(vecs)
	}
}
