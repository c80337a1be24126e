package activities

import (
	"reflect"
	"testing"
)

func TestExtractFacts(t *testing.T) {
	ev := map[int]string{
		2: "# Interfaces\nThe cathode interface decomposes and raises the resistance of the cell. Cooking pasta needs salted boiling water.",
		1: "Lithium dendrites grow along grain boundaries of the electrolyte. Short line.\nDendrites short the cell when they reach the cathode side.",
	}
	for _, c := range []struct {
		focus string
		k     int
		want  []Fact
	}{
		{"how do lithium dendrites grow and short the cell", 2, []Fact{
			{1, "Lithium dendrites grow along grain boundaries of the electrolyte."},
			{1, "Dendrites short the cell when they reach the cathode side."}}},
		{"cathode interface resistance", 1, []Fact{{2, "The cathode interface decomposes and raises the resistance of the cell."}}},
		{"cathode", 3, []Fact{ // ties keep source order; headings and short lines never count
			{1, "Dendrites short the cell when they reach the cathode side."},
			{2, "The cathode interface decomposes and raises the resistance of the cell."},
			{1, "Lithium dendrites grow along grain boundaries of the electrolyte."}}},
	} {
		got := ExtractFacts(c.focus, ev, c.k, 400)
		if c.focus == "cathode" { // returned in source order
			c.want = []Fact{c.want[2], c.want[0], c.want[1]}
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q k=%d:\n got %v\nwant %v", c.focus, c.k, got, c.want)
		}
	}
	dup := map[int]string{1: "The same sentence appears twice here.", 2: "The  same sentence appears twice HERE."}
	if got := ExtractFacts("same sentence", dup, 5, 400); len(got) != 1 || got[0].N != 1 {
		t.Errorf("duplicates: %v", got)
	}
	if got := ExtractFacts("x", nil, 5, 400); len(got) != 0 {
		t.Errorf("no evidence: %v", got)
	}
}

func TestProseAndFactsParagraph(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"## Dendrites\n\nDendrites grow [1].\nThey short cells [2].", "Dendrites grow [1]. They short cells [2]."},
		{"- one [1]\n- two [2]\n1. three [3]", "one [1] two [2] three [3]"},
		{"```\ncode\n```\ntext", "code text"},
		{"", ""},
	} {
		if got := Prose(c.in); got != c.want {
			t.Errorf("Prose(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	got := factsParagraph([]Fact{{1, "Dendrites grow."}, {3, "Cells short"}, {2, "Is it safe?"}})
	if want := "Dendrites grow [1]. Cells short [3] Is it safe [2]?"; got != want {
		t.Errorf("factsParagraph = %q, want %q", got, want)
	}
}
