package embedded

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/lethe-research/lethe/graph"
)

// Lane expand (#14): one hop around a set of nodes, for Expand's push PPR.
//
// Lane storecost: every edge is found through the index buckets of
// adjacency.go (task_adj, supports, similar_adj, and the SUPPORTS targets
// in the record of a wanted evidence item), so the cost follows the
// neighbourhood read, not the session: no walk over tasks, evidence or
// edges. Contents and embeddings are decoded only for the nodes returned.

// Neighbourhood returns the nodes ids, their direct neighbours and the
// edges incident to ids (see graph.Store).
func (s *Store) Neighbourhood(ctx context.Context, sessionID string, ids []string) (graph.Neighbourhood, error) {
	var out graph.Neighbourhood
	err := s.view(ctx, "neighbourhood", func(tx *bolt.Tx) error {
		sb, err := session(tx, sessionID)
		if err != nil {
			return err
		}
		h, err := around(sb, sessionID, ids, true)
		if err != nil {
			return err
		}
		out, err = h.nodes(sb, sessionID, s.tasks)
		return err
	})
	if err != nil {
		return graph.Neighbourhood{}, err
	}
	return out, nil
}

// hop collects the edges incident to the wanted nodes and the nodes to
// return, by short id (tasks) and content hash (evidence). An edge between
// two wanted nodes is found from both ends and kept from one: SUPPORTS
// from the evidence's end, the others from the end with the smaller key.
// weights says whether SIMILAR_TO edges carry their weight and label
// (read from the edge record); a shape does without.
type hop struct {
	wantT, wantE map[string]bool
	tasks, ev    map[string]bool
	edges        []graph.Edge
	weights      bool
	// The session's buckets, opened once: a read transaction opens a
	// nested bucket anew on every Bucket call (a cursor seek), and a walk
	// asks for thousands of nodes.
	evb, eb, taskAdj, supports, similarAdj *bolt.Bucket
}

// NeighbourhoodShape is Neighbourhood reduced to what a walk needs (see
// graph.Store): the embeddings come from the rows of the similarity
// index's cache (caught up in the same transaction), and neither evidence
// records nor SIMILAR_TO edge records are decoded, only the adjacency
// keys and the heads of the wanted evidence (their SUPPORTS targets).
func (s *Store) NeighbourhoodShape(ctx context.Context, sessionID string, ids []string, known func(string) bool) (graph.Neighbourhood, error) {
	var out graph.Neighbourhood
	err := s.view(ctx, "neighbourhood shape", func(tx *bolt.Tx) error {
		sb, err := session(tx, sessionID)
		if err != nil {
			return err
		}
		h, err := around(sb, sessionID, ids, false)
		if err != nil {
			return err
		}
		return s.vecs.refresh(sb, sessionID, func(sv *sessVecs) error {
			out, err = h.shapes(sb, sessionID, sv, s.tasks, known)
			return err
		})
	})
	if err != nil {
		return graph.Neighbourhood{}, err
	}
	return out, nil
}

// around collects the edges incident to ids and the nodes they reach.
func around(sb *bolt.Bucket, sid string, ids []string, weights bool) (*hop, error) {
	h := &hop{wantT: map[string]bool{}, wantE: map[string]bool{}, tasks: map[string]bool{}, ev: map[string]bool{}, weights: weights,
		evb: sb.Bucket(bktEvidence), eb: sb.Bucket(bktEdges), taskAdj: sb.Bucket(bktTaskAdj), supports: sb.Bucket(bktSupports), similarAdj: sb.Bucket(bktSimilarAdj)}
	tb, evb := sb.Bucket(bktTasks), h.evb
	for _, id := range ids {
		if t, ok := strings.CutPrefix(id, graph.TaskID(sid, "")); ok && t != "" && tb.Get([]byte(t)) != nil {
			h.wantT[t] = true
		} else if e, ok := strings.CutPrefix(id, graph.EvidenceID(sid, "")); ok && e != "" && evb.Get([]byte(e)) != nil {
			h.wantE[e] = true
		}
	}
	for t := range h.wantT {
		if err := h.taskEdges(sid, t); err != nil {
			return nil, err
		}
	}
	for e := range h.wantE {
		if err := h.evidenceEdges(sid, e); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// taskEdges adds the edges of a wanted task: SUBTASK_OF and DEPENDS_ON
// both ways (task_adj) and the SUPPORTS edges into it (supports).
func (h *hop) taskEdges(sid, t string) error {
	h.tasks[t] = true
	err := prefixed(h.taskAdj, t, func(rest []byte) error {
		other, kind, ok := bytes.Cut(rest, []byte{adjKeySeparator})
		if !ok || len(kind) != 1 {
			return fmt.Errorf("bad task adjacency key %q", rest)
		}
		o := string(other)
		h.tasks[o] = true
		if h.wantT[o] && o < t {
			return nil // o's end keeps it
		}
		from, to, k := t, o, graph.SubtaskOf
		switch kind[0] {
		case adjSubtaskIn:
			from, to = o, t
		case adjDependsOut:
			k = graph.DependsOn
		case adjDependsIn:
			from, to, k = o, t, graph.DependsOn
		}
		h.edges = append(h.edges, graph.Edge{From: graph.TaskID(sid, from), To: graph.TaskID(sid, to), Kind: k})
		return nil
	})
	if err != nil {
		return err
	}
	return prefixed(h.supports, t, func(rest []byte) error {
		hash := string(rest)
		h.ev[hash] = true
		if h.wantE[hash] {
			return nil // the evidence's end keeps it
		}
		h.edges = append(h.edges, graph.Edge{From: graph.EvidenceID(sid, hash), To: graph.TaskID(sid, t), Kind: graph.Supports})
		return nil
	})
}

// evidenceEdges adds the edges of a wanted evidence item: SUPPORTS (its
// record's targets) and SIMILAR_TO (similar_adj, weight and label from
// the edge record).
func (h *hop) evidenceEdges(sid, e string) error {
	h.ev[e] = true
	task, also, err := evidenceTargets(h.evb.Get([]byte(e)))
	if err != nil {
		return fmt.Errorf("decode evidence %q: %w", e, err)
	}
	for _, t := range append([]string{task}, also...) {
		h.tasks[t] = true
		h.edges = append(h.edges, graph.Edge{From: graph.EvidenceID(sid, e), To: graph.TaskID(sid, t), Kind: graph.Supports})
	}
	return prefixed(h.similarAdj, e, func(rest []byte) error {
		o := string(rest)
		h.ev[o] = true
		if h.wantE[o] && o < e {
			return nil // o's end keeps it
		}
		a, b := min(e, o), max(e, o)
		edge := graph.Edge{From: graph.EvidenceID(sid, a), To: graph.EvidenceID(sid, b), Kind: graph.SimilarTo}
		if h.weights {
			var r similarRec
			if err := getJSON(h.eb, edgeKey(a, b), &r); err != nil {
				return fmt.Errorf("edge %s-%s: %w", a, b, err)
			}
			edge.Weight, edge.Label = r.Weight, r.Label
		}
		h.edges = append(h.edges, edge)
		return nil
	})
}

// nodes decodes the nodes to return: the wanted ones and the other
// endpoints of their edges.
func (h *hop) nodes(sb *bolt.Bucket, sid string, tc *taskCache) (graph.Neighbourhood, error) {
	var out graph.Neighbourhood
	var err error
	if out.Tasks, err = tc.byIDs(sb, sid, h.tasks); err != nil {
		return out, err
	}
	evb := sb.Bucket(bktEvidence)
	for hash := range h.ev {
		var r evidenceRec
		if err := getJSON(evb, []byte(hash), &r); err != nil {
			return out, fmt.Errorf("evidence %q: %w", hash, err)
		}
		e, err := recToEvidence(sid, hash, r)
		if err != nil {
			return out, fmt.Errorf("decode evidence %q: %w", hash, err)
		}
		out.Evidence = append(out.Evidence, e)
	}
	graph.SortEvidence(out.Evidence)
	graph.SortEdges(h.edges)
	out.Edges = h.edges
	return out, nil
}

// shapes is nodes reduced to a walk's needs: embedding and iteration from
// the cache rows sv, no record read. The rows are put in Evidence order
// (CreatedIter, then id: the ids share the session's prefix, so the hash
// orders them) before the structs are built: a large hop reaches tens of
// thousands of nodes, and sorting row numbers moves far less memory.
func (h *hop) shapes(sb *bolt.Bucket, sid string, sv *sessVecs, tc *taskCache, known func(string) bool) (graph.Neighbourhood, error) {
	var out graph.Neighbourhood
	var err error
	if known != nil {
		for t := range h.tasks {
			if known(graph.TaskID(sid, t)) {
				delete(h.tasks, t)
			}
		}
	}
	if out.Tasks, err = tc.byIDs(sb, sid, h.tasks); err != nil {
		return out, err
	}
	type shapeRow struct {
		row int
		id  string
	}
	rows := make([]shapeRow, 0, len(h.ev))
	for hash := range h.ev {
		row, ok := sv.row[hash]
		if !ok {
			return out, fmt.Errorf("evidence %q is not in the similarity cache", hash)
		}
		id := graph.EvidenceID(sid, hash)
		if known != nil && known(id) {
			continue
		}
		rows = append(rows, shapeRow{row, id})
	}
	slices.SortFunc(rows, func(x, y shapeRow) int {
		a, b := x.row, y.row
		if c := cmp.Compare(sv.iter[a], sv.iter[b]); c != 0 {
			return c
		}
		if c := cmp.Compare(sv.pre[a], sv.pre[b]); c != 0 {
			return c
		}
		return strings.Compare(sv.hash[a], sv.hash[b])
	})
	out.Evidence = make([]graph.Evidence, len(rows))
	for i, r := range rows {
		out.Evidence[i] = graph.Evidence{ID: r.id, SessionID: sid, Embedding: sv.emb[r.row], CreatedIter: sv.iter[r.row], ContentHash: sv.hash[r.row]}
	}
	graph.SortEdges(h.edges)
	out.Edges = h.edges
	return out, nil
}

// evidenceTargets reads the SUPPORTS targets of an evidence record from the
// head of its JSON ("task" and "also" come first, as evidenceRec orders
// them, and short ids need no escaping), without scanning its content and
// embedding. A record laid out otherwise is decoded whole.
func evidenceTargets(v []byte) (string, []string, error) {
	rest, ok := bytes.CutPrefix(v, []byte(`{"task":`))
	if !ok {
		return fullTargets(v)
	}
	task, rest, ok := headString(rest)
	if !ok {
		return fullTargets(v)
	}
	rest, ok = bytes.CutPrefix(rest, []byte(`,"also":[`))
	if !ok {
		return task, nil, nil
	}
	var also []string
	for len(rest) > 0 && rest[0] != ']' {
		var a string
		if a, rest, ok = headString(rest); !ok {
			return fullTargets(v)
		}
		also = append(also, a)
		rest = bytes.TrimPrefix(rest, []byte{','})
	}
	return task, also, nil
}

// headString reads a JSON string without escapes at the start of b.
func headString(b []byte) (string, []byte, bool) {
	if len(b) == 0 || b[0] != '"' {
		return "", b, false
	}
	end := bytes.IndexByte(b[1:], '"')
	if end < 0 || bytes.IndexByte(b[1:1+end], '\\') >= 0 {
		return "", b, false
	}
	return string(b[1 : 1+end]), b[2+end:], true
}

func fullTargets(v []byte) (string, []string, error) {
	var r struct {
		Task string   `json:"task"`
		Also []string `json:"also"`
	}
	err := json.Unmarshal(v, &r)
	return r.Task, r.Also, err
}
