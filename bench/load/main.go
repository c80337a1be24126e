// Command load runs N concurrent research sessions against a real Temporal
// dev server and one or more worker processes, with the scripted model
// answering every call after a fixed latency, and prints what orchestration
// costs: sessions per hour, the time per iteration spent outside model
// calls (p50, p99), worker and server CPU and RSS, history events and bytes
// per session, and failures. It writes the table (load.md) and a chart of
// overhead against N (load.svg) to -out.
//
//	go run ./bench/load -n 1,20,50 -latency 1s
//	go run ./bench/load -n 200 -latency 10s -jitter 0.2 -ramp 10s
//	go run ./bench/load -n 50 -setup base: -setup pollers:temporal.activity_task_pollers=8
//
// By default every session starts at once and every model call takes
// exactly -latency: the worst case, in which all sessions' workflow tasks
// arrive in the same instant. -ramp spreads the starts and -jitter the
// latencies, as users' submissions and a real model's answers are spread.
// The dev server runs with devServerTuning (round.go); -dc overrides it.
//
// Each -setup runs every round once, interleaved, so that two
// configurations compare under the same machine load. -profile takes a
// CPU profile of the worker (its -pprof endpoint) and of the dev server
// (perf) during each round and writes their top functions next to the
// table (docs/scaling.md reads them).
//
// -targets devserver,cluster runs each round on the dev server and then on
// an external Temporal frontend (-cluster-env: the env file that
// scripts/cluster.sh up DIR writes), with workers of the bench's own on
// both, and prints the two side by side:
//
//	go run ./bench/load -n 200 -latency 10s -targets devserver,cluster -cluster-env /tmp/c/env
//
// Every session that does not complete is listed with its workflow and
// run ids, the server's status and the failure's message.
//
// Everything runs on loopback: the dev server (the cached Temporal CLI, see
// the Makefile), the scripted model (llm/llmtest) and the workers.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

type options struct {
	ns       []int
	latency  time.Duration
	jitter   float64       // model latency varies uniformly by ± this share
	ramp     time.Duration // sessions start spread evenly over this
	workers  int
	script   string
	out      string
	temporal string
	timeout  time.Duration
	base     setup   // -set and -dc: every round
	setups   []setup // -setup: each round runs once per setup (A/B in one process)
	targets  []target
	profile  time.Duration
}

// setup is one configuration of the worker (LETHE parameters) and the dev
// server (dynamic config values, database mode) that a round runs with.
type setup struct {
	name   string
	params map[string]string // worker config keys (temporal.max_concurrent_llm=...)
	dc     []string          // dev server --dynamic-config-value KEY=JSON
	dbFile bool              // the dev server keeps its state in a SQLite file, not in memory
}

// hostedModel is how the bench wires the scripted model: like a hosted
// API that serves calls in parallel, on its own task queue with room for
// every session's call at once. The repo default (LLM activities share the
// default queue's 8 slots, for one local llama.cpp) would measure that cap,
// not orchestration: -setup 'local:temporal.llm_queue=,temporal.max_concurrent_llm=1'
// shows it.
var hostedModel = map[string]string{
	"temporal.llm_queue":          "lethe-llm",
	"temporal.max_concurrent_llm": "1000",
}

func main() {
	o, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(2)
	}
	if err := run(context.Background(), o); err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string) (options, error) {
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	ns := fs.String("n", "1,10,20", "comma-separated numbers of concurrent sessions, one round each")
	o := options{base: setup{params: map[string]string{}}}
	fs.DurationVar(&o.latency, "latency", time.Second, "latency of every scripted model call")
	fs.Float64Var(&o.jitter, "jitter", 0, "each model call's latency varies uniformly by ± this share of -latency (0 to 1), as a real model's does")
	fs.DurationVar(&o.ramp, "ramp", 0, "start the sessions evenly over this long instead of in one burst (arrivals, as users submit them)")
	fs.IntVar(&o.workers, "workers", 1, "worker processes sharing the task queue")
	fs.StringVar(&o.script, "script", "testdata/scripts/battery_root_done.json", "scripted model (llm/llmtest format)")
	fs.StringVar(&o.out, "out", "bench-out", "directory for load.md, load.svg and profiles")
	fs.StringVar(&o.temporal, "temporal", defaultTemporal(), "Temporal CLI binary (its dev server)")
	fs.DurationVar(&o.timeout, "timeout", 30*time.Minute, "bound on one round")
	fs.DurationVar(&o.profile, "profile", 0, "profile the worker (pprof) and the dev server (perf, when installed) for this long from each round's start; 0 = off")
	fs.Func("set", "worker config KEY=VALUE for every round (repeatable), e.g. temporal.activity_task_pollers=8", func(v string) error {
		return o.base.add(v)
	})
	fs.Func("dc", "dev server dynamic config KEY=JSON for every round (repeatable)", func(v string) error {
		return o.base.add("dc." + v)
	})
	fs.BoolVar(&o.base.dbFile, "db-file", false, "dev server state in a SQLite file instead of memory")
	fs.Func("setup", "NAME:K=V,K=V a configuration to compare (repeatable): each round runs once per setup, interleaved; keys: worker config, dc.KEY (dynamic config), db=file", func(v string) error {
		st, err := parseSetup(v)
		o.setups = append(o.setups, st)
		return err
	})
	targets := fs.String("targets", targetDevServer, "comma-separated Temporal servers to run each round on, in one process: devserver (started per round) and cluster (-cluster-env)")
	clusterEnv := fs.String("cluster-env", "", "the cluster's environment file (shell exports, as scripts/cluster.sh up DIR writes DIR/env): its frontend, namespace and graph store")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	var err error
	if o.targets, err = parseTargets(*targets, *clusterEnv); err != nil {
		return o, err
	}
	for _, f := range strings.Split(*ns, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return o, fmt.Errorf("-n: %q is not a positive number", f)
		}
		o.ns = append(o.ns, n)
	}
	if o.workers < 1 || o.latency < 0 || o.profile < 0 || o.ramp < 0 {
		return o, fmt.Errorf("-workers must be at least 1, -latency, -profile and -ramp not negative")
	}
	if o.jitter < 0 || o.jitter > 1 {
		return o, fmt.Errorf("-jitter %g: want 0 to 1", o.jitter)
	}
	if len(o.setups) == 0 {
		o.setups = []setup{{name: "default", params: map[string]string{}}}
	}
	return o, nil
}

// parseSetup reads NAME:K=V,K=V.
func parseSetup(v string) (setup, error) {
	name, kvs, _ := strings.Cut(v, ":")
	st := setup{name: strings.TrimSpace(name), params: map[string]string{}}
	if st.name == "" {
		return st, fmt.Errorf("-setup %q: no name before the colon", v)
	}
	for _, kv := range strings.Split(kvs, ",") {
		if strings.TrimSpace(kv) == "" {
			continue
		}
		if err := st.add(kv); err != nil {
			return st, fmt.Errorf("-setup %s: %w", st.name, err)
		}
	}
	return st, nil
}

// add takes one KEY=VALUE: dc.KEY is a dynamic config value, db=file or
// db=memory the server's database, anything else a worker parameter.
func (s *setup) add(kv string) error {
	k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
	if !ok || k == "" {
		return fmt.Errorf("%q is not KEY=VALUE", kv)
	}
	switch {
	case strings.HasPrefix(k, "dc."):
		s.dc = append(s.dc, strings.TrimPrefix(k, "dc.")+"="+v)
	case k == "db":
		if v != "file" && v != "memory" {
			return fmt.Errorf("db=%q: file or memory", v)
		}
		s.dbFile = v == "file"
	default:
		s.params[k] = v
	}
	return nil
}

// merged is base with s on top: s's parameters win, dynamic config adds.
func (s setup) merged(base setup) setup {
	out := setup{name: s.name, params: map[string]string{}, dbFile: base.dbFile || s.dbFile}
	for _, m := range []map[string]string{hostedModel, base.params, s.params} {
		for k, v := range m {
			out.params[k] = v
		}
	}
	// The dev server applies the last value of a repeated key.
	out.dc = append(append(out.dc, base.dc...), s.dc...)
	return out
}

// defaultTemporal is the CLI the Makefile installs (TEMPORAL_CLI, or the
// cache path keyed by version).
func defaultTemporal() string {
	if p := os.Getenv("TEMPORAL_CLI"); p != "" {
		return p
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "lethe", "temporal-v1.5.1", "temporal")
}

func run(ctx context.Context, o options) error {
	if _, err := os.Stat(o.temporal); err != nil && slices.ContainsFunc(o.targets, func(t target) bool { return !t.external() }) {
		return fmt.Errorf("temporal CLI %s: %w (make temporal installs it)", o.temporal, err)
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return fmt.Errorf("output dir: %w", err)
	}
	var rows []row
	for _, n := range o.ns {
		for _, st := range o.setups {
			for _, t := range o.targets {
				r, err := round(ctx, o, t, st.merged(o.base), n)
				if err != nil {
					return fmt.Errorf("round of %d sessions (%s on %s): %w", n, st.name, t.name, err)
				}
				rows = append(rows, r)
				fmt.Println(r.line())
			}
		}
	}
	table := renderTable(o, rows)
	fmt.Print("\n" + table)
	if err := os.WriteFile(filepath.Join(o.out, "load.md"), []byte(table), 0o644); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	if err := os.WriteFile(filepath.Join(o.out, "load.svg"), []byte(renderChart(o, rows)), 0o644); err != nil {
		return fmt.Errorf("write chart: %w", err)
	}
	return nil
}
