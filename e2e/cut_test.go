package e2e

import (
	"strings"
	"testing"

	"github.com/lethe-research/lethe/llm/llmtest"
	"github.com/lethe-research/lethe/workflows"
)

// TestCutAnswerOnTheServer: on the dev server, a first answer that the
// output limit cut inside its ops list is applied from its whole ops with
// no repair call, the history records the cut-answers version marker, and
// that history replays on the current code (docs/cut-answers.md).
func TestCutAnswerOnTheServer(t *testing.T) {
	const whole = `{"op":"complete","task":"root","result":"Dendrites and interfaces.","embed_text":"dendrites interfaces"}`
	out := runScripted(t, "cut-answer-1", llmtest.Script{EmbeddingDim: 256, Rules: []llmtest.Rule{
		{Name: "repair", Match: []string{`repair attempt`}, Reply: `{"ops":[` + whole + `]}`},
		{Name: "cut", Match: []string{"^=GOAL"}, Reply: `{"ops":[` + whole + `,{"op":"evidence","task":"root","content":"Lithium dendr`,
			Finish: "length", DelayMS: 300},
		{Name: "compose", Match: []string{"^Goal: "}, Reply: "## Findings\n\nDendrites and interfaces."},
	}}, nil)
	if out.res.StopReason != workflows.StopRootDone || out.res.Stats.CutAnswers != 1 || out.res.Stats.RepairCalls != 0 {
		t.Fatalf("stop %q, cut answers kept %d, repairs %d", out.res.StopReason, out.res.Stats.CutAnswers, out.res.Stats.RepairCalls)
	}
	marker := false
	for _, e := range out.history.Events {
		m := e.GetMarkerRecordedEventAttributes()
		if m == nil || m.GetMarkerName() != "Version" {
			continue
		}
		for _, d := range m.GetDetails() {
			for _, p := range d.GetPayloads() {
				marker = marker || strings.Contains(string(p.GetData()), "cut-answers")
			}
		}
	}
	if !marker {
		t.Error("no cut-answers version marker in the history")
	}
	replay(t, "cut-answer-1", out.history)
}
