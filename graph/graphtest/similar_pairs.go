package graphtest

// Stored pairs (docs/similarity-index.md, "Stored pairs"): on a store that
// keeps the sync's pairs, a displaced item's pairs are read back instead
// of asked of the index again, and the result must be the same.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/lethe-research/lethe/graph"
)

// pairKeeper keeps Writes.Pairs in memory for a store that keeps none, so
// that the sync's use of them is tested on every backend (Neo4j keeps its
// own and is tested as it is). It counts the index queries and pair reads.
type pairKeeper struct {
	graph.Store
	own     bool // the store keeps its own pairs: only count
	fail    bool // SimilarPairsOf fails (errReadDown)
	mu      sync.Mutex
	pairs   map[string]map[[2]string]float64 // by session
	queries int
	reads   int
}

func (k *pairKeeper) KeepsPairs() bool { return true }

func (k *pairKeeper) SimilarPairsOf(ctx context.Context, sid string, ids []string) ([]graph.Edge, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.reads++
	if k.fail {
		return nil, errReadDown
	}
	if k.own {
		return k.Store.SimilarPairsOf(ctx, sid, ids)
	}
	var out []graph.Edge
	for p, w := range k.pairs[sid] {
		if slices.Contains(ids, p[0]) || slices.Contains(ids, p[1]) {
			out = append(out, graph.Edge{From: p[0], To: p[1], Kind: graph.SimilarTo, Weight: w})
		}
	}
	graph.SortEdges(out)
	return out, nil
}

func (k *pairKeeper) Commit(ctx context.Context, sid string, w graph.Writes) error {
	if k.own {
		return k.Store.Commit(ctx, sid, w)
	}
	pairs, reset := w.Pairs, w.ResetPairs
	w.Pairs, w.ResetPairs = nil, false
	if err := k.Store.Commit(ctx, sid, w); err != nil {
		return err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.pairs == nil {
		k.pairs = map[string]map[[2]string]float64{}
	}
	if reset || k.pairs[sid] == nil {
		k.pairs[sid] = map[[2]string]float64{}
	}
	for _, e := range pairs {
		a, b := e.From, e.To
		if a > b {
			a, b = b, a
		}
		k.pairs[sid][[2]string{a, b}] = e.Weight
	}
	return nil
}

// NearestEvidence answers exactly from the session's evidence: what this
// test compares is the sync's use of stored pairs, and an approximate
// index (Neo4j's HNSW graphs) answers the twins' queries differently. A
// re-queried twin then kept 156 edges against the others' 161 in about
// one Neo4j run in five: its displaced items' queries came back short.
// The index's own answers are tested against exact scans in each store's
// tests.
func (k *pairKeeper) NearestEvidence(ctx context.Context, sid string, qs [][]float32, threshold float64) ([][]graph.Neighbor, error) {
	k.mu.Lock()
	k.queries += len(qs)
	k.mu.Unlock()
	evs, err := k.Store.Evidence(ctx, sid, "")
	if err != nil {
		return nil, err
	}
	out := make([][]graph.Neighbor, len(qs))
	for i, q := range qs {
		uq := graph.UnitVector(q)
		for _, e := range evs {
			if ue := graph.UnitVector(e.Embedding); uq != nil && ue != nil && len(e.Embedding) == len(q) {
				if c := graph.Dot(uq, ue); c >= threshold {
					out[i] = append(out[i], graph.Neighbor{ID: e.ID, Cosine: c})
				}
			}
		}
		slices.SortFunc(out[i], func(a, b graph.Neighbor) int {
			if c := cmp.Compare(b.Cosine, a.Cosine); c != 0 {
				return c
			}
			return cmp.Compare(a.ID, b.ID)
		})
	}
	return out, nil
}

// testSyncStoredPairs grows twin sessions in waves of dense items (each
// wave displaces edges), one synced from its stored pairs, the other
// asking the index again for every displaced item, and a third synced
// whole and exhaustively: after every wave the three hold the same edges,
// in the exact mode and past it (bounded), and the stored pairs saved
// index queries.
func testSyncStoredPairs(t *testing.T, s graph.Store) {
	for _, bounded := range []bool{false, true} {
		t.Run(fmt.Sprintf("bounded=%v", bounded), func(t *testing.T) {
			syncStoredPairs(t, &pairKeeper{Store: s, own: s.KeepsPairs()}, bounded)
		})
	}
}

func syncStoredPairs(t *testing.T, k *pairKeeper, bounded bool) {
	ctx := ctxOf(t)
	var s graph.Store = k
	withPairs, requery, full := newSession(t, s), newSession(t, s), newSession(t, s)
	p := graph.SimilarParams{Threshold: 0.9, MaxPerNode: 3, Probes: 1 << 20}
	if bounded {
		p.ExactMax, p.CascadeItems = 50, 64
	}
	rp, fp := p, p
	rp.Requery, fp.Full = true, true
	displaced, read, failed := 0, 0, 0
	for w, n := range []int{60, 1, 7, 15, 2, 11, 4, 9, 1, 13} {
		items := clusteredItems(uint64(w+3)*104729, n, w+1, fmt.Sprintf("p%d", w))
		for _, sid := range []string{withPairs, requery, full} {
			addEv(t, s, sid, fmt.Sprintf("wave%d", w), items...)
		}
		before := k.reads
		st, err := failPairsOnce(t, k, withPairs, p)
		if err != nil {
			t.Fatalf("wave %d: with pairs: %v", w, err)
		}
		failed += st.failed
		if w > 0 && !(st.Incremental && st.Local) {
			t.Fatalf("wave %d: not the local sync: %+v", w, st)
		}
		read += k.reads - before
		if _, err := graph.SyncSimilar(ctx, s, requery, rp, nil); err != nil {
			t.Fatalf("wave %d: re-queried: %v", w, err)
		}
		if _, err := graph.SyncSimilar(ctx, s, full, fp, nil); err != nil {
			t.Fatalf("wave %d: full: %v", w, err)
		}
		sameSimilar(t, s, w, withPairs, requery)
		sameSimilar(t, s, w, withPairs, full)
		displaced += st.Displaced
	}
	if displaced == 0 {
		t.Fatal("no wave displaced an edge: the stored pairs were never used")
	}
	if failed == 0 {
		t.Fatal("no sync read pairs while the read was down")
	}
	if read == 0 {
		t.Fatal("the sync never read a displaced item's pairs")
	}
	t.Logf("displaced %d, pair reads %d, index queries %d (both sessions), syncs failed by the pair read %d", displaced, read, k.queries, failed)
}

// storedSync is a sync's stats, and whether a first try failed.
type storedSync struct {
	graph.SimilarStats
	failed int
}

// failPairsOnce syncs sid first with the pair read down: when the sync
// reads pairs it must fail with the read's error and change neither the
// edges nor the watermark, and the sync is then run again with the read
// up. It returns the stats of the sync that went through.
func failPairsOnce(t *testing.T, k *pairKeeper, sid string, p graph.SimilarParams) (storedSync, error) {
	t.Helper()
	ctx := ctxOf(t)
	before := edges(t, k, sid, graph.SimilarTo)
	mark, _ := k.GetBlob(ctx, sid, graph.SimilarMarkBlob)
	reads := k.reads
	k.fail = true
	st, err := graph.SyncSimilar(ctx, k, sid, p, nil)
	k.fail = false
	if k.reads == reads {
		return storedSync{SimilarStats: st}, err // no pair read: the sync went through
	}
	if !errors.Is(err, errReadDown) {
		t.Fatalf("a sync with the pair read down: %v, want the read's error", err)
	}
	if after := edges(t, k, sid, graph.SimilarTo); !slices.Equal(after, before) {
		t.Fatalf("a failed sync changed the edges: %d before, %d after", len(before), len(after))
	}
	if now, _ := k.GetBlob(ctx, sid, graph.SimilarMarkBlob); string(now) != string(mark) {
		t.Fatal("a failed sync moved the watermark")
	}
	st, err = graph.SyncSimilar(ctx, k, sid, p, nil)
	return storedSync{SimilarStats: st, failed: 1}, err
}
