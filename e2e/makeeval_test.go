package e2e

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lethe-research/lethe/internal/lethetest"
	"github.com/lethe-research/lethe/internal/lethetest/evaltest"
	"github.com/lethe-research/lethe/llm/llmtest"
)

// freePortPair is a loopback port P with P+1000 also free: the dev server
// scripts/eval.sh starts takes P and its UI P+1000.
func freePortPair(t *testing.T) int {
	t.Helper()
	for range 50 {
		p, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		if p+1000 > 65535 {
			continue
		}
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", p+1000), time.Second)
		if err != nil {
			return p
		}
		c.Close()
	}
	t.Fatal("no free port P with P+1000 free")
	return 0
}

// freshClone copies the repository's files as git sees them (tracked and
// untracked, not ignored: the working tree under test) into a temporary
// directory, as a clone would have them: no RUN_DIR, no binaries, nothing
// a developer's machine accumulated.
func freshClone(t *testing.T) string {
	t.Helper()
	ls := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	ls.Dir = lethetest.Root()
	out, err := ls.Output()
	if err != nil {
		t.Fatalf("git ls-files in %s (the test copies the files git lists): %v", ls.Dir, err)
	}
	dir := filepath.Join(t.TempDir(), "lethe")
	for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		src := filepath.Join(ls.Dir, f)
		st, err := os.Lstat(src)
		if err != nil || !st.Mode().IsRegular() { // deleted in the working tree, or a link
			continue
		}
		b, err := os.ReadFile(src)
		if err == nil {
			err = os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755)
		}
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, f), b, st.Mode().Perm())
		}
		if err != nil {
			t.Fatalf("copy %s: %v", f, err)
		}
	}
	return dir
}

// `make eval` as the README gives it, on a fresh clone with the default
// RUN_DIR: the script starts its own dev server (on a free port, through
// LETHE_TEMPORAL_HOST_PORT) and worker, the scripted model answers one
// question, and the command exits 0 with the table printed and the outputs
// under RUN_DIR/eval/<id>/. The binaries the script builds must not take
// the output directory's path.
func TestMakeEvalFreshClone(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the whole make eval")
	}
	clone := freshClone(t)
	srv := llmtest.NewServer(evaltest.Script(t))
	t.Cleanup(srv.Close)
	p := lethetest.Params(srv.URL(), t.TempDir())
	delete(p, "graph.path") // the script's default: RUN_DIR/graph.db
	port := freePortPair(t)
	for k, v := range map[string]string{"temporal.host_port": fmt.Sprintf("127.0.0.1:%d", port),
		"eval.judge_batch": "1", "budget.max_iterations": "6"} {
		p[k] = v
	}
	const id = "makeeval-fresh"
	out, errb, err := runMake(t, clone, lethetest.Env(p), "eval", fmt.Sprintf("EVAL_ARGS=-n 1 -questions %s -id %s", writeQuestions(t, ""), id))
	runDir := filepath.Join(clone, "lethe-data")
	if err != nil {
		worker, _ := os.ReadFile(filepath.Join(runDir, "worker.log"))
		if len(worker) > 4000 {
			worker = worker[len(worker)-4000:]
		}
		t.Fatalf("make eval: %v\nstderr:\n%s\nworker log (end):\n%s", err, errb, worker)
	}
	for _, sys := range []string{"lethe", "rag", "loop"} {
		if !strings.Contains(out, "| "+sys+" | 1 | 0 |") {
			t.Errorf("table has no row for %s with one question, none failed:\n%s", sys, out)
		}
	}
	outDir := filepath.Join(runDir, "eval", id)
	if !strings.Contains(errb, "outputs: "+outDir) {
		t.Errorf("the command does not say where the outputs are (%s):\n%s", outDir, errb)
	}
	b, err := os.ReadFile(filepath.Join(outDir, "results.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(strings.Split(strings.TrimSpace(string(b)), "\n")); n != 3 {
		t.Errorf("results.jsonl has %d records, want 3 (one question, three systems):\n%s", n, b)
	}
	for _, f := range []string{"results.md", "accuracy-tokens.svg"} {
		if st, err := os.Stat(filepath.Join(outDir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// runMake runs make -s with args in dir, at most eight minutes, and logs
// how long it took. It runs in a process group of its own, so that the dev
// server and worker the script starts go with it when it is killed.
func runMake(t *testing.T, dir string, env []string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := exec.Command("make", append([]string{"-s"}, args...)...)
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(8 * time.Minute):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		t.Fatalf("make %v did not end in 8 minutes; stderr:\n%s", args, errb.String())
	}
	t.Logf("make %s: %v", args[0], time.Since(start).Round(time.Second))
	return out.String(), errb.String(), err
}
