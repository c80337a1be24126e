package neo4j

import (
	"context"
	"fmt"
	"slices"
	"strings"

	driver "github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/lethe-research/lethe/graph"
)

// Lane expand (#14): one hop around a set of nodes, for Expand's push PPR.
// Each query starts from the wanted nodes by id (the unique constraints
// index it), so the cost follows the neighbourhood, not the session.

// hopEdges are the edges incident to the wanted tasks ($tids) and evidence
// ($eids), each once: an edge between two wanted nodes comes back from
// both ends and is kept from its start node only. The index hints keep
// the planner off the session_id index, which it otherwise prefers and
// then filters all the session's nodes by id (docs/neo4j.md).
//
// A wanted task's SUPPORTS side comes as one row (supportsPack), and with
// $shapes it carries the evidence shapes (as shapeRows projects them):
// the hop has reached those nodes already, and reading them again by id
// cost one index seek per node. A task's evidence is mostly new to the walk
// when it reads the task; a wanted evidence item's SIMILAR_TO neighbours
// are mostly known (evidence of the same tasks), so those rows carry no
// shape, and the few unknown ones are read by id as before.
// At 100k evidence a round of two large tasks (4,126 edges) took 35–48 ms
// for the hop and 75–97 ms for the shapes after it by id, against 54–68 ms
// for the hop with its shapes (docs/neo4j.md, "The walk's node reads").
//
// The tasks of $ctids are those whose SUPPORTS side the walk cache holds
// (walkcache.go): the hop reads only their task edges, and $alltids is
// both lists, so that an edge between two wanted nodes is still kept from
// one end only. With $check the hop also answers whether those copies are
// current, in rows of their own kind: the session's generation (GEN) and
// each held task's SUPPORTS count from the node's degree (COUNT), so the
// check costs no round trip of its own.
const hopEdges = `MATCH (n:Task) USING INDEX n:Task(id) WHERE n.id IN $tids AND n.session_id = $sid
MATCH (n)-[r:SUBTASK_OF|DEPENDS_ON]-(m)
WHERE startNode(r) = n OR NOT m.id IN $alltids
RETURN startNode(r).id AS from, endNode(r).id AS to, type(r) AS kind, null AS weight, null AS label, null AS shape
UNION ALL
MATCH (n:Task) USING INDEX n:Task(id) WHERE n.id IN $tids AND n.session_id = $sid
` + supportsPack + `
UNION ALL
MATCH (n:Task) USING INDEX n:Task(id) WHERE n.id IN $ctids AND n.session_id = $sid
MATCH (n)-[r:SUBTASK_OF|DEPENDS_ON]-(m)
WHERE startNode(r) = n OR NOT m.id IN $alltids
RETURN startNode(r).id AS from, endNode(r).id AS to, type(r) AS kind, null AS weight, null AS label, null AS shape
UNION ALL
MATCH (n:Evidence) USING INDEX n:Evidence(id) WHERE n.id IN $eids AND n.session_id = $sid
` + evidenceEdges + `
UNION ALL
MATCH (s:Session {id: $sid}) WHERE $check
RETURN null AS from, null AS to, '` + rowGen + `' AS kind, null AS weight, s.gen AS label, null AS shape
UNION ALL
MATCH (n:Task) USING INDEX n:Task(id) WHERE $check AND n.id IN $ctids AND n.session_id = $sid
RETURN null AS from, n.id AS to, '` + rowCount + `' AS kind, COUNT { (n)<-[:SUPPORTS]-() } AS weight, null AS label, null AS shape`

// evidenceEdges is the edges of the wanted evidence items (n) in one
// row, as lists per item: its id and internal id, and each edge's other
// end, kind, whether n is its start, and in a full read its weight and
// label. Which edges the round keeps (an edge between two wanted items
// from its start only, no SUPPORTS edge to a wanted task) is decided in
// edgesRow: in the query each test read the other end's id once more, and
// the start and end ids were read again per edge; an item's own id is
// read once now, not once per edge (docs/neo4j.md, "Evidence edges item
// by item").
//
// The other end comes as its internal id (id(m)), not its id property:
// reading m.id was a property-store read per edge, a third of the seeds
// round (4,096 items, 18,400 edges: 82 → 54 ms, docs/neo4j.md, "Other
// ends by internal id"). Most ends are wanted items of the same row,
// whose two ids the row pairs; the rest are resolved in the same
// transaction (resolveEnds), where an internal id cannot name another
// node, so nothing outlives the transaction.
const evidenceEdges = `MATCH (n)-[r:SUPPORTS|SIMILAR_TO]-(m)
WITH n, collect(id(m)) AS t, collect(type(r)) AS k, collect(startNode(r) = n) AS o,
  collect(CASE WHEN NOT $shapes THEN coalesce(r.weight, 0.0) END) AS w,
  collect(CASE WHEN NOT $shapes THEN coalesce(r.label, '') END) AS l
WITH collect(n.id) AS ns, collect(id(n)) AS nn, collect(t) AS ts, collect(k) AS ks, collect(o) AS os, collect(w) AS ws, collect(l) AS ls
WHERE size(ns) > 0
RETURN null AS from, null AS to, '` + rowEdges + `' AS kind, null AS weight, null AS label, {n: ns, nid: nn, to: ts, kind: ks, out: os, weight: ws, label: ls} AS shape`

// nodeIDsOf resolves internal ids of the transaction's nodes to their id
// property (evidenceEdges' other ends the row did not pair).
const nodeIDsOf = `MATCH (m) WHERE id(m) IN $nids RETURN id(m) AS nid, m.id AS id`

// supportsPack is a task's SUPPORTS side (n bound) as one row: the
// evidence ids, and with $shapes their shapes, as parallel lists (one
// aggregation, so the lists keep one order). A row per edge cost about
// 6 µs in the driver whatever it carried: a task of 6,000 items took
// 74 ms as rows with shapes and 37 ms packed, 41 ms as rows of ids alone
// (docs/neo4j.md, "One row per task, one row for the evidence"). The
// coalesces keep a missing property from being skipped by collect, which
// would shift the lists.
const supportsPack = `MATCH (n)<-[:SUPPORTS]-(m)
WITH n, collect(m.id) AS ids, collect(id(m)) AS nids,
  collect(CASE WHEN $shapes THEN coalesce(m.embedding_f32, m.embedding, []) END) AS emb,
  collect(CASE WHEN $shapes THEN coalesce(m.created_iter, 0) END) AS iter,
  collect(CASE WHEN $shapes THEN coalesce(m.content_hash, '') END) AS hash
RETURN null AS from, n.id AS to, '` + rowPack + `' AS kind, null AS weight, null AS label, {ids: ids, nids: nids, tnid: id(n), emb: emb, iter: iter, hash: hash} AS shape`

// The kinds of the hop's check rows (hopEdges).
const (
	rowGen   = "GEN"
	rowCount = "COUNT"
	// rowPack is a task's SUPPORTS side in one row (supportsPack).
	rowPack = "SUPPORTS*"
	// rowEdges is the wanted evidence's edges in one row, as parallel
	// lists: the walk's seeds round reads the focus's own items, 2,000
	// at 100k in bench/long, and their 9,000 edges as rows took 111 ms
	// (docs/neo4j.md, "One row per task, one row for the evidence").
	rowEdges = "EDGES*"
)

// hopSupports reads the SUPPORTS side of tasks whose copy the hop found
// stale, in the hop's row form (their task edges came with the hop).
const hopSupports = `MATCH (n:Task) USING INDEX n:Task(id) WHERE n.id IN $tids AND n.session_id = $sid
` + supportsPack

// hopShape is an evidence endpoint's shape in a hop row, as shapeRows's.
const hopShape = `m {.id, .session_id, embedding: coalesce(m.embedding_f32, m.embedding), .created_iter, .content_hash}`

// Neighbourhood returns the nodes ids, their direct neighbours and the
// edges incident to ids (see graph.Store).
func (s *Store) Neighbourhood(ctx context.Context, sessionID string, ids []string) (graph.Neighbourhood, error) {
	return s.neighbourhood(ctx, sessionID, ids, false, nil)
}

// NeighbourhoodShape is Neighbourhood without the evidence texts (see
// graph.Store): the evidence rows are projected in the query, so the
// contents never cross the wire.
func (s *Store) NeighbourhoodShape(ctx context.Context, sessionID string, ids []string, known func(string) bool) (graph.Neighbourhood, error) {
	return s.neighbourhood(ctx, sessionID, ids, true, known)
}

func (s *Store) neighbourhood(ctx context.Context, sessionID string, ids []string, shape bool, known func(string) bool) (graph.Neighbourhood, error) {
	var out graph.Neighbourhood
	var fills []*walkEntry
	tids, eids := splitIDs(sessionID, ids)
	err := s.read(ctx, "neighbourhood", func(ctx context.Context, tx driver.ManagedTransaction) error {
		out, fills = graph.Neighbourhood{}, nil
		if !shape {
			if err := requireSession(ctx, tx, sessionID); err != nil {
				return err
			}
		}
		nt, ne := setOf(tids), setOf(eids)
		r := hopRound{sid: sessionID, nt: nt, ne: ne, known: known, wantT: setOf(tids), wantE: setOf(eids)}
		if shape {
			r.shapes = map[string]graph.Evidence{}
			r.useCache(s.walk, tids)
		}
		var err error
		if out.Edges, err = r.hop(ctx, tx, tids, eids); err != nil {
			return err
		}
		if out.Edges, err = r.settle(ctx, tx, s.walk); err != nil {
			return err
		}
		fills = r.fills(s.walk)
		// A round whose nodes are all known skips the node queries, and
		// evidence the hop brought its shape for is not read again.
		tids, eids := keysOf(nt, known), keysOf(ne, r.has)
		if shape {
			for _, e := range r.shapes {
				out.Evidence = append(out.Evidence, e)
			}
			return shapeNodes(ctx, tx, sessionID, tids, eids, len(out.Edges) > 0, &out)
		}
		if len(tids) > 0 {
			out.Tasks, err = loadTasks(ctx, tx, "MATCH (t:Task) USING INDEX t:Task(id) WHERE t.id IN $ids AND t.session_id = $sid",
				map[string]any{"sid": sessionID, "ids": tids})
			if err != nil {
				return err
			}
		}
		if len(eids) > 0 {
			out.Evidence, err = evidenceByID(ctx, tx, sessionID, eids)
		}
		return err
	})
	if err != nil {
		return graph.Neighbourhood{}, err
	}
	for _, e := range fills {
		s.walk.put(e)
	}
	graph.SortEdges(out.Edges)
	return out, nil
}

// hopRound is one hop's reading: the edges, the endpoint ids it adds to
// nt (tasks) and ne (evidence), and, in a shape read (shapes not nil), the
// shapes of the evidence endpoints the walk does not know. The walk cache's
// part (walkcache.go) is in walkRound.
type hopRound struct {
	sid    string
	nt, ne map[string]bool
	known  func(string) bool
	shapes map[string]graph.Evidence
	edges  []graph.Edge
	// wantT and wantE are the round's wanted tasks and evidence (nt and ne
	// grow with the endpoints).
	wantT, wantE map[string]bool
	// names are the ids of the internal ids the transaction returned, and
	// items the rowEdges rows waiting for their ends to be named.
	names map[int64]string
	items []edgesItems
	walkRound
}

// edgesItems is one rowEdges row: parallel lists per wanted item.
type edgesItems struct {
	ns, to, kind, out, w, l []any
}

// has says whether the walk knows id or this round brought its shape.
func (r *hopRound) has(id string) bool {
	if _, ok := r.shapes[id]; ok {
		return true
	}
	return r.known != nil && r.known(id)
}

// hop reads the edges incident to the wanted tasks and evidence, adds
// their other endpoints to nt and ne, and keeps the shapes the rows carry.
// Of the tasks the walk cache holds it reads the task edges only.
func (r *hopRound) hop(ctx context.Context, tx driver.ManagedTransaction, tids, eids []string) ([]graph.Edge, error) {
	whole, held := tids, []string{}
	if len(r.held) > 0 {
		whole = slices.DeleteFunc(slices.Clone(tids), func(id string) bool { return r.held[id] != nil })
		for id := range r.held {
			held = append(held, id)
		}
	}
	p := map[string]any{"sid": r.sid, "tids": whole, "ctids": held, "alltids": tids, "eids": eids, "shapes": r.shapes != nil, "check": r.check}
	if err := each(ctx, tx, hopEdges, p, r.row); err != nil {
		return nil, err
	}
	if err := r.resolveEnds(ctx, tx); err != nil {
		return nil, err
	}
	if err := r.addItems(); err != nil {
		return nil, err
	}
	return r.edges, nil
}

// addItems adds the edges of the held rowEdges rows (see edgesRow).
func (r *hopRound) addItems() error {
	for _, it := range r.items {
		for i, v := range it.ns {
			n, _ := v.(string)
			if err := r.itemEdges(n, it.to[i], it.kind[i], it.out[i], at(it.w, i, r.shapes == nil), at(it.l, i, r.shapes == nil)); err != nil {
				return err
			}
		}
	}
	r.items = nil
	return nil
}

// name records that internal id v (an int64 from a row) is node id.
func (r *hopRound) name(v any, id string) {
	if nid, ok := v.(int64); ok && id != "" {
		if r.names == nil {
			r.names = map[int64]string{}
		}
		r.names[nid] = id
	}
}

// resolveEnds names the other ends of the held rowEdges rows that no row
// named, in the hop's transaction.
func (r *hopRound) resolveEnds(ctx context.Context, tx driver.ManagedTransaction) error {
	var missing []int64
	seen := map[int64]bool{}
	for _, it := range r.items {
		for _, ends := range it.to {
			l, _ := ends.([]any)
			for _, v := range l {
				nid, ok := v.(int64)
				if _, named := r.names[nid]; ok && !named && !seen[nid] {
					seen[nid] = true
					missing = append(missing, nid)
				}
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return each(ctx, tx, nodeIDsOf, map[string]any{"nids": missing}, func(rec *driver.Record) error {
		id, _ := rec.Values[1].(string)
		r.name(rec.Values[0], id)
		return nil
	})
}

// row takes one row of hopEdges or hopSupports.
func (r *hopRound) row(rec *driver.Record) error {
	k, _ := rec.Values[2].(string)
	switch k {
	case rowGen, rowCount:
		return r.checkRow(k, rec)
	case rowPack:
		return r.packRow(rec)
	case rowEdges:
		return r.edgesRow(rec)
	}
	e := graph.Edge{Kind: graph.EdgeKind(k)}
	e.From, _ = rec.Values[0].(string)
	e.To, _ = rec.Values[1].(string)
	if r.shapes == nil || e.Kind != graph.SimilarTo {
		e.Weight, _ = rec.Values[3].(float64)
		e.Label, _ = rec.Values[4].(string)
	}
	r.edges = append(r.edges, e)
	r.note(e.From)
	r.note(e.To)
	return nil
}

// packRow takes a task's SUPPORTS side (supportsPack): its edges, the
// shapes the walk does not know, and, for a task the walk cache should
// get a copy of, every shape.
func (r *hopRound) packRow(rec *driver.Record) error {
	task, _ := rec.Values[1].(string)
	p, _ := rec.Values[5].(map[string]any)
	ids, _ := p["ids"].([]any)
	emb, _ := p["emb"].([]any)
	iter, _ := p["iter"].([]any)
	hash, _ := p["hash"].([]any)
	withShapes := r.shapes != nil
	if withShapes && (len(emb) != len(ids) || len(iter) != len(ids) || len(hash) != len(ids)) {
		return fmt.Errorf("SUPPORTS of %s: %d ids, %d embeddings, %d iterations, %d hashes", task, len(ids), len(emb), len(iter), len(hash))
	}
	r.nt[task] = true
	r.name(p["tnid"], task)
	nids, _ := p["nids"].([]any)
	if len(nids) != len(ids) {
		return fmt.Errorf("SUPPORTS of %s: %d ids, %d internal ids", task, len(ids), len(nids))
	}
	copyOf := r.copyFor(task, len(ids))
	for i, v := range ids {
		id, _ := v.(string)
		r.name(nids[i], id)
		e := graph.Edge{From: id, To: task, Kind: graph.Supports}
		r.edges = append(r.edges, e)
		r.ne[id] = true
		if !withShapes || (copyOf == nil && r.has(id)) {
			continue
		}
		vec, err := asF32(emb[i])
		if err != nil {
			return fmt.Errorf("decode evidence %q: %w", id, err)
		}
		n, _ := iter[i].(int64)
		h, _ := hash[i].(string)
		sh := graph.Evidence{ID: id, SessionID: r.sid, Embedding: vec, CreatedIter: int(n), ContentHash: h}
		if !r.has(id) {
			r.shapes[id] = sh
		}
		if copyOf != nil {
			copyOf.edges, copyOf.shapes = append(copyOf.edges, e), append(copyOf.shapes, sh)
		}
	}
	return nil
}

// edgesRow takes the wanted evidence's edges (rowEdges) and names the
// wanted items' internal ids; hop adds the edges, item by item, once every
// end is named: an edge between two wanted items is kept from its start
// only, and a SUPPORTS edge to a wanted task not at all (the task's side
// brings it); weights and labels only in a full read, as row reads them.
func (r *hopRound) edgesRow(rec *driver.Record) error {
	p, _ := rec.Values[5].(map[string]any)
	ns, _ := p["n"].([]any)
	nn, _ := p["nid"].([]any)
	to, _ := p["to"].([]any)
	kind, _ := p["kind"].([]any)
	out, _ := p["out"].([]any)
	w, _ := p["weight"].([]any)
	l, _ := p["label"].([]any)
	full := r.shapes == nil
	if len(nn) != len(ns) || len(to) != len(ns) || len(kind) != len(ns) || len(out) != len(ns) || full && (len(w) != len(ns) || len(l) != len(ns)) {
		return fmt.Errorf("evidence edges: %d items, %d internal ids, %d ends, %d kinds, %d directions, %d weights, %d labels", len(ns), len(nn), len(to), len(kind), len(out), len(w), len(l))
	}
	for i, v := range ns {
		n, _ := v.(string)
		r.name(nn[i], n)
	}
	r.items = append(r.items, edgesItems{ns: ns, to: to, kind: kind, out: out, w: w, l: l})
	return nil
}

// at is l[i] when want, else nil.
func at(l []any, i int, want bool) any {
	if !want {
		return nil
	}
	return l[i]
}

// itemEdges adds the kept edges of one wanted item n (see edgesRow).
func (r *hopRound) itemEdges(n string, toV, kindV, outV, wV, lV any) error {
	to, _ := toV.([]any)
	kind, _ := kindV.([]any)
	out, _ := outV.([]any)
	w, _ := wV.([]any)
	l, _ := lV.([]any)
	full := r.shapes == nil
	if len(kind) != len(to) || len(out) != len(to) || full && (len(w) != len(to) || len(l) != len(to)) {
		return fmt.Errorf("edges of %s: %d ends, %d kinds, %d directions, %d weights, %d labels", n, len(to), len(kind), len(out), len(w), len(l))
	}
	r.edges = slices.Grow(r.edges, len(to))
	for j := range to {
		nid, _ := to[j].(int64)
		m, ok := r.names[nid]
		if !ok {
			return fmt.Errorf("edges of %s: end %d has no id", n, nid)
		}
		k, _ := kind[j].(string)
		start, _ := out[j].(bool)
		if (!start && r.wantE[m]) || (k == string(graph.Supports) && r.wantT[m]) {
			continue
		}
		e := graph.Edge{From: n, To: m, Kind: graph.EdgeKind(k)}
		if !start {
			e.From, e.To = m, n
		}
		if full {
			e.Weight, _ = w[j].(float64)
			e.Label, _ = l[j].(string)
		}
		r.edges = append(r.edges, e)
		r.note(e.From)
		r.note(e.To)
	}
	return nil
}

// note adds an edge's endpoint to the round's tasks or evidence.
func (r *hopRound) note(id string) {
	if strings.HasPrefix(id, graph.TaskID(r.sid, "")) {
		r.nt[id] = true
	} else {
		r.ne[id] = true
	}
}

// shapeNodes is a walk round's node read, tasks and evidence shapes in one
// statement. The session check rides on the answers: an edge or a node of
// the session shows that it exists, and only a round that read neither
// asks (seen: the hop found edges). That is two statements fewer per
// round; measured alone it was within noise (25 → 23 ms per call at 1k),
// since the cost was the reads' plan (docs/neo4j.md), not round trips.
func shapeNodes(ctx context.Context, tx driver.ManagedTransaction, sessionID string, tids, eids []string, seen bool, out *graph.Neighbourhood) error {
	if len(tids)+len(eids) > 0 {
		err := each(ctx, tx, shapeRows, map[string]any{"sid": sessionID, "tids": tids, "eids": eids}, func(r *driver.Record) error {
			if r.Values[0] == nil {
				e, err := evidenceShape(r.Values[3])
				if err != nil {
					return err
				}
				out.Evidence = append(out.Evidence, e)
				return nil
			}
			t, err := taskRecord(r)
			if err != nil {
				return err
			}
			out.Tasks = append(out.Tasks, t)
			return nil
		})
		if err != nil {
			return err
		}
	}
	graph.SortTasks(out.Tasks)
	graph.SortEvidence(out.Evidence)
	if seen || len(out.Tasks)+len(out.Evidence) > 0 {
		return nil
	}
	return requireSession(ctx, tx, sessionID)
}

// shapeRows are the wanted tasks (as loadTasks reads them) and evidence
// shapes (no texts, no SUPPORTS targets: those are in the hop's edges).
const shapeRows = `MATCH (t:Task) USING INDEX t:Task(id) WHERE t.id IN $tids AND t.session_id = $sid
RETURN t AS task, [(t)-[:SUBTASK_OF]->(p:Task) | p.id] AS parent, [(t)-[:DEPENDS_ON]->(d:Task) | d.id] AS deps, null AS shape
UNION ALL
MATCH (e:Evidence) USING INDEX e:Evidence(id) WHERE e.id IN $eids AND e.session_id = $sid
RETURN null AS task, null AS parent, null AS deps, e {.id, .session_id, embedding: coalesce(e.embedding_f32, e.embedding), .created_iter, .content_hash} AS shape`

// evidenceByID loads the given evidence nodes of the session with their
// SUPPORTS targets (the first one, without seq, first), in Evidence order.
func evidenceByID(ctx context.Context, tx driver.ManagedTransaction, sessionID string, ids []string) ([]graph.Evidence, error) {
	var out []graph.Evidence
	err := each(ctx, tx, `MATCH (e:Evidence) USING INDEX e:Evidence(id) WHERE e.id IN $ids AND e.session_id = $sid
MATCH (e)-[s:SUPPORTS]->(t:Task)
WITH e, t ORDER BY coalesce(s.seq, 0), t.id
RETURN `+evidenceWire+`, collect(t.id)`, map[string]any{"sid": sessionID, "ids": ids}, func(r *driver.Record) error {
		e, err := evidenceRecord(r)
		if err != nil {
			return err
		}
		out = append(out, e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	graph.SortEvidence(out)
	return out, nil
}

// splitIDs sorts the ids of the session into task and evidence ids; others
// are dropped (they name no node of the session).
func splitIDs(sessionID string, ids []string) (tids, eids []string) {
	tids, eids = []string{}, []string{}
	for _, id := range ids {
		switch {
		case strings.HasPrefix(id, graph.TaskID(sessionID, "")):
			tids = append(tids, id)
		case strings.HasPrefix(id, graph.EvidenceID(sessionID, "")):
			eids = append(eids, id)
		}
	}
	return tids, eids
}

func setOf(ids []string) map[string]bool {
	m := make(map[string]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return m
}

// keysOf lists the keys of m, less those known names (known nil: none).
func keysOf(m map[string]bool, known func(string) bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		if known == nil || !known(k) {
			out = append(out, k)
		}
	}
	return out
}

// evidenceShape decodes an evidence shape row of shapeRows.
func evidenceShape(v any) (graph.Evidence, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return graph.Evidence{}, fmt.Errorf("evidence shape is %T, not a map", v)
	}
	np := props(m)
	emb, err := np.emb("embedding")
	if err != nil {
		return graph.Evidence{}, fmt.Errorf("decode evidence %q: %w", np.str("id"), err)
	}
	return graph.Evidence{ID: np.str("id"), SessionID: np.str("session_id"), Embedding: emb,
		CreatedIter: np.int("created_iter"), ContentHash: np.str("content_hash")}, nil
}
