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
