package neo4j_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/graph/embedded"
	"github.com/lethe-research/lethe/graph/neo4j"
)

// The benchmarks compare both backends on the two calls of every iteration
// (DESIGN.md §4, issue 4): ApplyOps of a 20-operation batch and ReadState
// (session, tasks, ready set, evidence, a blob) of a session with 1,000
// tasks and 10,000 evidence items, embeddings of benchDim. Each reports the
// median latency (median-ms). The Neo4j half runs when LETHE_TEST_NEO4J_URI
// is set:
//
//	go test -run '^$' -bench . -benchtime 20x ./graph/neo4j
const (
	benchTasks    = 1000
	benchEvidence = 10000
	benchDim      = 256
)

type benchBackend struct {
	name string
	open func(b *testing.B) graph.Store
}

func benchBackends(b *testing.B) []benchBackend {
	out := []benchBackend{{"embedded", func(b *testing.B) graph.Store {
		s, err := embedded.Open(filepath.Join(b.TempDir(), "graph.db"))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = s.Close() })
		return s
	}}}
	if uri := os.Getenv("LETHE_TEST_NEO4J_URI"); uri != "" {
		out = append(out, benchBackend{"neo4j", func(b *testing.B) graph.Store {
			s, err := neo4j.Open(context.Background(), neo4j.Config{URI: uri, User: envOr("LETHE_TEST_NEO4J_USER", "neo4j"), Password: os.Getenv("LETHE_TEST_NEO4J_PASSWORD")})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = s.Close() })
			return s
		}})
	}
	return out
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func randUnit(r *rand.Rand) []float32 {
	v := make([]float32, benchDim)
	var n float64
	for i := range v {
		x := r.NormFloat64()
		v[i] = float32(x)
		n += x * x
	}
	inv := float32(1 / math.Sqrt(n))
	for i := range v {
		v[i] *= inv
	}
	return v
}

// seed builds a session with benchTasks tasks and benchEvidence evidence.
func seed(b *testing.B, s graph.Store, r *rand.Rand) string {
	b.Helper()
	ctx := context.Background()
	sid := fmt.Sprintf("bench-%d", time.Now().UnixNano())
	b.Cleanup(func() { _ = s.ResetSession(context.Background(), sid) })
	if err := s.CreateSession(ctx, graph.Session{ID: sid, Goal: "g", GoalDocEmb: randUnit(r), GoalQueryEmb: randUnit(r)},
		graph.Task{Description: "g", Embedding: randUnit(r)}); err != nil {
		b.Fatal(err)
	}
	shorts := []string{graph.RootShortID}
	for batch := 0; len(shorts) < benchTasks; batch++ {
		var ops []graph.Op
		for k := 0; k < 100 && len(shorts)+len(ops) < benchTasks; k++ {
			id := fmt.Sprintf("t%d-%d", batch, k)
			op := graph.Op{Kind: graph.OpCreate, Task: id, Description: "task " + id, EmbedText: id, Embedding: randUnit(r),
				Parent: shorts[r.IntN(len(shorts))]}
			if k > 0 && r.IntN(4) == 0 {
				op.DependsOn = []string{fmt.Sprintf("t%d-%d", batch, r.IntN(k))}
			}
			ops = append(ops, op)
		}
		res, err := s.Apply(ctx, graph.ApplyRequest{SessionID: sid, Key: fmt.Sprintf("seed/%d", batch), Iteration: batch, ActiveTask: graph.RootShortID, Ops: ops})
		if err != nil || res.RolledBack {
			b.Fatalf("seed apply: %+v, %v", res, err)
		}
		shorts = append(shorts, res.Created...)
	}
	for batch := 0; batch*500 < benchEvidence; batch++ {
		items := make([]graph.Evidence, 500)
		for k := range items {
			items[k] = graph.Evidence{Content: fmt.Sprintf("evidence %d/%d %d", batch, k, r.Int()), SourceURL: "https://example.org/", Kind: graph.KindHTML, Strength: 0.5, Embedding: randUnit(r), CreatedIter: batch}
		}
		if _, err := s.AddEvidence(ctx, sid, fmt.Sprintf("seed/%d", batch), shorts[r.IntN(len(shorts))], items); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.PutBlob(ctx, sid, "signals/1", make([]byte, 64<<10)); err != nil {
		b.Fatal(err)
	}
	return sid
}

func reportMedian(b *testing.B, d []time.Duration) {
	slices.Sort(d)
	if len(d) > 0 {
		b.ReportMetric(float64(d[len(d)/2])/float64(time.Millisecond), "median-ms")
	}
}

// BenchmarkApplyOps20 runs each batch twice over: with the create dedup
// (the server compares each create with every task's dedup copy) and
// without it (the tasks the ops name only, graph.ApplyReads), on one
// session.
func BenchmarkApplyOps20(b *testing.B) {
	for _, be := range benchBackends(b) {
		b.Run(be.name, func(b *testing.B) {
			s := be.open(b)
			r := rand.New(rand.NewPCG(1, 2))
			sid := seed(b, s, r)
			i := 0
			for _, thr := range []float64{0.95, 0} {
				b.Run(fmt.Sprintf("dedup=%v", thr), func(b *testing.B) {
					var lat []time.Duration
					for b.Loop() {
						i++
						lat = append(lat, applyOps20(b, s, sid, r, i, thr))
					}
					reportMedian(b, lat)
				})
			}
		})
	}
}

// applyOps20 applies ten creates, five updates and five evidence ops and
// returns the Apply's latency.
func applyOps20(b *testing.B, s graph.Store, sid string, r *rand.Rand, i int, dedup float64) time.Duration {
	ops := make([]graph.Op, 0, 20)
	for k := range 10 {
		ops = append(ops, graph.Op{Kind: graph.OpCreate, Task: fmt.Sprintf("b%d-%d", i, k), Description: "new", EmbedText: "new", Embedding: randUnit(r)})
	}
	for k := range 5 {
		ops = append(ops, graph.Op{Kind: graph.OpUpdate, Task: fmt.Sprintf("b%d-%d", i, k), Description: "sharper"})
	}
	for k := range 5 {
		ops = append(ops, graph.Op{Kind: graph.OpEvidence, Task: fmt.Sprintf("b%d-%d", i, k), Content: fmt.Sprintf("llm fact %d/%d", i, k), EmbedText: "f", Embedding: randUnit(r)})
	}
	start := time.Now()
	res, err := s.Apply(context.Background(), graph.ApplyRequest{SessionID: sid, Key: fmt.Sprintf("apply/%d", i), Iteration: 1000 + i, ActiveTask: graph.RootShortID, DedupThreshold: dedup, Ops: ops})
	took := time.Since(start)
	if err != nil || res.Applied != 20 {
		b.Fatalf("apply: %+v, %v", res, err)
	}
	return took
}

func BenchmarkReadState(b *testing.B) {
	for _, be := range benchBackends(b) {
		b.Run(be.name, func(b *testing.B) {
			s := be.open(b)
			sid := seed(b, s, rand.New(rand.NewPCG(3, 4)))
			ctx := context.Background()
			var lat []time.Duration
			for b.Loop() {
				start := time.Now()
				if _, err := s.GetSession(ctx, sid); err != nil {
					b.Fatal(err)
				}
				ts, err := s.Tasks(ctx, sid)
				if err != nil || len(ts) != benchTasks {
					b.Fatalf("tasks: %d, %v", len(ts), err)
				}
				if _, err := s.ReadySet(ctx, sid); err != nil {
					b.Fatal(err)
				}
				ev, err := s.Evidence(ctx, sid, "")
				if err != nil || len(ev) != benchEvidence {
					b.Fatalf("evidence: %d, %v", len(ev), err)
				}
				if _, err := s.GetBlob(ctx, sid, "signals/1"); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			reportMedian(b, lat)
		})
	}
}
