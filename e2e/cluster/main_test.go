// Package cluster runs the fault and upgrade tests on the production-shaped
// cluster of scripts/cluster.sh: a Temporal server on PostgreSQL (history
// and visibility), Neo4j, and two worker processes on split queues. The
// scripted model server stands in for the LLM, in this process; everything
// else is the real thing, driven only through the script's commands. One
// cluster serves every test; the faults run one after another, each on ten
// concurrent sessions compared with one undisturbed run.
package cluster

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/config/load"
	"github.com/lethe-research/lethe/internal/lethetest"
	"github.com/lethe-research/lethe/internal/lethetest/sessiontest"
	"github.com/lethe-research/lethe/llm/llmtest"
)

// rig is the cluster the tests share, set up once by TestMain.
type rig struct {
	dir    string            // scripts/cluster.sh's DIR
	upRan  bool              // cluster.sh up ran: stop at the end
	env    []string          // DIR/env as KEY=value (LETHE_* and CLUSTER_*)
	model  *llmtest.Server   // the scripted chat and embedding server
	params map[string]string // the workers' and sessions' parameters
	cfg    config.Config     // a session's configuration: params over DIR/env
	c      client.Client
	// down says why there is no cluster; every test then ends through
	// lethetest.Missing (a skip, or a failure under LETHE_TEST_STRICT).
	down string

	refOnce sync.Once
	ref     sessiontest.Outcome
	refErr  string

	table *table
}

// theRig is TestMain's cluster: tests reach it through need.
var theRig *rig

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	flag.Parse()
	root, err := os.MkdirTemp("", "lethe-cluster-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "cluster:", err)
		return 1
	}
	// PostgreSQL runs as its own user, which must traverse to its data
	// directory under root; listing root stays private.
	if err := os.Chmod(root, 0o711); err != nil {
		fmt.Fprintln(os.Stderr, "cluster:", err)
		return 1
	}
	r := &rig{dir: filepath.Join(root, "cluster"), table: &table{path: filepath.Join(root, "recovery.md")}}
	theRig = r
	start := time.Now()
	if err := r.bringUp(); err != nil {
		r.down = err.Error()
		fmt.Fprintln(os.Stderr, "cluster: not up:", r.down)
	} else {
		fmt.Fprintf(os.Stderr, "cluster: up with workers in %.0f s (DIR %s)\n", time.Since(start).Seconds(), r.dir)
	}
	code := m.Run()
	r.table.print(os.Stderr)
	if r.model != nil {
		r.model.Close()
	}
	if r.c != nil {
		r.c.Close()
	}
	if r.upRan {
		if err := r.script(context.Background(), nil, "stop", r.dir); err != nil {
			fmt.Fprintln(os.Stderr, "cluster: stop:", err)
			code = max(code, 1)
		}
	}
	switch {
	case code != 0 && r.upRan:
		fmt.Fprintf(os.Stderr, "cluster: kept %s (logs of the server, the workers, PostgreSQL and Neo4j)\n", r.dir)
	case len(r.table.rows) == 0:
		_ = os.RemoveAll(root)
	default:
		_ = os.RemoveAll(r.dir) // the table stays beside it
	}
	return code
}

// need ends t unless the cluster is up: opted out (LETHE_TEST_SKIP=cluster)
// or -short skip; a cluster that could not come up fails under
// LETHE_TEST_STRICT (make test, CI) and skips otherwise.
func need(t *testing.T) *rig {
	t.Helper()
	lethetest.Need(t, lethetest.Cluster)
	if theRig.down != "" {
		lethetest.Missing(t, lethetest.Cluster, theRig.down)
	}
	return theRig
}

// bringUp starts the cluster, the scripted model and the two workers.
func (r *rig) bringUp() error {
	switch {
	case lethetest.OptedOut(lethetest.Cluster):
		return errors.New("opted out (LETHE_TEST_SKIP)")
	case testing.Short():
		return errors.New("-short: no cluster")
	}
	// A cold machine installs PostgreSQL and builds the Temporal server.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	r.upRan = true // a half-started cluster is stopped too
	if err := r.script(ctx, nil, "up", r.dir); err != nil {
		return err
	}
	if err := r.readEnv(); err != nil {
		return err
	}
	script, err := sessionScript()
	if err != nil {
		return err
	}
	model, err := llmtest.New(script)
	if err != nil {
		return fmt.Errorf("scripted model: %w", err)
	}
	model.Start()
	r.model = model
	r.params = lethetest.Params(model.URL(), r.dir)
	for _, k := range []string{"llm.timeout", "temporal.heartbeat_timeout", "temporal.activity_timeout"} {
		// The defaults, as a deployment runs: the short ones of the dev
		// server tests cut a store call that a cold Neo4j (just restarted,
		// its queries not yet planned) answers in more than 15 s, and the
		// retry meets the same cold server.
		delete(r.params, k)
	}
	// Every session's model call at once: the scripted server answers any
	// number, and the default (3, for a local model's batch) would queue
	// ten sessions' calls behind each other.
	r.params["temporal.max_concurrent_llm"] = strconv.Itoa(sessions)
	if r.cfg, err = load.Load(load.Sources{Env: r.env, Overrides: r.params}); err != nil {
		return fmt.Errorf("session config over %s/env: %w", r.dir, err)
	}
	if r.c, err = client.Dial(client.Options{HostPort: r.cfg.Temporal.HostPort, Namespace: r.cfg.Temporal.Namespace}); err != nil {
		return fmt.Errorf("dial %s: %w", r.cfg.Temporal.HostPort, err)
	}
	return r.startWorkers(ctx, "")
}

// script runs `bash scripts/cluster.sh args...` with env (nil = this
// process's) and returns its output's tail in the error when it fails.
func (r *rig) script(ctx context.Context, env []string, args ...string) error {
	cmd := exec.CommandContext(ctx, "bash", append([]string{filepath.Join(lethetest.Root(), "scripts", "cluster.sh")}, args...)...)
	cmd.Dir = lethetest.Root()
	cmd.Env = env
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		tail := string(out)
		if len(tail) > 4000 {
			tail = tail[len(tail)-4000:]
		}
		return fmt.Errorf("scripts/cluster.sh %s: %w after %.0f s\n%s", strings.Join(args, " "), err, time.Since(start).Seconds(), tail)
	}
	return nil
}

// startWorkers runs `cluster.sh workers DIR [BIN]` with the test's
// parameters (the model at the scripted server) as LETHE_* variables; the
// script adds DIR/env.
func (r *rig) startWorkers(ctx context.Context, bin string) error {
	args := []string{"workers", r.dir}
	if bin != "" {
		args = append(args, bin)
	}
	return r.script(ctx, lethetest.Env(r.params), args...)
}

// readEnv reads the LETHE_* and CLUSTER_* variables DIR/env exports, by
// letting bash source it.
func (r *rig) readEnv() error {
	path := filepath.Join(r.dir, "env")
	out, err := exec.Command("bash", "-c", `set -a; . "$1" >/dev/null; env -0`, "bash", path).Output()
	if err != nil {
		return fmt.Errorf("source %s: %w", path, err)
	}
	r.env = []string{}
	for _, kv := range strings.Split(string(out), "\x00") {
		if strings.HasPrefix(kv, load.EnvPrefix) || strings.HasPrefix(kv, "CLUSTER_") {
			r.env = append(r.env, kv)
		}
	}
	if len(r.env) == 0 {
		return fmt.Errorf("%s exports no LETHE_* variable", path)
	}
	return nil
}

// sessionScript is the scripted conversation every session of the package
// runs, each answer held for a moment so that a session lasts long enough
// for a fault to land in its middle.
func sessionScript() (llmtest.Script, error) {
	s, err := llmtest.LoadScript(filepath.Join(lethetest.Root(), "testdata", "scripts", "battery_root_done.json"))
	if err != nil {
		return s, fmt.Errorf("session script: %w", err)
	}
	for i := range s.Rules {
		s.Rules[i].DelayMS = answerDelay
	}
	return s, nil
}

// answerDelay is how long the scripted model holds each answer.
const answerDelay = 1500
