package research

import (
	"math"
	"reflect"
	"testing"
)

func TestSelectRelevant(t *testing.T) {
	// sims: a symmetric similarity table among candidates.
	table := func(m [][]float64) func(i, j int) float64 { return func(i, j int) float64 { return m[i][j] } }
	c3 := []ChunkCandidate{
		{Page: 0, Chars: 100, Relevance: 0.9},
		{Page: 0, Chars: 100, Relevance: 0.85},
		{Page: 1, Chars: 100, Relevance: 0.5},
	}
	dup01 := table([][]float64{{1, 0.99, 0.1}, {0.99, 1, 0.1}, {0.1, 0.1, 1}})
	for _, tc := range []struct {
		name     string
		c        []ChunkCandidate
		sim      func(i, j int) float64
		lambda   float64
		perPage  int
		maxChars int
		want     []int
	}{
		{"empty", nil, nil, 0.7, 0, 0, nil},
		{"pure relevance order", c3, nil, 1, 0, 0, []int{0, 1, 2}},
		{"relevance first: a near-duplicate still beats an irrelevant chunk at λ=0.7",
			[]ChunkCandidate{c3[0], c3[1], {Page: 1, Chars: 100, Relevance: 0.2}}, dup01, 0.7, 0, 0, []int{0, 1, 2}},
		{"but a near-duplicate loses to a half-relevant new chunk", c3, dup01, 0.7, 0, 0, []int{0, 2, 1}},
		{"novelty second: a near-duplicate loses to an equally relevant new chunk",
			[]ChunkCandidate{{Chars: 1, Relevance: 0.9}, {Chars: 1, Relevance: 0.8}, {Page: 1, Chars: 1, Relevance: 0.8}},
			table([][]float64{{1, 0.95, 0.2}, {0.95, 1, 0.2}, {0.2, 0.2, 1}}), 0.7, 0, 0, []int{0, 2, 1}},
		{"held evidence counts as redundancy",
			[]ChunkCandidate{{Chars: 1, Relevance: 0.9, Held: 0.99}, {Chars: 1, Relevance: 0.85, Held: 0.1}},
			nil, 0.7, 0, 0, []int{1, 0}},
		{"information gain alone does not decide: a novel irrelevant chunk stays last",
			[]ChunkCandidate{{Chars: 1, Relevance: 0.1, Held: 0}, {Chars: 1, Relevance: 0.8, Held: 0.6}},
			nil, 0.7, 0, 0, []int{1, 0}},
		{"λ=0 is pure novelty", []ChunkCandidate{{Chars: 1, Relevance: 0.9, Held: 0.9}, {Chars: 1, Relevance: 0.1, Held: 0.2}},
			nil, 0, 0, 0, []int{1, 0}},
		{"per-page cap", c3, nil, 1, 1, 0, []int{0, 2}},
		{"character budget skips what does not fit and keeps smaller ones",
			[]ChunkCandidate{{Chars: 600, Relevance: 0.9}, {Chars: 600, Relevance: 0.8}, {Chars: 300, Relevance: 0.1}},
			nil, 1, 0, 1000, []int{0, 2}},
		{"budget smaller than every chunk", c3, nil, 0.7, 0, 50, nil},
		{"NaN relevance last", []ChunkCandidate{{Chars: 1, Relevance: math.NaN()}, {Chars: 1, Relevance: -0.5}}, nil, 0.7, 0, 0, []int{1, 0}},
		{"ties to the lower index", []ChunkCandidate{{Chars: 1, Relevance: 0.5}, {Chars: 1, Relevance: 0.5}}, nil, 0.7, 0, 0, []int{0, 1}},
		{"λ clamped above 1", c3, nil, 7, 0, 0, []int{0, 1, 2}},
		{"a hit comes before a more relevant neighbour",
			[]ChunkCandidate{{Chars: 1, Relevance: 0.9}, {Chars: 1, Relevance: 0.3, Hit: true}, {Chars: 1, Relevance: 0.5, Hit: true}},
			nil, 0.7, 0, 0, []int{2, 1, 0}},
		{"neighbours fill the budget the hits leave",
			[]ChunkCandidate{{Chars: 500, Relevance: 0.9}, {Chars: 600, Relevance: 0.2, Hit: true}, {Chars: 300, Relevance: 0.8}},
			nil, 0.7, 0, 1000, []int{1, 2}},
		{"a hit that does not fit leaves room to the next",
			[]ChunkCandidate{{Chars: 900, Relevance: 0.9, Hit: true}, {Chars: 200, Relevance: 0.8, Hit: true}, {Chars: 100, Relevance: 0.95}},
			nil, 0.7, 0, 1000, []int{0, 2}},
		{"the per-page cap binds hits too",
			[]ChunkCandidate{{Chars: 1, Relevance: 0.2, Hit: true}, {Chars: 1, Relevance: 0.1, Hit: true}, {Page: 1, Chars: 1, Relevance: 0.9}},
			nil, 0.7, 1, 0, []int{0, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := SelectRelevant(tc.c, tc.sim, tc.lambda, tc.perPage, tc.maxChars)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestFuseRRF(t *testing.T) {
	for _, tc := range []struct {
		name     string
		k        float64
		rankings [][]int
		want     []float64
	}{
		{"one ranking", 60, [][]int{{0, 1}}, []float64{1.0 / 61, 1.0 / 62}},
		{"two rankings agree", 60, [][]int{{0, 1}, {0, 1}}, []float64{2.0 / 61, 2.0 / 62}},
		{"absent item", 1, [][]int{{0, -1}, {1, 0}}, []float64{1.0/2 + 1.0/3, 1.0 / 2}},
		{"default k", 0, [][]int{{0}}, []float64{1.0 / 61}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := FuseRRF(tc.k, tc.rankings...)
			for i := range tc.want {
				if math.Abs(got[i]-tc.want[i]) > 1e-12 {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
			}
		})
	}
	// A passage BM25 ranks 3rd and the embedding 1st beats one ranked 1st
	// and 10th.
	f := FuseRRF(60, []int{2, 0}, []int{0, 9})
	if !(f[0] > f[1]) {
		t.Fatalf("fusion %v", f)
	}
}

func TestRankOf(t *testing.T) {
	for _, tc := range []struct {
		score []float64
		want  []int
	}{
		{nil, []int{}},
		{[]float64{0.1, 0.9, 0.5}, []int{2, 0, 1}},
		{[]float64{math.NaN(), 0, 0}, []int{2, 0, 1}},
	} {
		if got := RankOf(tc.score); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("RankOf(%v) = %v, want %v", tc.score, got, tc.want)
		}
	}
}

func TestWindowChunks(t *testing.T) {
	cfg := ChunkConfig{TargetChars: 40, MaxChars: 80, MinChars: 5}
	a := "Before the hit one. Before the hit two."
	h := "The hit passage answers the question."
	b := "After the hit: context that repeats the question words."
	text := a + "\n\n" + h + "\n\n" + b
	span := &Span{Start: len(a) + 2, End: len(a) + 2 + len(h)}
	for _, tc := range []struct {
		name    string
		d       Document
		wantHit []string
		wantN   int
	}{
		{"hit in the middle", Document{Text: text, Hit: span}, []string{h}, 3},
		{"no hit", Document{Text: text}, nil, len(Chunk(text, cfg))},
		{"span out of range", Document{Text: text, Hit: &Span{Start: 3, End: len(text) + 1}}, nil, len(Chunk(text, cfg))},
		{"empty span", Document{Text: text, Hit: &Span{Start: 4, End: 4}}, nil, len(Chunk(text, cfg))},
		{"hit is the whole text", Document{Text: h, Hit: &Span{Start: 0, End: len(h)}}, []string{h}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			chunks, hit := WindowChunks(tc.d, cfg)
			if len(chunks) != tc.wantN || len(hit) != len(chunks) {
				t.Fatalf("%d chunks, %d flags (%q), want %d", len(chunks), len(hit), chunks, tc.wantN)
			}
			var got []string
			for i, ch := range chunks {
				if hit[i] {
					got = append(got, ch)
				}
			}
			if !reflect.DeepEqual(got, tc.wantHit) {
				t.Fatalf("hit chunks %q, want %q", got, tc.wantHit)
			}
		})
	}
}

func TestWithHits(t *testing.T) {
	for _, tc := range []struct {
		keep []int
		hit  []bool
		want []int
	}{
		{nil, nil, nil},
		{[]int{0, 2}, []bool{false, false, false}, []int{0, 2}},
		{[]int{0, 2}, []bool{false, true, false}, []int{0, 1, 2}},
		{[]int{3}, []bool{true, false, false, false}, []int{0, 3}},
		{[]int{1}, []bool{false, true}, []int{1}},
	} {
		if got := WithHits(tc.keep, tc.hit); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("WithHits(%v, %v) = %v, want %v", tc.keep, tc.hit, got, tc.want)
		}
	}
}
