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
// other sessions'. A session under 1/64 of the index scans, and must
// answer exactly what a scan of its own items answers; one over it starts
// the index at k = 64/share (firstK), and must answer only its own items
// with the index's recall (docs/similarity-index.md, "Exactness").
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
	mk := func(name string, n int) (string, [][]float32) {
		sid := fmt.Sprintf("crowd-%s-%d", name, time.Now().UnixNano())
		t.Cleanup(func() { _ = s.ResetSession(context.Background(), sid) })
		if err := s.CreateSession(ctx, graph.Session{ID: sid, Goal: "g", GoalDocEmb: item(0)}, graph.Task{Embedding: item(0)}); err != nil {
			t.Fatal(err)
		}
		var embs [][]float32
		var evs []graph.Evidence
		for i := range n {
			e := item(i)
			embs = append(embs, e)
			evs = append(evs, graph.Evidence{Content: fmt.Sprintf("%s %d", name, i), SourceURL: "https://example.org/" + name,
				Kind: graph.KindHTML, Strength: 0.5, Embedding: e})
		}
		if _, err := s.AddEvidence(ctx, sid, "page", graph.RootShortID, evs); err != nil {
			t.Fatal(err)
		}
		return sid, embs
	}
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
				checkNearest(t, fmt.Sprintf("%s pass %d query %d", c.name, pass, i), neighbourIDs(got[i]), want, cos[i], best, c.name == "small" || pass == 0)
			}
		}
	}
}

// checkNearest compares one query's answer with the exact one: equal on
// the scan path; on the index path a subset with recall of at least 0.9
// and a nearest cosine no higher than the exact one, over the threshold.
func checkNearest(t *testing.T, what string, got, want []string, cos, best float64, exact bool) {
	t.Helper()
	if exact {
		if !slices.Equal(got, want) {
			t.Errorf("%s (scan): %d neighbours, want %d", what, len(got), len(want))
		}
		if math.Abs(cos-best) > 1e-9 {
			t.Errorf("%s (scan): nearest cosine %v, want %v", what, cos, best)
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
	if cos > best+1e-9 || cos < 0.9 {
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
