package main

import (
	"context"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/lethe-research/lethe/activities"
	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/contract"
	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/graph/embedded"
	"github.com/lethe-research/lethe/internal/lethetest"
	"github.com/lethe-research/lethe/llm"
	"github.com/lethe-research/lethe/llm/llmtest"
)

// The fill writes what it says: n items, the task tree, SUPPORTS edges
// from every item and SIMILAR_TO edges within pages over the threshold;
// an iteration then adds its evidence and its subtask through the real
// activities.
// newTestSession creates a generated session in a fresh embedded store.
func newTestSession(t *testing.T, id string) (*embedded.Store, *session, config.Config) {
	t.Helper()
	st, err := embedded.Open(filepath.Join(t.TempDir(), "graph.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cfg := config.Defaults()
	s := &session{id: id, gen: generator{seed: 1, dim: 64},
		similar: similarConfig{threshold: cfg.Algebra.SimilarThreshold, maxPer: cfg.Algebra.SimilarMaxPerNode}}
	if err := s.create(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	return st, s, cfg
}

// newTestRunner calls the activities against st with the scripted embedder.
func newTestRunner(t *testing.T, st graph.Store, cfg config.Config) *runner {
	t.Helper()
	model := llmtest.NewServer(llmtest.Script{EmbeddingDim: 64})
	t.Cleanup(model.Close)
	return newRunner(&activities.Activities{Cfg: cfg, Store: st, Embed: llm.NewEmbedClient(llm.EmbedConfig{BaseURL: model.URL()}, nil)}, cfg)
}

func TestGrowAndIterate(t *testing.T) {
	ctx := context.Background()
	st, s, cfg := newTestSession(t, "long-test")
	if _, err := s.grow(ctx, st, 600); err != nil {
		t.Fatal(err)
	}
	ev, err := st.Evidence(ctx, s.id, "")
	if err != nil || len(ev) != s.evidence || s.evidence < 600 {
		t.Fatalf("evidence: %d stored, %d counted, %v", len(ev), s.evidence, err)
	}
	tasks, _ := st.Tasks(ctx, s.id)
	if len(tasks) != taskCount(600) {
		t.Fatalf("%d tasks, want %d", len(tasks), taskCount(600))
	}
	done := 0
	for _, tk := range tasks {
		if tk.Status == graph.Done {
			done++
		}
	}
	if want := 2 * (taskCount(600) - 1) / 3; done < want-1 || done > want+1 {
		t.Errorf("%d tasks DONE, want about two in three of %d", done, taskCount(600)-1)
	}
	edges, _ := st.Edges(ctx, s.id)
	kinds := map[graph.EdgeKind]int{}
	for _, e := range edges {
		kinds[e.Kind]++
		if e.Kind == graph.SimilarTo && e.Weight < cfg.Algebra.SimilarThreshold {
			t.Errorf("SIMILAR_TO %s-%s at %.3f, under the threshold", e.From, e.To, e.Weight)
		}
	}
	if kinds[graph.Supports] != len(ev) || kinds[graph.SimilarTo] < len(ev) {
		t.Errorf("edges %v: want one SUPPORTS per item and at least one SIMILAR_TO per item", kinds)
	}

	r := newTestRunner(t, st, cfg)
	before := s.evidence
	for range 2 {
		tm, err := r.iterate(ctx, st, s)
		if err != nil {
			t.Fatal(err)
		}
		for _, step := range steps {
			if tm.step[step] <= 0 {
				t.Errorf("iteration %d: %s not timed", s.iter, step)
			}
		}
	}
	var rs contract.ReadStateResult
	if _, err := r.call("ReadState", r.acts.ReadState, contract.ReadStateInput{SessionID: s.id, Iteration: s.iter + 1}, &rs); err != nil {
		t.Fatal(err)
	}
	if want := before + 2*(3+pageChunks); rs.Evidence != want || s.evidence != want {
		t.Errorf("after two iterations ReadState sees %d items, the session counts %d, want %d", rs.Evidence, s.evidence, want)
	}
	if len(rs.Tasks) != taskCount(600)+2 {
		t.Errorf("after two iterations %d tasks, want %d (one subtask each)", len(rs.Tasks), taskCount(600)+2)
	}
}

// An observed fill reaches the size in steps, one iteration after each, so
// that no Observe folds more than a step's rows (+ one iteration's).
func TestGrowObserved(t *testing.T) {
	ctx := context.Background()
	st, s, cfg := newTestSession(t, "long-observed")
	r := newTestRunner(t, st, cfg)
	if _, err := growObserved(ctx, options{fillStep: 200}, st, r, s, 600); err != nil {
		t.Fatal(err)
	}
	if s.evidence < 600 || s.iter < 3 || s.iter > 4 {
		t.Errorf("after an observed fill to 600 in steps of 200: %d items, %d iterations; want at least 600 items in 3 or 4 iterations", s.evidence, s.iter)
	}
	ev, err := st.Evidence(ctx, s.id, "")
	if err != nil || len(ev) != s.evidence {
		t.Fatalf("evidence: %d stored, %d counted, %v", len(ev), s.evidence, err)
	}
	byIter := map[int]int{}
	for _, e := range ev {
		byIter[e.CreatedIter]++
	}
	for it, n := range byIter {
		if n > 200+pageChunks+3+8 { // a step (rounded up to a page) and one iteration's own items
			t.Errorf("iteration %d stamps %d items: the fill was not spread", it, n)
		}
	}
}

// The command end to end at small sizes: the table has a row per size and
// backend and the growth ratio, the chart is well-formed SVG. Neo4j runs
// when a server is configured (LETHE_TEST_NEO4J_URI).
func TestRunSmall(t *testing.T) {
	backends := "embedded"
	if os.Getenv("LETHE_TEST_NEO4J_URI") != "" && !lethetest.OptedOut(lethetest.Neo4j) {
		backends += ",neo4j"
	}
	out := t.TempDir()
	md := runLong(t, out, "-sizes", "40,200", "-iters", "2", "-warmup", "0", "-dim", "32", "-backends", backends)
	for _, be := range strings.Split(backends, ",") {
		// 201 as without the Ingest calls: they store nothing new.
		for _, want := range []string{"| " + be + " | 40 | 22 |", "| " + be + " | 201 | 30 |", "| " + be + " | 40 | 200 | 5.0 |"} {
			if !strings.Contains(string(md), want) {
				t.Errorf("long.md lacks %q:\n%s", want, md)
			}
		}
		if n := len(regexp.MustCompile(`\| `+be+` \| \d+ \| 5 \| [0-9.]+ \| [0-9.]+ \|`).FindAllString(string(md), -1)); n != 2 {
			t.Errorf("long.md has %d rows of five Ingest calls for %s, want 2:\n%s", n, be, md)
		}
	}
	svg, err := os.ReadFile(filepath.Join(out, "long.svg"))
	if err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(strings.NewReader(string(svg)))
	polylines := 0
	for {
		tok, err := d.Token()
		if err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("long.svg: %v", err)
			}
			break
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "polyline" {
			polylines++
		}
	}
	if want := len(strings.Split(backends, ",")) * (len(steps) + 1); polylines != want {
		t.Errorf("long.svg has %d lines, want %d (the steps and the total per backend)", polylines, want)
	}
}

// runLong runs the command with args and -out out, and returns its long.md.
func runLong(t *testing.T, out string, args ...string) []byte {
	t.Helper()
	o, err := parseFlags(append(args, "-out", out))
	if err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(out, "long.md"))
	if err != nil {
		t.Fatal(err)
	}
	return md
}

func TestParseFlags(t *testing.T) {
	for _, bad := range [][]string{{"-sizes", "10,5"}, {"-sizes", "x"}, {"-backends", "sqlite"}, {"-iters", "0"}} {
		if _, err := parseFlags(bad); err == nil {
			t.Errorf("parseFlags(%v) accepted", bad)
		}
	}
	if o, err := parseFlags([]string{"-timeline"}); err != nil || !o.calls || !o.timeline {
		t.Errorf("-timeline: calls %v, timeline %v, err %v; want the call timer on", o.calls, o.timeline, err)
	}
}

// With -calls, long.md times the store calls of the timed iterations per
// step: the focus step's walk (its rounds split by what they read) and
// the ready set's read show, each with its calls per iteration, and a
// step's sum is at least its walk's.
func TestRunCalls(t *testing.T) {
	md := runLong(t, t.TempDir(), "-sizes", "60", "-iters", "2", "-warmup", "0", "-dim", "32", "-backends", "embedded", "-ingest", "0", "-calls")
	_, calls, ok := strings.Cut(string(md), "Store calls per iteration, embedded at 60 (mean of 2 iterations")
	if !ok {
		t.Fatalf("long.md has no call table:\n%s", md)
	}
	rows := map[string][]float64{}
	for _, m := range regexp.MustCompile(`\| (\w+) \| ([*\w ()]+) \| ([0-9.]+) \| ([0-9.]+) \| ([0-9.]+) \|`).FindAllStringSubmatch(calls, -1) {
		var n, ms float64
		fmt.Sscan(m[3], &n)
		fmt.Sscan(m[4], &ms)
		rows[m[1]+" "+m[2]] = []float64{n, ms}
	}
	for _, want := range []string{"Focus NeighbourhoodShape (tasks)", "Focus SetStatus", "Focus **all calls**", "ApplyOps Apply", "Observe **all calls**"} {
		if _, ok := rows[want]; !ok {
			t.Errorf("no row %q in:\n%s", want, calls)
		}
	}
	if r := rows["Focus SetStatus"]; r != nil && r[0] != 1 {
		t.Errorf("Focus marks its task active %.1f times per iteration, want 1", r[0])
	}
	walk := []float64{0, 0}
	for k, r := range rows {
		if strings.HasPrefix(k, "Focus NeighbourhoodShape (") {
			walk[0], walk[1] = walk[0]+r[0], walk[1]+r[1]
		}
	}
	if all := rows["Focus **all calls**"]; all != nil && (all[1] < walk[1] || all[0] <= walk[0]) {
		t.Errorf("Focus's sum %v is below its walk's %v", all, walk)
	}
}

// With -alternate, the timed iterations take the settings in turn and
// long.md has a row per setting with its number of iterations.
func TestRunAlternate(t *testing.T) {
	md := runLong(t, t.TempDir(), "-sizes", "60", "-iters", "5", "-warmup", "0", "-dim", "32", "-backends", "embedded", "-ingest", "0",
		"-alternate", "algebra.similar_cascade_items=64,0")
	for _, want := range []string{"Store work by setting of `algebra.similar_cascade_items`", "| 64 | 3 |", "| 0 | 2 |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("long.md lacks %q:\n%s", want, md)
		}
	}
	if _, err := parseFlags([]string{"-alternate", "algebra.similar_cascade_items=64"}); err == nil {
		t.Error("-alternate with one value accepted")
	}
}
