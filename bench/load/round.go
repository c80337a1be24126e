package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/internal/lethetest"
	"github.com/lethe-research/lethe/llm/llmtest"
	"github.com/lethe-research/lethe/workflows"
)

// session is what one session of a round cost; fail says why it did not
// complete (nil when it did).
type session struct {
	fail       *failure
	id, runID  string
	wall       time.Duration // history: started to closed, server clock
	model      time.Duration // the session's own sum of chat latencies
	iterations int
	stop       string // the result's stop reason
	resultErr  string // the result's error
	reportLen  int
	events     int
	bytes      int
	parts      parts
}

// overhead is the time per iteration outside model calls.
func (s session) overhead() time.Duration {
	if s.iterations == 0 {
		return 0
	}
	return (s.wall - s.model) / time.Duration(s.iterations)
}

// round runs n concurrent sessions on the target with fresh workers: on a
// fresh dev server of its own, or on the cluster's frontend.
func round(ctx context.Context, o options, t target, st setup, n int) (row, error) {
	dir, err := os.MkdirTemp("", "lethe-load-")
	if err != nil {
		return row{}, err
	}
	defer os.RemoveAll(dir)
	model, err := scriptedModel(o)
	if err != nil {
		return row{}, err
	}
	defer model.Close()
	srv, hostPort, metricsURL, err := startTarget(ctx, o, t, dir, st)
	if err != nil {
		return row{}, err
	}
	defer stop(srv)
	p := workerParams(o, t, st, dir, hostPort, model.URL())
	workers, pprofs, err := startWorkers(o, p, dir)
	defer func() {
		for _, w := range workers {
			stop(w)
		}
	}()
	if err != nil {
		return row{}, err
	}
	c, err := dialRetry(ctx, hostPort, t.namespace())
	if err != nil {
		return row{}, err
	}
	defer c.Close()
	m := newMeter(t, srv, workers, metricsURL)
	before, err := m.read(ctx)
	if err != nil {
		return row{}, err
	}
	base := roundBase(o, t, st, n)
	prof := startProfiles(ctx, o, base, srv, pprofs)
	t0 := time.Now()
	queue := cmp.Or(p["temporal.task_queue"], config.Defaults().Temporal.TaskQueue)
	sessions := runSessions(ctx, c, o, queue, sessionPrefix(t, n, t0), n)
	makespan := time.Since(t0)
	after, err := m.read(ctx)
	if err == nil {
		err = m.save(base, n, before, after)
	}
	if err != nil {
		return row{}, err
	}
	prof.wait()
	// Histories and failures are read after the round, so that reading
	// them does not load the server while sessions run.
	readHistories(ctx, c, sessions)
	markMismatches(sessions)
	explainFailures(ctx, c, sessions)
	keepWorkerLogs(dir, base, o.workers, sessions)
	r := summarize(n, o.latency, makespan, sessions, before.procs, after.procs)
	r.setup, r.target = st.name, t.name
	m.fill(&r, before, after, makespan)
	return r, nil
}

// newMeter meters the round's processes: the dev server the bench
// started, or the cluster's server and database processes from its pid
// files.
func newMeter(t target, srv *exec.Cmd, workers []*exec.Cmd, metricsURL string) meter {
	m := meter{pids: []int{pidOf(srv)}, metricsURL: metricsURL}
	if t.external() {
		m.pids[0], m.stores = t.serverPid(), t.stores()
	}
	for _, w := range workers {
		m.pids = append(m.pids, pidOf(w))
	}
	return m
}

// keepWorkerLogs copies the workers' logs next to the table when a
// session failed: the round's directory goes, and a failure's cause on
// the worker's side (an activity's error, a panic) is only there.
func keepWorkerLogs(dir, base string, workers int, sessions []session) {
	if !slices.ContainsFunc(sessions, func(s session) bool { return s.fail != nil }) {
		return
	}
	for i := 0; i < workers; i++ {
		name := fmt.Sprintf("worker-%d.log", i)
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err == nil {
			err = os.WriteFile(base+"-"+name, b, 0o644)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "load: keep worker log:", err)
		}
	}
}

// scriptedModel serves the script with every call's latency set to
// -latency (± -jitter).
func scriptedModel(o options) (*llmtest.Server, error) {
	script, err := llmtest.LoadScript(filepath.Join(lethetest.Root(), o.script))
	if err != nil {
		return nil, fmt.Errorf("script: %w", err)
	}
	for i := range script.Rules {
		script.Rules[i].DelayMS = int(o.latency.Milliseconds())
		script.Rules[i].JitterMS = int(float64(o.latency.Milliseconds()) * o.jitter)
	}
	return llmtest.NewServer(script), nil
}

// startTarget starts the round's dev server, or for an external target
// returns its frontend: no process and no metrics of the bench's own.
func startTarget(ctx context.Context, o options, t target, dir string, st setup) (*exec.Cmd, string, string, error) {
	if t.external() {
		if len(st.dc) > 0 || st.dbFile {
			fmt.Fprintf(os.Stderr, "load: setup %s: dynamic config and db=file apply to the dev server only, not to %s\n", st.name, t.name)
		}
		return nil, t.hostPort(), t.metricsURL(), nil
	}
	return startServer(ctx, o.temporal, dir, st)
}

// sessionPrefix names a round's sessions: a cluster keeps the sessions of
// earlier rounds and runs, and a start attaches to a running session of
// the same id (USE_EXISTING), so the id carries the target and the
// round's start time.
func sessionPrefix(t target, n int, at time.Time) string {
	return fmt.Sprintf("load-%s-%d-n%d", t.name, at.Unix(), n)
}

// runSessions starts n sessions, at once or spread evenly over o.ramp, and
// waits for all of them.
func runSessions(ctx context.Context, c client.Client, o options, queue, prefix string, n int) []session {
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	out := make([]session, n)
	var wg sync.WaitGroup
	for i := range out {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case <-time.After(o.ramp * time.Duration(i) / time.Duration(n)):
			case <-ctx.Done():
			}
			out[i] = oneSession(ctx, c, queue, fmt.Sprintf("%s-%d", prefix, i))
		}()
	}
	wg.Wait()
	return out
}

func oneSession(ctx context.Context, c client.Client, queue, id string) session {
	run, err := start(ctx, c, queue, id)
	if err != nil {
		return session{id: id, fail: &failure{id: id, kind: kindStart, message: err.Error()}}
	}
	s := session{id: id, runID: run.GetRunID()}
	var res workflows.SessionResult
	if err := run.Get(ctx, &res); err != nil {
		s.fail = &failure{id: id, runID: s.runID, kind: kindWait, message: err.Error()}
		return s
	}
	s.model = time.Duration(res.Stats.LLMLatencyMS) * time.Millisecond
	s.iterations, s.stop, s.resultErr, s.reportLen = res.Iterations, res.StopReason, res.Error, len(res.Report)
	return s
}

// startAttempts bounds the tries of one session's start.
const startAttempts = 5

// start starts a session, trying again when the start call times out: a
// burst of hundreds of starts queues on the dev server's one database
// connection past the client's RPC deadline, and a timed-out start may
// have created the session after all, so a retry attaches to it
// (USE_EXISTING) instead of failing or starting a second one.
func start(ctx context.Context, c client.Client, queue, id string) (client.WorkflowRun, error) {
	opts := client.StartWorkflowOptions{ID: id, TaskQueue: queue, WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING}
	var err error
	for i := 0; i < startAttempts && ctx.Err() == nil; i++ {
		var run client.WorkflowRun
		run, err = c.ExecuteWorkflow(ctx, opts, workflows.SessionWorkflow, workflows.SessionInput{Goal: "How do solid-state batteries fail?"})
		if err == nil {
			return run, nil
		}
		if !errors.Is(err, context.DeadlineExceeded) && status.Code(err) != codes.DeadlineExceeded && status.Code(err) != codes.Unavailable {
			return nil, err
		}
	}
	if err == nil { // the round's -timeout ended before the first try
		err = ctx.Err()
	}
	return nil, fmt.Errorf("%d attempts: %w", startAttempts, err)
}

// readHistories fills wall time, events and bytes of every completed
// session from its history, a few at a time.
func readHistories(ctx context.Context, c client.Client, sessions []session) {
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for i := range sessions {
		if sessions[i].fail != nil {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			readHistory(ctx, c, &sessions[i])
		}()
	}
	wg.Wait()
}

func readHistory(ctx context.Context, c client.Client, s *session) {
	it := c.GetWorkflowHistory(ctx, s.id, s.runID, false, 0)
	var evs []*historypb.HistoryEvent
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			s.fail = &failure{id: s.id, runID: s.runID, kind: kindHistory, message: err.Error()}
			return
		}
		evs = append(evs, e)
		s.bytes += proto.Size(e)
	}
	s.events = len(evs)
	if len(evs) > 0 {
		s.wall = evs[len(evs)-1].GetEventTime().AsTime().Sub(evs[0].GetEventTime().AsTime())
	}
	s.parts = breakdown(evs)
}

// devServerTuning is the dynamic config every round's dev server starts
// with (a setup's -dc values come after, and the last value of a key wins):
//   - the CLI forces a search-attribute cache refresh on every read, so
//     that attributes created at run time show at once; the bench
//     registers its attributes at start, and the refresh was 74 of 257
//     database reads per session (docs/scaling.md);
//   - eager activity dispatch, which the SDK asks for and the server
//     leaves off by default: an activity on the workflow's own queue comes
//     back in the workflow task's reply instead of through matching.
var devServerTuning = []string{
	"system.forceSearchAttributesCacheRefreshOnRead=false",
	"system.enableActivityEagerExecution=true",
}

// startServer starts a dev server with the session search attributes on a
// free loopback port, its database in memory (as make test runs it) unless
// the setup asks for a file, with the setup's dynamic config values.
func startServer(ctx context.Context, bin, dir string, st setup) (cmd *exec.Cmd, hostPort, metrics string, err error) {
	port, err := freePort()
	if err != nil {
		return nil, "", "", err
	}
	mport, err := freePort()
	if err != nil {
		return nil, "", "", err
	}
	args := []string{"server", "start-dev", "--ip", "127.0.0.1", "--port", strconv.Itoa(port), "--headless",
		"--log-level", "error", "--metrics-port", strconv.Itoa(mport)}
	if st.dbFile {
		args = append(args, "--db-filename", filepath.Join(dir, "temporal.db"))
	}
	for _, a := range workflows.SearchAttributes() {
		args = append(args, "--search-attribute", a)
	}
	for _, kv := range append(append([]string{}, devServerTuning...), st.dc...) {
		args = append(args, "--dynamic-config-value", kv)
	}
	cmd = exec.CommandContext(ctx, bin, args...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, "", "", fmt.Errorf("start dev server: %w", err)
	}
	return cmd, fmt.Sprintf("127.0.0.1:%d", port), fmt.Sprintf("http://127.0.0.1:%d/metrics", mport), nil
}

// workerParams are the round's worker parameters: the scripted tests'
// shared ones, the cluster's environment (its frontend, namespace and
// graph store), the bench's own, then the setup's, which win.
func workerParams(o options, t target, st setup, dir, hostPort, modelURL string) map[string]string {
	p := lethetest.Params(modelURL, dir)
	for k, v := range t.params {
		p[k] = v
	}
	p["temporal.host_port"] = hostPort
	// Timeouts that a slow model under load does not trip: the bench
	// measures orchestration, not retries.
	p["llm.timeout"] = (3*o.latency + time.Minute).String()
	p["temporal.activity_timeout"] = (3*o.latency + time.Minute).String()
	p["temporal.heartbeat_timeout"] = "30s"
	// One report call at a time: a session's model time is the sum of its
	// call latencies (Stats.LLMLatencyMS), which is its model wall time
	// only when calls do not overlap. The synthesis composes its sections
	// in parallel (for a root_done session too, since root-sections), so
	// with it the sum would count L for each section and overhead would
	// come out too low. Without it the sessions keep the shape of every
	// load number in docs/scaling.md.
	p["assembly.synthesis"] = "false"
	for k, v := range st.params {
		p[k] = v
	}
	return p
}

// startWorkers builds the worker once per round and starts o.workers of
// them, each with a loopback pprof endpoint (returned) when profiling. The
// embedded graph store is one file per process, so several workers would
// each see part of a session: more than one needs Neo4j.
func startWorkers(o options, p map[string]string, dir string) ([]*exec.Cmd, []string, error) {
	if o.workers > 1 && p["graph.backend"] != "neo4j" && os.Getenv("LETHE_GRAPH_BACKEND") != "neo4j" {
		return nil, nil, errors.New("-workers > 1 needs a shared graph store: -set graph.backend=neo4j and its graph.neo4j_* settings, or the cluster's")
	}
	bin := filepath.Join(dir, "worker")
	build := exec.Command("go", "build", "-o", bin, "./worker")
	build.Dir, build.Stdout, build.Stderr = lethetest.Root(), os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return nil, nil, fmt.Errorf("build worker: %w", err)
	}
	var out []*exec.Cmd
	var pprofs []string
	for i := 0; i < o.workers; i++ {
		logf, err := os.Create(filepath.Join(dir, fmt.Sprintf("worker-%d.log", i)))
		if err != nil {
			return out, nil, err
		}
		args := []string{"-log-level", "warn"}
		if o.profile > 0 {
			port, err := freePort()
			if err != nil {
				return out, nil, err
			}
			addr := fmt.Sprintf("127.0.0.1:%d", port)
			args = append(args, "-pprof", addr)
			pprofs = append(pprofs, addr)
		}
		cmd := exec.Command(bin, args...)
		// The setup's parameters come last and win over the caller's
		// LETHE_* environment (os/exec keeps the last of duplicate keys).
		cmd.Env = append(os.Environ(), lethetest.Env(p)...)
		cmd.Stdout, cmd.Stderr = logf, logf
		if err := cmd.Start(); err != nil {
			return out, nil, fmt.Errorf("start worker: %w", err)
		}
		out = append(out, cmd)
	}
	return out, pprofs, nil
}

func dialRetry(ctx context.Context, hostPort, namespace string) (client.Client, error) {
	deadline := time.Now().Add(time.Minute)
	for {
		c, err := client.Dial(client.Options{HostPort: hostPort, Namespace: namespace})
		if err == nil {
			if _, err = c.CheckHealth(ctx, &client.CheckHealthRequest{}); err == nil {
				return c, nil
			}
			c.Close()
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("Temporal server at %s: %w", hostPort, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func stop(cmd *exec.Cmd) {
	if cmd == nil || cmd.Process == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

// percentile is the p-th percentile (0-100) of ds by nearest rank.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	k := int(p/100*float64(len(s))+0.5) - 1
	return s[min(max(k, 0), len(s)-1)]
}
