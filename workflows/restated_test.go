package workflows_test

import (
	"testing"

	"github.com/lethe-research/lethe/llm/llmtest"
	"github.com/lethe-research/lethe/workflows"
)

// TestRestatedCreate: a later answer that begins by creating again the task
// an earlier answer created (same id), as a small model restates its plan,
// is applied without its create and without a repair call.
func TestRestatedCreate(t *testing.T) {
	const create = `{"op":"create","id":"subtask-aa","description":"Dendrite growth","embed_text":"dendrites through the solid electrolyte"}`
	script := llmtest.Script{EmbeddingDim: 256, Rules: []llmtest.Rule{
		{Name: "repair", Match: []string{`repair attempt`}, Reply: `{"ops":[{"op":"complete","task":"root","result":"r","embed_text":"e"}]}`},
		{Name: "restate", Match: []string{`subtask-aa`}, Not: []string{`subtask-aa DONE`},
			Reply: `{"ops":[` + create + `,{"op":"complete","task":"subtask-aa","result":"Dendrites grow along grain boundaries.","embed_text":"dendrites grain boundaries"}]}`},
		{Name: "first", Match: []string{`^=GOAL`}, Reply: `{"ops":[` + create + `]}`},
	}}
	r := runSession(t, script, nil)
	if r.err != nil {
		t.Fatal(r.err)
	}
	used := rulesUsed(r.llm)
	// The subtask done, nothing is ready: the root waits for the model.
	if r.res.StopReason != workflows.StopNoReadyTasks || used["first"] != 1 || used["restate"] != 1 {
		t.Fatalf("stop %q; rules %v", r.res.StopReason, used)
	}
	if r.res.Stats.RepairCalls != 0 || used["repair"] != 0 || r.res.Stats.InvalidAnswers != 0 {
		t.Errorf("repairs %d (rule %d), invalid answers %d; want none", r.res.Stats.RepairCalls, used["repair"], r.res.Stats.InvalidAnswers)
	}
	if r.res.Stats.RestatedCreates != 1 {
		t.Errorf("restated creates dropped %d, want 1", r.res.Stats.RestatedCreates)
	}
	if r.res.Tasks != 2 || r.res.TasksDone != 2 {
		t.Errorf("tasks %d, done %d; want 2 and 2", r.res.Tasks, r.res.TasksDone)
	}
}
