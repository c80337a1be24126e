package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/lethe-research/lethe/internal/lethetest"
	"github.com/lethe-research/lethe/internal/lethetest/evaltest"
	"github.com/lethe-research/lethe/llm/llmtest"
	"github.com/lethe-research/lethe/workflows"
)

// An evaluation whose output directory is a file ends (eval.outputs_wait
// 0) with its table and the reason, not a failure; once the directory is
// fixed, the reset docs/eval.md gives (to the workflow task before
// WriteEvalOutputs) writes the files from the records in history.
func TestEvalOutputsWrittenAfterReset(t *testing.T) {
	srv := llmtest.NewServer(evaltest.Script(t))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	outDir := filepath.Join(dir, "eval")
	if err := os.WriteFile(outDir, []byte("a binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	const id, queue = "eval-outputs-reset", "lethe-eval-outputs-reset"
	extra := map[string]string{"temporal.task_queue": queue, "eval.judge_batch": "1", "eval.out_dir": outDir, "eval.outputs_wait": "0s"}
	params := lethetest.Params(srv.URL(), dir)
	for k, v := range extra {
		params[k] = v
	}
	w := startWorker(t, params)
	c := dial(t)
	cfg := lethetest.Config(t, srv.URL(), dir, extra)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: queue}, workflows.EvaluationWorkflow,
		workflows.EvalInput{Questions: evaltest.Questions()[:1], Systems: []string{workflows.SystemRAG}, Config: &cfg})
	if err != nil {
		t.Fatal(err)
	}
	var first workflows.EvalResult
	if err := run.Get(ctx, &first); err != nil {
		w.dumpLog(t)
		t.Fatalf("a directory that is a file failed the evaluation: %v", err)
	}
	if first.Dir != "" || !strings.Contains(first.OutputsError, "not a directory") || !strings.Contains(first.Table, "| rag | 1 | 0 |") {
		t.Fatalf("first run: dir %q, outputs error %q, table:\n%s", first.Dir, first.OutputsError, first.Table)
	}
	if err := os.Remove(outDir); err != nil {
		t.Fatal(err)
	}
	resp, err := c.ResetWorkflowExecution(ctx, &workflowservice.ResetWorkflowExecutionRequest{
		Namespace:                 "default",
		WorkflowExecution:         &commonpb.WorkflowExecution{WorkflowId: id, RunId: run.GetRunID()},
		Reason:                    "write outputs",
		WorkflowTaskFinishEventId: beforeWrite(history(t, c, id, run.GetRunID()).Events),
		RequestId:                 fmt.Sprintf("reset-%d", time.Now().UnixNano()),
	})
	if err != nil {
		t.Fatal(err)
	}
	var second workflows.EvalResult
	if err := c.GetWorkflow(ctx, id, resp.GetRunId()).Get(ctx, &second); err != nil {
		w.dumpLog(t)
		t.Fatal(err)
	}
	if second.Dir != filepath.Join(outDir, id) || second.OutputsError != "" || second.Table != first.Table {
		t.Fatalf("after the reset: dir %q, outputs error %q, table:\n%s\nbefore:\n%s", second.Dir, second.OutputsError, second.Table, first.Table)
	}
	for _, f := range []string{"results.md", "results.jsonl", "accuracy-tokens.svg"} {
		if st, err := os.Stat(filepath.Join(second.Dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// beforeWrite is the WorkflowTaskCompleted event just before
// WriteEvalOutputs was scheduled: the reset point that runs the write again.
func beforeWrite(events []*historypb.HistoryEvent) int64 {
	at := int64(0)
	for _, e := range events {
		if e.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED {
			at = e.GetEventId()
		}
		if a := e.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == "WriteEvalOutputs" {
			return at
		}
	}
	return 0
}
