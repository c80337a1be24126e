// Package evaltest holds the evaluation tests' questions over
// testdata/corpus and their scripted model (a package of its own: the
// question set's tests import lethetest).
package evaltest

import (
	"testing"

	"github.com/lethe-research/lethe/contract"
	"github.com/lethe-research/lethe/internal/lethetest"
	"github.com/lethe-research/lethe/llm/llmtest"
)

// Questions are three questions over testdata/corpus for the
// evaluation tests.
func Questions() []contract.EvalQuestion {
	return []contract.EvalQuestion{
		{ID: "t-paths", Kind: "fact", Question: "Along which paths do lithium dendrites propagate through a solid electrolyte?",
			Answer: "Along grain boundaries and through pores.", Gold: []string{"grain boundaries"}},
		{ID: "t-melt", Kind: "fact", Question: "At what temperature does a lithium metal anode melt?",
			Answer: "At 180 degrees Celsius.", Gold: []string{"180"}},
		{ID: "t-flame", Kind: "paraphrase", Question: "Can the ceramic separator of these cells catch fire?",
			Answer: "No: solid electrolytes are not flammable.", Gold: []string{"not flammable"}},
	}
}

// WrongClaim is the sentence of the rag answer to t-paths whose citation
// the scripted judge rejects: rag's citation precision on t-paths is 2/3.
const WrongClaim = "Dendrites grow only when the cell is stored above room temperature"

// Script is the scripted model of the evaluation tests: the
// battery_root_done session (every child session ends with the root's
// result), the baselines' plan and answers, the correctness judge and the
// citation judge. Known outcomes:
//   - rag on t-paths cites three sentences, one of them WrongClaim, which
//     the citation judge rejects: precision 2/3;
//   - both baselines on t-melt cite a source [9] they were never given:
//     unsupported without a judge call, precision 1/2;
//   - every other cited sentence is supported;
//   - the judge grades the lethe report (the battery summary, about
//     failures in general) 0, every baseline answer 1: its first
//     question quotes an answer's first sentence, the lethe report's
//     opening one.
//
// Run it with eval.judge_batch = 1 so that each verdict is one call.
func Script(t testing.TB) llmtest.Script {
	s := lethetest.Script(t, "battery_root_done")
	rules := []llmtest.Rule{
		{Name: "plan", System: []string{"You plan research"},
			Reply: `{"queries": ["lithium dendrites grain boundaries", "lithium anode melts temperature", "solid electrolytes flammable"]}`},
		{Name: "answer-paths", System: []string{"numbered sources"}, Match: []string{`Question: Along which paths`},
			Reply: "Lithium dendrites propagate along grain boundaries and through pores of the solid electrolyte [1]. " +
				"They are metallic filaments that grow from the lithium anode during charging [1]. " + WrongClaim + " [1]."},
		{Name: "answer-melt", System: []string{"numbered sources"}, Match: []string{`Question: At what temperature`},
			Reply: "A lithium metal anode melts at 180 degrees Celsius [1]. Molten lithium then reacts violently with the cathode [9].\n\n## Sources\n[1] thermal"},
		{Name: "answer-flame", System: []string{"numbered sources"}, Match: []string{`Question: Can the ceramic`},
			Reply: "No. Solid electrolytes are not flammable, which removes the main fire hazard [1]."},
		{Name: "entail-wrong", System: []string{"You check citations"}, Match: []string{`CLAIM 1: ` + WrongClaim},
			Reply: `{"verdicts": [{"i": 1, "supported": false, "quote": ""}]}`},
		{Name: "entail", System: []string{"You check citations"},
			Reply: `{"verdicts": [{"i": 1, "supported": true, "quote": "the evidence"}]}`},
		{Name: "judge-extract-lethe", System: []string{"strict grader"}, Match: []string{`Copy, word for word`, `(?s)RESPONSE:.*Solid-state batteries fail mainly`},
			Reply: `{"quote": "Solid-state batteries fail mainly by lithium dendrites that penetrate the solid electrolyte and short the cell."}`},
		{Name: "judge-extract", System: []string{"strict grader"}, Match: []string{`Copy, word for word`, `RESPONSE:\n(?P<first>[^\[\n"]+)`},
			Reply: `{"quote": "${first}"}`, Expand: true},
		{Name: "judge-compare-lethe", System: []string{"strict grader"}, Match: []string{`ANSWER B: Solid-state batteries fail mainly`}, Reply: `{"same": false}`},
		{Name: "judge-compare", System: []string{"strict grader"}, Match: []string{`ANSWER A:`}, Reply: `{"same": true}`},
	}
	s.Rules = append(rules, s.Rules...)
	return s
}
