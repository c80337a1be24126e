package neo4j_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/lethe-research/lethe/graph"
)

// TestPackedRowsMissingProperties: a task's SUPPORTS side comes as one row
// of parallel lists (supportsPack), and collect skips nulls, so an item
// without a hash, an iteration or an embedding (written by hand, or by an
// older binary) must not shift the lists. Each shape of the packed read
// must be the full read's item, with and without the walk cache.
func TestPackedRowsMissingProperties(t *testing.T) {
	cfg := serverConfig(t)
	cypher := cypherOf(t, cfg)
	for _, mib := range []int{0, 16} {
		cfg.WalkCacheMiB = mib
		s := open(t, cfg)
		sid := fmt.Sprintf("packrows-%d-%d", mib, time.Now().UnixNano())
		t.Cleanup(func() { _ = s.ResetSession(t.Context(), sid) })
		walkSession(t, s, sid, rand.New(rand.NewPCG(3, 4)), "pack")
		rows := cypher(`MATCH (e:Evidence {session_id: $sid})-[:SUPPORTS]->(:Task {short_id: 'root'})
RETURN e.id ORDER BY e.id LIMIT 3`, map[string]any{"sid": sid})
		if len(rows) != 3 {
			t.Fatalf("%d root items, want 3", len(rows))
		}
		for i, remove := range []string{"e.content_hash", "e.created_iter", "e.embedding, e.embedding_f32"} {
			cypher("MATCH (e:Evidence {id: $id}) REMOVE "+remove, map[string]any{"id": rows[i].Values[0]})
		}
		root := graph.TaskID(sid, graph.RootShortID)
		full, err := s.Neighbourhood(t.Context(), sid, []string{root})
		if err != nil {
			t.Fatal(err)
		}
		byID := map[string]graph.Evidence{}
		for _, e := range full.Evidence {
			byID[e.ID] = e
		}
		for round := range 2 { // the second read is served by the cache when it is on
			shape, err := s.NeighbourhoodShape(t.Context(), sid, []string{root}, nil)
			if err != nil {
				t.Fatalf("cache %d MiB, read %d: %v", mib, round, err)
			}
			if len(shape.Evidence) != 300 || len(shape.Evidence) != len(full.Evidence) {
				t.Fatalf("cache %d MiB, read %d: %d shapes, full read %d, want 300", mib, round, len(shape.Evidence), len(full.Evidence))
			}
			for _, g := range shape.Evidence {
				w := byID[g.ID]
				if g.ID != w.ID || g.SessionID != w.SessionID || g.CreatedIter != w.CreatedIter || g.ContentHash != w.ContentHash || !slices.Equal(g.Embedding, w.Embedding) {
					t.Fatalf("cache %d MiB, read %d: shape %s (iteration %d, hash %q, %d dims) is not the full read's (iteration %d, hash %q, %d dims)",
						mib, round, g.ID, g.CreatedIter, g.ContentHash, len(g.Embedding), w.CreatedIter, w.ContentHash, len(w.Embedding))
				}
			}
		}
	}
}

// TestEvidenceRowsChunks: EvidenceRows reads the session in chunks of a
// thousand items, each one row of parallel lists. Over 2,100 items (three
// chunks, the last one short), with one item missing its hash and one its
// iteration, the rows are Evidence's items reduced, in the same order.
func TestEvidenceRowsChunks(t *testing.T) {
	cfg := serverConfig(t)
	cypher := cypherOf(t, cfg)
	s := open(t, cfg)
	sid := fmt.Sprintf("evrows-%d", time.Now().UnixNano())
	t.Cleanup(func() { _ = s.ResetSession(t.Context(), sid) })
	rng := rand.New(rand.NewPCG(5, 6))
	walkSession(t, s, sid, rng, "rows")
	addItems(t, s, sid, "a", rng, "more", 1790, 2)
	ids := cypher(`MATCH (e:Evidence {session_id: $sid}) RETURN e.id ORDER BY e.id LIMIT 2`, map[string]any{"sid": sid})
	cypher("MATCH (e:Evidence {id: $id}) REMOVE e.content_hash", map[string]any{"id": ids[0].Values[0]})
	cypher("MATCH (e:Evidence {id: $id}) REMOVE e.created_iter", map[string]any{"id": ids[1].Values[0]})
	all, err := s.Evidence(t.Context(), sid, "")
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.EvidenceRows(t.Context(), sid)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2100 || len(got) != len(all) {
		t.Fatalf("%d rows, %d items, want 2100", len(got), len(all))
	}
	for i, w := range all {
		g := got[i]
		if g.ID != w.ID || g.SessionID != w.SessionID || g.ContentHash != w.ContentHash || g.Kind != w.Kind ||
			g.Strength != w.Strength || g.CreatedIter != w.CreatedIter || !slices.Equal(g.Embedding, w.Embedding) {
			t.Fatalf("row %d: %s (iteration %d, hash %q), want %s (iteration %d, hash %q)", i, g.ID, g.CreatedIter, g.ContentHash, w.ID, w.CreatedIter, w.ContentHash)
		}
	}
}
