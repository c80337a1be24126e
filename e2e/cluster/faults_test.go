package cluster

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The faults run one after another in this order (go test runs a
// package's tests in source order): each restarts a part every session of
// the cluster depends on, so two at once would measure neither.

// TestKillWorkerA kills worker A (the model and browser queues) with
// SIGKILL while ten sessions are in their middle, and starts it again: the
// activities it held time out on their heartbeat and run again on the new
// process.
func TestKillWorkerA(t *testing.T) {
	r := need(t)
	r.disturb(t, "kill -9 worker A", func(t *testing.T) { r.killAndRestart(t, "a") })
}

// TestKillWorkerB does the same to worker B (the workflow queue and the
// search queues): the sessions' workflow tasks move to the new process,
// which replays their histories.
func TestKillWorkerB(t *testing.T) {
	r := need(t)
	r.disturb(t, "kill -9 worker B", func(t *testing.T) { r.killAndRestart(t, "b") })
}

// TestRestartTemporal restarts the Temporal server (every service of the
// one binary) under ten sessions.
func TestRestartTemporal(t *testing.T) {
	r := need(t)
	r.disturb(t, "restart temporal", func(t *testing.T) { r.restart(t, "temporal") })
}

// TestRestartPostgres restarts PostgreSQL, the server's history and
// visibility store, under ten sessions.
func TestRestartPostgres(t *testing.T) {
	r := need(t)
	r.disturb(t, "restart postgres", func(t *testing.T) { r.restart(t, "postgres") })
}

// TestRestartNeo4j restarts Neo4j, the sessions' graph store, under ten
// sessions: the store calls fail while it is down and their activities
// retry.
func TestRestartNeo4j(t *testing.T) {
	r := need(t)
	r.disturb(t, "restart neo4j", func(t *testing.T) { r.restart(t, "neo4j") })
}

func (r *rig) restart(t *testing.T, component string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	if err := r.script(ctx, nil, "restart", component, r.dir); err != nil {
		t.Fatal(err)
	}
	t.Logf("cluster.sh restart %s: %.1f s", component, time.Since(start).Seconds())
}

// killAndRestart sends SIGKILL to worker name ("a" or "b"), waits until the
// process is gone and starts it again with `cluster.sh workers`, which
// starts the workers that are not running.
func (r *rig) killAndRestart(t *testing.T, name string) {
	t.Helper()
	r.signalWorker(t, name, syscall.SIGKILL)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := r.startWorkers(ctx, ""); err != nil {
		t.Fatal(err)
	}
}

// signalWorker signals worker name and waits until its process is gone
// (reaped: a process killed but not yet reaped still answers kill -0).
func (r *rig) signalWorker(t *testing.T, name string, sig syscall.Signal) {
	t.Helper()
	path := filepath.Join(r.dir, "worker-"+name+".pid")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("worker %s: %v", name, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("worker %s: pid file %s: %v", name, path, err)
	}
	if err := syscall.Kill(pid, sig); err != nil {
		t.Fatalf("signal %v to worker %s (pid %d): %v", sig, name, pid, err)
	}
	for deadline := time.Now().Add(time.Minute); syscall.Kill(pid, 0) == nil; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("worker %s (pid %d) still there a minute after %v", name, pid, sig)
		}
	}
	t.Logf("worker %s (pid %d) gone after %v", name, pid, sig)
}

// slug is a fault's name as a workflow id prefix.
func slug(fault string) string {
	return strings.NewReplacer(" ", "-", "/", "-").Replace(strings.ToLower(fault))
}
