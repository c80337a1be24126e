package cluster

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	historypb "go.temporal.io/api/history/v1"

	"github.com/lethe-research/lethe/internal/lethetest"
	"github.com/lethe-research/lethe/internal/lethetest/sessiontest"
)

// The change of testdata/upgrade.patch: a workflow.GetVersion in the
// session loop whose new branch records the iteration in the session's
// memo (a command the old code never issues).
const (
	upgradeChange = "cluster-upgrade-check"
	upgradeMemo   = "lethe_upgrade_check"
)

// TestRollingUpgrade replaces both workers, one after the other, with a
// build of this checkout plus testdata/upgrade.patch while ten sessions
// run. The sessions that started before finish on the new build as the
// undisturbed run, on the old branch and without a nondeterminism error; a
// session started after the upgrade takes the new branch.
func TestRollingUpgrade(t *testing.T) {
	r := need(t)
	ref := r.reference(t)
	bin := buildUpgraded(t) // before the sessions: it takes a while
	t.Cleanup(func() { r.replaceWorkers(t, "") })
	b := r.startBatch(t, "rolling-upgrade", sessions)
	r.waitMidSession(t, b)
	faultAt := time.Now()
	r.replaceWorkers(t, bin)
	back := time.Now()
	after := &batch{ids: []string{fmt.Sprintf("after-upgrade-%d", back.UnixMilli()%1e6)}, start: back}
	if _, err := r.startSession(after.ids[0]); err != nil {
		t.Fatal(err)
	}
	outs := r.finishBatch(t, b)
	newer := r.finishBatch(t, after)[0]
	// The sessions that began on the old build replay with this
	// checkout's code: they kept the old branch throughout.
	same := compare(t, b.ids, outs, ref, all)
	for i, o := range outs {
		if v, ok := versionMarker(o.History, upgradeChange); ok {
			t.Errorf("%s started before the upgrade but recorded %s version %s", b.ids[i], upgradeChange, v)
		}
		if r.memo(t, b.ids[i]) {
			t.Errorf("%s started before the upgrade but has the new branch's memo", b.ids[i])
		}
	}
	sameAfter := compare(t, after.ids, []sessiontest.Outcome{newer}, ref, func(string) bool { return false })
	if v, ok := versionMarker(newer.History, upgradeChange); !ok || v != "1" {
		t.Errorf("%s started after the upgrade: %s marker %q (found %v), want version 1", after.ids[0], upgradeChange, v, ok)
	}
	if !r.memo(t, after.ids[0]) {
		t.Errorf("%s started after the upgrade but has no %s memo: the new branch did not run", after.ids[0], upgradeMemo)
	}
	r.table.add(t, row{fault: "rolling upgrade (+1 session after)", identical: same + sameAfter, runs: len(outs) + 1,
		down: back.Sub(faultAt), recovery: recovery(outs, faultAt, back), total: time.Since(b.start)})
}

// replaceWorkers stops worker A and starts it from bin ("" = a build of
// this checkout), then does the same with worker B: a rolling replacement,
// one queue's worker away at a time.
func (r *rig) replaceWorkers(t *testing.T, bin string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for _, name := range []string{"a", "b"} {
		r.signalWorker(t, name, syscall.SIGTERM)
		if err := r.startWorkers(ctx, bin); err != nil {
			t.Fatal(err)
		}
	}
}

// versionMarker finds the GetVersion marker of change in h and returns its
// recorded version.
func versionMarker(h *historypb.History, change string) (string, bool) {
	for _, e := range h.Events {
		m := e.GetMarkerRecordedEventAttributes()
		if m == nil || m.GetMarkerName() != "Version" {
			continue
		}
		id := m.GetDetails()["change-id"].GetPayloads()
		if len(id) == 0 || string(id[0].GetData()) != fmt.Sprintf("%q", change) {
			continue
		}
		if v := m.GetDetails()["version"].GetPayloads(); len(v) > 0 {
			return string(v[0].GetData()), true
		}
		return "", true
	}
	return "", false
}

// memo reports whether the session's memo holds the new branch's field.
func (r *rig) memo(t *testing.T, id string) bool {
	t.Helper()
	d, err := r.c.DescribeWorkflowExecution(context.Background(), id, "")
	if err != nil {
		t.Fatalf("describe %s: %v", id, err)
	}
	_, ok := d.GetWorkflowExecutionInfo().GetMemo().GetFields()[upgradeMemo]
	return ok
}

// buildUpgraded copies this checkout's files (tracked and untracked, not
// ignored) to a temporary directory, applies testdata/upgrade.patch and
// builds the worker there.
func buildUpgraded(t *testing.T) string {
	t.Helper()
	start := time.Now()
	src := t.TempDir()
	root := lethetest.Root()
	list, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	for _, f := range strings.Split(strings.TrimRight(string(list), "\x00"), "\x00") {
		if err := copyFile(filepath.Join(root, f), filepath.Join(src, f)); err != nil {
			t.Fatal(err)
		}
	}
	patch := filepath.Join(root, "e2e", "cluster", "testdata", "upgrade.patch")
	bin := filepath.Join(src, "worker-upgraded")
	for _, args := range [][]string{
		{"git", "apply", "--verbose", patch},
		// -trimpath: the copy's path is new each run; without it no
		// package of the module would come from the build cache.
		{"go", "build", "-trimpath", "-o", bin, "./worker"},
	} {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = src
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	t.Logf("upgraded worker (checkout + %s) built in %.1f s", filepath.Base(patch), time.Since(start).Seconds())
	return bin
}

// copyFile copies from to to with its mode; a file git lists but the
// checkout has deleted is skipped.
func copyFile(from, to string) error {
	in, err := os.Open(from)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("copy checkout: %w", err)
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil || st.IsDir() {
		return err // a submodule's directory: nothing to copy
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return fmt.Errorf("copy checkout: %w", err)
	}
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, st.Mode().Perm())
	if err != nil {
		return fmt.Errorf("copy checkout: %w", err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copy %s: %w", from, err)
	}
	return out.Close()
}
