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
		const q = `MATCH (e:Evidence) WHERE e.session_id = $sid AND e.created_iter >= $iter
MATCH (e)-[s:SUPPORTS]->(t:Task)
WITH e, t ORDER BY coalesce(s.seq, 0), t.id
RETURN ` + evidenceWire + `, collect(t.id)`
		err := each(ctx, tx, q, map[string]any{"sid": sessionID, "iter": int64(iter)}, func(r *driver.Record) error {
			e, err := evidenceRecord(r)
			if err != nil {
				return err
			}
			out = append(out, e)
			return nil
		})
		if err != nil {
			return err
		}
		return requireSessionUnless(ctx, tx, sessionID, len(out) > 0)
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
// projection, so the contents never cross the wire. The items come in
// chunks of rowsChunk, each one row of parallel lists: a row per item
// costs the driver about 6 µs whatever it carries, and a map per item
// more (docs/neo4j.md, "One row per task, one row for the evidence").
// At 100k items the read took 1.9–2.3 s as a row per item, 0.8–1.0 s in
// chunks.
func (s *Store) EvidenceRows(ctx context.Context, sessionID string) ([]graph.Evidence, error) {
	var out []graph.Evidence
	err := s.read(ctx, "evidence rows", func(ctx context.Context, tx driver.ManagedTransaction) error {
		out = nil
		if err := requireSession(ctx, tx, sessionID); err != nil {
			return err
		}
		return each(ctx, tx, evidenceRowChunks, map[string]any{"sid": sessionID, "chunk": int64(rowsChunk)}, func(r *driver.Record) error {
			var err error
			out, err = appendRowChunk(out, r.Values[0])
			return err
		})
	})
	if err != nil {
		return nil, err
	}
	graph.SortEvidence(out)
	return out, nil
}

// rowsChunk is how many items one row of evidenceRowChunks carries: few
// rows, and no row large enough to matter to either heap (1.5 MB of
// embeddings at 384 dimensions).
const rowsChunk = 1000

// evidenceRowChunks is EvidenceRows' read. List comprehensions keep a
// null where a property is missing, so the lists stay aligned.
const evidenceRowChunks = `MATCH (e:Evidence {session_id: $sid})
WITH collect(e) AS es
UNWIND range(0, size(es) - 1, $chunk) AS i
WITH es[i..i + $chunk] AS part
RETURN {id: [e IN part | e.id], sid: [e IN part | e.session_id], hash: [e IN part | e.content_hash],
  kind: [e IN part | e.kind], strength: [e IN part | e.strength],
  emb: [e IN part | ` + "coalesce(e.embedding_f32, e.embedding)" + `], iter: [e IN part | e.created_iter]}`

// appendRowChunk decodes one row of evidenceRowChunks onto out.
func appendRowChunk(out []graph.Evidence, v any) ([]graph.Evidence, error) {
	m, _ := v.(map[string]any)
	cols := map[string][]any{}
	for _, k := range []string{"id", "sid", "hash", "kind", "strength", "emb", "iter"} {
		cols[k], _ = m[k].([]any)
		if len(cols[k]) != len(cols["id"]) {
			return nil, fmt.Errorf("evidence rows: %d ids, %d of %s", len(cols["id"]), len(cols[k]), k)
		}
	}
	for i := range cols["id"] {
		p := props{"id": cols["id"][i], "session_id": cols["sid"][i], "content_hash": cols["hash"][i], "kind": cols["kind"][i],
			"strength": cols["strength"][i], "embedding": cols["emb"][i], "created_iter": cols["iter"][i]}
		emb, err := p.emb("embedding")
		if err != nil {
			return nil, fmt.Errorf("decode evidence %q: %w", p.str("id"), err)
		}
		out = append(out, graph.Evidence{ID: p.str("id"), SessionID: p.str("session_id"), ContentHash: p.str("content_hash"),
			Kind: graph.EvidenceKind(p.str("kind")), Strength: p.float("strength"), Embedding: emb, CreatedIter: p.int("created_iter")})
	}
	return out, nil
}
