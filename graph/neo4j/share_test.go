package neo4j_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/lethe-research/lethe/graph"
)

// TestNearestBesideACrowd: sessions of near-identical content share one
// vector index, so a small session's nearest items sit among thousands of
// other sessions'. A call that labels the session scans, and must answer
// exactly what a scan of the session's own items answers; so must
// NearestCosine for a session under 1/64 of the index (firstK). The index
// path must answer only the session's own items, with the index's recall
// (docs/similarity-index.md, "Exactness").
func TestNearestBesideACrowd(t *testing.T) {
	s := open(t, serverConfig(t))
	ctx := t.Context()
	const dim = 24 // an index of its own, so that the test knows its total
	rng := rand.New(rand.NewPCG(7, 11))
	bases := make([][]float64, 12)
	for i := range bases {
		bases[i] = clusterUnit(rng, dim, nil, 0)
	}
	item := func(j int) []float32 { return toF32(clusterUnit(rng, dim, bases[j%len(bases)], 0.05)) }
	mk := func(name string, n int) (string, [][]float32) { return clusterSession(t, s, "crowd-"+name, n, item) }
	crowd, crowdEmbs := mk("crowd", 3000)
	if _, err := s.NearestEvidence(ctx, crowd, crowdEmbs[:1], 0.9); err != nil { // labels the crowd
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		n    int
	}{{"small", 24}, {"mid", 300}} { // 0.8% and 9% of the index
		sid, embs := mk(c.name, c.n)
		queries := [][]float32{item(1), item(2), item(5)}
		for pass := range 2 { // the first call labels (and scans); the second queries as a sync does
			got, err := s.NearestEvidence(ctx, sid, queries, 0.9)
			if err != nil {
				t.Fatal(err)
			}
			cos, err := s.NearestCosine(ctx, sid, queries)
			if err != nil {
				t.Fatal(err)
			}
			ids := evidenceIDs(t, s, sid)
			for i, q := range queries {
				want, best := exactAmong(q, embs, ids, 0.9)
				if len(want) == 0 {
					t.Fatalf("%s query %d has no neighbour over 0.9: the test compares nothing", c.name, i)
				}
				what := fmt.Sprintf("%s pass %d query %d", c.name, pass, i)
				checkNeighbours(t, what, neighbourIDs(got[i]), want, pass == 0)
				checkCosine(t, what, cos[i], best, pass == 0 || c.name == "small")
			}
		}
	}
}

// clusterSession creates a session of n evidence items on its root task,
// item i's embedding item(i), and returns its id and the embeddings.
func clusterSession(t *testing.T, s graph.Store, name string, n int, item func(int) []float32) (string, [][]float32) {
	t.Helper()
	ctx := t.Context()
	sid := fmt.Sprintf("%s-%d", name, time.Now().UnixNano())
	t.Cleanup(func() { _ = s.ResetSession(context.Background(), sid) })
	if err := s.CreateSession(ctx, graph.Session{ID: sid, Goal: "g", GoalDocEmb: item(0)}, graph.Task{Embedding: item(0)}); err != nil {
		t.Fatal(err)
	}
	embs := make([][]float32, n)
	evs := make([]graph.Evidence, n)
	for i := range n {
		embs[i] = item(i)
		evs[i] = graph.Evidence{Content: fmt.Sprintf("%s %d", name, i), SourceURL: "https://example.org/" + name,
			Kind: graph.KindHTML, Strength: 0.5, Embedding: embs[i]}
	}
	if _, err := s.AddEvidence(ctx, sid, "page", graph.RootShortID, evs); err != nil {
		t.Fatal(err)
	}
	return sid, embs
}

// checkNeighbours compares one query's neighbours with the exact ones:
// equal when the call scanned (its first, which labels the session); from
// the index, a subset with recall of at least 0.9.
func checkNeighbours(t *testing.T, what string, got, want []string, scan bool) {
	t.Helper()
	if scan {
		if !slices.Equal(got, want) {
			t.Errorf("%s (scan): %d neighbours, want %d", what, len(got), len(want))
		}
		return
	}
	hit := 0
	for _, id := range got {
		if !slices.Contains(want, id) {
			t.Errorf("%s (index): %s is not a neighbour of the session over the threshold", what, id)
			continue
		}
		hit++
	}
	if float64(hit) < 0.9*float64(len(want)) {
		t.Errorf("%s (index): recall %d of %d", what, hit, len(want))
	}
}

// checkCosine compares a nearest cosine with the exact one: equal when
// the call scanned (the first, or a share under 1/64); from the index, no
// higher and over the threshold.
func checkCosine(t *testing.T, what string, cos, best float64, scan bool) {
	t.Helper()
	if scan && math.Abs(cos-best) > 1e-9 {
		t.Errorf("%s (scan): nearest cosine %v, want %v", what, cos, best)
	}
	if !scan && (cos > best+1e-9 || cos < 0.9) {
		t.Errorf("%s (index): nearest cosine %v, exact %v", what, cos, best)
	}
}

// clusterUnit is a unit vector near centre (spread: the noise per
// coordinate), or anywhere when centre is nil.
func clusterUnit(rng *rand.Rand, dim int, centre []float64, spread float64) []float64 {
	v := make([]float64, dim)
	var n float64
	for i := range v {
		v[i] = rng.NormFloat64() * spread
		if centre == nil {
			v[i] = rng.NormFloat64()
		} else {
			v[i] += centre[i]
		}
		n += v[i] * v[i]
	}
	for i := range v {
		v[i] /= math.Sqrt(n)
	}
	return v
}

func toF32(v []float64) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out
}

// evidenceIDs maps each item's content index to its id, in AddEvidence's
// order (content "<name> <i>").
func evidenceIDs(t *testing.T, s graph.Store, sid string) map[int]string {
	t.Helper()
	ev, err := s.Evidence(t.Context(), sid, "")
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]string{}
	for _, e := range ev {
		var name string
		var i int
		if _, err := fmt.Sscanf(e.Content, "%s %d", &name, &i); err == nil {
			out[i] = e.ID
		}
	}
	return out
}

// exactAmong is the ids of the items with cosine ≥ threshold to q, sorted,
// and the largest cosine floored at 0, computed here from the embeddings.
func exactAmong(q []float32, embs [][]float32, ids map[int]string, threshold float64) ([]string, float64) {
	uq := graph.UnitVector(q)
	var out []string
	best := 0.0
	for i, e := range embs {
		c := graph.Dot(uq, graph.UnitVector(e))
		best = max(best, c)
		if c >= threshold {
			out = append(out, ids[i])
		}
	}
	slices.Sort(out)
	return out, best
}

func neighbourIDs(ns []graph.Neighbor) []string {
	var out []string
	for _, n := range ns {
		out = append(out, n.ID)
	}
	slices.Sort(out)
	return out
}

// TestNearestWithAZeroEmbedding: an item whose embedding is all zeros (an
// embedder's answer for nothing) gets no index label and no neighbours,
// and the scans, which compare in the server, still answer for the rest.
func TestNearestWithAZeroEmbedding(t *testing.T) {
	s := open(t, serverConfig(t))
	ctx := t.Context()
	sid := fmt.Sprintf("zero-emb-%d", time.Now().UnixNano())
	t.Cleanup(func() { _ = s.ResetSession(context.Background(), sid) })
	rng := rand.New(rand.NewPCG(3, 5))
	base := clusterUnit(rng, 24, nil, 0)
	if err := s.CreateSession(ctx, graph.Session{ID: sid, Goal: "g", GoalDocEmb: toF32(base)}, graph.Task{Embedding: toF32(base)}); err != nil {
		t.Fatal(err)
	}
	evs := []graph.Evidence{{Content: "zero", SourceURL: "https://example.org/z", Kind: graph.KindHTML, Strength: 0.5, Embedding: make([]float32, 24)}}
	for i := range 5 {
		evs = append(evs, graph.Evidence{Content: fmt.Sprintf("near %d", i), SourceURL: "https://example.org/n", Kind: graph.KindHTML, Strength: 0.5,
			Embedding: toF32(clusterUnit(rng, 24, base, 0.02))})
	}
	if _, err := s.AddEvidence(ctx, sid, "page", graph.RootShortID, evs); err != nil {
		t.Fatal(err)
	}
	q := [][]float32{toF32(base)}
	for pass := range 2 {
		got, err := s.NearestEvidence(ctx, sid, q, 0.9)
		if err != nil {
			t.Fatalf("pass %d: %v", pass, err)
		}
		if len(got[0]) != 5 {
			t.Errorf("pass %d: %d neighbours, want the 5 near items", pass, len(got[0]))
		}
		cos, err := s.NearestCosine(ctx, sid, q)
		if err != nil || cos[0] < 0.9 {
			t.Fatalf("pass %d: nearest cosine %v, %v", pass, cos, err)
		}
	}
}

// TestNearestCosineFirstOfEmptySession: the first NearestCosine of a
// process for a session with no evidence in the vector index (none yet, as
// when its first pages are judged for novelty) reads the session's share of
// an index that holds none of it; the count must answer zero and the call
// nothing near, not fail on a missing row.
func TestNearestCosineFirstOfEmptySession(t *testing.T) {
	s := open(t, serverConfig(t))
	const dim = 20 // an index of its own
	rng := rand.New(rand.NewPCG(3, 5))
	base := clusterUnit(rng, dim, nil, 0)
	item := func(int) []float32 { return toF32(clusterUnit(rng, dim, base, 0.05)) }
	sid, _ := clusterSession(t, s, "empty", 0, item)
	cos, err := s.NearestCosine(t.Context(), sid, [][]float32{item(0)})
	if err != nil {
		t.Fatal(err)
	}
	if len(cos) != 1 || cos[0] != 0 {
		t.Fatalf("NearestCosine in a session without evidence = %v, want [0]", cos)
	}
}
