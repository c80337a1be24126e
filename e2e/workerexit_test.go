package e2e

import (
	"context"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lethe-research/lethe/internal/lethetest"
)

// A worker whose metrics port is taken exits with an error that names the
// port, and a test waiting on that worker learns of the exit from untilExit
// at once, not at its bound (a CI run beside an evaluation run waited out
// its 30 minutes with no poller on its queue, stop 50).
func TestWorkerExitIsNoticed(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	params := lethetest.Params("http://127.0.0.1:1", t.TempDir())
	params["telemetry.metrics_addr"] = taken.Addr().String()
	params["temporal.task_queue"] = "lethe-exit"
	w := startWorker(t, params)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ctx, unwatch := w.untilExit(t, ctx)
	defer unwatch()
	<-ctx.Done()
	cause := context.Cause(ctx)
	if cause == nil || !strings.Contains(cause.Error(), "worker exited early") {
		t.Fatalf("cause = %v, want the worker's early exit", cause)
	}
	if code := w.cmd.ProcessState.ExitCode(); code == 0 {
		t.Errorf("exit code 0, want a failure")
	}
	b, _ := os.ReadFile(w.log.Name())
	if !strings.Contains(string(b), taken.Addr().String()) {
		t.Errorf("worker log does not name the taken address %s:\n%s", taken.Addr(), b)
	}
}

// A worker that keeps running is not reported, and one stopped on purpose
// after unwatch is not either: the context stays usable for what the test
// does next (the real-model tests read their sessions after stopping the
// worker; a first version cancelled it in unwatch, and the twenty-third
// evaluation run's checks all failed with "context canceled").
func TestWorkerWatchEndsQuietly(t *testing.T) {
	w := startWorker(t, lethetest.Params("http://127.0.0.1:1", t.TempDir()))
	ctx, unwatch := w.untilExit(t, context.Background())
	time.Sleep(2 * time.Second)
	if err := context.Cause(ctx); err != nil {
		w.dumpLog(t)
		t.Fatalf("worker reported as exited: %v", err)
	}
	unwatch()
	w.stop(syscall.SIGTERM)
	time.Sleep(200 * time.Millisecond)
	if err := context.Cause(ctx); err != nil {
		t.Errorf("after unwatch and a stop on purpose, cause = %v; want the context usable", err)
	}
}
