package neo4j

// Lane observe: evidence by creation iteration and blob deletion
// (docs/incremental-signals.md).

import (
	"context"
	"errors"
	"fmt"

	driver "github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/lethe-research/lethe/graph"
)

// EvidenceSince returns the evidence with CreatedIter >= iter, ordered by
// (CreatedIter, ID). The (session_id, created_iter) index makes it a range
// seek: the cost follows the rows returned, not the session's size.
func (s *Store) EvidenceSince(ctx context.Context, sessionID string, iter int) ([]graph.Evidence, error) {
	var out []graph.Evidence
	err := s.read(ctx, "evidence since", func(ctx context.Context, tx driver.ManagedTransaction) error {
		out = nil
		if err := requireSession(ctx, tx, sessionID); err != nil {
			return err
		}
		const q = `MATCH (e:Evidence) WHERE e.session_id = $sid AND e.created_iter >= $iter
MATCH (e)-[s:SUPPORTS]->(t:Task)
WITH e, t ORDER BY coalesce(s.seq, 0), t.id
RETURN ` + evidenceWire + `, collect(t.id)`
		return each(ctx, tx, q, map[string]any{"sid": sessionID, "iter": int64(iter)}, func(r *driver.Record) error {
			e, err := evidenceRecord(r)
			if err != nil {
				return err
			}
			out = append(out, e)
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	graph.SortEvidence(out)
	return out, nil
}

// evidenceRecord decodes one (node, SUPPORTS target ids) row, the first
// target first.
func evidenceRecord(r *driver.Record) (graph.Evidence, error) {
	np, err := nodeProps(r.Values[0])
	if err != nil {
		return graph.Evidence{}, err
	}
	return evidenceWithTargets(np, r.Values[1])
}

// evidenceWithTargets is an evidence row's properties with its SUPPORTS
// targets (a list of task ids, the first one first).
func evidenceWithTargets(np props, targets any) (graph.Evidence, error) {
	raw, _ := targets.([]any)
	tids := make([]string, 0, len(raw))
	for _, v := range raw {
		id, _ := v.(string)
		tids = append(tids, id)
	}
	if len(tids) == 0 {
		return graph.Evidence{}, fmt.Errorf("evidence %q has no SUPPORTS target", np.str("id"))
	}
	e, err := evidenceFrom(np, tids[0], tids[1:])
	if err != nil {
		return graph.Evidence{}, fmt.Errorf("decode evidence %q: %w", np.str("id"), err)
	}
	return e, nil
}

// DeleteBlob removes a per-session document; a missing one is no error.
func (s *Store) DeleteBlob(ctx context.Context, sessionID, key string) error {
	return s.write(ctx, "delete blob", func(ctx context.Context, tx driver.ManagedTransaction) error {
		if err := lockSession(ctx, tx, sessionID); err != nil {
			return err
		}
		if key == "" {
			return errors.New("empty blob key")
		}
		return run(ctx, tx, "MATCH (b:Blob {session_id: $sid, key: $key}) DELETE b",
			map[string]any{"sid": sessionID, "key": key})
	})
}

// EvidenceRows reads the fields Observe's recompute needs as a map
// projection, so the contents never cross the wire.
func (s *Store) EvidenceRows(ctx context.Context, sessionID string) ([]graph.Evidence, error) {
	var out []graph.Evidence
	err := s.read(ctx, "evidence rows", func(ctx context.Context, tx driver.ManagedTransaction) error {
		out = nil
		if err := requireSession(ctx, tx, sessionID); err != nil {
			return err
		}
		return each(ctx, tx, `MATCH (e:Evidence {session_id: $sid})
RETURN e {.id, .session_id, .content_hash, .kind, .strength, embedding: `+wireVec("e", "embedding")+`, .created_iter}`,
			map[string]any{"sid": sessionID}, func(r *driver.Record) error {
				m, _ := r.Values[0].(map[string]any)
				p := props(m)
				emb, err := p.emb("embedding")
				if err != nil {
					return fmt.Errorf("decode evidence %q: %w", p.str("id"), err)
				}
				out = append(out, graph.Evidence{ID: p.str("id"), SessionID: p.str("session_id"), ContentHash: p.str("content_hash"),
					Kind: graph.EvidenceKind(p.str("kind")), Strength: p.float("strength"), Embedding: emb, CreatedIter: p.int("created_iter")})
				return nil
			})
	})
	if err != nil {
		return nil, err
	}
	graph.SortEvidence(out)
	return out, nil
}
