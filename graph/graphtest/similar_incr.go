package graphtest

// Lane "similar" (#14): the incremental SIMILAR_TO sync against the full
// recomputation, on both backends.

import (
	"errors"
	"fmt"
	"math"
	"reflect"
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

// testNearestCosine checks the largest cosine of each query with the
// session's evidence: exact values, the floor at 0, evidence added after
// a first call, and an unknown session.
func testNearestCosine(t *testing.T, s graph.Store) {
	ctx := ctxOf(t)
	sid := newSession(t, s)
	addEv(t, s, sid, "k",
		graph.Evidence{Content: "a", Strength: 0.5, Embedding: Unit(0), CreatedIter: 1},
		graph.Evidence{Content: "b", Strength: 0.5, Embedding: Blend(1, 2, 0.8), CreatedIter: 2},
		graph.Evidence{Content: "no vector", Strength: 0.5, CreatedIter: 3},
	)
	neg := Unit(5)
	neg[5] = -1
	queries := [][]float32{Unit(0), Blend(1, 4, 0.6), Unit(5), neg, make([]float32, Dim)}
	got, err := s.NearestCosine(ctx, sid, queries)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{1, 0.6 * 0.8, 0, 0, 0}
	eq(t, "answers", len(got), len(want))
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-6 {
			t.Fatalf("query %d: largest cosine %v, want %v (all %v)", i, got[i], want[i], got)
		}
	}
	addEv(t, s, sid, "k2", graph.Evidence{Content: "c", Strength: 0.5, Embedding: Blend(5, 6, 0.9), CreatedIter: 4})
	got, err = s.NearestCosine(ctx, sid, [][]float32{Unit(5), Unit(0)})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got[0]-0.9) > 1e-6 || math.Abs(got[1]-1) > 1e-6 {
		t.Fatalf("after new evidence: %v, want [0.9 1]", got)
	}
	if _, err := s.NearestCosine(ctx, "no-such-session", [][]float32{Unit(0)}); !errors.Is(err, graph.ErrNotFound) {
		t.Fatalf("unknown session: %v", err)
	}
}

// testFetchedSources: the URLs of fetched evidence are found, those of
// model-written evidence, unknown URLs and "" are not, a link to existing
// content adds nothing, and an unknown session is ErrNotFound.
func testFetchedSources(t *testing.T, s graph.Store) {
	ctx := ctxOf(t)
	sid := newSession(t, s)
	const page, pdf, model = "https://example.org/page", "https://example.org/doc.pdf", "https://example.org/said-by-model"
	addEv(t, s, sid, "k",
		graph.Evidence{Content: "a", SourceURL: page, Kind: graph.KindHTML, Strength: 0.5, Embedding: Unit(0), CreatedIter: 1},
		graph.Evidence{Content: "b", SourceURL: pdf, Kind: graph.KindPDF, Strength: 0.5, Embedding: Unit(1), CreatedIter: 2},
		graph.Evidence{Content: "c", SourceURL: model, Kind: graph.KindLLM, Strength: 0.5, Embedding: Unit(2), CreatedIter: 2},
	)
	// The same content again from another URL links to the first record.
	addEv(t, s, sid, "k2", graph.Evidence{Content: "a", SourceURL: "https://example.org/mirror", Kind: graph.KindHTML, Strength: 0.5, Embedding: Unit(0), CreatedIter: 3})
	got, err := s.FetchedSources(ctx, sid, []string{page, pdf, model, "https://example.org/never", "", "https://example.org/mirror"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{page: true, pdf: true}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("fetched sources %v, want %v", got, want)
	}
	if got, err := s.FetchedSources(ctx, sid, nil); err != nil || len(got) != 0 {
		t.Fatalf("no URLs: %v, %v", got, err)
	}
	if _, err := s.FetchedSources(ctx, "no-such-session", []string{page}); !errors.Is(err, graph.ErrNotFound) {
		t.Fatalf("unknown session: %v", err)
	}
}

// testEvidenceRows: the rows are Evidence's items reduced to ID,
// SessionID, ContentHash, Kind, Strength, Embedding and CreatedIter, in
// the same order, with strengths as last set, whatever the content holds
// (here the text of the fields' own keys).
func testEvidenceRows(t *testing.T, s graph.Store) {
	ctx := ctxOf(t)
	sid := newSession(t, s)
	addEv(t, s, sid, "k",
		graph.Evidence{Content: `quote " and ,"kind":"llm","strength":9}`, SourceURL: "https://example.org/a", Title: `T ,"kind":"x"`, Kind: graph.KindHTML, Strength: 0.25, Embedding: Unit(0), CreatedIter: 2},
		graph.Evidence{Content: "model finding", Kind: graph.KindLLM, Strength: 0.7, Embedding: Unit(1), CreatedIter: 1},
		graph.Evidence{Content: "no vector \\ backslash", Kind: graph.KindPDF, Strength: 1e-7, CreatedIter: 2},
	)
	ev := addEv(t, s, sid, "k2", graph.Evidence{Content: "late", Kind: graph.KindHTML, Strength: 0.5, Embedding: Blend(2, 3, 0.6), CreatedIter: 0})
	if err := s.SetStrengths(ctx, sid, map[string]float64{ev[0].ID: 0.875}); err != nil {
		t.Fatal(err)
	}
	all, err := s.Evidence(ctx, sid, "")
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.EvidenceRows(ctx, sid)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "rows", len(got), len(all))
	for i, e := range all {
		want := graph.Evidence{ID: e.ID, SessionID: e.SessionID, ContentHash: e.ContentHash, Kind: e.Kind, Strength: e.Strength,
			Embedding: e.Embedding, CreatedIter: e.CreatedIter}
		if len(want.Embedding) == 0 {
			want.Embedding = nil
		}
		g := got[i]
		if len(g.Embedding) == 0 {
			g.Embedding = nil
		}
		if !reflect.DeepEqual(g, want) {
			t.Fatalf("row %d: %+v, want %+v", i, g, want)
		}
	}
	eq(t, "refined strength", got[0].Strength, 0.875)
	if _, err := s.EvidenceRows(ctx, "no-such-session"); !errors.Is(err, graph.ErrNotFound) {
		t.Fatalf("unknown session: %v", err)
	}
}
