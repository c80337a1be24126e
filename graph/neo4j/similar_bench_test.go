package neo4j_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/lethe-research/lethe/graph"
)

// BenchmarkSyncSimilar times one SIMILAR_TO sync after 100 new evidence
// items, in a session of n items (LETHE_BENCH_SIMILAR_SIZES, default
// 1000,10000), before (full: every pair through the cluster pre-filter)
// and after (incremental: new items through the nearest-neighbour index),
// on both backends (Neo4j when LETHE_TEST_NEO4J_URI is set):
//
//	go test -run '^$' -bench SyncSimilar -benchtime 3x ./graph/neo4j
func BenchmarkSyncSimilar(b *testing.B) {
	sizes := []int{1000, 10000}
	if env := os.Getenv("LETHE_BENCH_SIMILAR_SIZES"); env != "" {
		sizes = nil
		for _, f := range strings.Split(env, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				b.Fatalf("LETHE_BENCH_SIMILAR_SIZES: %v", err)
			}
			sizes = append(sizes, n)
		}
	}
	for _, be := range benchBackends(b) {
		for _, n := range sizes {
			for _, mode := range []string{"full", "incremental"} {
				b.Run(fmt.Sprintf("%s/n=%d/%s", be.name, n, mode), func(b *testing.B) {
					benchSync(b, be.open(b), n, mode == "full")
				})
			}
		}
	}
}

// similarItems is n items around n/20 topics (so that pairs over the
// threshold exist, as in a real session), created at iter.
func similarItems(rng *rand.Rand, topics [][]float64, n, iter int, tag string) []graph.Evidence {
	out := make([]graph.Evidence, n)
	for i := range out {
		c := topics[rng.IntN(len(topics))]
		v := make([]float32, len(c))
		var nn float64
		for d := range v {
			x := c[d] + 0.03*rng.NormFloat64()
			v[d] = float32(x)
			nn += x * x
		}
		for d := range v {
			v[d] = float32(float64(v[d]) / math.Sqrt(nn))
		}
		out[i] = graph.Evidence{Content: fmt.Sprintf("%s %d", tag, i), SourceURL: fmt.Sprintf("https://h%d.example/", i%7), Strength: 0.5, Embedding: v, CreatedIter: iter}
	}
	return out
}

func benchSync(b *testing.B, s graph.Store, n int, full bool) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, uint64(n)))
	topics := make([][]float64, max(1, n/20))
	for t := range topics {
		topics[t] = make([]float64, benchDim)
		for d := range topics[t] {
			topics[t][d] = rng.NormFloat64() / math.Sqrt(benchDim)
		}
	}
	sid := fmt.Sprintf("bench-similar-%d-%t-%d", n, full, rng.Uint64())
	if err := s.CreateSession(ctx, graph.Session{ID: sid, Goal: "g", Dim: benchDim}, graph.Task{Description: "g", Embedding: make([]float32, benchDim)}); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.ResetSession(context.Background(), sid) })
	for start := 0; start < n; start += 5000 {
		items := similarItems(rng, topics, min(5000, n-start), 1, fmt.Sprintf("base%d", start))
		if _, err := s.AddEvidence(ctx, sid, fmt.Sprintf("base%d", start), graph.RootShortID, items); err != nil {
			b.Fatal(err)
		}
	}
	p := graph.SimilarParams{Threshold: 0.8, MaxPerNode: 8}
	if _, err := graph.SyncSimilar(ctx, s, sid, p, nil); err != nil {
		b.Fatal(err)
	}
	p.Full = full
	var compared, edges, incremental int
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		items := similarItems(rng, topics, 100, i+2, fmt.Sprintf("new%d", i))
		if _, err := s.AddEvidence(ctx, sid, fmt.Sprintf("new%d", i), graph.RootShortID, items); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		st, err := graph.SyncSimilar(ctx, s, sid, p, nil)
		if err != nil {
			b.Fatal(err)
		}
		if full && st.Incremental {
			b.Fatal("incremental sync with Full set")
		}
		compared, edges = st.Compared, st.Edges
		if st.Incremental {
			incremental++
		}
	}
	// incremental < 1: the guard fell back to the full sync.
	b.ReportMetric(float64(incremental)/float64(b.N), "incremental")
	b.ReportMetric(float64(compared), "compared")
	b.ReportMetric(float64(edges), "edges")
}
