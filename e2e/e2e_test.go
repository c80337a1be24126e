// Package e2e runs sessions on a real Temporal dev server with the worker as
// a separate process, the way users run it: the scripted model server stands
// in for the LLM, everything else is real.
package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/lethe-research/lethe/internal/lethetest"
	"github.com/lethe-research/lethe/workflows"
)

var (
	hostPort  string
	workerBin string
	// uiURL is the dev server's Web UI (http://127.0.0.1:PORT), for the
	// tests that look at what a user sees.
	uiURL string
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	bin := lethetest.TemporalCLI()
	if bin == "" {
		if lethetest.Strict() { // make test (LETHE_TEST_STRICT=1) or CI: the CLI must be there
			fmt.Fprintln(os.Stderr, "e2e: no temporal CLI found (set TEMPORAL_CLI or run make temporal)")
			return 1
		}
		fmt.Fprintln(os.Stderr, "e2e: skipped, no temporal CLI (make temporal installs it)")
		return 0
	}
	tmp, err := os.MkdirTemp("", "lethe-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	workerBin = filepath.Join(tmp, "worker")
	build := exec.Command("go", "build", "-o", workerBin, "./worker")
	build.Dir = lethetest.Root()
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: build worker:", err)
		return 1
	}
	ctx := context.Background()
	uiPort, err := freePort()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: UI port:", err)
		return 1
	}
	// The UI listens on loopback only, like the frontend (--ip 127.0.0.1).
	args := []string{"--ui-ip", "127.0.0.1", "--dynamic-config-value", "limit.historyCount.suggestContinueAsNew=2000"}
	for _, a := range workflows.SearchAttributes() {
		args = append(args, "--search-attribute", a)
	}
	// The in-memory SQLite database, not a file: with a file on this disk,
	// under the suite's load, a transaction waited past its deadline
	// ("Failed to start transaction"), the shard was lost for seconds, and a
	// research run fetched a batch twice (fresh-clone run of 2026-12-03).
	srv, err := testsuite.StartDevServer(ctx, testsuite.DevServerOptions{
		ExistingPath: bin,
		EnableUI:     true,
		UIPort:       strconv.Itoa(uiPort),
		LogLevel:     "error",
		ExtraArgs:    args,
		Stderr:       os.Stderr,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: start dev server:", err)
		return 1
	}
	defer srv.Stop()
	hostPort = srv.FrontendHostPort()
	uiURL = fmt.Sprintf("http://127.0.0.1:%d", uiPort)
	return m.Run()
}

// freePort is a loopback port nothing listens on right now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func dial(t *testing.T) client.Client {
	t.Helper()
	c, err := client.Dial(client.Options{HostPort: hostPort})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// workerProc is a worker process under test.
type workerProc struct {
	cmd    *exec.Cmd
	log    *os.File
	params map[string]string
	exited chan struct{} // closed once the process has exited and been reaped
}

func startWorker(t *testing.T, params map[string]string, args ...string) *workerProc {
	t.Helper()
	return startWorkerEnv(t, params, nil, args...)
}

// startWorkerEnv starts a worker with env (NAME=value) added to its
// environment, e.g. a TMPDIR of the test's.
func startWorkerEnv(t *testing.T, params map[string]string, env []string, args ...string) *workerProc {
	t.Helper()
	// No metrics listener unless a test asks for one: the default's fixed
	// port (9464) is taken by any other worker on the machine, and a worker
	// that cannot bind it exits (a CI run beside an evaluation run, stop 50).
	p := map[string]string{"temporal.host_port": hostPort, "telemetry.metrics_addr": ""}
	for k, v := range params {
		p[k] = v
	}
	logf, err := os.CreateTemp(t.TempDir(), "worker-*.log")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(workerBin, append([]string{"-log-level", "warn"}, args...)...)
	cmd.Env = append(lethetest.Env(p), env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w := &workerProc{cmd: cmd, log: logf, params: params, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(w.exited) }()
	t.Cleanup(func() { w.stop(syscall.SIGTERM) })
	return w
}

// stop signals the worker and waits for it to exit.
func (w *workerProc) stop(sig syscall.Signal) {
	select {
	case <-w.exited:
		return
	default:
	}
	_ = w.cmd.Process.Signal(sig)
	select {
	case <-w.exited:
	case <-time.After(20 * time.Second):
		_ = w.cmd.Process.Kill()
		<-w.exited
	}
}

// untilExit is parent, cancelled when the worker exits on its own, with
// the exit as its cause (context.Cause). A test waiting on a workflow whose
// queue has no other poller then fails at once instead of at its bound (a
// worker that could not bind its metrics port, stop 50). unwatch stops the
// watch and runs at the test's end; call it before stopping the worker on
// purpose. ctx is cancelled at the test's end, not by unwatch.
func (w *workerProc) untilExit(t *testing.T, parent context.Context) (ctx context.Context, unwatch func()) {
	t.Helper()
	ctx, cancel := context.WithCancelCause(parent)
	stop := make(chan struct{})
	var watching sync.WaitGroup
	watching.Add(1)
	go func() {
		defer watching.Done()
		select {
		case <-w.exited:
			cancel(fmt.Errorf("worker exited early (%v)", w.cmd.ProcessState))
		case <-stop:
		}
	}()
	// unwatch leaves ctx as it is: the test goes on with it after stopping
	// the worker on purpose (the real-model tests read their sessions).
	unwatch = sync.OnceFunc(func() { close(stop); watching.Wait() })
	t.Cleanup(func() { unwatch(); cancel(nil) }) // before the worker's own cleanup stops it
	return ctx, unwatch
}

func (w *workerProc) dumpLog(t *testing.T) {
	b, _ := os.ReadFile(w.log.Name())
	if len(b) > 8000 {
		b = b[len(b)-8000:]
	}
	t.Logf("worker log tail:\n%s", b)
}

func workflowOpts(name string) workflow.RegisterOptions { return workflow.RegisterOptions{Name: name} }
