package activities

import (
	"reflect"
	"strings"
	"testing"
)

func TestCitations(t *testing.T) {
	ev := map[int]string{
		1: "Garnet LLZO electrolytes typically show critical current densities below 1 mA/cm2 at room temperature.",
		2: "Sulfide electrolytes react with moisture in air.",
	}
	cases := []struct {
		name    string
		text    string
		bad     int
		removed int
		want    string
		cited   []int
	}{
		{"valid", "Dendrites grow [1]. Moisture matters [2].", 0, 0, "Dendrites grow [1]. Moisture matters [2].", []int{1, 2}},
		{"unknown number", "Claim [3] and [1].", 1, 1, "Claim  and [1].", []int{1}},
		{"supported quote", `"critical current densities below 1 mA/cm2" [1]`, 0, 0, `"critical current densities below 1 mA/cm2" [1]`, []int{1}},
		{"quote in the wrong source", `"critical current densities below 1 mA/cm2" [2]`, 1, 1, `"critical current densities below 1 mA/cm2"`, nil},
		{"invented quote", `"solid-state cells never fail at all" [1][2]`, 1, 2, `"solid-state cells never fail at all"`, nil},
		{"quote whitespace and case", `"GARNET LLZO   electrolytes typically" [1]`, 0, 0, `"GARNET LLZO   electrolytes typically" [1]`, []int{1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if bad := CheckCitations(tc.text, ev); len(bad) != tc.bad {
				t.Errorf("CheckCitations = %v, want %d problems", bad, tc.bad)
			}
			got, removed := RemoveInvalidCitations(tc.text, ev)
			if removed != tc.removed || got != tc.want {
				t.Errorf("RemoveInvalidCitations = %q (%d removed), want %q (%d)", got, removed, tc.want, tc.removed)
			}
			if len(CheckCitations(got, ev)) != 0 {
				t.Errorf("text still invalid after removal: %q", got)
			}
			if c := citedNumbers(got); !reflect.DeepEqual(c, tc.cited) {
				t.Errorf("cited %v, want %v", c, tc.cited)
			}
		})
	}
}

func TestTruncateKeepsRunes(t *testing.T) {
	s := strings.Repeat("é", 10)
	if got := truncate(s, 4); got != "éééé…" {
		t.Fatalf("truncate = %q", got)
	}
	if got := truncate("short", 10); got != "short" {
		t.Fatalf("truncate = %q", got)
	}
}
