package graph

import (
	"slices"

	"github.com/lethe-research/lethe/algebra"
)

// ApplyReads is what PlanApply reads of a session's tasks for one request,
// so that a backend for which reading tasks is costly (Neo4j: about 15 µs
// a row and 1.5 KB an embedding) loads only those and gets the same plan.
// TestApplyReads plans random requests both ways.
//
// PlanApply looks at the tasks an op, its parent, its prerequisites or the
// active task name (Named), and, for a create that may be deduplicated, at
// the tasks whose embedding is over DedupThreshold to the create's: the
// most similar one wins only when it is over, so no other task can change
// the plan (Dedup holds those creates' embeddings). It looks at every
// other task in one place only, the cycle check, and only when the request
// can close a cycle (All): a depend op, a create with prerequisites, or a
// create under another create of the request. Otherwise every new edge
// starts at a created task that no edge reaches, which no cycle can pass,
// and the stored graph has none.
type ApplyReads struct {
	All       bool        // every task as a row; whole only as Whole says
	Named     []string    // short ids read whole (sorted, each once)
	Dedup     [][]float32 // creates' embeddings a task over Threshold to one of is read whole
	Threshold float64     // the request's DedupThreshold
}

// ReadsFor is the reads PlanApply needs for req.
func ReadsFor(req ApplyRequest) ApplyReads {
	r := ApplyReads{Threshold: req.DedupThreshold}
	name := func(ids ...string) {
		for _, id := range ids {
			if id != "" {
				r.Named = append(r.Named, id)
			}
		}
	}
	name(req.ActiveTask)
	created := map[string]bool{}
	for _, op := range req.Ops {
		if op.Kind == OpCreate {
			created[op.Task] = true
		}
	}
	for _, op := range req.Ops {
		name(op.Task, op.Parent, op.On)
		name(op.DependsOn...)
		switch op.Kind {
		case OpDepend:
			r.All = true
		case OpCreate:
			parent := op.Parent
			if parent == "" {
				parent = req.ActiveTask
			}
			r.All = r.All || len(op.DependsOn) > 0 || created[parent]
			if req.DedupThreshold > 0 && algebra.Norm32(op.Embedding) > 0 {
				r.Dedup = append(r.Dedup, op.Embedding)
			}
		}
	}
	slices.Sort(r.Named)
	r.Named = slices.Compact(r.Named)
	return r
}

// Whole reports whether PlanApply needs t with its embeddings.
func (r ApplyReads) Whole(t Task) bool {
	if _, ok := slices.BinarySearch(r.Named, t.ShortID); ok {
		return true
	}
	for _, q := range r.Dedup {
		if algebra.Cosine32(q, t.Embedding) > r.Threshold {
			return true
		}
	}
	return false
}

// Rows is existing as a backend loads it for r: every task when r.All,
// else the whole ones only; the others without their embeddings.
func (r ApplyReads) Rows(existing []Task) []Task {
	var out []Task
	for _, t := range existing {
		switch {
		case r.Whole(t):
			out = append(out, t)
		case r.All:
			t.Embedding, t.ResultEmbedding = nil, nil
			out = append(out, t)
		}
	}
	return out
}
