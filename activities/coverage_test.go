package activities

import (
	"strings"
	"testing"
)

// coverSource is a source in the form the corpus stores it: a heading, a
// paragraph per line, sentences of two facts each.
const coverSource = "Interfaces and contact\n" +
	"The interface between the cathode and the solid electrolyte degrades chemically and mechanically. " +
	"Sulfide electrolytes such as Li6PS5Cl are not stable against high-voltage oxide cathodes and form resistive decomposition layers during cycling. " +
	"Interfacial resistance grows as the decomposition interphase thickens. " +
	"Coatings such as lithium niobate on cathode particles slow this reaction and keep the impedance of the solid-state battery low.\n" +
	"Garnet LLZO electrolytes typically show critical current densities below 1.5 mA/cm2 at room temperature. " +
	"Lithium metal is stable against garnet electrolytes, which makes them the preferred separator for lithium anodes."

func TestCoveredIn(t *testing.T) {
	for _, c := range []struct {
		name, sentence string
		want           bool
		quote          string // a prefix of the covering window
	}{
		{"connectives changed", "Sulfide electrolytes, like Li6PS5Cl, are not stable against high-voltage oxide cathodes and form resistive decomposition layers during cycling [1].",
			true, "Sulfide electrolytes such as"},
		{"two facts joined", "Sulfide electrolytes like Li6PS5Cl are not stable against high-voltage oxide cathodes and form decomposition layers, while coatings like lithium niobate slow this reaction and keep the impedance low.",
			true, "Sulfide electrolytes such as"},
		{"number kept", "Garnet LLZO electrolytes show critical current densities below 1.5 mA/cm2 at room temperature.", true, "Garnet LLZO"},
		{"number changed", "Garnet LLZO electrolytes show critical current densities below 5.1 mA/cm2 at room temperature.", false, ""},
		{"number added", "Garnet LLZO electrolytes show critical current densities below 1.5 mA/cm2 at 25 degrees room temperature.", false, ""},
		{"negation dropped", "Sulfide electrolytes such as Li6PS5Cl are stable against high-voltage oxide cathodes and form resistive decomposition layers during cycling.", false, ""},
		{"negation added", "Lithium metal is not stable against garnet electrolytes, which makes them the preferred separator for lithium anodes.", false, ""},
		{"new fact", "Sulfide electrolytes such as Li6PS5Cl react with moisture in air and release hydrogen sulfide, so manufacturing requires dry rooms.", false, ""},
		{"too short", "Interfacial resistance grows thicker.", false, ""},
		{"facts four sentences apart", "The interface between the cathode and the solid electrolyte degrades chemically, while coatings of lithium niobate keep the impedance of the battery low.", false, ""},
	} {
		q, ok := CoveredIn(c.sentence, []string{coverSource})
		if ok != c.want || !strings.HasPrefix(q, c.quote) {
			t.Errorf("%s: covered %v (%q), want %v (%q…)", c.name, ok, q, c.want, c.quote)
		}
	}
}

// TestCoveredInOneText: a window never joins the end of one stored text
// to the start of another (two chunks of a page need not be adjacent).
func TestCoveredInOneText(t *testing.T) {
	a := "Stack pressure reduces void formation at the lithium anode."
	b := "Higher pressure raises the critical current density of garnet cells."
	s := "Stack pressure reduces void formation at the lithium anode and raises the critical current density of garnet cells."
	if _, ok := CoveredIn(s, []string{a + " " + b}); !ok {
		t.Fatalf("not covered by one text holding both sentences")
	}
	if q, ok := CoveredIn(s, []string{a, b}); ok {
		t.Fatalf("covered across two texts by %q", q)
	}
}
