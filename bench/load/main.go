// Command load runs N concurrent research sessions against a real Temporal
// dev server and one or more worker processes, with the scripted model
// answering every call after a fixed latency, and prints what orchestration
// costs: sessions per hour, the time per iteration spent outside model
// calls (p50, p99), worker and server CPU and RSS, history events and bytes
// per session, and failures. It writes the table (load.md) and a chart of
// overhead against N (load.svg) to -out.
//
//	go run ./bench/load -n 1,20,50 -latency 1s
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
	"strconv"
	"strings"
	"time"
)

type options struct {
	ns       []int
	latency  time.Duration
	workers  int
	script   string
	out      string
	temporal string
	timeout  time.Duration
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
	o := options{}
	fs.DurationVar(&o.latency, "latency", time.Second, "latency of every scripted model call")
	fs.IntVar(&o.workers, "workers", 1, "worker processes sharing the task queue")
	fs.StringVar(&o.script, "script", "testdata/scripts/battery_root_done.json", "scripted model (llm/llmtest format)")
	fs.StringVar(&o.out, "out", "bench-out", "directory for load.md and load.svg")
	fs.StringVar(&o.temporal, "temporal", defaultTemporal(), "Temporal CLI binary (its dev server)")
	fs.DurationVar(&o.timeout, "timeout", 30*time.Minute, "bound on one round")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	for _, f := range strings.Split(*ns, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return o, fmt.Errorf("-n: %q is not a positive number", f)
		}
		o.ns = append(o.ns, n)
	}
	if o.workers < 1 || o.latency < 0 {
		return o, fmt.Errorf("-workers must be at least 1 and -latency not negative")
	}
	return o, nil
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
	if _, err := os.Stat(o.temporal); err != nil {
		return fmt.Errorf("temporal CLI %s: %w (make temporal installs it)", o.temporal, err)
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return fmt.Errorf("output dir: %w", err)
	}
	var rows []row
	for _, n := range o.ns {
		r, err := round(ctx, o, n)
		if err != nil {
			return fmt.Errorf("round of %d sessions: %w", n, err)
		}
		rows = append(rows, r)
		fmt.Println(r.line())
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
