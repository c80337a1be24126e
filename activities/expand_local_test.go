package activities

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/lethe-research/lethe/algebra"
	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/graph/embedded"
)

const expandDim = 64

// unitNear is a unit vector near base (noise of scale eps), or random.
func unitNear(rng *rand.Rand, base []float32, eps float64) []float32 {
	v := make([]float32, expandDim)
	var n float64
	for i := range v {
		x := rng.NormFloat64() * eps
		if base != nil {
			x += float64(base[i])
		}
		v[i] = float32(x)
		n += x * x
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(n))
	}
	return v
}

// buildSession writes a session of nEv evidence items on nEv/100 tasks
// (at least 8) in a tree of fan-out 4, evidence near its task's
// embedding, four SIMILAR_TO edges per item to items of nearby tasks, and
// some evidence shared by two tasks. Returns the store and session id.
func buildSession(tb testing.TB, nEv int) (graph.Store, string, []string) {
	tb.Helper()
	ctx := context.Background()
	st, err := embedded.Open(filepath.Join(tb.TempDir(), "g.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	rng := rand.New(rand.NewPCG(uint64(nEv), 3))
	sid := fmt.Sprintf("bench-%d", nEv)
	root := unitNear(rng, nil, 1)
	if err := st.CreateSession(ctx, graph.Session{ID: sid, Goal: "g", GoalDocEmb: root, GoalQueryEmb: root, Dim: expandDim},
		graph.Task{Description: "g", EmbedText: "g", Embedding: root}); err != nil {
		tb.Fatal(err)
	}
	nT := max(8, nEv/100)
	shorts := []string{graph.RootShortID}
	embs := [][]float32{root}
	var ops []graph.Op
	for i := 1; i < nT; i++ {
		p := (i - 1) / 4
		e := unitNear(rng, embs[p], 0.08)
		s := fmt.Sprintf("t%d", i)
		ops = append(ops, graph.Op{Kind: graph.OpCreate, Task: s, Description: s, EmbedText: s, Embedding: e, Parent: shorts[p]})
		shorts, embs = append(shorts, s), append(embs, e)
	}
	if _, err := st.Apply(ctx, graph.ApplyRequest{SessionID: sid, Key: "a", Iteration: 1, ActiveTask: graph.RootShortID, Ops: ops, DedupThreshold: 0.999}); err != nil {
		tb.Fatal(err)
	}
	ids := addBenchEvidence(tb, st, sid, rng, shorts, embs, nEv)
	// SIMILAR_TO links what is alike: items of the same task, mostly
	var edges []graph.Edge
	for ti := range shorts {
		own := ids[ti]
		for i, id := range own {
			for k := 0; k < 4; k++ {
				if j := rng.IntN(len(own)); j != i {
					edges = append(edges, graph.Edge{From: id, To: own[j], Kind: graph.SimilarTo, Weight: 0.8})
				}
			}
			if ti > 0 && i == 0 {
				edges = append(edges, graph.Edge{From: id, To: ids[ti-1][1], Kind: graph.SimilarTo, Weight: 0.8})
			}
		}
	}
	var scope []string
	for _, own := range ids {
		scope = append(scope, own...)
	}
	if err := st.ReplaceSimilar(ctx, sid, scope, edges); err != nil {
		tb.Fatal(err)
	}
	return st, sid, shorts
}

// addBenchEvidence writes per task its items and one item of the previous
// task (shared: a second SUPPORTS edge); it returns the ids per task.
func addBenchEvidence(tb testing.TB, st graph.Store, sid string, rng *rand.Rand, shorts []string, embs [][]float32, nEv int) [][]string {
	tb.Helper()
	per := nEv / len(shorts)
	ids := make([][]string, len(shorts))
	for ti, s := range shorts {
		var items []graph.Evidence
		for k := 0; k < per; k++ {
			c := fmt.Sprintf("fact %d of %s", k, s)
			items = append(items, graph.Evidence{Content: c, Embedding: unitNear(rng, embs[ti], 0.1)})
			ids[ti] = append(ids[ti], graph.EvidenceID(sid, graph.ContentHash(c)))
		}
		if ti > 0 {
			items = append(items, graph.Evidence{Content: fmt.Sprintf("fact 0 of %s", shorts[ti-1]), Embedding: unitNear(rng, embs[ti-1], 0.1)})
		}
		if _, err := st.AddEvidence(context.Background(), sid, "ev-"+s, s, items); err != nil {
			tb.Fatal(err)
		}
	}
	return ids
}

// TestExpandLocalMatchesExact: on a session of 1,200 evidence items, the
// local Expand returns the candidates of the whole-graph Expand, with PPR
// scores that agree within the push's bound plus the power iteration's own
// stopping error (its L1 change was below ppr_tol; its error is at most
// ppr_tol·(1−α)/α). Candidates whose exact scores are within that of the
// cut may swap in or out; none does here.
func TestExpandLocalMatchesExact(t *testing.T) {
	st, sid, shorts := buildSession(t, 1200)
	a := &Activities{Cfg: config.Defaults(), Store: st}
	def := config.Defaults().Context
	for _, task := range []string{graph.RootShortID, shorts[len(shorts)-1]} {
		in := ExpandInput{SessionID: sid, Task: task, Context: def}
		exact, err := a.expandExact(t.Context(), in)
		if err != nil {
			t.Fatal(err)
		}
		local, err := a.Expand(t.Context(), in)
		if err != nil {
			t.Fatal(err)
		}
		_, _, _, stats, err := localPPR(t.Context(), st, sid, graph.TaskID(sid, task), contextOf(def, def), nil)
		if err != nil {
			t.Fatal(err)
		}
		tol := stats.Bound + def.PPRTol*(1-def.PPRAlpha)/def.PPRAlpha
		if len(exact.Candidates) == 0 || len(local.Candidates) != len(exact.Candidates) {
			t.Fatalf("task %s: %d local candidates, %d exact", task, len(local.Candidates), len(exact.Candidates))
		}
		for i := range exact.Candidates {
			e, l := exact.Candidates[i], local.Candidates[i]
			if math.Abs(e.PPR-l.PPR) > tol {
				t.Errorf("task %s rank %d: PPR local %.9f exact %.9f, beyond %.3g", task, i, l.PPR, e.PPR, tol)
			}
			if e.Ref != l.Ref && math.Abs(e.PPR-l.PPR) > tol {
				t.Errorf("task %s rank %d: %s local, %s exact", task, i, l.Ref, e.Ref)
			}
		}
		t.Logf("task %s: read %d of %d nodes in %d rounds, %d pushes, bound %.2g", task, stats.Read, 1200+len(shorts), stats.Rounds, stats.Pushes, stats.Bound)
	}
}

// TestExpandLocalBudget: with ppr_max_nodes small, Expand stops reading and
// still returns candidates (the residual left is the bound it logs).
func TestExpandLocalBudget(t *testing.T) {
	st, sid, _ := buildSession(t, 800)
	c := config.Defaults().Context
	c.PPRMaxNodes = 3
	_, pr, _, stats, err := localPPR(t.Context(), st, sid, graph.TaskID(sid, graph.RootShortID), contextOf(c, config.Defaults().Context), nil)
	if err != nil {
		t.Fatal(err)
	}
	var mass float64
	for _, x := range pr {
		mass += x
	}
	if stats.Read > 3 || stats.Bound <= 0 || mass <= 0 || math.Abs(mass+stats.Bound-1) > 1e-9 {
		t.Fatalf("stats %+v, mass %v", stats, mass)
	}
}

// BenchmarkExpand is Expand before (whole session, power iteration) and
// after (neighbourhood, push) at 1k, 10k and 100k evidence on the embedded
// store, from a leaf task.
func BenchmarkExpand(b *testing.B) {
	for _, n := range benchSizes() {
		st, sid, shorts := buildSession(b, n)
		a := &Activities{Cfg: config.Defaults(), Store: st}
		in := ExpandInput{SessionID: sid, Task: shorts[len(shorts)-1], Context: config.Defaults().Context}
		b.Run(fmt.Sprintf("before/n=%d", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := a.expandExact(b.Context(), in); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("after/n=%d", n), func(b *testing.B) {
			_, _, _, stats, err := localPPR(b.Context(), st, sid, graph.TaskID(sid, in.Task), contextOf(in.Context, in.Context), nil)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := a.Expand(b.Context(), in); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(stats.Read), "nodes-read")
			b.ReportMetric(float64(stats.Rounds), "rounds")
			b.ReportMetric(stats.Bound, "error-bound")
		})
	}
}

// benchSizes are the session sizes of BenchmarkExpand:
// LETHE_BENCH_EXPAND_MAX caps them (the 100k session takes minutes to write).
func benchSizes() []int {
	var out []int
	for _, n := range []int{1000, 10000, 100000} {
		if m, err := strconv.Atoi(os.Getenv("LETHE_BENCH_EXPAND_MAX")); err == nil && n > m {
			break
		}
		out = append(out, n)
	}
	return out
}

// TestWorthReading: a task's push reaches its 100 evidence items with
// about tol times one edge weight each. With no evidence read yet, the 32
// with the largest residual are read to learn the prior; once the mean
// degree of the evidence read is 8, none of them is worth reading (a push
// needs tol times its degree), and a task node always is.
func TestWorthReading(t *testing.T) {
	const n, tol = 100, 0.002
	nbrs, w := make([]int, n), make([]float64, n)
	for i := range n {
		nbrs[i], w[i] = i+1, 1+float64(i)/1000 // unequal weights: unequal residuals
	}
	lp := algebra.NewLocalPPR([]int{0}, 0.15, tol)
	need := lp.Run(func(u int) ([]int, []float64, bool) {
		if u == 0 {
			return nbrs, w, true
		}
		return nil, nil, false
	}, 0)
	if len(need) != n {
		t.Fatalf("the push asks for %d nodes, want %d", len(need), n)
	}
	lw := &localWalk{isEv: make([]bool, n+2)}
	for i := 1; i <= n; i++ {
		lw.isEv[i] = true
	}
	first := lw.worthReading(lp, slices.Clone(need), tol)
	if len(first) != priorSample || first[len(first)-1] != n || first[0] != n-priorSample+1 {
		t.Fatalf("first read %v, want the %d heaviest (%d…%d)", first, priorSample, n-priorSample+1, n)
	}
	lw.evRead, lw.evDeg = 10, 80
	if got := lw.worthReading(lp, slices.Clone(need), tol); len(got) != 0 {
		t.Fatalf("with a prior of 8, read %d nodes, want none", len(got))
	}
	lw.evDeg = 1 // a prior of 0.1: every residual is over tol × 0.1
	if got := lw.worthReading(lp, slices.Clone(need), tol); len(got) != n {
		t.Fatalf("with a prior of 0.1, read %d nodes, want %d", len(got), n)
	}
	if got := lw.worthReading(lp, []int{n + 1}, tol); len(got) != 1 {
		t.Fatalf("a task node was not read: %v", got)
	}
	// The task read prior: node n as a task, its residual about 0.0089
	// (0.85 × its share of the seed's mass), the mean SUPPORTS weight 0.3.
	lw.isEv[n] = false
	lw.nodeCount = make([]int, n+2)
	lw.supW, lw.supN = 30, 100
	for _, c := range []struct {
		evidence int
		read     bool
	}{{0, true}, {2, true}, {14, true}, {15, false}, {300, false}} {
		lw.nodeCount[n] = c.evidence
		if got := lw.worthReading(lp, []int{n}, tol); (len(got) == 1) != c.read {
			t.Errorf("task with %d evidence items and residual %.4f: read %v, want %v (prior %.4f)",
				c.evidence, lp.ResidualAt(n), len(got) == 1, c.read, tol*float64(c.evidence)*0.3)
		}
	}
	lw.supN = 0 // no SUPPORTS edge read yet: no prior
	if got := lw.worthReading(lp, []int{n}, tol); len(got) != 1 {
		t.Fatalf("with no SUPPORTS edge read, a task was not read: %v", got)
	}
}
