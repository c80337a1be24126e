package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/lethe-research/lethe/eval/score"
	"github.com/lethe-research/lethe/internal/lethetest"
	"github.com/lethe-research/lethe/internal/lethetest/evaltest"
	"github.com/lethe-research/lethe/llm/llmtest"
	"github.com/lethe-research/lethe/workflows"
)

// evalOutcome is what an evaluation left: its result, its records (from
// results.jsonl) and how many child sessions it started.
type evalOutcome struct {
	res      workflows.EvalResult
	records  map[string]score.Record
	children int
}

// runEvaluation runs the three test questions through all three systems
// on the dev server, with a worker process; kill, when set, runs while the
// evaluation does and returns the worker that finishes it.
func runEvaluation(t *testing.T, id string, kill func(c client.Client, w *workerProc) *workerProc) evalOutcome {
	t.Helper()
	s := evaltest.Script(t)
	for i := range s.Rules {
		s.Rules[i].DelayMS = 150 // a kill lands mid-run
	}
	srv := llmtest.NewServer(s)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	queue := "lethe-" + id
	extra := map[string]string{"temporal.task_queue": queue, "eval.judge_batch": "1", "eval.parallelism": "3",
		"eval.out_dir": filepath.Join(dir, "eval"), "temporal.max_concurrent_llm": "4"}
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
		workflows.EvalInput{Questions: evaltest.Questions(), Config: &cfg})
	if err != nil {
		t.Fatal(err)
	}
	if kill != nil {
		w = kill(c, w)
	}
	var out evalOutcome
	if err := run.Get(ctx, &out.res); err != nil {
		w.dumpLog(t)
		t.Fatalf("evaluation %s: %v", id, err)
	}
	w.stop(syscall.SIGTERM)
	b, err := os.ReadFile(filepath.Join(out.res.Dir, "results.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	out.records = map[string]score.Record{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r score.Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("results.jsonl: %v", err)
		}
		key := r.Question + "/" + r.System
		if _, dup := out.records[key]; dup {
			t.Errorf("two records for %s", key)
		}
		out.records[key] = r
	}
	h := history(t, c, id, "")
	checkPayloads(t, h)
	for _, e := range h.Events {
		if e.EventType == enumspb.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED {
			out.children++
		}
	}
	for _, q := range evaltest.Questions() {
		child := fmt.Sprintf("%s/%s/lethe", id, q.ID)
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: fmt.Sprintf("WorkflowId = %q", child)})
		if err != nil {
			t.Fatal(err)
		}
		if n := len(resp.Executions); n != 1 {
			t.Errorf("child %s has %d executions, want 1", child, n)
		}
	}
	return out
}

// waitRecords polls the evaluation's progress until some systems have
// been scored and others not yet.
func waitRecords(t *testing.T, c client.Client, id string, n int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if v, err := c.QueryWorkflow(context.Background(), id, "", workflows.QueryProgress); err == nil {
			var p workflows.EvalProgress
			total := 0
			if v.Get(&p) == nil {
				for _, s := range p.Systems {
					total += s.Records
				}
			}
			if total >= n {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("evaluation %s never reached %d records", id, n)
}

// The whole evaluation on the real dev server with a worker process: the
// scores are exact (a known wrong citation costs rag and loop one
// supported sentence in three on t-paths), and a worker killed with
// SIGKILL in the middle loses nothing and starts no session twice.
func TestEvaluationSurvivesKilledWorker(t *testing.T) {
	base := runEvaluation(t, "eval-uninterrupted", nil)
	if base.res.Failed != 0 || len(base.records) != 9 || base.children != 3 {
		t.Fatalf("uninterrupted: failed %d, %d records, %d children", base.res.Failed, len(base.records), base.children)
	}
	if r := base.records["t-paths/rag"]; r.Cited != 3 || r.Supported != 2 || math.Abs(r.Precision()-2.0/3) > 1e-12 {
		t.Errorf("rag on t-paths: cited %d, supported %d", r.Cited, r.Supported)
	}
	for _, s := range base.res.Summaries[1:] {
		if math.Abs(s.Precision-4.0/6) > 1e-12 || s.Judge != 1 || s.Contains != 1 {
			t.Errorf("%s: %+v", s.System, s)
		}
	}
	if l := base.res.Summaries[0]; l.System != "lethe" || l.Judge != 0 || l.Calls == 0 || l.Tokens == 0 {
		t.Errorf("lethe: %+v", l)
	}
	killed := runEvaluation(t, "eval-killed", func(c client.Client, w *workerProc) *workerProc {
		waitRecords(t, c, "eval-killed", 2)
		w.stop(syscall.SIGKILL)
		return startWorker(t, w.params)
	})
	if killed.children != 3 || killed.res.Failed != 0 {
		t.Errorf("killed run: %d children, %d failed", killed.children, killed.res.Failed)
	}
	for key, b := range base.records {
		k, ok := killed.records[key]
		b.Seconds, k.Seconds = 0, 0
		if !ok || !reflect.DeepEqual(k, b) {
			t.Errorf("%s differs after the kill:\nkilled: %+v\nbase:   %+v", key, k, b)
		}
	}
}
