// Command long times the store work of one long research session: the
// loop's store activities (ReadState, Focus = mark active + SyncSimilar +
// Expand, ApplyOps, Observe), called as a worker calls them, on a session
// grown to each evidence size in turn (default 1k, 10k, 100k), on the
// embedded store and on Neo4j. The session is generated from a seed: a task
// tree of tens to hundreds of tasks, pages of 384-dim chunks with SUPPORTS
// and SIMILAR_TO edges. The embedder is the scripted server's instant
// deterministic one (llm/llmtest) on loopback. It prints a Markdown table
// (medians and p90 per activity and in total, the fill time, the growth
// ratios) and writes long.md and long.svg to -out.
//
//	go run ./bench/long -neo4j bolt://127.0.0.1:7687
//
// A backend that cannot be reached is skipped with a message. With
// -alternate key=v1,v2 the timed iterations take a session config key's
// values in turn, and a table per value follows.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/lethe-research/lethe/config"
)

type options struct {
	sizes      []int
	iters      int
	dim        int
	seed       uint64
	backends   []string
	neo4jURI   string
	user       string
	password   string
	out        string
	dir        string
	keep       bool
	slow       time.Duration
	profile    string
	warmup     int
	fillStep   int
	tols       []float64
	tolRef     float64
	ingest     int
	calls      bool
	timeline   bool
	walk       int
	vecStmts   int
	labelBatch int
	alt        alternate
	serverPID  int
}

func main() {
	o, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "long:", err)
		os.Exit(2)
	}
	// Interrupted, the run stops at the next store call and still removes
	// its session and temporary store (an activity already running ends
	// first: the activity environment does not take this context).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		stop()
		fmt.Fprintln(os.Stderr, "long:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string) (options, error) {
	fs := flag.NewFlagSet("long", flag.ContinueOnError)
	sizes := fs.String("sizes", "1000,10000,100000", "comma-separated evidence sizes, increasing: the session grows through them")
	tols := fs.String("tols", "", "comma-separated push tolerances to compare with -tol-ref after the timed iterations at each size (docs/local-ppr.md); empty: no comparison")
	backends := fs.String("backends", "embedded,neo4j", "comma-separated backends: embedded, neo4j")
	o := options{}
	fs.IntVar(&o.iters, "iters", 7, "timed iterations per size (after one first iteration, reported apart)")
	fs.IntVar(&o.warmup, "warmup", -1, "untimed iterations after the first at each size, so that the fill has left Observe's novelty window (-1: the window, algebra.novelty_window)")
	fs.IntVar(&o.fillStep, "fill-step", 0, "grow the session this many evidence items at a time, with one untimed iteration after each step, as a session that ingests and observes as it goes (0: one fill per size, observed by its first iteration)")
	fs.IntVar(&o.ingest, "ingest", 5, "research Ingest calls timed per size, one page each, after the timed iterations (0: none)")
	fs.IntVar(&o.dim, "dim", 384, "embedding dimension")
	fs.Uint64Var(&o.seed, "seed", 1, "generator seed")
	fs.StringVar(&o.neo4jURI, "neo4j", envOr("LETHE_TEST_NEO4J_URI", "bolt://127.0.0.1:7687"), "Neo4j Bolt URL")
	fs.StringVar(&o.user, "neo4j-user", envOr("LETHE_TEST_NEO4J_USER", "neo4j"), "Neo4j user")
	fs.StringVar(&o.password, "neo4j-password", envOr("LETHE_TEST_NEO4J_PASSWORD", "lethe-neo4j"), "Neo4j password")
	fs.StringVar(&o.out, "out", "bench-out", "directory for long.md and long.svg")
	fs.StringVar(&o.dir, "dir", "", "directory of the embedded store's file (default: a temporary directory)")
	fs.DurationVar(&o.slow, "slow", time.Minute, "when the first iteration at a size takes longer, time one more and stop growing (0: never)")
	fs.StringVar(&o.profile, "cpuprofile", "", "write a CPU profile of the whole run to this file")
	fs.Float64Var(&o.tolRef, "tol-ref", 1e-7, "the push tolerance of the reference run of -tols")
	fs.BoolVar(&o.keep, "keep", false, "keep the session in the stores afterwards")
	fs.IntVar(&o.walk, "walk-cache-mib", config.Defaults().Graph.Neo4jWalkCacheMiB, "Neo4j store: MiB the walk cache may hold (graph.neo4j_walk_cache_mib; 0: off, as before it existed)")
	fs.IntVar(&o.vecStmts, "vector-statements", config.Defaults().Graph.Neo4jVectorStatements, "Neo4j store: read transactions at once of a sync's vector queries (graph.neo4j_vector_statements; 1: one, as before it existed)")
	fs.IntVar(&o.labelBatch, "label-batch", config.Defaults().Graph.Neo4jLabelBatch, "Neo4j store: new items a session leaves outside the vector index before a call adds them (graph.neo4j_label_batch; 1: every call, as before it existed)")
	alt := fs.String("alternate", "", "key=value,value[,...]: the session config key (as in config/params.go) takes the values in turn over the timed iterations, and a table by value follows (compare settings in one process on one database)")
	fs.IntVar(&o.serverPID, "server-pid", 0, "process id of the Neo4j server on this machine: its CPU time over the steps joins the table (0: not measured)")
	fs.BoolVar(&o.calls, "calls", false, "time each store call of the timed iterations, per step, and print them per size")
	fs.BoolVar(&o.timeline, "timeline", false, "print each timed iteration's store calls in the order they started, with their start in the step and their time (implies -calls)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	o.calls = o.calls || o.timeline
	var err error
	if o.alt, err = parseAlternate(*alt); err != nil {
		return o, err
	}
	prev := 0
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= prev {
			return o, fmt.Errorf("-sizes %q: want increasing positive integers", *sizes)
		}
		o.sizes, prev = append(o.sizes, n), n
	}
	for _, s := range strings.Split(*tols, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		tol, err := strconv.ParseFloat(s, 64)
		if err != nil || !(tol > 0 && tol < 1) {
			return o, fmt.Errorf("-tols %q: want tolerances in (0, 1)", *tols)
		}
		o.tols = append(o.tols, tol)
	}
	if !(o.tolRef > 0 && o.tolRef < 1) {
		return o, fmt.Errorf("-tol-ref %g: want a tolerance in (0, 1)", o.tolRef)
	}
	for _, b := range strings.Split(*backends, ",") {
		switch b = strings.TrimSpace(b); b {
		case "embedded", "neo4j":
			o.backends = append(o.backends, b)
		default:
			return o, fmt.Errorf("-backends: unknown backend %q", b)
		}
	}
	if o.iters < 1 || o.dim < 8 {
		return o, errors.New("-iters must be ≥ 1 and -dim ≥ 8")
	}
	return o, nil
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func run(ctx context.Context, o options) error {
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return fmt.Errorf("output directory: %w", err)
	}
	if o.profile != "" {
		f, err := os.Create(o.profile)
		if err != nil {
			return fmt.Errorf("cpu profile: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("cpu profile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	var pts []point
	for _, be := range o.backends {
		// Every size is written out when measured: a run stopped early
		// keeps its table.
		err := runBackend(ctx, o, be, func(p point) error {
			pts = append(pts, p)
			return write(o, pts)
		})
		if errors.Is(err, errSkipped) {
			fmt.Fprintf(os.Stderr, "long: %s skipped: %v\n", be, err)
			continue
		}
		if err != nil {
			return err
		}
	}
	if err := write(o, pts); err != nil {
		return err
	}
	fmt.Print(renderTable(o, pts))
	var rows []tolRow
	for _, p := range pts {
		rows = append(rows, p.tols...)
	}
	if len(rows) > 0 {
		if err := writeTols(o, rows); err != nil {
			return err
		}
		fmt.Print("\n" + renderTols(o, rows))
	}
	fmt.Fprintf(os.Stderr, "long: wrote %s and %s\n", filepath.Join(o.out, "long.md"), filepath.Join(o.out, "long.svg"))
	return nil
}

// write writes long.md (the date, the command, the table) and long.svg.
func write(o options, pts []point) error {
	md := fmt.Sprintf("Measured %s with `go run ./bench/long %s`.\n\n%s", time.Now().UTC().Format("2006-01-02 15:04 MST"), strings.Join(os.Args[1:], " "), renderTable(o, pts))
	if err := os.WriteFile(filepath.Join(o.out, "long.md"), []byte(md), 0o644); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	if err := os.WriteFile(filepath.Join(o.out, "long.svg"), []byte(renderSVG(pts)), 0o644); err != nil {
		return fmt.Errorf("write chart: %w", err)
	}
	return nil
}
