package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	failurepb "go.temporal.io/api/failure/v1"
	historypb "go.temporal.io/api/history/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
)

func TestClassify(t *testing.T) {
	failed := &historypb.HistoryEvent{Attributes: &historypb.HistoryEvent_WorkflowExecutionFailedEventAttributes{
		WorkflowExecutionFailedEventAttributes: &historypb.WorkflowExecutionFailedEventAttributes{Failure: &failurepb.Failure{
			Message: "activity error", Cause: &failurepb.Failure{Message: "graph: the file is locked by another process"}}}}}
	timedOut := &historypb.HistoryEvent{Attributes: &historypb.HistoryEvent_WorkflowExecutionTimedOutEventAttributes{
		WorkflowExecutionTimedOutEventAttributes: &historypb.WorkflowExecutionTimedOutEventAttributes{RetryState: enumspb.RETRY_STATE_TIMEOUT}}}
	terminated := &historypb.HistoryEvent{Attributes: &historypb.HistoryEvent_WorkflowExecutionTerminatedEventAttributes{
		WorkflowExecutionTerminatedEventAttributes: &historypb.WorkflowExecutionTerminatedEventAttributes{Reason: "reset", Identity: "ops"}}}
	pending := []*workflowpb.PendingActivityInfo{{ActivityType: &commonpb.ActivityType{Name: "Reason"},
		State: enumspb.PENDING_ACTIVITY_STATE_SCHEDULED, Attempt: 3, LastFailure: &failurepb.Failure{Message: "model: connection refused"}}}
	for _, c := range []struct {
		st       enumspb.WorkflowExecutionStatus
		ev       *historypb.HistoryEvent
		pending  []*workflowpb.PendingActivityInfo
		kind     string
		contains []string
	}{
		{enumspb.WORKFLOW_EXECUTION_STATUS_FAILED, failed, nil, kindFailed, []string{"activity error: graph: the file is locked by another process"}},
		{enumspb.WORKFLOW_EXECUTION_STATUS_FAILED, nil, nil, kindFailed, []string{"no failure message"}},
		{enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT, timedOut, nil, kindTimedOut, []string{"retry state Timeout"}},
		{enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED, terminated, nil, kindTerm, []string{`"reset"`, `"ops"`}},
		{enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED, nil, nil, kindCanceled, nil},
		{enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, nil, pending, kindUnended, []string{"Reason", "attempt 3", "model: connection refused"}},
		{enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, nil, nil, kindUnended, []string{"no activity pending"}},
		{enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, nil, nil, "", nil},
	} {
		kind, msg := classify(c.st, c.ev, c.pending)
		if kind != c.kind {
			t.Errorf("%s: kind %q, want %q", c.st, kind, c.kind)
		}
		for _, w := range c.contains {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: message %q lacks %q", c.st, msg, w)
			}
		}
	}
}

func TestMarkMismatches(t *testing.T) {
	ok := session{stop: "root_done", iterations: 4, reportLen: 900}
	sessions := []session{ok, ok, ok,
		{id: "short", runID: "r1", stop: "budget", iterations: 2, reportLen: 500},
		{id: "empty", stop: "root_done", iterations: 4, resultErr: "compose_failed"},
		{id: "gone", fail: &failure{id: "gone", kind: kindFailed, message: "boom"}, stop: "x"},
	}
	markMismatches(sessions)
	for i := 0; i < 3; i++ {
		if sessions[i].fail != nil {
			t.Errorf("session %d: %+v", i, sessions[i].fail)
		}
	}
	if f := sessions[3].fail; f == nil || f.kind != kindMismatch || f.runID != "r1" || f.status != "Completed" ||
		!strings.Contains(f.message, `"budget" after 2 iterations, the round's others "root_done" after 4`) {
		t.Errorf("short: %+v", f)
	}
	if f := sessions[4].fail; f == nil || !strings.Contains(f.message, "compose_failed") || !strings.Contains(f.message, "empty report") {
		t.Errorf("empty: %+v", f)
	}
	if f := sessions[5].fail; f.kind != kindFailed || f.message != "boom" {
		t.Errorf("an earlier failure changed: %+v", f)
	}
}

// Every failed session is in the report with its ids, kind, status and
// cause, beside the completed count of its target.
func TestFailureReport(t *testing.T) {
	done := session{wall: 50 * time.Second, model: 40 * time.Second, iterations: 4}
	fails := []*failure{
		{id: "load-cluster-1-n3-1", runID: "run-a", kind: kindFailed, status: "Failed", message: "activity error: neo4j: connection reset"},
		{id: "load-cluster-1-n3-2", kind: kindStart, status: "Running", message: "5 attempts: context deadline exceeded"},
	}
	use := []usage{{}, {}}
	dev := summarize(3, 10*time.Second, time.Minute, []session{done, done, done}, use, use)
	dev.target, dev.setup = targetDevServer, "default"
	cl := summarize(3, 10*time.Second, time.Minute, []session{done, {fail: fails[0]}, {fail: fails[1]}}, use, use)
	cl.target, cl.setup = targetCluster, "default"
	dev.serverSeen, dev.countersSeen = true, true
	table := renderTable(options{latency: 10 * time.Second, workers: 1}, []row{dev, cl})
	for _, want := range []string{
		"| devserver | default | 3 | 3 | 0 | 50s | 50s |",
		"| cluster | default | 3 | 1 | 2 (failed 1, start error 1) | 50s | 50s |",
		"| cluster | default | 3 | load-cluster-1-n3-1 | run-a | failed | Failed | activity error: neo4j: connection reset |",
		"| cluster | default | 3 | load-cluster-1-n3-2 |  | start error | Running | 5 attempts: context deadline exceeded |",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	// The cluster's server CPU and counters were not read: its row of the
	// cost table marks them unknown, the dev server's not.
	for _, l := range strings.Split(table, "\n") {
		if strings.Contains(l, "1m0s") && strings.HasPrefix(l, "| cluster ") != strings.Contains(l, "| – |") {
			t.Errorf("server columns: %s", l)
		}
	}
	if line := cl.line(); !strings.Contains(line, "failed: load-cluster-1-n3-1 (run run-a): failed, status Failed: activity error") ||
		!strings.Contains(line, "failed: load-cluster-1-n3-2") {
		t.Errorf("line:\n%s", line)
	}
	if got := cell("a | b\nc"); got != `a \| b c` {
		t.Errorf("cell = %q", got)
	}
}

func TestClusterParams(t *testing.T) {
	env := `# written by scripts/cluster.sh
export LETHE_TEMPORAL_HOST_PORT=127.0.0.1:40123
export LETHE_TEMPORAL_NAMESPACE='default'
export LETHE_GRAPH_BACKEND="neo4j"
export LETHE_GRAPH_NEO4J_PASSWORD='p@ss w0rd'
export CLUSTER_PG_PORT=40001
export CLUSTER_DIR=/tmp/c
export CLUSTER_TEMPORAL_METRICS=127.0.0.1:40002
`
	c, err := clusterTarget(env)
	if err != nil {
		t.Fatal(err)
	}
	p := c.params
	if c.dir != "/tmp/c" || c.metricsURL() != "http://127.0.0.1:40002/metrics" || (target{}).metricsURL() != "" {
		t.Errorf("dir %q, metrics %q", c.dir, c.metricsURL())
	}
	want := map[string]string{"temporal.host_port": "127.0.0.1:40123", "temporal.namespace": "default",
		"graph.backend": "neo4j", "graph.neo4j_password": "p@ss w0rd"}
	if len(p) != len(want) {
		t.Errorf("params %v, want %v", p, want)
	}
	for k, v := range want {
		if p[k] != v {
			t.Errorf("%s = %q, want %q", k, p[k], v)
		}
	}
	for _, bad := range []string{
		"export LETHE_TEMPORAL_NAMESPACE=x\n",                           // no frontend
		"export LETHE_TEMPORAL_HOST_PORT=a\nexport LETHE_NO_SUCH_KEY=1", // a typo
		"export LETHE_TEMPORAL_HOST_PORT=$HOST\n",                       // not a plain word
		"LETHE_TEMPORAL_HOST_PORT\n",
	} {
		if _, err := clusterTarget(bad); err == nil {
			t.Errorf("clusterTarget(%q) accepted", bad)
		}
	}
}

func TestParseTargets(t *testing.T) {
	file := filepath.Join(t.TempDir(), "env")
	if err := os.WriteFile(file, []byte("export LETHE_TEMPORAL_HOST_PORT=127.0.0.1:40123\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o, err := parseFlags([]string{"-targets", "devserver, cluster", "-cluster-env", file})
	if err != nil {
		t.Fatal(err)
	}
	if len(o.targets) != 2 || o.targets[0].external() || !o.targets[1].external() ||
		o.targets[1].hostPort() != "127.0.0.1:40123" || o.targets[1].namespace() != "default" {
		t.Errorf("targets %+v", o.targets)
	}
	if o, _ := parseFlags(nil); len(o.targets) != 1 || o.targets[0].name != targetDevServer {
		t.Errorf("default targets %+v", o.targets)
	}
	for _, bad := range [][]string{{"-targets", "cluster"}, {"-targets", "prod"}, {"-targets", "devserver,devserver"},
		{"-targets", "cluster", "-cluster-env", filepath.Join(t.TempDir(), "none")}} {
		if _, err := parseFlags(bad); err == nil {
			t.Errorf("parseFlags(%q) accepted", bad)
		}
	}
	// The cluster's settings reach the worker, and the setup's still win.
	st := setup{params: map[string]string{"graph.backend": "embedded"}}
	p := workerParams(options{}, o.targets[1], st, t.TempDir(), "127.0.0.1:40123", "http://127.0.0.1:1")
	if p["temporal.host_port"] != "127.0.0.1:40123" || p["temporal.namespace"] != "default" || p["graph.backend"] != "embedded" {
		t.Errorf("worker params %v", p)
	}
}

// The cluster's pid files, as scripts/cluster.sh lays them out, name the
// processes the bench samples; a missing one is left out.
func TestClusterPids(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{serverPidFile: "41\n", postgresPidFile: "42\n/var/pg\n1700000000\n"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	c := target{name: targetCluster, params: map[string]string{}, dir: dir}
	if c.serverPid() != 41 {
		t.Errorf("server pid %d", c.serverPid())
	}
	if st := c.stores(); len(st) != 1 || st[0] != (proc{"postgres", 42}) {
		t.Errorf("stores %+v", st)
	}
	if (target{}).serverPid() != 0 {
		t.Error("a target without a directory has a server pid")
	}
	m := newMeter(c, nil, nil, "")
	r := row{n: 10}
	m.fill(&r, reading{procs: []usage{{ticks: 100}}, stores: []int64{500}}, reading{procs: []usage{{ticks: 400}}, stores: []int64{2500}}, 100*time.Second)
	// 20 s of postgres over 100 s is 20% of a core, 2,000 ms per session.
	if !r.serverSeen || r.countersSeen || r.serverMS != 300 || r.storesCPU() != "postgres 20% (2000 ms/session)" {
		t.Errorf("row %+v, stores %q", r, r.storesCPU())
	}
}
