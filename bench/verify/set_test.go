package main

import (
	"testing"

	"github.com/lethe-research/lethe/activities"
	"github.com/lethe-research/lethe/contract"
)

// TestTextRulesOnLabelledSet holds what the text rules (containment,
// then coverage with anchors, number locality and scoped negation)
// decide on the labelled set without a model: they must not support
// more false pairs, or fewer true ones, than when they were measured
// (docs/citations.md, "What the text must hold"). Before those rules:
// 9 true and 9 false pairs supported; with them 13 and 6; with "keep …
// from being pulled in" read as a negation, 14 and 6.
func TestTextRulesOnLabelledSet(t *testing.T) {
	set, err := loadSet("", "")
	if err != nil {
		t.Fatal(err)
	}
	sources := map[string][]string{}
	for _, s := range set.Sources {
		sources[s.URL] = []string{s.Text}
	}
	_, items := set.cited()
	held, _ := activities.SplitByContainment(items, sources)
	var trueHeld, falseHeld []string
	for _, v := range held {
		if v.Status != contract.Supported {
			continue
		}
		if p := set.Pairs[v.I]; p.Supported {
			trueHeld = append(trueHeld, p.ID)
		} else {
			falseHeld = append(falseHeld, p.ID)
		}
	}
	t.Logf("true pairs supported by the text: %d %v; false: %d %v", len(trueHeld), trueHeld, len(falseHeld), falseHeld)
	if len(trueHeld) < 14 {
		t.Errorf("%d true pairs supported by the text, want at least 14", len(trueHeld))
	}
	if len(falseHeld) > 6 {
		t.Errorf("%d false pairs supported by the text, want at most 6", len(falseHeld))
	}
}
