package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lethe-research/lethe/config"
)

func TestParseAlternate(t *testing.T) {
	a, err := parseAlternate(" algebra.similar_cascade_items = 64, 0 ")
	if err != nil || a.key != "algebra.similar_cascade_items" || !slices.Equal(a.values, []string{"64", "0"}) {
		t.Fatalf("parsed %+v, %v", a, err)
	}
	if a, err := parseAlternate(""); err != nil || a.key != "" {
		t.Fatalf("empty: %+v, %v", a, err)
	}
	for _, bad := range []string{"algebra.svd_k", "algebra.svd_k=3", "=1,2", "algebra.svd_k=3,", "graph.neo4j_vector_statements=1,2"} {
		if _, err := parseAlternate(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestAlternateConfigs(t *testing.T) {
	base := config.Defaults()
	a, _ := parseAlternate("algebra.similar_cascade_items=64,0")
	cs, err := a.configs(base)
	if err != nil {
		t.Fatal(err)
	}
	if cs[0].Algebra.SimilarCascade != 64 || cs[1].Algebra.SimilarCascade != 0 {
		t.Fatalf("cascade items %d and %d, want 64 and 0", cs[0].Algebra.SimilarCascade, cs[1].Algebra.SimilarCascade)
	}
	if cs[1].Algebra.SimilarThreshold != base.Algebra.SimilarThreshold || base.Algebra.SimilarCascade != config.Defaults().Algebra.SimilarCascade {
		t.Fatal("another key changed, or the base did")
	}
	for _, bad := range []string{"algebra.no_such_key=1,2", "algebra.similar_cascade_items=-1,2", "algebra.similar_cascade_items=x,2"} {
		a, err := parseAlternate(bad)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.configs(base); err == nil {
			t.Errorf("%q: configs without an error", bad)
		}
	}
}

func TestArmOf(t *testing.T) {
	for n, want := range map[int][]int{2: {0, 1, 1, 0, 0, 1, 1, 0}, 3: {0, 1, 2, 2, 1, 0, 0, 1}} {
		var got []int
		for i := range len(want) {
			got = append(got, armOf(i, n))
		}
		if !slices.Equal(got, want) {
			t.Errorf("%d settings: %v, want %v", n, got, want)
		}
	}
}

func TestRenderArms(t *testing.T) {
	a := alternate{key: "k", values: []string{"a", "b"}}
	step := func(d time.Duration) map[string]time.Duration {
		return map[string]time.Duration{"ReadState": d, "Focus": d, "ApplyOps": d, "Observe": d}
	}
	ts := []timing{{step: step(time.Millisecond), arm: 0}, {step: step(3 * time.Millisecond), arm: 1}, {step: step(5 * time.Millisecond), arm: 1}}
	out := renderArms(a, ts)
	for _, want := range []string{"| a | 1 | 1.0 | 1.0 | 1.0 | 1.0 | 4.0 | 4.0 / 4.0 |", "| b | 2 | 3.0 | 3.0 | 3.0 | 3.0 | 12 | 12 / 20 |"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}
