package workflows_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/lethe-research/lethe/internal/lethetest/evaltest"
	"github.com/lethe-research/lethe/workflows"
)

// blockedOutDir makes eval.out_dir a regular file, as a go build -o of
// that path leaves it: every write under it fails with "not a directory".
func blockedOutDir(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "eval")
	if err := os.WriteFile(p, []byte("a binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// runBlocked runs one question through rag and loop with the output
// directory blocked; during, when set, runs an hour (test time) into the
// evaluation, while it waits.
func runBlocked(t *testing.T, outDir, wait string, during func(env *testsuite.TestWorkflowEnvironment)) workflows.EvalResult {
	t.Helper()
	env, cfg, _ := evalEnv(t, map[string]string{"eval.out_dir": outDir, "eval.outputs_wait": wait})
	if during != nil {
		env.RegisterDelayedCallback(func() { during(env) }, time.Hour)
	}
	env.ExecuteWorkflow(workflows.EvaluationWorkflow, workflows.EvalInput{
		Questions: evaltest.Questions()[:1], Systems: []string{workflows.SystemRAG, workflows.SystemLoop}, Config: &cfg})
	if !env.IsWorkflowCompleted() || env.GetWorkflowError() != nil {
		t.Fatalf("evaluation: completed %v, error %v (a failed write must not fail it)", env.IsWorkflowCompleted(), env.GetWorkflowError())
	}
	var res workflows.EvalResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if len(res.Summaries) != 2 || !strings.Contains(res.Table, "| rag | 1 | 0 |") || !strings.Contains(res.Table, "| loop | 1 | 0 |") {
		t.Fatalf("result without the table: summaries %+v\n%s", res.Summaries, res.Table)
	}
	return res
}

// An output directory that cannot be written does not fail the
// evaluation: it waits, shows why in its progress, and the retry-outputs
// signal, sent once the directory is fixed, writes the outputs; the
// result holds the table either way.
func TestEvaluationOutputsWaitForRetrySignal(t *testing.T) {
	outDir := blockedOutDir(t)
	var waiting workflows.EvalProgress
	res := runBlocked(t, outDir, "24h", func(env *testsuite.TestWorkflowEnvironment) {
		v, err := env.QueryWorkflow(workflows.QueryProgress)
		if err != nil {
			t.Errorf("progress while waiting: %v", err)
		} else if err := v.Get(&waiting); err != nil {
			t.Error(err)
		}
		if err := os.Remove(outDir); err != nil { // the fix, on the worker's side
			t.Error(err)
		}
		env.SignalWorkflow(workflows.SignalRetryOutputs, nil)
	})
	if waiting.Phase != "waiting for output dir" || !strings.Contains(waiting.OutputsError, "not a directory") {
		t.Errorf("progress while the directory was a file: phase %q, outputs error %q", waiting.Phase, waiting.OutputsError)
	}
	if res.OutputsError != "" || res.Dir != filepath.Join(outDir, "default-test-workflow-id") {
		t.Fatalf("after the signal: dir %q, outputs error %q", res.Dir, res.OutputsError)
	}
	md, err := os.ReadFile(filepath.Join(res.Dir, "results.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), res.Table) {
		t.Errorf("results.md does not hold the result's table:\n%s\nresult:\n%s", md, res.Table)
	}
	for _, f := range []string{"results.jsonl", "accuracy-tokens.svg"} {
		if st, err := os.Stat(filepath.Join(res.Dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// Without a signal the evaluation ends after eval.outputs_wait with the
// table in its result, no directory, and the reason.
func TestEvaluationOutputsWaitEnds(t *testing.T) {
	res := runBlocked(t, blockedOutDir(t), "2h", nil)
	if res.Dir != "" || !strings.Contains(res.OutputsError, "not a directory") {
		t.Fatalf("dir %q, outputs error %q", res.Dir, res.OutputsError)
	}
}
