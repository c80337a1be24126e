package workflows_test

import (
	"testing"

	"github.com/lethe-research/lethe/llm/llmtest"
	"github.com/lethe-research/lethe/workflows"
)

// TestCorpusSourceAccepted: an evidence op whose source is a corpus:///
// address, as the DIN-Read shows a corpus passage's source, is applied
// without a repair call.
func TestCorpusSourceAccepted(t *testing.T) {
	const (
		note   = `{"op":"evidence","task":"root","content":"Dendrites grow along grain boundaries.","embed_text":"dendrites grain boundaries","source":"corpus:///batteries.html?passage=3"}`
		create = `{"op":"create","id":"subtask-aa","description":"Dendrite growth","embed_text":"dendrites through the solid electrolyte"}`
	)
	script := llmtest.Script{EmbeddingDim: 256, Rules: []llmtest.Rule{
		{Name: "repair", Match: []string{`repair attempt`}, Reply: `{"ops":[` + create + `]}`},
		{Name: "done", Match: []string{`subtask-aa`}, Not: []string{`subtask-aa DONE`},
			Reply: `{"ops":[{"op":"complete","task":"subtask-aa","result":"Dendrites grow along grain boundaries.","embed_text":"dendrites grain boundaries"}]}`},
		{Name: "first", Match: []string{`^=GOAL`}, Reply: `{"ops":[` + note + `,` + create + `]}`},
	}}
	r := runSession(t, script, nil)
	if r.err != nil {
		t.Fatal(r.err)
	}
	used := rulesUsed(r.llm)
	if r.res.StopReason != workflows.StopNoReadyTasks || used["first"] != 1 || used["done"] != 1 {
		t.Fatalf("stop %q; rules %v", r.res.StopReason, used)
	}
	if r.res.Stats.RepairCalls != 0 || used["repair"] != 0 || r.res.Stats.InvalidAnswers != 0 {
		t.Errorf("repairs %d (rule %d), invalid answers %d; want none", r.res.Stats.RepairCalls, used["repair"], r.res.Stats.InvalidAnswers)
	}
	if r.res.Evidence < 1 {
		t.Errorf("evidence %d: the note was not applied", r.res.Evidence)
	}
}
