package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/lethe-research/lethe/eval/questions"
	"github.com/lethe-research/lethe/internal/lethetest"
	"github.com/lethe-research/lethe/internal/lethetest/evaltest"
	"github.com/lethe-research/lethe/llm/llmtest"
)

// evalCmd is the eval command under test: its binary and the environment
// (LETHE_* parameters) every run of it gets.
type evalCmd struct {
	bin string
	env []string
}

// buildEvalCmd builds ./eval and the parameters of a run against the dev
// server, a scripted model that answers in 150 ms (so that the command
// can be stopped mid-run), and a worker on the queue the runs use.
func buildEvalCmd(t *testing.T, queue string) evalCmd {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "eval")
	build := exec.Command("go", "build", "-o", bin, "./eval")
	build.Dir = lethetest.Root()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build eval: %v\n%s", err, out)
	}
	s := evaltest.Script(t)
	for i := range s.Rules {
		s.Rules[i].DelayMS = 150
	}
	srv := llmtest.NewServer(s)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	p := lethetest.Params(srv.URL(), dir)
	for k, v := range map[string]string{"temporal.task_queue": queue, "eval.judge_batch": "1", "eval.parallelism": "3",
		"eval.out_dir": filepath.Join(dir, "eval"), "temporal.max_concurrent_llm": "4"} {
		p[k] = v
	}
	startWorker(t, p)
	p["temporal.host_port"] = hostPort
	return evalCmd{bin: bin, env: lethetest.Env(p)}
}

// start starts the command with args; its stdout and stderr go to the
// buffers returned.
func (e evalCmd) start(t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(e.bin, args...)
	cmd.Env = e.env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return cmd, &out, &errb
}

// run runs the command to its end, at most three minutes.
func (e evalCmd) run(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	cmd, out, errb := e.start(t, args...)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return out.String(), errb.String(), err
	case <-time.After(3 * time.Minute):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("eval %v did not end in 3 minutes; stderr:\n%s", args, errb)
		return "", "", nil
	}
}

// writeQuestions writes the evaluation tests' questions as a question
// file (eval/questions' JSONL), with bad appended as its last line.
func writeQuestions(t *testing.T, bad string) string {
	t.Helper()
	var b strings.Builder
	for _, q := range evaltest.Questions() {
		line, err := json.Marshal(questions.Question{ID: q.ID, Question: q.Question, Answer: q.Answer,
			Gold: q.Gold, Kind: q.Kind, Sources: []string{"battery.md"}})
		if err != nil {
			t.Fatal(err)
		}
		b.Write(append(line, '\n'))
	}
	b.WriteString(bad)
	path := filepath.Join(t.TempDir(), "questions.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// notStarted fails the test when a workflow of id exists.
func notStarted(t *testing.T, c client.Client, id string) {
	t.Helper()
	_, err := c.DescribeWorkflowExecution(context.Background(), id, "")
	var nf *serviceerror.NotFound
	if !errors.As(err, &nf) {
		t.Errorf("workflow %s: describe gave %v, want not found: the command started it", id, err)
	}
}

// The eval command as a user runs it: bad input is refused before any
// workflow starts; the command killed mid-run and run again with the same
// -id follows the running evaluation to its table; run once more after the
// end, it prints the same table and starts nothing. The evaluation has one
// run and its sessions one each.
func TestEvalCommand(t *testing.T) {
	e := buildEvalCmd(t, "lethe-evalcmd")
	c := dial(t)
	qs := writeQuestions(t, "")

	bad := writeQuestions(t, `{"id": "t-broken", "question": "Which?"}`+"\n")
	_, stderr, err := e.run(t, "-questions", bad, "-id", "evalcmd-bad-file")
	if code := exitCode(err); code != 1 || !strings.Contains(stderr, "line 4") || !strings.Contains(stderr, `missing field "answer"`) {
		t.Errorf("bad question file: exit %d, stderr %q", code, stderr)
	}
	notStarted(t, c, "evalcmd-bad-file")
	_, stderr, err = e.run(t, "-questions", qs, "-systems", "lethe,bogus", "-id", "evalcmd-bad-system")
	if code := exitCode(err); code != 1 || !strings.Contains(stderr, `unknown system "bogus"`) {
		t.Errorf("unknown system: exit %d, stderr %q", code, stderr)
	}
	notStarted(t, c, "evalcmd-bad-system")

	const id = "evalcmd"
	first, _, firstErr := e.start(t, "-questions", qs, "-id", id)
	waitRecords(t, c, id, 2)
	_ = first.Process.Signal(syscall.SIGKILL)
	_ = first.Wait()
	d, err := c.DescribeWorkflowExecution(context.Background(), id, "")
	if err != nil {
		t.Fatalf("describe %s after the command was killed: %v (stderr %s)", id, err, firstErr)
	}
	runID := d.WorkflowExecutionInfo.Execution.RunId
	if st := d.WorkflowExecutionInfo.Status; st != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		t.Fatalf("evaluation %s is %v when the command is killed: the next run would not follow a running one", id, st)
	}

	followed, stderr, err := e.run(t, "-questions", qs, "-id", id)
	if err != nil {
		t.Fatalf("second run: %v\n%s", err, stderr)
	}
	for _, sys := range []string{"lethe", "rag", "loop"} {
		if !strings.Contains(followed, "| "+sys+" ") {
			t.Errorf("table has no row for %s:\n%s", sys, followed)
		}
	}
	again, stderr, err := e.run(t, "-questions", qs, "-id", id, "-follow=false")
	if err != nil || again != followed {
		t.Errorf("third run after the end: %v\n%s\ntable:\n%s\nwant:\n%s", err, stderr, again, followed)
	}
	if d, err := c.DescribeWorkflowExecution(context.Background(), id, ""); err != nil || d.WorkflowExecutionInfo.Execution.RunId != runID {
		t.Errorf("evaluation %s was run again: %v", id, err)
	}
	for _, wid := range []string{id, id + "/t-paths/lethe", id + "/t-melt/lethe", id + "/t-flame/lethe"} {
		if n := executions(t, c, wid); n != 1 {
			t.Errorf("%s has %d executions, want 1", wid, n)
		}
	}
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// executions counts the runs of workflow id that visibility lists.
func executions(t *testing.T, c client.Client, id string) int {
	t.Helper()
	resp, err := c.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{Query: fmt.Sprintf("WorkflowId = %q", id)})
	if err != nil {
		t.Fatal(err)
	}
	return len(resp.Executions)
}
