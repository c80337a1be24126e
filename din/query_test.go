package din_test

import (
	"testing"

	"github.com/lethe-research/lethe/din"
)

func TestSearchKeyMeetsRewordings(t *testing.T) {
	same := [][]string{
		{"solid electrolyte dendrites", "Dendrites, solid electrolyte?", "  what are the DENDRITES in a solid-electrolyte  ", "dendrite solid electrolytes"},
		{"How do batteries fail", "batteries fail", "FAIL: battery"},
	}
	for _, group := range same {
		want := din.SearchKey(group[0])
		for _, q := range group[1:] {
			if got := din.SearchKey(q); got != want {
				t.Errorf("SearchKey(%q) = %q, want %q (as %q)", q, got, want, group[0])
			}
		}
	}
	differ := [][2]string{
		{"solid electrolyte dendrites", "liquid electrolyte dendrites"},
		{"glass electrolyte", "glas electrolyte"},
		{"how", "why"}, // stopwords only: keyed on themselves
		{"2019 results", "2020 results"},
	}
	for _, p := range differ {
		if din.SearchKey(p[0]) == din.SearchKey(p[1]) {
			t.Errorf("SearchKey(%q) == SearchKey(%q) = %q", p[0], p[1], din.SearchKey(p[0]))
		}
	}
}
