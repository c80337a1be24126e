package graphtest

// The local incremental sync (#14, graph/similar_local.go): the degree cap
// recomputed around the new evidence only must equal the full
// recomputation, on both backends, through cascades, NLI deferral and a
// crash between its commit and its watermark.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/lethe-research/lethe/graph"
)

// testSimilarEdgesOf checks the read of the local sync against the
// session's SIMILAR_TO edges filtered by endpoint.
func testSimilarEdgesOf(t *testing.T, s graph.Store) {
	ctx := ctxOf(t)
	sid := newSession(t, s)
	ev := addEv(t, s, sid, "k", clusteredItems(99, 30, 1, "of")...)
	if _, err := graph.SyncSimilar(ctx, s, sid, graph.SimilarParams{Threshold: 0.9, MaxPerNode: 3}, nil); err != nil {
		t.Fatal(err)
	}
	all, err := s.SimilarEdges(ctx, sid)
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{ev[0].ID, ev[7].ID, ev[7].ID, ev[12].ID, graph.EvidenceID(sid, "nope"), "not-an-id"}
	got, err := s.SimilarEdgesOf(ctx, sid, ids)
	if err != nil {
		t.Fatal(err)
	}
	var want []graph.Edge
	for _, e := range all {
		if slices.Contains(ids, e.From) || slices.Contains(ids, e.To) {
			want = append(want, e)
		}
	}
	if len(want) < 3 {
		t.Fatalf("only %d edges touch the chosen items: the test proves nothing", len(want))
	}
	eq(t, "edges of", fmt.Sprint(got), fmt.Sprint(want))
	none, err := s.SimilarEdgesOf(ctx, sid, nil)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "edges of nothing", len(none), 0)
	if _, err := s.SimilarEdgesOf(ctx, "no-such-session", ids); !errors.Is(err, graph.ErrNotFound) {
		t.Fatalf("unknown session: %v", err)
	}
}

// testSyncLocalEqualsFull grows a session in waves of dense items (every
// new item over the cap of its group, so that each wave displaces edges
// and the cap cascades) and compares it after every wave with a twin that
// runs the full exhaustive sync.
func testSyncLocalEqualsFull(t *testing.T, s graph.Store) {
	ctx := ctxOf(t)
	local, full := newSession(t, s), newSession(t, s)
	p := graph.SimilarParams{Threshold: 0.9, MaxPerNode: 3}
	fp := p
	fp.Full, fp.Probes = true, 1<<20
	sizes := []int{60, 1, 7, 15, 2, 11, 4, 9, 1, 13}
	displaced := 0
	for w, n := range sizes {
		items := clusteredItems(uint64(w+3)*104729, n, w+1, fmt.Sprintf("d%d", w))
		key := fmt.Sprintf("wave%d", w)
		addEv(t, s, local, key, items...)
		addEv(t, s, full, key, items...)
		st, err := graph.SyncSimilar(ctx, s, local, p, nil)
		if err != nil {
			t.Fatalf("wave %d: local: %v", w, err)
		}
		if w > 0 && !(st.Incremental && st.Local) {
			t.Fatalf("wave %d: not the local sync: %+v", w, st)
		}
		if _, err := graph.SyncSimilar(ctx, s, full, fp, nil); err != nil {
			t.Fatalf("wave %d: full: %v", w, err)
		}
		sameSimilar(t, s, w, local, full)
		eq(t, fmt.Sprintf("wave %d edge count", w), st.Edges, len(edges(t, s, local, graph.SimilarTo)))
		displaced += st.Displaced
	}
	if displaced == 0 {
		t.Fatal("no wave displaced an edge: the cascade was never compared with the full sync")
	}
	t.Logf("items displaced over the waves: %d", displaced)
}

// testSyncLocalDeferredLabels bounds the classifier per sync, so that
// labels wait: the pairs left unlabelled far from the newest evidence
// must still be labelled by later syncs, as the full sync labels them.
func testSyncLocalDeferredLabels(t *testing.T, s graph.Store) {
	ctx := ctxOf(t)
	local, full := newSession(t, s), newSession(t, s)
	nli := &fakeNLI{}
	p := graph.SimilarParams{Threshold: 0.9, MaxPerNode: 3, MaxClassify: 4}
	for w, n := range []int{40, 5, 5} {
		items := clusteredItems(uint64(w+11)*7919, n, w+1, fmt.Sprintf("l%d", w))
		addEv(t, s, local, fmt.Sprint("w", w), items...)
		addEv(t, s, full, fmt.Sprint("w", w), items...)
		if _, err := graph.SyncSimilar(ctx, s, local, p, nli); err != nil {
			t.Fatalf("wave %d: %v", w, err)
		}
	}
	p.MaxClassify = 0
	st, err := graph.SyncSimilar(ctx, s, local, p, nli)
	if err != nil {
		t.Fatal(err)
	}
	if st.Local {
		t.Fatalf("labels were waiting, yet the sync ran locally: %+v", st)
	}
	for _, e := range edges(t, s, local, graph.SimilarTo) {
		if e.Label == "" {
			t.Fatalf("edge %s-%s still unlabelled after an unbounded sync", e.From, e.To)
		}
	}
	fp := p
	fp.Full, fp.Probes = true, 1<<20
	if _, err := graph.SyncSimilar(ctx, s, full, fp, nli); err != nil {
		t.Fatal(err)
	}
	sameSimilar(t, s, 0, local, full)
	st, err = graph.SyncSimilar(ctx, s, local, p, nli)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Local {
		t.Fatalf("every label known, yet the sync was not local: %+v", st)
	}
}

// testSyncLocalCrashBeforeMark: a local sync with the classifier that dies
// at its commit writes nothing (the edges, strengths and watermark are one
// Store.Commit), and leaves no pair unlabelled once syncs run again.
func testSyncLocalCrashBeforeMark(t *testing.T, s graph.Store) {
	ctx := ctxOf(t)
	sid := newSession(t, s)
	nli := &fakeNLI{}
	p := graph.SimilarParams{Threshold: 0.9, MaxPerNode: 3}
	addEv(t, s, sid, "w0", clusteredItems(5, 40, 1, "c0")...)
	if _, err := graph.SyncSimilar(ctx, s, sid, p, nli); err != nil {
		t.Fatal(err)
	}
	addEv(t, s, sid, "w1", clusteredItems(6, 12, 2, "c1")...)
	before := edges(t, s, sid, graph.SimilarTo)
	mark, err := s.GetBlob(ctx, sid, graph.SimilarMarkBlob)
	if err != nil {
		t.Fatal(err)
	}
	crash := &commitFails{Store: s}
	bounded := p
	bounded.MaxClassify = 2 // the commit holds unlabelled pairs
	if _, err := graph.SyncSimilar(ctx, crash, sid, bounded, nli); err == nil || !crash.failed {
		t.Fatalf("the crash did not happen: err %v, failed %v", err, crash.failed)
	}
	if after := edges(t, s, sid, graph.SimilarTo); !slices.Equal(after, before) {
		t.Fatalf("a sync that died at its commit changed the edges: %d before, %d after", len(before), len(after))
	}
	if now, err := s.GetBlob(ctx, sid, graph.SimilarMarkBlob); err != nil || string(now) != string(mark) {
		t.Fatalf("a sync that died at its commit moved the watermark (err %v)", err)
	}
	for i := 0; i < 41; i++ {
		if _, err := graph.SyncSimilar(ctx, s, sid, bounded, nli); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	for _, e := range edges(t, s, sid, graph.SimilarTo) {
		if e.Label == "" {
			n++
		}
	}
	if n > 0 {
		t.Fatalf("%d edges never labelled after the crash", n)
	}
}

// refinedShards is a session of 30 clustered items (seed), synced with
// NLI labels so that strengths are refined, and its strength shards: the
// sync parameters and classifier, every shard key, and the shards held.
func refinedShards(t *testing.T, s graph.Store, seed uint64) (string, graph.SimilarParams, *fakeNLI, []string, map[string][]byte) {
	t.Helper()
	ctx := ctxOf(t)
	sid := newSession(t, s)
	nli := &fakeNLI{}
	p := graph.SimilarParams{Threshold: 0.9, MaxPerNode: 3}
	items := clusteredItems(seed, 30, 1, "agree")
	for i := range items {
		items[i].Content = fmt.Sprintf("agree %d", i)
	}
	addEv(t, s, sid, "w0", items...)
	if st, err := graph.SyncSimilar(ctx, s, sid, p, nli); err != nil || st.Refined == 0 {
		t.Fatalf("first sync: %+v, %v (nothing refined proves nothing)", st, err)
	}
	keys := make([]string, 1024)
	for i := range keys {
		keys[i] = fmt.Sprintf("%s/%03x", graph.StrengthBaseBlob, i)
	}
	shards, err := s.GetBlobs(ctx, sid, keys)
	if err != nil || len(shards) == 0 {
		t.Fatalf("no strength shards after a sync: %d, %v", len(shards), err)
	}
	return sid, p, nli, keys, shards
}

// fullSyncKeepsStrengths runs a full sync, which refines every item again
// from its strength record, and checks that no strength moves: every
// record was found.
func fullSyncKeepsStrengths(t *testing.T, s graph.Store, sid string, p graph.SimilarParams, nli *fakeNLI, when string) {
	t.Helper()
	before := evidence(t, s, sid, "")
	p.Full = true
	st, err := graph.SyncSimilar(ctxOf(t), s, sid, p, nli)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "strengths changed by the sync "+when, st.Refined, 0)
	for i, e := range evidence(t, s, sid, "") {
		eq(t, "strength "+when, e.Strength, before[i].Strength)
	}
}

// testStrengthShardsMigrate turns a refined session back into the layout
// of before the shards (one StrengthBaseBlob) and checks that the next
// sync moves the records into shards without touching a strength: with
// the records lost, the refined strengths would become new bases and the
// boost would compound.
func testStrengthShardsMigrate(t *testing.T, s graph.Store) {
	ctx := ctxOf(t)
	sid, p, nli, keys, shards := refinedShards(t, s, 17)
	all := map[string]json.RawMessage{}
	for k, data := range shards {
		js, err := graph.StrengthShardJSON(data)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(js, &m); err != nil {
			t.Fatal(err)
		}
		for id, r := range m {
			all[id] = r
		}
		if err := s.DeleteBlob(ctx, sid, k); err != nil {
			t.Fatal(err)
		}
	}
	legacy, _ := json.Marshal(all)
	if err := s.PutBlob(ctx, sid, graph.StrengthBaseBlob, legacy); err != nil {
		t.Fatal(err)
	}
	fullSyncKeepsStrengths(t, s, sid, p, nli, "after the migration")
	if _, err := s.GetBlob(ctx, sid, graph.StrengthBaseBlob); !errors.Is(err, graph.ErrNotFound) {
		t.Fatalf("the single blob is still there: %v", err)
	}
	again, err := s.GetBlobs(ctx, sid, keys)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "shards after migration", len(again), len(shards))
}

// testStrengthShardsJSON puts back every shard in the JSON layout of
// before the binary one (2026-12-02) and checks that a full sync reads
// them (no strength moves: the records were all found) and writes nothing
// it need not: an unchanged shard keeps its older bytes.
func testStrengthShardsJSON(t *testing.T, s graph.Store) {
	ctx := ctxOf(t)
	sid, p, nli, keys, shards := refinedShards(t, s, 23)
	old := map[string][]byte{}
	var err error
	for k, data := range shards {
		if data[0] == '{' {
			t.Fatalf("shard %s is still JSON", k)
		}
		if old[k], err = graph.StrengthShardJSON(data); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PutBlobs(ctx, sid, old); err != nil {
		t.Fatal(err)
	}
	fullSyncKeepsStrengths(t, s, sid, p, nli, "over JSON shards")
	again, err := s.GetBlobs(ctx, sid, keys)
	if err != nil {
		t.Fatal(err)
	}
	for k, data := range again {
		if string(data) != string(old[k]) {
			t.Fatalf("shard %s rewritten though no record changed", k)
		}
	}
}

// readsFail is a store whose SimilarEdgesOf, NearestEvidence,
// EvidenceByIDs or GetBlobs fails.
type readsFail struct {
	graph.Store
	edges, nearest, byIDs, blobs bool
}

func (r readsFail) EvidenceByIDs(ctx context.Context, sid string, ids []string) ([]graph.Evidence, error) {
	if r.byIDs {
		return nil, errReadDown
	}
	return r.Store.EvidenceByIDs(ctx, sid, ids)
}

func (r readsFail) GetBlobs(ctx context.Context, sid string, keys []string) (map[string][]byte, error) {
	if r.blobs {
		return nil, errReadDown
	}
	return r.Store.GetBlobs(ctx, sid, keys)
}

var errReadDown = errors.New("store read down")

func (r readsFail) SimilarEdgesOf(ctx context.Context, sid string, ids []string) ([]graph.Edge, error) {
	if r.edges {
		return nil, errReadDown
	}
	return r.Store.SimilarEdgesOf(ctx, sid, ids)
}

func (r readsFail) NearestEvidence(ctx context.Context, sid string, qs [][]float32, threshold float64) ([][]graph.Neighbor, error) {
	if r.nearest {
		return nil, errReadDown
	}
	return r.Store.NearestEvidence(ctx, sid, qs, threshold)
}

// testSyncLocalReadsFail: the local sync reads the new items' stored edges
// beside its first index queries, and the refined items beside their
// strength records. Any of these reads failing fails the sync with its
// error, changes no edge and leaves the watermark, and the next sync ends
// as one that never failed.
func testSyncLocalReadsFail(t *testing.T, s graph.Store) {
	ctx := ctxOf(t)
	p := graph.SimilarParams{Threshold: 0.9, MaxPerNode: 3}
	sid, twin := newSession(t, s), newSession(t, s)
	for _, id := range []string{sid, twin} {
		addEv(t, s, id, "w0", clusteredItems(5, 40, 1, "c0")...)
		if _, err := graph.SyncSimilar(ctx, s, id, p, nil); err != nil {
			t.Fatal(err)
		}
		addEv(t, s, id, "w1", clusteredItems(6, 12, 2, "c1")...)
	}
	before := edges(t, s, sid, graph.SimilarTo)
	mark, err := s.GetBlob(ctx, sid, graph.SimilarMarkBlob)
	if err != nil {
		t.Fatal(err)
	}
	for _, down := range []readsFail{{Store: s, edges: true}, {Store: s, nearest: true}, {Store: s, edges: true, nearest: true},
		{Store: s, blobs: true}, {Store: s, byIDs: true}, {Store: s, blobs: true, byIDs: true}} {
		if _, err := graph.SyncSimilar(ctx, down, sid, p, nil); !errors.Is(err, errReadDown) {
			t.Fatalf("sync with edges down %v, index down %v, evidence down %v, blobs down %v: %v, want the store's error",
				down.edges, down.nearest, down.byIDs, down.blobs, err)
		}
		if after := edges(t, s, sid, graph.SimilarTo); !slices.Equal(after, before) {
			t.Fatalf("a failed sync changed the edges: %d before, %d after", len(before), len(after))
		}
		if now, err := s.GetBlob(ctx, sid, graph.SimilarMarkBlob); err != nil || string(now) != string(mark) {
			t.Fatalf("a failed sync moved the watermark (err %v)", err)
		}
	}
	for _, id := range []string{sid, twin} {
		if st, err := graph.SyncSimilar(ctx, s, id, p, nil); err != nil || !(st.Incremental && st.Local) {
			t.Fatalf("sync after the failures: %+v, %v", st, err)
		}
	}
	sameSimilar(t, s, 1, sid, twin)
}
