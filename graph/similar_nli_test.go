package graph

import (
	"context"
	"errors"
	"slices"
	"testing"
)

func TestPairKey(t *testing.T) {
	a := Evidence{ID: "s/e/2", ContentHash: "bb"}
	b := Evidence{ID: "s/e/1", ContentHash: "aa"}
	noHash := Evidence{ID: "s/e/0"}
	cases := []struct {
		name string
		x, y Evidence
		want string
	}{
		{"sorted by hash", a, b, "aa|bb"},
		{"symmetric", b, a, "aa|bb"},
		{"ids when a hash is missing", a, noHash, "s/e/0|s/e/2"},
	}
	for _, c := range cases {
		if got := PairKey(c.x, c.y); got != c.want {
			t.Errorf("%s: PairKey = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestSelectForNLI(t *testing.T) {
	out := []Edge{{Weight: 0.86}, {Weight: 0.99}, {Weight: 0.90}, {Weight: 0.90}, {Weight: 0.95}}
	cases := []struct {
		name         string
		todo         []int
		max          int
		want         []int
		wantDeferred int
	}{
		{"no bound: strongest first, ties in pair order", []int{0, 1, 2, 3, 4}, 0, []int{1, 4, 2, 3, 0}, 0},
		{"bound keeps the strongest", []int{0, 1, 2, 3, 4}, 2, []int{1, 4}, 3},
		{"bound above the count", []int{0, 3}, 5, []int{3, 0}, 0},
		{"only the unlabelled ones", []int{0, 2}, 1, []int{2}, 1},
		{"nothing to do", nil, 3, nil, 0},
	}
	for _, c := range cases {
		got, deferred := selectForNLI(out, c.todo, c.max)
		if !slices.Equal(got, c.want) || deferred != c.wantDeferred {
			t.Errorf("%s: selectForNLI = %v (%d deferred), want %v (%d)", c.name, got, deferred, c.want, c.wantDeferred)
		}
	}
}

func TestApplyCachedLabels(t *testing.T) {
	evs := []Evidence{{ID: "e1", ContentHash: "h1"}, {ID: "e2", ContentHash: "h2"}, {ID: "e3", ContentHash: "h3"}}
	byID := evidenceByID(evs)
	out := []Edge{{From: "e1", To: "e2"}, {From: "e1", To: "e3"}, {From: "e2", To: "e3"}}
	cache := map[string]string{"h1|h2": "SUPPORTS", "h2|h3": "bogus"}
	var st SimilarStats
	rest := applyCachedLabels(out, []int{0, 1, 2}, byID, cache, &st)
	if !slices.Equal(rest, []int{1, 2}) || st.Cached != 1 {
		t.Fatalf("rest = %v, cached = %d; want [1 2] and 1 (an unknown cached label is not a label)", rest, st.Cached)
	}
	if out[0].Label != LabelEntailment || out[1].Label != "" || out[2].Label != "" {
		t.Fatalf("labels = %q %q %q", out[0].Label, out[1].Label, out[2].Label)
	}
}

// scriptedNLI answers batches from a list: a label list, or an error.
type scriptedNLI struct {
	answers [][]string
	errs    []error
	calls   int
}

func (s *scriptedNLI) Classify(_ context.Context, pairs []TextPair) ([]string, error) {
	i := s.calls
	s.calls++
	if i < len(s.errs) && s.errs[i] != nil {
		return nil, s.errs[i]
	}
	return s.answers[i], nil
}

// TestClassifySimilarSavesEachBatch: every successful batch lands in the
// cache and is saved before the next one is asked, so a crash after batch
// one costs only batch two on the retry; a failing batch stops labelling
// without an error, a failing save is an error.
func TestClassifySimilarSavesEachBatch(t *testing.T) {
	evs := []Evidence{{ID: "e1", ContentHash: "h1"}, {ID: "e2", ContentHash: "h2"}, {ID: "e3", ContentHash: "h3"}, {ID: "e4", ContentHash: "h4"}}
	byID := evidenceByID(evs)
	mk := func() []Edge {
		return []Edge{{From: "e1", To: "e2"}, {From: "e2", To: "e3"}, {From: "e3", To: "e4"}}
	}
	cases := []struct {
		name       string
		nli        *scriptedNLI
		saveErr    error
		wantErr    bool
		wantSaves  int
		wantCache  int
		wantLabels []string
		wantNLIErr bool
	}{
		{"two batches", &scriptedNLI{answers: [][]string{{"entailment", "neutral"}, {"contradiction"}}}, nil, false, 2, 3,
			[]string{LabelEntailment, LabelNeutral, LabelContradiction}, false},
		{"second batch fails", &scriptedNLI{answers: [][]string{{"entailment", "neutral"}, nil}, errs: []error{nil, errors.New("malformed")}}, nil, false, 1, 2,
			[]string{LabelEntailment, LabelNeutral, ""}, true},
		{"short answer is a failure", &scriptedNLI{answers: [][]string{{"entailment"}}}, nil, false, 0, 0,
			[]string{"", "", ""}, true},
		{"unknown label stays unlabelled and uncached", &scriptedNLI{answers: [][]string{{"maybe", "neutral"}, {"neutral"}}}, nil, false, 2, 2,
			[]string{"", LabelNeutral, LabelNeutral}, false},
		{"save fails", &scriptedNLI{answers: [][]string{{"entailment", "neutral"}}}, errors.New("disk full"), true, 1, 2,
			[]string{LabelEntailment, LabelNeutral, ""}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := mk()
			cache := map[string]string{}
			saves := 0
			save := func() error { saves++; return c.saveErr }
			var st SimilarStats
			err := classifySimilar(context.Background(), c.nli, byID, out, []int{0, 1, 2}, 2, cache, save, &st)
			if (err != nil) != c.wantErr || saves != c.wantSaves || len(cache) != c.wantCache || (st.NLIError != "") != c.wantNLIErr {
				t.Fatalf("err %v, saves %d, cache %v, stats %+v", err, saves, cache, st)
			}
			for i, e := range out {
				if e.Label != c.wantLabels[i] {
					t.Fatalf("label %d = %q, want %q", i, e.Label, c.wantLabels[i])
				}
			}
		})
	}
}
