package workflows_test

import (
	"strings"
	"testing"

	"github.com/lethe-research/lethe/llm/llmtest"
	"github.com/lethe-research/lethe/workflows"
)

// TestCutAnswer: an answer that stops inside its ops list keeps the ops
// written whole before the cut only when the output limit cut it
// (finish_reason "length"), the kept ops are valid, and din.keep_cut_ops is
// on; otherwise it is repaired as any invalid answer is, and the repair
// prompt of an answer the limit cut says so, and names what is wrong with
// the ops it wrote whole.
func TestCutAnswer(t *testing.T) {
	const (
		whole   = `{"op":"complete","task":"root","result":"Dendrites and interfaces.","embed_text":"dendrites interfaces"}`
		unknown = `{"op":"complete","task":"nope","result":"r","embed_text":"e"}`
		cut     = `,{"op":"evidence","task":"root","content":"Lithium dendr`
		valid   = `{"ops":[` + whole + `]}`
	)
	tests := []struct {
		name    string
		answer  string
		finish  string
		params  map[string]string
		repairs int
		kept    int
		hint    bool   // the repair prompt names the output limit
		names   string // and this, when set
	}{
		{"cut by the limit", `{"ops":[` + whole + cut, "length", nil, 0, 1, false, ""},
		{"ended by the model", `{"ops":[` + whole + cut, "stop", nil, 1, 0, false, ""},
		{"the parameter off", `{"ops":[` + whole + cut, "length", map[string]string{"din.keep_cut_ops": "false"}, 1, 0, true, ""},
		{"the whole ops invalid", `{"ops":[` + unknown + cut, "length", nil, 1, 0, true, `unknown task id "nope"`},
		{"nothing whole before the cut", `{"ops":[{"op":"complete","task":"ro`, "length", nil, 1, 0, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			script := llmtest.Script{EmbeddingDim: 256, Rules: []llmtest.Rule{
				{Name: "repair", Match: []string{`repair attempt 1 of 2`}, Reply: valid},
				{Name: "first", Match: []string{"^=GOAL"}, Reply: tt.answer, Finish: tt.finish},
			}}
			r := runSession(t, script, tt.params)
			if r.err != nil {
				t.Fatal(r.err)
			}
			used := rulesUsed(r.llm)
			if r.res.StopReason != workflows.StopRootDone || r.res.Iterations != 1 {
				t.Fatalf("stop %q after %d iterations; rules %v", r.res.StopReason, r.res.Iterations, used)
			}
			if r.res.Stats.RepairCalls != tt.repairs || used["repair"] != tt.repairs || r.res.Stats.CutAnswers != tt.kept {
				t.Errorf("repairs %d (rule %d), cut answers kept %d; want %d and %d", r.res.Stats.RepairCalls, used["repair"],
					r.res.Stats.CutAnswers, tt.repairs, tt.kept)
			}
			for _, req := range r.llm.Requests() {
				if req.Rule != "repair" {
					continue
				}
				if strings.Contains(req.User, "reached the output limit") != tt.hint {
					t.Errorf("the repair prompt names the output limit: %v, want %v", !tt.hint, tt.hint)
				}
				if !strings.Contains(req.User, tt.names) {
					t.Errorf("the repair prompt does not say %q:\n%s", tt.names, req.User)
				}
			}
			if r.res.Stats.InvalidAnswers != 0 {
				t.Errorf("%d invalid answers", r.res.Stats.InvalidAnswers)
			}
		})
	}
}
