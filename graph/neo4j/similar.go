package neo4j

// Lane "similar" (#14): the reads of the incremental SIMILAR_TO sync, with
// NearestEvidence answered by a Neo4j 5 vector index.
//
// A vector index has one dimension, and Neo4j allows one index per label
// and property, so evidence of dimension d is indexed under the extra
// label LetheVec<d> (index lethe_evidence_vec_<d>, cosine). Nodes get the
// label at the first NearestEvidence or NearestCosine call after they were
// written; the index is eventually consistent, which the sync handles by
// comparing fresh items with each other in Go. Writes create evidence with
// the label LetheVecPending, so that a call finds what is new through that
// label's index (labelQuery).

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	driver "github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/lethe-research/lethe/graph"
)

// Vector query sizes. Not parameters: the first k covers a typical item's
// neighbourhood in one round, the growth factor bounds the rounds, and past
// vecMaxK (many sessions with near-identical content crowding the index)
// an exact scan of the session is cheaper than the index.
const (
	vecFirstK = 64
	// vecThresholdK is where NearestEvidence's threshold queries start:
	// they stop at the first item under the threshold, and an item
	// rarely has more than a few near-duplicates over it. Measured on a
	// session of 100k items (bench/long's, eight over the threshold per
	// item), a batch of ten queries took 81 ms from 16 against 157 ms from
	// 64, both in one round and missing none of the 1,600 items an exact
	// scan finds; from 8 it took two rounds, 167 ms.
	vecThresholdK = 16
	vecGrowK      = 4
	vecMaxK       = 4096
	// vecSlack widens the index threshold: index scores are float32, the
	// exact cosine (computed here) decides.
	vecSlack = 1e-3
)

func vecLabel(dim int) string { return fmt.Sprintf("LetheVec%d", dim) }
func vecIndex(dim int) string { return fmt.Sprintf("lethe_evidence_vec_%d", dim) }

// ensureVecIndex creates the index of one dimension once per process.
func (s *Store) ensureVecIndex(ctx context.Context, dim int) error {
	if _, ok := s.vecIdx.Load(dim); ok {
		return nil
	}
	q := fmt.Sprintf("CREATE VECTOR INDEX %s IF NOT EXISTS FOR (e:%s) ON e.embedding "+
		"OPTIONS {indexConfig: {`vector.dimensions`: %d, `vector.similarity_function`: 'cosine'}}",
		vecIndex(dim), vecLabel(dim), dim)
	sess := s.session(ctx, driver.AccessModeWrite)
	defer sess.Close(context.Background())
	_, err := sess.ExecuteWrite(ctx, func(tx driver.ManagedTransaction) (any, error) {
		r, err := tx.Run(ctx, q, nil)
		if err != nil {
			return nil, err
		}
		_, err = r.Consume(ctx)
		return nil, err
	})
	var ne *driver.Neo4jError
	if errors.As(err, &ne) && strings.Contains(ne.Code, "EquivalentSchemaRuleAlreadyExists") {
		err = nil
	}
	if err != nil {
		return s.classify("vector index", fmt.Errorf("%s: %w", q, err))
	}
	s.vecIdx.Store(dim, true)
	return nil
}

// EvidenceCount is the number of evidence items of the session: the
// session node's counter, which every insert adds to in its own
// transaction, and which a full sync sets again from the nodes
// (recountEvidence). Counting the nodes by the session_id index took
// 9 ms at 100k items, twice an iteration. A session created before the
// counter, and not yet recounted, is counted from its nodes.
func (s *Store) EvidenceCount(ctx context.Context, sessionID string) (int, error) {
	if err := checkSessionID(sessionID); err != nil {
		return 0, err
	}
	var n int64
	err := s.read(ctx, "evidence count", func(ctx context.Context, tx driver.ManagedTransaction) error {
		rec, err := single(ctx, tx, "MATCH (s:Session {id: $sid}) RETURN s.evidence_n", map[string]any{"sid": sessionID})
		if err != nil {
			return err
		}
		if rec == nil {
			return fmt.Errorf("session %q: %w", sessionID, graph.ErrNotFound)
		}
		var ok bool
		if n, ok = rec.Values[0].(int64); ok {
			return nil
		}
		rec, err = single(ctx, tx, "MATCH (e:Evidence {session_id: $sid}) RETURN count(e)", map[string]any{"sid": sessionID})
		if err != nil {
			return err
		}
		n, _ = rec.Values[0].(int64)
		return nil
	})
	return int(n), err
}

// recountEvidence sets the session's evidence counter from its nodes
// (graph.Writes.RecountEvidence), under the session's write lock, so no
// insert falls between the count and the write.
const recountEvidence = `MATCH (e:Evidence {session_id: $sid}) WITH count(e) AS n
MATCH (s:Session {id: $sid}) SET s.evidence_n = n`

// EvidenceByIDs returns the named evidence.
func (s *Store) EvidenceByIDs(ctx context.Context, sessionID string, ids []string) ([]graph.Evidence, error) {
	list := make([]any, len(ids))
	for i, id := range ids {
		list[i] = id
	}
	out, err := s.evidenceWhere(ctx, "evidence by ids", sessionID,
		"UNWIND $ids AS id MATCH (e:Evidence {id: id}) WHERE e.session_id = $sid", map[string]any{"ids": list},
		func(ctx context.Context, tx driver.ManagedTransaction, found []graph.Evidence) error {
			if holdsAll(found, ids) {
				return nil
			}
			if err := requireSession(ctx, tx, sessionID); err != nil {
				return err
			}
			missing, err := missingEvidence(ctx, tx, sessionID, ids)
			if err == nil && missing != "" {
				err = fmt.Errorf("evidence %q: %w", missing, graph.ErrNotFound)
			}
			return err
		})
	return out, err
}

// holdsAll reports whether found has every id of ids (so that none is
// missing and the session exists).
func holdsAll(found []graph.Evidence, ids []string) bool {
	if len(ids) == 0 {
		return false
	}
	have := make(map[string]bool, len(found))
	for _, e := range found {
		have[e.ID] = true
	}
	for _, id := range ids {
		if !have[id] {
			return false
		}
	}
	return true
}

// evidenceWhere reads the evidence matched by match (binding e) with its
// SUPPORTS targets, then checks what it found (the session's existence
// included: see requireSessionUnless), in one read transaction.
func (s *Store) evidenceWhere(ctx context.Context, op, sessionID, match string, params map[string]any, check func(context.Context, driver.ManagedTransaction, []graph.Evidence) error) ([]graph.Evidence, error) {
	var out []graph.Evidence
	err := s.read(ctx, op, func(ctx context.Context, tx driver.ManagedTransaction) error {
		out = nil
		p := map[string]any{"sid": sessionID}
		for k, v := range params {
			p[k] = v
		}
		q := match + `
MATCH (e)-[s:SUPPORTS]->(t:Task)
WITH e, t ORDER BY coalesce(s.seq, 0), t.id
RETURN ` + evidenceWire + `, collect(t.id)`
		err := each(ctx, tx, q, p, func(r *driver.Record) error {
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
		return check(ctx, tx, out)
	})
	if err != nil {
		return nil, err
	}
	graph.SortEvidence(out)
	return out, nil
}

// SimilarEdges returns the SIMILAR_TO edges only.
func (s *Store) SimilarEdges(ctx context.Context, sessionID string) ([]graph.Edge, error) {
	return s.similarRows(ctx, "similar edges", sessionID, `MATCH (a:Evidence {session_id: $sid})-[r:SIMILAR_TO]->(b:Evidence)
RETURN a.id, b.id, r.weight, r.label`, map[string]any{"sid": sessionID})
}

// NearestEvidence labels the session's not yet indexed evidence and asks
// the vector index for each query, widening k until the index returns an
// item under the threshold (then every item over it, of any session, was
// returned) or k passes vecMaxK (then it scans the session exactly).
// Cosines are recomputed exactly from the returned embeddings.
//
// The labelling and the index queries run at once: in a sync at 100k
// evidence the labelling took 18 ms before the first queries could start
// (docs/neo4j.md, "Labelling beside the queries"). The queries may then
// miss the nodes labelled now, and the index does not hold the nodes
// still waiting for their label (labelFresh), so those are compared with
// every query exactly, from the embeddings the labelling returns, and the
// answer is the one the index would give once it holds them. When a call
// labelled more nodes than there are queries and than a batch (the first
// call for a session), it scans the session exactly instead: comparing
// them all here would cost more.
func (s *Store) NearestEvidence(ctx context.Context, sessionID string, queries [][]float32, threshold float64) ([][]graph.Neighbor, error) {
	out := make([][]graph.Neighbor, len(queries))
	if len(queries) == 0 {
		return out, nil
	}
	dim := len(queries[0])
	if dim == 0 {
		return out, nil
	}
	if err := s.ensureVecIndex(ctx, dim); err != nil {
		return nil, err
	}
	qctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var labelled map[string][]float32
	var added int
	var lerr error
	labelDone := make(chan struct{})
	go func() {
		defer close(labelDone)
		if labelled, added, lerr = s.labelFresh(ctx, sessionID, dim); lerr != nil {
			cancel() // the call fails: its queries need not finish
		}
	}()
	out, qerr := s.nearestParts(qctx, sessionID, dim, queries, threshold)
	<-labelDone
	switch {
	case lerr != nil:
		return nil, lerr
	case added > max(len(queries), s.cfg.LabelBatch):
		return s.nearestScan(ctx, sessionID, dim, queries, threshold)
	case qerr != nil:
		return nil, qerr
	}
	units := unitsOf(labelled)
	for i, q := range queries {
		if uq := graph.UnitVector(q); uq != nil && len(q) == dim {
			out[i] = withExact(out[i], units, uq, threshold)
		}
	}
	return out, nil
}

// withExact adds to an answer the items of units (unit vectors by id,
// unitsOf) over the threshold that it lacks, in answer order.
func withExact(answer []graph.Neighbor, units map[string][]float64, uq []float64, threshold float64) []graph.Neighbor {
	if len(units) == 0 {
		return answer
	}
	listed := make(map[string]bool, len(answer))
	for _, n := range answer {
		listed[n.ID] = true
	}
	var more []graph.Neighbor
	for id, u := range units {
		if listed[id] || len(u) != len(uq) {
			continue
		}
		if c := graph.Dot(uq, u); c >= threshold {
			more = append(more, graph.Neighbor{ID: id, Cosine: c})
		}
	}
	if len(more) == 0 {
		return answer
	}
	out := append(slices.Clone(answer), more...)
	slices.SortFunc(out, strongestFirst)
	return out
}

// unitsOf is the vectors with a direction as unit vectors, by id: a call
// compares the items waiting for the index with each of its queries, and
// normalises each once.
func unitsOf(vs map[string][]float32) map[string][]float64 {
	out := make(map[string][]float64, len(vs))
	for id, v := range vs {
		if u := graph.UnitVector(v); u != nil {
			out[id] = u
		}
	}
	return out
}

// nearestScan answers the queries by an exact scan of the session.
func (s *Store) nearestScan(ctx context.Context, sessionID string, dim int, queries [][]float32, threshold float64) ([][]graph.Neighbor, error) {
	var out [][]graph.Neighbor
	err := s.read(ctx, "nearest evidence", func(ctx context.Context, tx driver.ManagedTransaction) error {
		var err error
		out, err = s.scanAll(ctx, tx, sessionID, dim, queries, threshold)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// nearestParts splits the queries into up to cfg.VectorStatements read
// transactions that run at once: the server answers the queries of one
// statement one after another on one thread, about 4 ms each at 100k
// items, and the sync is the largest part of a long session's iteration
// on Neo4j (docs/neo4j.md, "Vector statements at once"). Each part is
// its own transaction; the index is eventually consistent either way, and
// the parts read nothing another part writes.
func (s *Store) nearestParts(ctx context.Context, sessionID string, dim int, queries [][]float32, threshold float64) ([][]graph.Neighbor, error) {
	parts := min(max(s.cfg.VectorStatements, 1), len(queries))
	out := make([][]graph.Neighbor, len(queries))
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := p*len(queries)/parts, (p+1)*len(queries)/parts
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[p] = s.read(ctx, "nearest evidence", func(ctx context.Context, tx driver.ManagedTransaction) error {
				// k starts at vecThresholdK whatever the session's share of
				// the index: a threshold query stops at the first item under
				// the threshold, so what it needs is the number of items over
				// it in all sessions, a page or two of near-duplicates, not
				// the share (startK, which NearestCosine uses, would scan at
				// once where 64 suffice).
				res, err := s.nearestAll(ctx, tx, sessionID, dim, queries[lo:hi], threshold)
				copy(out[lo:hi], res)
				return err
			})
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// nearestAll asks the index for the neighbours of all the queries at
// once: one statement per round, k widened (from vecThresholdK) for the
// queries whose k results were all over the threshold, and an exact scan
// for those still open past vecMaxK. It used to be a statement per query
// and round: a sync's call holds ten or so queries.
func (s *Store) nearestAll(ctx context.Context, tx driver.ManagedTransaction, sessionID string, dim int, queries [][]float32, threshold float64) ([][]graph.Neighbor, error) {
	out := make([][]graph.Neighbor, len(queries))
	minScore := (1 + threshold - vecSlack) / 2 // index score = (1 + cosine) / 2
	var open []int                             // queries still widening
	for i, q := range queries {
		if graph.UnitVector(q) != nil && len(q) == dim {
			open = append(open, i)
		}
	}
	for k := vecThresholdK; len(open) > 0; k *= vecGrowK {
		if k > vecMaxK {
			sub := make([][]float32, len(open))
			for j, i := range open {
				sub[j] = queries[i]
			}
			res, err := s.scanAll(ctx, tx, sessionID, dim, sub, threshold)
			for j, i := range open {
				out[i] = res[j]
			}
			return out, err
		}
		r, err := s.indexRound(ctx, tx, sessionID, dim, queries, open, k, minScore)
		if err != nil {
			return nil, err
		}
		var next []int
		for j, i := range open {
			if !r.below[j] && r.n[j] >= k {
				next = append(next, i)
				continue
			}
			out[i] = exactNeighbors(r.cands[j], graph.UnitVector(queries[i]), threshold)
		}
		open = next
	}
	return out, nil
}

// round is one index statement's answer per query: the rows, whether one
// was under the threshold, and the session's candidates over it.
type round struct {
	n     []int
	below []bool
	cands []map[string][]float32
}

func (s *Store) indexRound(ctx context.Context, tx driver.ManagedTransaction, sessionID string, dim int, queries [][]float32, open []int, k int, minScore float64) (round, error) {
	r := round{n: make([]int, len(open)), below: make([]bool, len(open)), cands: make([]map[string][]float32, len(open))}
	qs := make([]any, len(open))
	for j, i := range open {
		qs[j] = f32Any(queries[i])
		r.cands[j] = map[string][]float32{}
	}
	err := each(ctx, tx, `UNWIND range(0, size($qs) - 1) AS i
CALL db.index.vector.queryNodes($idx, $k, $qs[i]) YIELD node, score
RETURN i, node.id, score, CASE WHEN node.session_id = $sid AND score >= $min THEN `+wireVec("node", "embedding")+` END`,
		map[string]any{"idx": vecIndex(dim), "k": int64(k), "qs": qs, "sid": sessionID, "min": minScore},
		func(rec *driver.Record) error {
			j64, _ := rec.Values[0].(int64)
			j := int(j64)
			if j < 0 || j >= len(open) {
				return fmt.Errorf("vector query index %d out of range", j)
			}
			r.n[j]++
			id, _ := rec.Values[1].(string)
			if score, _ := rec.Values[2].(float64); score < minScore {
				r.below[j] = true
			}
			if rec.Values[3] != nil {
				emb, err := asF32(rec.Values[3])
				if err != nil {
					return fmt.Errorf("evidence %q: %w", id, err)
				}
				r.cands[j][id] = emb
			}
			return nil
		})
	return r, err
}

// NearestCosine labels the session's evidence not yet indexed, as
// NearestEvidence does, and compares the queries exactly with those (the
// index may not hold them yet); the rest come from the vector index:
// each query's nearest items of the session, k widened until one turns
// up, past vecMaxK an exact scan. Queries of another dimension than the
// first answer 0, as NearestEvidence answers them nothing.
func (s *Store) NearestCosine(ctx context.Context, sessionID string, queries [][]float32) ([]float64, error) {
	out := make([]float64, len(queries))
	if len(queries) == 0 || len(queries[0]) == 0 {
		return out, s.read(ctx, "nearest cosine", func(ctx context.Context, tx driver.ManagedTransaction) error {
			return requireSession(ctx, tx, sessionID)
		})
	}
	dim := len(queries[0])
	raw, added, err := s.labelFresh(ctx, sessionID, dim)
	if err != nil {
		return nil, err
	}
	fresh := unitsOf(raw)
	err = s.read(ctx, "nearest cosine", func(ctx context.Context, tx driver.ManagedTransaction) error {
		k0, err := s.startK(ctx, tx, sessionID, dim, int64(added))
		if err != nil {
			return err
		}
		for i, q := range queries {
			uq := graph.UnitVector(q)
			if uq == nil || len(q) != dim {
				continue
			}
			best, err := s.nearestMax(ctx, tx, sessionID, dim, q, uq, k0)
			if err != nil {
				return err
			}
			for _, u := range fresh {
				best = max(best, graph.Dot(uq, u))
			}
			out[i] = best
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// labelFresh returns the session's evidence of dimension dim that the
// vector index does not hold, by id, and gives it the index label when
// there are at least cfg.LabelBatch such items (or on a sweep, labelQuery);
// added is how many it labelled. Each labelling is a write, and each one
// became a segment of the index, which every query searches in turn
// (docs/neo4j.md, "Labels in batches"); until then the items are read
// back, one record, and compared exactly by each call.
func (s *Store) labelFresh(ctx context.Context, sessionID string, dim int) (fresh map[string][]float32, added int, err error) {
	if err := s.ensureVecIndex(ctx, dim); err != nil {
		return nil, 0, err
	}
	if batch, calls := s.cfg.LabelBatch, s.labelCalls(sessionID, dim); batch > 1 && !sweepDue(calls.Load()) {
		waiting, err := s.waitingLabel(ctx, sessionID, dim)
		if err != nil || len(waiting) < batch {
			if err == nil {
				calls.Add(1)
			}
			return waiting, 0, err
		}
	}
	q, done := s.labelQuery(sessionID, dim, "e.id, "+wireVec("e", "embedding"))
	err = s.write(ctx, "label for vector index", func(ctx context.Context, tx driver.ManagedTransaction) error {
		fresh = map[string][]float32{}
		err := each(ctx, tx, q, map[string]any{"sid": sessionID, "dim": int64(dim)}, embeddingsInto(fresh))
		if err != nil {
			return err
		}
		return requireSessionUnless(ctx, tx, sessionID, len(fresh) > 0)
	})
	if err != nil {
		return nil, 0, err
	}
	done()
	return fresh, len(fresh), nil
}

// waitingLabel is the session's pending evidence of dimension dim (the
// nodes labelQuery would label), read as one record.
func (s *Store) waitingLabel(ctx context.Context, sessionID string, dim int) (map[string][]float32, error) {
	out := map[string][]float32{}
	err := s.read(ctx, "evidence waiting for the vector index", func(ctx context.Context, tx driver.ManagedTransaction) error {
		clear(out)
		q := fmt.Sprintf(`MATCH (e:%s {session_id: $sid})
WHERE NOT e:%s AND e.embedding IS NOT NULL AND size(e.embedding) = $dim AND %s
RETURN collect([e.id, %s])`, pendingLabel, vecLabel(dim), nonZero, wireVec("e", "embedding"))
		err := eachPacked(ctx, tx, q, map[string]any{"sid": sessionID, "dim": int64(dim)}, embeddingsInto(out))
		if err != nil {
			return err
		}
		return requireSessionUnless(ctx, tx, sessionID, len(out) > 0)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// pendingLabel marks evidence written since the last labelling call:
// insertEvidence creates every Evidence node with it. Labelling then
// reads the new nodes through the label's index; it used to read every
// evidence node of the session, about 1 ms per thousand items, at each of
// the several calls of a SIMILAR_TO sync (docs/long-session.md,
// "Labelling what is new").
const pendingLabel = "LetheVecPending"

// sweepEvery is how many labelling calls of a session may pass between
// sweeps of all its evidence: the sweep labels nodes that carry no
// pending mark (written before the mark existed, or by an older binary
// during a rolling upgrade), so that such a node waits at most this many
// calls, and its cost (a read of every evidence node) is spread thin.
const sweepEvery = 64

// nonZero keeps a zero embedding out of the index's label and out of the
// scans (which also meet nodes an older binary labelled): the index skips
// it, and vector.similarity.cosine fails the whole statement on it ("not
// a valid vector"). Exact comparison gives a zero vector no neighbour
// either (graph.UnitVector).
const nonZero = "any(x IN e.embedding WHERE x <> 0.0)"

// labelQuery is the labelling statement of one call for the session and
// dimension, returning ret, and done, to call once it committed. The
// first call of this process for them, and every sweepEvery-th after,
// sweeps all of the session's evidence; the others read only the pending
// nodes and clear their mark. A pending node of another dimension, or
// without an embedding, loses the mark unlabelled: a session has one
// embedding model, and a call with another dimension sweeps first.
func (s *Store) labelQuery(sessionID string, dim int, ret string) (string, func()) {
	label := vecLabel(dim)
	calls := s.labelCalls(sessionID, dim)
	if !sweepDue(calls.Load()) {
		return fmt.Sprintf(`MATCH (e:%s {session_id: $sid}) REMOVE e:%s
WITH e WHERE NOT e:%s AND e.embedding IS NOT NULL AND size(e.embedding) = $dim AND %s
SET e:%s RETURN %s`, pendingLabel, pendingLabel, label, nonZero, label, ret), func() { calls.Add(1) }
	}
	return fmt.Sprintf(`MATCH (e:Evidence {session_id: $sid})
WHERE NOT e:%s AND e.embedding IS NOT NULL AND size(e.embedding) = $dim AND %s
SET e:%s REMOVE e:%s RETURN %s`, label, nonZero, label, pendingLabel, ret), func() { calls.Store(1) }
}

// sweepDue says whether a labelling call that follows n calls since the
// last sweep (labelCalls) sweeps: the first call of a process for a
// session, and every sweepEvery-th.
func sweepDue(n int64) bool { return n <= 0 || n >= sweepEvery }

// labelCalls counts the session's labelling calls of dimension dim since
// this process last swept its evidence (labelQuery), a read of the
// waiting items included (labelFresh).
func (s *Store) labelCalls(sessionID string, dim int) *atomic.Int64 {
	v, _ := s.swept.LoadOrStore(fmt.Sprintf("%s\x00%d", sessionID, dim), new(atomic.Int64))
	return v.(*atomic.Int64)
}

// nearestMax is the largest exact cosine (floored at 0) among the index's
// nearest items of the session for one query, from k = k0 on (0: the
// session's share of the index is too small, scan).
func (s *Store) nearestMax(ctx context.Context, tx driver.ManagedTransaction, sessionID string, dim int, q []float32, uq []float64, k0 int) (float64, error) {
	qv := f32Any(q)
	for k := k0; k > 0 && k <= vecMaxK; k *= vecGrowK {
		cands := map[string][]float32{}
		n := 0
		err := each(ctx, tx, `CALL db.index.vector.queryNodes($idx, $k, $q) YIELD node
RETURN node.id, CASE WHEN node.session_id = $sid THEN `+wireVec("node", "embedding")+` END`,
			map[string]any{"idx": vecIndex(dim), "k": int64(k), "q": qv, "sid": sessionID}, func(r *driver.Record) error {
				n++
				if r.Values[1] == nil || len(cands) >= vecTop {
					return nil
				}
				id, emb, err := idEmbedding(r)
				cands[id] = emb
				return err
			})
		if err != nil {
			return 0, err
		}
		if len(cands) > 0 || n < k {
			return topCosine(exactNeighbors(cands, uq, 0)), nil
		}
	}
	return s.scanTop(ctx, tx, sessionID, dim, uq)
}

// scanTop is nearestMax's exact fallback: the session's vecTop nearest
// indexed items, ranked in the server, compared exactly here.
func (s *Store) scanTop(ctx context.Context, tx driver.ManagedTransaction, sessionID string, dim int, uq []float64) (float64, error) {
	cands := map[string][]float32{}
	q := fmt.Sprintf(`MATCH (e:Evidence {session_id: $sid}) WHERE e:%s AND %s
WITH e, vector.similarity.cosine(e.embedding, $q) AS score ORDER BY score DESC LIMIT $top
RETURN e.id, %s`, vecLabel(dim), nonZero, wireVec("e", "embedding"))
	err := each(ctx, tx, q, map[string]any{"sid": sessionID, "q": anyFloats(uq), "top": int64(vecTop)},
		func(r *driver.Record) error {
			id, emb, err := idEmbedding(r)
			cands[id] = emb
			return err
		})
	if err != nil {
		return 0, err
	}
	return topCosine(exactNeighbors(cands, uq, 0)), nil
}

// scanAll answers every query of a call with one exact scan of the
// session's indexed items: each node is read once and compared with all
// the queries in the server, which returns the pairs within vecSlack of
// the threshold for the exact comparison here.
func (s *Store) scanAll(ctx context.Context, tx driver.ManagedTransaction, sessionID string, dim int, queries [][]float32, threshold float64) ([][]graph.Neighbor, error) {
	out := make([][]graph.Neighbor, len(queries))
	var at []int // position in queries of each valid query
	var qs []any
	var uqs [][]float64
	for i, q := range queries {
		if uq := graph.UnitVector(q); uq != nil && len(q) == dim {
			at, qs, uqs = append(at, i), append(qs, anyFloats(uq)), append(uqs, uq)
		}
	}
	if len(qs) == 0 {
		return out, nil
	}
	cands := make([]map[string][]float32, len(qs))
	for i := range cands {
		cands[i] = map[string][]float32{}
	}
	q := fmt.Sprintf(`MATCH (e:Evidence {session_id: $sid}) WHERE e:%s AND %s
WITH e.id AS id, e.embedding AS emb, %s AS wire UNWIND range(0, size($qs) - 1) AS i
WITH i, id, wire WHERE vector.similarity.cosine(emb, $qs[i]) >= $min
RETURN i, id, wire`, vecLabel(dim), nonZero, wireVec("e", "embedding"))
	err := each(ctx, tx, q, map[string]any{"sid": sessionID, "qs": qs, "min": (1 + threshold - vecSlack) / 2},
		func(r *driver.Record) error {
			i, _ := r.Values[0].(int64)
			id, emb, err := idEmbedding(&driver.Record{Values: r.Values[1:]})
			if i >= 0 && int(i) < len(cands) {
				cands[i][id] = emb
			}
			return err
		})
	if err != nil {
		return nil, err
	}
	for j, i := range at {
		out[i] = exactNeighbors(cands[j], uqs[j], threshold)
	}
	return out, nil
}

// vecShare is this process's estimate of how many of a session's items of
// one dimension the vector index holds: counted at the first call and
// every sweepEvery-th (a read of the session's evidence index, 32 ms at
// 100k items), advanced by what each call labels in between.
type vecShare struct{ calls, mine atomic.Int64 }

// startK is the k a call's vector queries start at (0: scan the session
// instead), from the session's share of the index (firstK).
func (s *Store) startK(ctx context.Context, tx driver.ManagedTransaction, sessionID string, dim int, labelled int64) (int, error) {
	v, _ := s.share.LoadOrStore(fmt.Sprintf("%s\x00%d", sessionID, dim), new(vecShare))
	sh := v.(*vecShare)
	label := vecLabel(dim)
	q := fmt.Sprintf("MATCH (n:%s) RETURN count(n)", label) // the label's count: no read of nodes
	if n := sh.calls.Add(1); n == 1 || n%sweepEvery == 0 {
		q = fmt.Sprintf("MATCH (n:%[1]s) WITH count(n) AS total OPTIONAL MATCH (e:Evidence {session_id: $sid}) WHERE e:%[1]s RETURN total, count(e)", label)
	} else {
		sh.mine.Add(labelled)
	}
	rec, err := single(ctx, tx, q, map[string]any{"sid": sessionID})
	if err != nil {
		return 0, err
	}
	if rec == nil {
		return 0, fmt.Errorf("vector share of session %s: the count returned no row", sessionID)
	}
	total, _ := rec.Values[0].(int64)
	if len(rec.Values) > 1 {
		mine, _ := rec.Values[1].(int64)
		sh.mine.Store(mine)
	}
	return firstK(total, sh.mine.Load()), nil
}

// firstK is where a session's nearest-item queries (NearestCosine) start.
// The index answers with the k nearest items of every session, so a
// session holding a share f of the index finds about f·k of its own among
// them: beside sessions of other content, a small session's query used to
// widen k from vecFirstK through vecMaxK and then scan. k starts at
// vecFirstK/f, and a share under vecFirstK/vecMaxK (1/64) scans at once.
func firstK(total, mine int64) int {
	if mine <= 0 || total <= 0 || mine*vecMaxK < vecFirstK*total {
		return 0
	}
	return int(max((vecFirstK*total+mine-1)/mine, vecFirstK))
}

// f32Any is an embedding as a Cypher list parameter.
func f32Any(v []float32) []any {
	out := make([]any, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// anyFloats is a vector as a Cypher list parameter.
func anyFloats(v []float64) []any {
	out := make([]any, len(v))
	for i, x := range v {
		out[i] = x
	}
	return out
}

// vecTop is how many of the session's nearest items nearestMax compares
// exactly: index scores are float32, so the exact maximum may sit one or
// two places down among near-ties.
const vecTop = 4

// topCosine is the first neighbour's cosine, or 0.
func topCosine(ns []graph.Neighbor) float64 {
	if len(ns) == 0 {
		return 0
	}
	return ns[0].Cosine
}

// idEmbedding decodes a row of (evidence id, embedding).
func idEmbedding(r *driver.Record) (string, []float32, error) {
	id, _ := r.Values[0].(string)
	emb, err := asF32(r.Values[1])
	if err != nil {
		return id, nil, fmt.Errorf("evidence %q: %w", id, err)
	}
	return id, emb, nil
}

// embeddingsInto is a row callback that keeps each (id, embedding) row
// in m.
func embeddingsInto(m map[string][]float32) func(*driver.Record) error {
	return func(r *driver.Record) error {
		id, emb, err := idEmbedding(r)
		m[id] = emb
		return err
	}
}

// exactNeighbors keeps the candidates with exact cosine >= threshold,
// strongest first, ties by id.
func exactNeighbors(cands map[string][]float32, uq []float64, threshold float64) []graph.Neighbor {
	var res []graph.Neighbor
	for id, emb := range cands {
		u := graph.UnitVector(emb)
		if u == nil || len(u) != len(uq) {
			continue
		}
		if c := graph.Dot(uq, u); c >= threshold {
			res = append(res, graph.Neighbor{ID: id, Cosine: c})
		}
	}
	slices.SortFunc(res, strongestFirst)
	return res
}

// strongestFirst orders neighbours by cosine, highest first, ties by id.
func strongestFirst(a, b graph.Neighbor) int {
	switch {
	case a.Cosine > b.Cosine:
		return -1
	case a.Cosine < b.Cosine:
		return 1
	}
	return strings.Compare(a.ID, b.ID)
}

// SimilarEdgesOf returns the SIMILAR_TO edges with an endpoint among ids,
// found from those nodes through the evidence id constraint's index.
func (s *Store) SimilarEdgesOf(ctx context.Context, sessionID string, ids []string) ([]graph.Edge, error) {
	return s.similarRows(ctx, "similar edges of", sessionID, relsOf("SIMILAR_TO", "r.label"), map[string]any{"sid": sessionID, "ids": ids})
}

// relsOf reads the relationships of type rel with an end among $ids, each
// once, as similarRows wants them (label: the label's expression).
func relsOf(rel, label string) string {
	return `MATCH (e:Evidence) USING INDEX e:Evidence(id) WHERE e.id IN $ids AND e.session_id = $sid
MATCH (e)-[r:` + rel + `]-(o:Evidence)
WITH DISTINCT r, startNode(r) AS a, endNode(r) AS b
RETURN a.id, b.id, r.weight, ` + label
}

// similarRows runs a read of SIMILAR_TO rows (from id, to id, weight,
// label) in an existing session and returns them in SortEdges order.
func (s *Store) similarRows(ctx context.Context, op, sessionID, q string, params map[string]any) ([]graph.Edge, error) {
	var out []graph.Edge
	err := s.read(ctx, op, func(ctx context.Context, tx driver.ManagedTransaction) error {
		out = nil
		err := each(ctx, tx, q, params, func(r *driver.Record) error {
			out = append(out, similarEdge(r))
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
	graph.SortEdges(out)
	return out, nil
}

// similarEdge is a row (from id, to id, weight, label) as an edge.
func similarEdge(r *driver.Record) graph.Edge {
	e := graph.Edge{Kind: graph.SimilarTo}
	e.From, _ = r.Values[0].(string)
	e.To, _ = r.Values[1].(string)
	e.Weight, _ = r.Values[2].(float64)
	e.Label, _ = r.Values[3].(string)
	return e
}

// FetchedSources looks the URLs up through the (session_id, source_url)
// index: what it returns, not the session's evidence.
func (s *Store) FetchedSources(ctx context.Context, sessionID string, urls []string) (map[string]bool, error) {
	var list []any
	for _, u := range urls {
		if u != "" {
			list = append(list, u)
		}
	}
	out := map[string]bool{}
	err := s.read(ctx, "fetched sources", func(ctx context.Context, tx driver.ManagedTransaction) error {
		clear(out)
		if err := requireSession(ctx, tx, sessionID); err != nil || len(list) == 0 {
			return err
		}
		return each(ctx, tx, `UNWIND $urls AS u
MATCH (e:Evidence {session_id: $sid, source_url: u}) WHERE e.kind <> $llm
RETURN DISTINCT u`, map[string]any{"sid": sessionID, "urls": list, "llm": string(graph.KindLLM)}, func(r *driver.Record) error {
			if u, ok := r.Values[0].(string); ok {
				out[u] = true
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
