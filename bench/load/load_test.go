package main

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		var out []time.Duration
		for _, x := range v {
			out = append(out, time.Duration(x)*time.Millisecond)
		}
		return out
	}
	for _, c := range []struct {
		in   []time.Duration
		p    float64
		want time.Duration
	}{
		{nil, 50, 0},
		{ms(7), 99, 7 * time.Millisecond},
		{ms(5, 1, 3), 50, 3 * time.Millisecond},
		{ms(1, 2, 3, 4), 50, 2 * time.Millisecond},
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 100), 99, 100 * time.Millisecond},
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 100), 90, 9 * time.Millisecond},
	} {
		if got := percentile(c.in, c.p); got != c.want {
			t.Errorf("percentile(%v, %v) = %v, want %v", c.in, c.p, got, c.want)
		}
	}
}

func TestStatTicks(t *testing.T) {
	for _, c := range []struct {
		stat string
		want int64
	}{
		{"1234 (temporal) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 12 0", 300},
		{"99 (a (b) c) R 1 99 99 0 -1 0 0 0 0 0 7 3 0 0", 10}, // a name with spaces and parentheses
		{"garbage", 0},
		{"1 (x) S 1", 0},
	} {
		if got := statTicks(c.stat); got != c.want {
			t.Errorf("statTicks(%q) = %d, want %d", c.stat, got, c.want)
		}
	}
}

func TestStatTree(t *testing.T) {
	ppid, ticks := statTree("1234 (post gres) S 77 1234 1234 0 -1 4194560 100 0 0 0 250 50 30 20 20 0 12 0")
	if ppid != 77 || ticks != 350 {
		t.Errorf("statTree = %d, %d; want 77, 350", ppid, ticks)
	}
	if ppid, ticks := statTree("garbage"); ppid != 0 || ticks != 0 {
		t.Errorf("statTree(garbage) = %d, %d", ppid, ticks)
	}
	// This process has no children that the bench started here: its tree
	// is at least its own time.
	if self := readUsage(os.Getpid()).ticks; treeTicks(os.Getpid()) < self {
		t.Errorf("treeTicks below the process's own %d", self)
	}
}

func TestParseFlags(t *testing.T) {
	o, err := parseFlags([]string{"-n", "1, 20,200", "-latency", "10s"})
	if err != nil || len(o.ns) != 3 || o.ns[2] != 200 || o.latency != 10*time.Second {
		t.Fatalf("parseFlags = %+v, %v", o, err)
	}
	for _, bad := range [][]string{{"-n", "0"}, {"-n", "x"}, {"-workers", "0"}, {"-latency", "-1s"}} {
		if _, err := parseFlags(bad); err == nil {
			t.Errorf("parseFlags(%q) accepted", bad)
		}
	}
}

func TestSummarize(t *testing.T) {
	ok := session{wall: 10 * time.Second, model: 6 * time.Second, iterations: 4, events: 100, bytes: 2048}
	slow := session{wall: 14 * time.Second, model: 6 * time.Second, iterations: 4, events: 120, bytes: 4096}
	r := summarize(3, time.Second, 30*time.Minute, []session{ok, slow, {fail: &failure{id: "x", kind: kindFailed, message: "boom"}}},
		[]usage{{ticks: 100}, {ticks: 50}}, []usage{{ticks: 100 + 180*100}, {ticks: 50 + 90*100, hwmKiB: 2048}})
	if r.failed != 1 || len(r.failures) != 1 || r.failures[0].message != "boom" {
		t.Errorf("failures %d %+v", r.failed, r.failures)
	}
	if r.session50 != 10*time.Second || r.session95 != 14*time.Second {
		t.Errorf("session time p50 %v p95 %v", r.session50, r.session95)
	}
	if r.p50 != time.Second || r.p99 != 2*time.Second || r.ratio() != 1 {
		t.Errorf("overhead p50 %v p99 %v ratio %v", r.p50, r.p99, r.ratio())
	}
	if r.perHour != 4 || r.events != 110 || r.kib != 3 {
		t.Errorf("per hour %v, events %v, KiB %v", r.perHour, r.events, r.kib)
	}
	if r.iterations != 4 || r.perIter(r.events) != 27.5 || r.perIter(r.kib) != 0.75 || (row{}).perIter(5) != 0 {
		t.Errorf("iterations %v, events per iteration %v, KiB per iteration %v", r.iterations, r.perIter(r.events), r.perIter(r.kib))
	}
	// 180 s of server CPU and 90 s of worker CPU over 30 min: 10% and 5% of a core.
	if r.serverCPU != 10 || r.workerCPU != 5 || r.workerRSSMiB != 2 {
		t.Errorf("server CPU %v%%, worker CPU %v%%, RSS %v MiB", r.serverCPU, r.workerCPU, r.workerRSSMiB)
	}
	if svg := renderChart(options{latency: time.Second}, []row{r}); !strings.HasPrefix(svg, "<svg") || !strings.Contains(svg, "polyline") {
		t.Errorf("chart:\n%s", svg)
	}
}

func TestSetups(t *testing.T) {
	o, err := parseFlags([]string{"-set", "temporal.activity_task_pollers=4", "-dc", "limit.x=1",
		"-setup", "a:", "-setup", "b:temporal.max_concurrent_llm=3,dc.matching.numTaskqueueReadPartitions=1,db=file"})
	if err != nil {
		t.Fatal(err)
	}
	if len(o.setups) != 2 || o.setups[0].name != "a" || o.setups[1].name != "b" {
		t.Fatalf("setups %+v", o.setups)
	}
	a, b := o.setups[0].merged(o.base), o.setups[1].merged(o.base)
	if a.params["temporal.llm_queue"] != "lethe-llm" || a.params["temporal.max_concurrent_llm"] != "1000" {
		t.Errorf("a lacks the hosted-model wiring: %v", a.params)
	}
	if a.params["temporal.activity_task_pollers"] != "4" || a.dbFile || !slices.Equal(a.dc, []string{"limit.x=1"}) {
		t.Errorf("a = %+v", a)
	}
	if b.params["temporal.max_concurrent_llm"] != "3" || !b.dbFile ||
		!slices.Equal(b.dc, []string{"limit.x=1", "matching.numTaskqueueReadPartitions=1"}) {
		t.Errorf("b = %+v", b)
	}
	// A setup with an empty value clears a hosted-model key (the repo default).
	o, _ = parseFlags([]string{"-setup", "local:temporal.llm_queue=,temporal.max_concurrent_llm=1"})
	if l := o.setups[0].merged(o.base); l.params["temporal.llm_queue"] != "" {
		t.Errorf("local = %+v", l)
	}
	if o, _ := parseFlags(nil); len(o.setups) != 1 || o.setups[0].name != "default" {
		t.Errorf("no -setup: %+v", o.setups)
	}
	for _, bad := range [][]string{{"-setup", ":a=b"}, {"-setup", "x:novalue"}, {"-set", "=1"}, {"-setup", "x:db=disk"}} {
		if _, err := parseFlags(bad); err == nil {
			t.Errorf("parseFlags(%q) accepted", bad)
		}
	}
}

func TestPerfTop(t *testing.T) {
	report := `# To display the perf.data header info, please use --header/--header-only options.
#
# Children      Self  Symbol
# ........  ........  ......
#
    89.95%     0.00%  [.] runtime.goexit.abi0                       -      -
    56.43%     0.05%  [.] google.golang.org/grpc.(*Server).handleStream
     8.87%     0.00%  [.] modernc.org/sqlite/lib._sqlite3LockAndPrepare

`
	got := perfTop(report, 2)
	want := "  89.95%    0.00%  runtime.goexit.abi0\n  56.43%    0.05%  google.golang.org/grpc.(*Server).handleStream\n"
	if got != want {
		t.Errorf("perfTop =\n%q\nwant\n%q", got, want)
	}
}

func TestSumCounter(t *testing.T) {
	text := `# TYPE persistence_requests counter
persistence_requests{namespace="default",operation="CreateTaskQueue",service_name="matching"} 3
persistence_requests{namespace="default",operation="UpdateWorkflowExecution",service_name="history"} 1.5e+03
persistence_requests_other{a="b"} 100
persistence_latency_count{operation="x"} 7
persistence_requests 2
`
	got := sumCounter(text, "persistence_requests")
	if tr := transitions(got); tr != 1500 {
		t.Errorf("transitions = %v, want 1500", tr)
	}
	if got[""] != 1505 || got["UpdateWorkflowExecution"] != 1500 || got["(none)"] != 2 || len(got) != 4 {
		t.Errorf("sumCounter = %v", got)
	}
	if tab := opsTable(map[string]float64{"": 5, "CreateTaskQueue": 3}, got, 10); !strings.HasPrefix(tab,
		"persistence operations per session (10 sessions)\n   150.0  UpdateWorkflowExecution\n     0.2  (none)\n") || strings.Contains(tab, "CreateTaskQueue") {
		t.Errorf("opsTable:\n%s", tab)
	}
}
