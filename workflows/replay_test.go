package workflows_test

import (
	"os"
	"path/filepath"
	"testing"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/lethe-research/lethe/internal/lethetest"
	"github.com/lethe-research/lethe/workflows"
)

// TestReplayRecordedHistory replays a history recorded on a real dev server
// (e2e, LETHETEST_UPDATE_HISTORY=1): a change to workflow code that would break
// running sessions fails here.
func TestReplayRecordedHistory(t *testing.T) {
	file := filepath.Join(lethetest.Root(), "testdata", "history", "session.json")
	if _, err := os.Stat(file); err != nil {
		t.Fatalf("recorded history missing: %v (regenerate with LETHETEST_UPDATE_HISTORY=1 go test ./e2e/)", err)
	}
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(workflows.ResearchSession, workflow.RegisterOptions{Name: workflows.SessionWorkflow})
	r.RegisterWorkflowWithOptions(workflows.WebResearch, workflow.RegisterOptions{Name: workflows.ResearchWorkflow})
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The workflow id is part of what the code computes (child workflow ids),
	// so replay runs under the recorded session's id.
	opts := worker.ReplayWorkflowHistoryOptions{OriginalExecution: workflow.Execution{ID: "battery-uninterrupted"}}
	if err := r.ReplayWorkflowHistoryWithOptions(nil, h, opts); err != nil {
		t.Fatalf("replay %s: %v", file, err)
	}
}
