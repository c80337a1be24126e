package neo4j

import (
	"context"
	"fmt"

	driver "github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/lethe-research/lethe/graph"
)

// The SIMILAR_TO sync's pairs (graph.Writes.Pairs): every pair over the
// threshold a sync found, kept by the degree cap or not, as
// (a)-[:SIMILAR_PAIR {weight}]->(b) with a.id < b.id. A displaced item's
// pairs are then one read, where asking the index again was most of a
// sync's variable cost at 100k (docs/similarity-index.md, "Stored pairs").

// pairBatch bounds the rows of one statement: a full sync at 100k writes
// about a million pairs in its commit.
const pairBatch = 10000

// KeepsPairs is true: see graph.Store.
func (s *Store) KeepsPairs() bool { return true }

// SimilarPairsOf returns the kept pairs with an endpoint among ids.
func (s *Store) SimilarPairsOf(ctx context.Context, sessionID string, ids []string) ([]graph.Edge, error) {
	return s.similarRows(ctx, "similar pairs of", sessionID, relsOf("SIMILAR_PAIR", "null"), map[string]any{"sid": sessionID, "ids": ids})
}

// writePairs is Commit's part of the pairs: the session's deleted first
// when reset, then each pair added or given its new weight.
func writePairs(ctx context.Context, tx driver.ManagedTransaction, sessionID string, reset bool, pairs []graph.Edge) error {
	if reset {
		if err := run(ctx, tx, "MATCH (:Evidence {session_id: $sid})-[r:SIMILAR_PAIR]->() DELETE r", map[string]any{"sid": sessionID}); err != nil {
			return fmt.Errorf("reset pairs: %w", err)
		}
	}
	rows := make([]any, 0, min(len(pairs), pairBatch))
	flush := func() error {
		if len(rows) == 0 {
			return nil
		}
		err := run(ctx, tx, `UNWIND $rows AS row
MATCH (a:Evidence {id: row.a}) WHERE a.session_id = $sid
MATCH (b:Evidence {id: row.b}) WHERE b.session_id = $sid
MERGE (a)-[r:SIMILAR_PAIR]->(b) SET r.weight = row.w`, map[string]any{"sid": sessionID, "rows": rows})
		rows = rows[:0]
		return err
	}
	for _, e := range pairs {
		a, b := e.From, e.To
		if a == b {
			continue
		}
		if a > b {
			a, b = b, a
		}
		rows = append(rows, map[string]any{"a": a, "b": b, "w": e.Weight})
		if len(rows) == pairBatch {
			if err := flush(); err != nil {
				return fmt.Errorf("write pairs: %w", err)
			}
		}
	}
	if err := flush(); err != nil {
		return fmt.Errorf("write pairs: %w", err)
	}
	return nil
}
