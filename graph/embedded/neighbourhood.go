package embedded

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/lethe-research/lethe/graph"
)

// Lane expand (#14): one hop around a set of nodes, for Expand's push PPR.
//
// The file keeps SUPPORTS inside the evidence records and has no adjacency
// index, so finding the evidence of a task still walks the evidence bucket;
// but it reads only the head of each record (its SUPPORTS targets, the
// first fields of the JSON) and decodes contents and embeddings only for
// the nodes it returns. SIMILAR_TO is matched on the edge keys alone.

// Neighbourhood returns the nodes ids, their direct neighbours and the
// edges incident to ids (see graph.Store).
func (s *Store) Neighbourhood(ctx context.Context, sessionID string, ids []string) (graph.Neighbourhood, error) {
	var out graph.Neighbourhood
	err := s.view(ctx, "neighbourhood", func(tx *bolt.Tx) error {
		sb, err := session(tx, sessionID)
		if err != nil {
			return err
		}
		out, err = neighbourhood(sb, sessionID, ids)
		return err
	})
	if err != nil {
		return graph.Neighbourhood{}, err
	}
	return out, nil
}

// hop collects the edges incident to the wanted nodes and the nodes to
// return, by short id (tasks) and content hash (evidence).
type hop struct {
	wantT, wantE map[string]bool
	tasks, ev    map[string]bool
	edges        []graph.Edge
}

func neighbourhood(sb *bolt.Bucket, sid string, ids []string) (graph.Neighbourhood, error) {
	h := hop{wantT: map[string]bool{}, wantE: map[string]bool{}, tasks: map[string]bool{}, ev: map[string]bool{}}
	for _, id := range ids {
		if t, ok := strings.CutPrefix(id, graph.TaskID(sid, "")); ok {
			h.wantT[t] = true
		} else if e, ok := strings.CutPrefix(id, graph.EvidenceID(sid, "")); ok {
			h.wantE[e] = true
		}
	}
	all, err := loadTasks(sb, sid)
	if err != nil {
		return graph.Neighbourhood{}, err
	}
	for _, t := range all {
		s := t.ShortID
		if t.Parent != "" {
			h.link(sid, s, graph.ShortIDOf(t.Parent), graph.SubtaskOf)
		}
		for _, d := range t.DependsOn {
			h.link(sid, s, graph.ShortIDOf(d), graph.DependsOn)
		}
	}
	if err := h.supports(sb, sid); err != nil {
		return graph.Neighbourhood{}, err
	}
	if err := h.similar(sb, sid); err != nil {
		return graph.Neighbourhood{}, err
	}
	return h.nodes(sb, sid, all)
}

// link records a task-task edge if it touches a wanted task.
func (h *hop) link(sid, from, to string, kind graph.EdgeKind) {
	if !h.wantT[from] && !h.wantT[to] {
		return
	}
	h.tasks[from], h.tasks[to] = true, true
	h.edges = append(h.edges, graph.Edge{From: graph.TaskID(sid, from), To: graph.TaskID(sid, to), Kind: kind})
}

// supports walks the heads of the evidence records for SUPPORTS edges.
func (h *hop) supports(sb *bolt.Bucket, sid string) error {
	return sb.Bucket(bktEvidence).ForEach(func(k, v []byte) error {
		task, also, err := evidenceTargets(v)
		if err != nil {
			return fmt.Errorf("decode evidence %q: %w", k, err)
		}
		hash := string(k)
		for _, t := range append([]string{task}, also...) {
			if !h.wantE[hash] && !h.wantT[t] {
				continue
			}
			h.ev[hash], h.tasks[t] = true, true
			h.edges = append(h.edges, graph.Edge{From: graph.EvidenceID(sid, hash), To: graph.TaskID(sid, t), Kind: graph.Supports})
		}
		return nil
	})
}

// similar matches SIMILAR_TO edges on their keys, decoding only those kept.
func (h *hop) similar(sb *bolt.Bucket, sid string) error {
	if len(h.wantE) == 0 {
		return nil
	}
	return sb.Bucket(bktEdges).ForEach(func(k, v []byte) error {
		from, to, ok := bytes.Cut(k, []byte{0})
		if !ok {
			return fmt.Errorf("bad edge key %q", k)
		}
		f, t := string(from), string(to)
		if !h.wantE[f] && !h.wantE[t] {
			return nil
		}
		var r similarRec
		if err := json.Unmarshal(v, &r); err != nil {
			return fmt.Errorf("decode edge %q: %w", k, err)
		}
		h.ev[f], h.ev[t] = true, true
		h.edges = append(h.edges, graph.Edge{From: graph.EvidenceID(sid, f), To: graph.EvidenceID(sid, t), Kind: graph.SimilarTo, Weight: r.Weight, Label: r.Label})
		return nil
	})
}

// nodes decodes the nodes to return: the wanted ones that exist and the
// other endpoints of their edges.
func (h *hop) nodes(sb *bolt.Bucket, sid string, all []graph.Task) (graph.Neighbourhood, error) {
	var out graph.Neighbourhood
	for _, t := range all {
		if h.tasks[t.ShortID] || h.wantT[t.ShortID] {
			out.Tasks = append(out.Tasks, t)
		}
	}
	for e := range h.wantE {
		h.ev[e] = true
	}
	evb := sb.Bucket(bktEvidence)
	for hash := range h.ev {
		v := evb.Get([]byte(hash))
		if v == nil {
			continue // a wanted id that is not evidence of the session
		}
		var r evidenceRec
		if err := json.Unmarshal(v, &r); err != nil {
			return out, fmt.Errorf("decode evidence %q: %w", hash, err)
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
