package graph

import (
	"cmp"
	"slices"
)

// The helpers below implement the output orders documented on Store, so
// that every backend sorts the same way.

// SortTasks orders tasks by (CreatedIter, ShortID).
func SortTasks(ts []Task) {
	slices.SortStableFunc(ts, func(a, b Task) int {
		if c := cmp.Compare(a.CreatedIter, b.CreatedIter); c != 0 {
			return c
		}
		return cmp.Compare(a.ShortID, b.ShortID)
	})
}

// SortEvidence orders evidence by (CreatedIter, ID).
func SortEvidence(es []Evidence) {
	slices.SortStableFunc(es, func(a, b Evidence) int {
		if c := cmp.Compare(a.CreatedIter, b.CreatedIter); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
}

// EdgeKindRank is the position of an edge kind in the Edges order:
// SUBTASK_OF, DEPENDS_ON, SUPPORTS, SIMILAR_TO, then anything else.
func EdgeKindRank(k EdgeKind) int {
	switch k {
	case SubtaskOf:
		return 0
	case DependsOn:
		return 1
	case Supports:
		return 2
	case SimilarTo:
		return 3
	}
	return 4
}

// SortEdges orders edges by (EdgeKindRank(Kind), From, To).
func SortEdges(es []Edge) {
	slices.SortStableFunc(es, func(a, b Edge) int {
		if c := cmp.Compare(EdgeKindRank(a.Kind), EdgeKindRank(b.Kind)); c != 0 {
			return c
		}
		if c := cmp.Compare(a.From, b.From); c != 0 {
			return c
		}
		return cmp.Compare(a.To, b.To)
	})
}
