package neo4j_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
	"time"

	driver "github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/graph/neo4j"
)

// BenchmarkEmbeddingsOnTheWire reads the shapes of 2,000 evidence items
// of 384 dimensions (a walk round of a large task, NeighbourhoodShape) and
// the same items whole (EvidenceByIDs), from a session written with the
// packed copies and from the same session without them (as an older
// binary wrote it: the float lists only), alternated in one process:
//
//	go test -run '^$' -bench EmbeddingsOnTheWire -benchtime 20x ./graph/neo4j
func BenchmarkEmbeddingsOnTheWire(b *testing.B) {
	uri := os.Getenv("LETHE_TEST_NEO4J_URI")
	if uri == "" {
		b.Skip("LETHE_TEST_NEO4J_URI is not set")
	}
	cfg := neo4j.Config{URI: uri, User: envOr("LETHE_TEST_NEO4J_USER", "neo4j"), Password: os.Getenv("LETHE_TEST_NEO4J_PASSWORD")}
	ctx := context.Background()
	s, err := neo4j.Open(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	drv, err := driver.NewDriverWithContext(cfg.URI, driver.BasicAuth(cfg.User, cfg.Password, ""))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = drv.Close(ctx) })
	sids := map[string]string{}
	ids := map[string][]string{}
	for _, form := range []string{"packed", "list"} {
		sids[form], ids[form] = wireSession(b, s, form)
	}
	if _, err := driver.ExecuteQuery(ctx, drv, "MATCH (e:Evidence {session_id: $sid}) REMOVE e.embedding_f32",
		map[string]any{"sid": sids["list"]}, driver.EagerResultTransformer); err != nil {
		b.Fatal(err)
	}
	reads := map[string]func(form string) int{
		"shape": func(form string) int {
			nb, err := s.NeighbourhoodShape(ctx, sids[form], ids[form], nil)
			if err != nil {
				b.Fatal(err)
			}
			return len(nb.Evidence)
		},
		"whole": func(form string) int {
			evs, err := s.EvidenceByIDs(ctx, sids[form], ids[form][1:])
			if err != nil {
				b.Fatal(err)
			}
			return len(evs)
		},
	}
	for _, name := range []string{"shape", "whole"} {
		read := reads[name]
		b.Run(name, func(b *testing.B) {
			alternate(b, "packed", "list", func(form string) {
				if n := read(form); n != len(ids[form])-1 {
					b.Fatalf("%s: read %d evidence items, want %d", form, n, len(ids[form])-1)
				}
			})
		})
	}
}

// alternate runs read for x and for y in each round of the loop, in
// turns first, so that a load that comes and goes weighs on both, and
// reports each one's median and the median of the per-round ratio x/y.
func alternate(b *testing.B, x, y string, read func(name string)) {
	lat := map[string][]time.Duration{}
	var ratios []float64
	i := 0
	for b.Loop() {
		order := []string{x, y}
		if i%2 == 1 {
			order = []string{y, x}
		}
		i++
		took := map[string]time.Duration{}
		for _, name := range order {
			start := time.Now()
			read(name)
			took[name] = time.Since(start)
			lat[name] = append(lat[name], took[name])
		}
		ratios = append(ratios, float64(took[x])/float64(took[y]))
	}
	for name, d := range lat {
		slices.Sort(d)
		b.ReportMetric(float64(d[len(d)/2])/float64(time.Millisecond), name+"-median-ms")
	}
	slices.Sort(ratios)
	b.ReportMetric(ratios[len(ratios)/2], x+"/"+y)
}

// wireSession writes a session of one task supported by 2,000 evidence
// items, and returns its id and the ids of the task and the items.
func wireSession(b *testing.B, s *neo4j.Store, form string) (string, []string) {
	b.Helper()
	ctx := context.Background()
	const items, dim = 2000, 384
	rng := rand.New(rand.NewPCG(5, 6))
	vec := func() []float32 {
		v := make([]float32, dim)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	sid := fmt.Sprintf("wire-%s-%d", form, time.Now().UnixNano())
	b.Cleanup(func() { _ = s.ResetSession(context.Background(), sid) })
	if err := s.CreateSession(ctx, graph.Session{ID: sid, Goal: "g", GoalDocEmb: vec()}, graph.Task{Embedding: vec()}); err != nil {
		b.Fatal(err)
	}
	var evs []graph.Evidence
	for i := range items {
		evs = append(evs, graph.Evidence{Content: fmt.Sprintf("passage %d of a page about the session's task, long enough to be a fact", i),
			SourceURL: "https://example.org/", Kind: graph.KindHTML, Strength: 0.5, Embedding: vec()})
	}
	if _, err := s.AddEvidence(ctx, sid, "fill", graph.RootShortID, evs); err != nil {
		b.Fatal(err)
	}
	rows, err := s.EvidenceRows(ctx, sid)
	if err != nil {
		b.Fatal(err)
	}
	ids := []string{graph.TaskID(sid, graph.RootShortID)}
	for _, e := range rows {
		ids = append(ids, e.ID)
	}
	return sid, ids
}

// BenchmarkWalkRound is one round of Expand's walk that reads a task
// supported by 2,000 evidence items (NeighbourhoodShape of the task, the
// items unknown): the hop brings their shapes with its rows, so the
// round is one statement (docs/neo4j.md, "The walk's node reads"):
//
//	go test -run '^$' -bench WalkRound -benchtime 40x ./graph/neo4j
func BenchmarkWalkRound(b *testing.B) {
	uri := os.Getenv("LETHE_TEST_NEO4J_URI")
	if uri == "" {
		b.Skip("LETHE_TEST_NEO4J_URI is not set")
	}
	ctx := context.Background()
	s, err := neo4j.Open(ctx, neo4j.Config{URI: uri, User: envOr("LETHE_TEST_NEO4J_USER", "neo4j"), Password: os.Getenv("LETHE_TEST_NEO4J_PASSWORD")})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	sid, ids := wireSession(b, s, "walk")
	var lat []time.Duration
	for b.Loop() {
		start := time.Now()
		nb, err := s.NeighbourhoodShape(ctx, sid, ids[:1], nil)
		if err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
		if len(nb.Evidence) != len(ids)-1 || len(nb.Edges) != len(ids)-1 {
			b.Fatalf("read %d evidence items and %d edges, want %d", len(nb.Evidence), len(nb.Edges), len(ids)-1)
		}
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2])/float64(time.Millisecond), "median-ms")
}

// BenchmarkWalkCache is the round of BenchmarkWalkRound (a task of 2,000
// items, their shapes unknown to the walk) read through a store with the
// walk cache and through one without, alternated in each round of the
// loop; the first read fills the cache and is left out:
//
//	go test -run '^$' -bench WalkCache -benchtime 40x ./graph/neo4j
func BenchmarkWalkCache(b *testing.B) {
	uri := os.Getenv("LETHE_TEST_NEO4J_URI")
	if uri == "" {
		b.Skip("LETHE_TEST_NEO4J_URI is not set")
	}
	ctx := context.Background()
	stores := map[string]*neo4j.Store{}
	for name, mib := range map[string]int{"cached": 128, "plain": 0} {
		s, err := neo4j.Open(ctx, neo4j.Config{URI: uri, User: envOr("LETHE_TEST_NEO4J_USER", "neo4j"), Password: os.Getenv("LETHE_TEST_NEO4J_PASSWORD"), WalkCacheMiB: mib})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = s.Close() })
		stores[name] = s
	}
	sid, ids := wireSession(b, stores["plain"], "walkcache")
	read := func(name string) {
		nb, err := stores[name].NeighbourhoodShape(ctx, sid, ids[:1], nil)
		if err != nil {
			b.Fatal(err)
		}
		if len(nb.Evidence) != len(ids)-1 || len(nb.Edges) != len(ids)-1 {
			b.Fatalf("%s: read %d evidence items and %d edges, want %d", name, len(nb.Evidence), len(nb.Edges), len(ids)-1)
		}
	}
	read("cached")
	alternate(b, "cached", "plain", read)
}
