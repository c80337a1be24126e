package workflows_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/internal/lethetest"
	"github.com/lethe-research/lethe/llm/llmtest"
	"github.com/lethe-research/lethe/workflows"
)

// TestReplayRecordedHistories replays one history per released workflow
// shape, recorded on a real dev server (e2e, LETHETEST_UPDATE_HISTORY=
// <shape>), named <shape>--<workflow id>.json: a change to workflow code
// that would break sessions started on an earlier release fails here
// (docs/versioning.md).
func TestReplayRecordedHistories(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(lethetest.Root(), "testdata", "history", "*--*.json"))
	if err != nil || len(files) < 2 {
		t.Fatalf("want a history per released shape (at least v0 and v1), found %v (%v)", files, err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		t.Run(name, func(t *testing.T) {
			replayFile(t, file, name[strings.Index(name, "--")+2:])
		})
	}
}

func replayFile(t *testing.T, file, id string) {
	t.Helper()
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
	opts := worker.ReplayWorkflowHistoryOptions{OriginalExecution: workflow.Execution{ID: id}}
	if err := r.ReplayWorkflowHistoryWithOptions(nil, h, opts); err != nil {
		t.Fatalf("replay %s: %v", file, err)
	}
}

// TestNewSessionTakesFocusPath is the other half of the versioning test:
// while the v0 history above replays the three activities it recorded
// (SetStatus, SyncSimilar, Expand), a session started now takes the new
// path behind workflow.GetVersion: one Focus activity per iteration.
func TestNewSessionTakesFocusPath(t *testing.T) {
	srv := llmtest.NewServer(lethetest.Script(t, "battery_root_done"))
	t.Cleanup(srv.Close)
	ran, local := map[string]int{}, map[string]int{}
	r := runAt(t, srv, srv.URL(), nil, func(cfg *config.Config) workflows.SessionInput {
		return workflows.SessionInput{Goal: goal, Config: cfg}
	}, func(env *testsuite.TestWorkflowEnvironment) {
		env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
			ran[info.ActivityType.Name]++
		})
		env.SetOnLocalActivityStartedListener(func(info *activity.Info, _ context.Context, _ []any) {
			local[info.ActivityType.Name]++
		})
	})
	if r.err != nil {
		t.Fatal(r.err)
	}
	// Since changeBoundedView the one store activity is FocusView (Focus
	// and the focus's neighbourhood), and since changeLocalSteps it runs
	// locally with ApplyOps, CheckQuery, ReadState and Observe: the only
	// activity an iteration schedules is its model call.
	n := r.res.Iterations
	if ran["Focus"]+ran["Expand"]+ran["SyncSimilar"]+ran["FocusView"]+ran["ApplyOps"]+ran["CheckQuery"]+ran["ReadState"]+ran["Observe"] != 0 {
		t.Fatalf("activities scheduled: %v; want no store step of the loop scheduled", ran)
	}
	if local["FocusView"] != n || local["ApplyOps"] != n || local["Observe"] != n || local["ReadState"] < n || local["CheckQuery"] == 0 {
		t.Fatalf("local activities: %v; want FocusView, ApplyOps and Observe once per iteration (%d), ReadState at least that, CheckQuery for the web search", local, n)
	}
}
