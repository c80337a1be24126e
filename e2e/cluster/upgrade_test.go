package cluster

import (
	"context"
	"encoding/json"
	"fmt"
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
		down: back.Sub(faultAt), recovery: recovery(outs, faultAt, back), retried: retried(outs), total: time.Since(b.start)})
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

// buildUpgraded builds the worker of this checkout with
// testdata/upgrade.patch applied: the files the patch touches are copied
// and patched in a temporary directory, and go build reads them in place
// of the checkout's (-overlay), so that every other package comes from
// the build cache of the checkout's own worker.
func buildUpgraded(t *testing.T) string {
	t.Helper()
	start := time.Now()
	root, dir := lethetest.Root(), t.TempDir()
	patch := filepath.Join(root, "e2e", "cluster", "testdata", "upgrade.patch")
	files, err := patchedFiles(patch)
	if err != nil {
		t.Fatal(err)
	}
	replace := map[string]string{}
	for _, f := range files {
		if err := copyFile(filepath.Join(root, f), filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
		replace[filepath.Join(root, f)] = filepath.Join(dir, f)
	}
	overlay, err := json.Marshal(map[string]any{"Replace": replace})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "overlay.json"), overlay, 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "worker-upgraded")
	for _, c := range []struct {
		dir  string
		args []string
	}{
		{dir, []string{"git", "apply", "--verbose", patch}},
		{root, []string{"go", "build", "-overlay", filepath.Join(dir, "overlay.json"), "-o", bin, "./worker"}},
	} {
		cmd := exec.Command(c.args[0], c.args[1:]...)
		cmd.Dir = c.dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(c.args, " "), err, out)
		}
	}
	t.Logf("upgraded worker (%s on %v) built in %.1f s", filepath.Base(patch), files, time.Since(start).Seconds())
	return bin
}

// patchedFiles lists the files a unified diff changes (its +++ b/ lines).
func patchedFiles(patch string) ([]string, error) {
	b, err := os.ReadFile(patch)
	if err != nil {
		return nil, fmt.Errorf("read the upgrade patch: %w", err)
	}
	var files []string
	for _, line := range strings.Split(string(b), "\n") {
		if f, ok := strings.CutPrefix(line, "+++ b/"); ok {
			files = append(files, strings.TrimSpace(f))
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s changes no file", patch)
	}
	return files, nil
}

// copyFile copies from to to, creating to's directory.
func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return fmt.Errorf("copy the checkout's file: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return fmt.Errorf("copy %s: %w", from, err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		return fmt.Errorf("copy %s: %w", from, err)
	}
	return nil
}
