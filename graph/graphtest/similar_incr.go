package graphtest

// Lane "similar" (#14): the incremental SIMILAR_TO sync against the full
// recomputation, on both backends.

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/lethe-research/lethe/graph"
)

// clusteredItems is n items in tight groups of Dim-dimensional vectors
// (many pairs over 0.9, so that the degree cap bites), created at iter.
func clusteredItems(seed uint64, n, iter int, tag string) []graph.Evidence {
	rnd := func() float64 {
		seed ^= seed << 13
		seed ^= seed >> 7
		seed ^= seed << 17
		return float64(seed%1_000_000)/1_000_000 - 0.5
	}
	out := make([]graph.Evidence, n)
	for i := range out {
		g := int(seed % 5)
		v := make([]float32, Dim)
		var nn float64
		for d := range v {
			x := 0.15 * rnd()
			if d == g || d == g+5 {
				x += 1
			}
			v[d] = float32(x)
			nn += x * x
		}
		for d := range v {
			v[d] = float32(float64(v[d]) / math.Sqrt(nn))
		}
		host := fmt.Sprintf("https://h%d.example/%s/%d", i%3, tag, i)
		out[i] = graph.Evidence{Content: fmt.Sprintf("%s item %d", tag, i), SourceURL: host, Strength: 0.5, Embedding: v, CreatedIter: iter}
	}
	return out
}

// testSyncIncremental adds evidence in waves (one late, with an older
// CreatedIter) and checks after each wave that the incremental sync of one
// session leaves exactly the edges, labels and strengths of a full
// exhaustive sync of a twin session.
func testSyncIncremental(t *testing.T, s graph.Store) {
	ctx := ctxOf(t)
	inc, full := newSession(t, s), newSession(t, s)
	nli := &fakeNLI{}
	p := graph.SimilarParams{Threshold: 0.9, MaxPerNode: 3}
	waves := []struct {
		iter, n     int
		incremental bool
	}{{1, 40, false}, {2, 10, true}, {3, 12, true}, {3, 3, true}, {1, 4, false}, {4, 1, true}, {5, 0, true}}
	for w, wave := range waves {
		items := clusteredItems(uint64(w+1)*7919, wave.n, wave.iter, fmt.Sprintf("w%d", w))
		key := fmt.Sprintf("wave%d", w)
		if len(items) > 0 {
			addEv(t, s, inc, key, items...)
			addEv(t, s, full, key, items...)
		}
		st, err := graph.SyncSimilar(ctx, s, inc, p, nli)
		if err != nil {
			t.Fatalf("wave %d: incremental: %v", w, err)
		}
		eq(t, fmt.Sprintf("wave %d incremental", w), st.Incremental, wave.incremental)
		fp := p
		fp.Full, fp.Probes = true, 1<<20
		if _, err := graph.SyncSimilar(ctx, s, full, fp, nli); err != nil {
			t.Fatalf("wave %d: full: %v", w, err)
		}
		sameSimilar(t, s, w, inc, full)
	}
}

// sameSimilar compares the SIMILAR_TO edges and the strengths of two
// sessions holding the same evidence.
func sameSimilar(t *testing.T, s graph.Store, wave int, a, b string) {
	t.Helper()
	norm := func(sid string) map[string]string {
		m := map[string]string{}
		for _, e := range edges(t, s, sid, graph.SimilarTo) {
			k := strings.TrimPrefix(e.From, sid) + " " + strings.TrimPrefix(e.To, sid)
			m[k] = fmt.Sprintf("%.15f %s", e.Weight, e.Label)
		}
		evs, err := s.Evidence(ctxOf(t), sid, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			m["strength "+strings.TrimPrefix(e.ID, sid)] = fmt.Sprintf("%.15f", e.Strength)
		}
		return m
	}
	ma, mb := norm(a), norm(b)
	nEdges := 0
	for k, v := range mb {
		if !strings.HasPrefix(k, "strength") {
			nEdges++
		}
		if ma[k] != v {
			t.Fatalf("wave %d: %s: incremental %q, full %q", wave, k, ma[k], v)
		}
	}
	if len(ma) != len(mb) {
		t.Fatalf("wave %d: incremental has %d entries, full %d", wave, len(ma), len(mb))
	}
	if nEdges == 0 {
		t.Fatalf("wave %d: no SIMILAR_TO edges: the test proves nothing", wave)
	}
}

// testNearestEvidence checks the reads of the incremental sync, including
// a reset that re-creates the session with other evidence.
func testNearestEvidence(t *testing.T, s graph.Store) {
	ctx := ctxOf(t)
	sid := newSession(t, s)
	ev := addEv(t, s, sid, "k",
		graph.Evidence{Content: "a", Strength: 0.5, Embedding: Unit(0), CreatedIter: 1},
		graph.Evidence{Content: "b", Strength: 0.5, Embedding: Blend(0, 1, 0.95), CreatedIter: 2},
		graph.Evidence{Content: "c", Strength: 0.5, Embedding: Unit(3), CreatedIter: 2},
		graph.Evidence{Content: "no vector", Strength: 0.5, CreatedIter: 3},
	)
	res, err := s.NearestEvidence(ctx, sid, [][]float32{Unit(0), Unit(7)}, 0.9)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "answers", len(res), 2)
	eq(t, "neighbours of a", len(res[0]), 2)
	eq(t, "nearest", res[0][0].ID, ev[0].ID)
	eq(t, "second", res[0][1].ID, ev[1].ID)
	if math.Abs(res[0][1].Cosine-0.95) > 1e-6 {
		t.Fatalf("cosine %v, want 0.95", res[0][1].Cosine)
	}
	eq(t, "neighbours of an empty direction", len(res[1]), 0)

	total, err := s.EvidenceCount(ctx, sid)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "total", total, 4)
	if _, err := s.EvidenceCount(ctx, "no-such-session"); !errors.Is(err, graph.ErrNotFound) {
		t.Fatalf("count of an unknown session: %v", err)
	}
	byID, err := s.EvidenceByIDs(ctx, sid, []string{ev[2].ID, ev[0].ID})
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "by ids", len(byID), 2)
	eq(t, "by ids order", byID[0].ID, ev[0].ID)
	if _, err := s.EvidenceByIDs(ctx, sid, []string{graph.EvidenceID(sid, "nope")}); !errors.Is(err, graph.ErrNotFound) {
		t.Fatalf("unknown id: %v", err)
	}
	if _, err := s.NearestEvidence(ctx, "no-such-session", [][]float32{Unit(0)}, 0.9); !errors.Is(err, graph.ErrNotFound) {
		t.Fatalf("unknown session: %v", err)
	}

	// Reset and re-create under the same id: the old vectors are gone.
	if err := s.ResetSession(ctx, sid); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateSession(ctx, graph.Session{ID: sid, Goal: "g"}, graph.Task{ShortID: graph.RootShortID, Description: "g", Embedding: Unit(0)}); err != nil {
		t.Fatal(err)
	}
	fresh := addEv(t, s, sid, "k2", graph.Evidence{Content: "d", Strength: 0.5, Embedding: Blend(0, 2, 0.99), CreatedIter: 1})
	res, err = s.NearestEvidence(ctx, sid, [][]float32{Unit(0)}, 0.9)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "after reset", len(res[0]), 1)
	eq(t, "after reset id", res[0][0].ID, fresh[0].ID)
}
