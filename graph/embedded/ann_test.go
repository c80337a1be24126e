package embedded_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/graph/embedded"
	"github.com/lethe-research/lethe/graph/graphtest"
)

// TestConformanceANN runs the suite with every query through the HNSW
// index (MinItems 1): small sessions must answer as the exact scan does.
func TestConformanceANN(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	graphtest.Run(t, func(t *testing.T) graph.Store {
		s, err := embedded.OpenWith(filepath.Join(t.TempDir(), "graph.db"), embedded.ANNOptions{MinItems: 1, M: 16, EfConstruction: 100, EfSearch: 64})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	})
}

// pageItems is n evidence items in pages of 8 near-duplicates (cosine
// about 0.89 within a page, about 0 across pages in 64 dimensions), like
// chunks of one web page.
func pageItems(rng *rand.Rand, n, iter int, tag string) []graph.Evidence {
	const dim = 64
	out := make([]graph.Evidence, n)
	var page []float64
	for i := range out {
		if i%8 == 0 {
			page = randUnit(rng, dim, nil, 0)
		}
		v := randUnit(rng, dim, page, 1/0.35)
		emb := make([]float32, dim)
		for d := range v {
			emb[d] = float32(v[d])
		}
		out[i] = graph.Evidence{Content: fmt.Sprintf("%s %d", tag, i), Strength: 0.5, Embedding: emb, CreatedIter: iter}
	}
	return out
}

// randUnit is a random unit vector, pulled toward base (weight w) when set.
func randUnit(rng *rand.Rand, dim int, base []float64, w float64) []float64 {
	v := make([]float64, dim)
	var nn float64
	for d := range v {
		v[d] = rng.NormFloat64() / math.Sqrt(float64(dim))
		if base != nil {
			v[d] += w * base[d]
		}
		nn += v[d] * v[d]
	}
	for d := range v {
		v[d] /= math.Sqrt(nn)
	}
	return v
}

// neighbours answers every item's query on store s.
func neighbours(t *testing.T, s graph.Store, sid string, items []graph.Evidence) [][]graph.Neighbor {
	t.Helper()
	q := make([][]float32, len(items))
	for i, e := range items {
		q[i] = e.Embedding
	}
	res, err := s.NearestEvidence(context.Background(), sid, q, 0.8)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// recall is the share of the exact answers' pairs the approximate ones
// hold; every approximate pair must be an exact one with the same cosine.
func recall(t *testing.T, exact, approx [][]graph.Neighbor) float64 {
	t.Helper()
	want, got := 0, 0
	for i := range exact {
		cos := map[string]float64{}
		for _, nb := range exact[i] {
			cos[nb.ID] = nb.Cosine
		}
		want += len(exact[i])
		for _, nb := range approx[i] {
			c, ok := cos[nb.ID]
			if !ok || c != nb.Cosine {
				t.Fatalf("query %d: %s at %v is not an exact answer (%v, %v)", i, nb.ID, nb.Cosine, c, ok)
			}
			got++
		}
	}
	if want == 0 {
		t.Fatal("no pairs over the threshold: the test proves nothing")
	}
	return float64(got) / float64(want)
}

// TestANNSurvivesReopen fills a session past MinItems, queries it through
// the index, reopens the file (the index is rebuilt from it) and queries
// again; both answer as the exact scan does, new evidence is found after
// the index was built, and a reset forgets the old rows.
func TestANNSurvivesReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "graph.db")
	opt := embedded.DefaultANNOptions() // the threshold queries' default start
	opt.MinItems = 256
	s, err := embedded.OpenWith(path, opt)
	if err != nil {
		t.Fatal(err)
	}
	const sid = "ann-reopen"
	if err := s.CreateSession(ctx, graph.Session{ID: sid, Goal: "g"}, graph.Task{Description: "g", Embedding: graphtest.Unit(0)}); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	items := pageItems(rng, 2000, 1, "a")
	for b := 0; b < len(items); b += 500 {
		if _, err := s.AddEvidence(ctx, sid, fmt.Sprint("b", b), graph.RootShortID, items[b:b+500]); err != nil {
			t.Fatal(err)
		}
	}
	probe := items[:400]
	before := neighbours(t, s, sid, probe)
	late := pageItems(rng, 16, 0, "late") // an older iteration: found by the index walk
	if _, err := s.AddEvidence(ctx, sid, "late", graph.RootShortID, late); err != nil {
		t.Fatal(err)
	}
	afterAdd := neighbours(t, s, sid, late)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	exactOpt := embedded.DefaultANNOptions()
	exactOpt.MinItems = 0 // every query scans exactly
	exactStore, err := embedded.OpenWith(path, exactOpt)
	if err != nil {
		t.Fatal(err)
	}
	exact := neighbours(t, exactStore, sid, probe)
	exactLate := neighbours(t, exactStore, sid, late)
	if err := exactStore.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = embedded.OpenWith(path, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	reopened := neighbours(t, s, sid, probe)

	for name, r := range map[string]float64{
		"before reopen":   recall(t, exact, before),
		"after reopen":    recall(t, exact, reopened),
		"added after use": recall(t, exactLate, afterAdd),
	} {
		if r < 0.99 {
			t.Errorf("%s: recall %.4f, want >= 0.99", name, r)
		}
		t.Logf("%s: recall %.4f", name, r)
	}

	if err := s.ResetSession(ctx, sid); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateSession(ctx, graph.Session{ID: sid, Goal: "g"}, graph.Task{Description: "g", Embedding: graphtest.Unit(0)}); err != nil {
		t.Fatal(err)
	}
	if got := neighbours(t, s, sid, probe[:1]); len(got[0]) != 0 {
		t.Fatalf("after reset: %d neighbours of an old item, want 0", len(got[0]))
	}
}

// TestNearestCosineThroughIndex compares the index's largest cosines with
// the exact scan's over 3,000 page-like items: each approximate answer is
// the cosine of a real item, so never above the exact one, and equal for
// at least 99% of queries.
func TestNearestCosineThroughIndex(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "graph.db")
	s, err := embedded.OpenWith(path, embedded.ANNOptions{MinItems: 256, M: 16, EfConstruction: 100, EfSearch: 64})
	if err != nil {
		t.Fatal(err)
	}
	const sid = "ann-max"
	if err := s.CreateSession(ctx, graph.Session{ID: sid, Goal: "g"}, graph.Task{Description: "g", Embedding: graphtest.Unit(0)}); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	items := pageItems(rng, 3000, 1, "a")
	if _, err := s.AddEvidence(ctx, sid, "all", graph.RootShortID, items); err != nil {
		t.Fatal(err)
	}
	probe := pageItems(rng, 400, 2, "probe") // new pages, and chunks of known ones below
	for i := range 100 {
		probe[i].Embedding = items[8*i+1].Embedding
	}
	q := make([][]float32, len(probe))
	for i, e := range probe {
		q[i] = e.Embedding
	}
	approx, err := s.NearestCosine(ctx, sid, q)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	exactOpt := embedded.DefaultANNOptions()
	exactOpt.MinItems = 0
	es, err := embedded.OpenWith(path, exactOpt)
	if err != nil {
		t.Fatal(err)
	}
	defer es.Close()
	exact, err := es.NearestCosine(ctx, sid, q)
	if err != nil {
		t.Fatal(err)
	}
	same := 0
	for i := range q {
		if approx[i] > exact[i]+1e-12 {
			t.Fatalf("query %d: index answer %v above the exact %v", i, approx[i], exact[i])
		}
		if approx[i] == exact[i] {
			same++
		}
	}
	if exact[0] < 0.999 {
		t.Fatalf("a stored item's own embedding: largest cosine %v, want 1", exact[0])
	}
	if r := float64(same) / float64(len(q)); r < 0.99 {
		t.Fatalf("index equals the exact maximum for %.3f of queries, want >= 0.99", r)
	}
	t.Logf("index equals the exact maximum for %d of %d queries", same, len(q))
}

func TestOpenWithRefusesBadOptions(t *testing.T) {
	if _, err := embedded.OpenWith(filepath.Join(t.TempDir(), "g.db"), embedded.ANNOptions{MinItems: 10, M: 1, EfSearch: 64}); err == nil {
		t.Fatal("M = 1 accepted")
	}
}
