package graph

import (
	"cmp"
	"slices"
)

// The helpers below implement the output orders documented on Store, so
// that every backend sorts the same way.

// SortTasks orders tasks by (CreatedIter, ShortID).
func SortTasks(ts []Task) {
	sortStable(ts, func(a, b *Task) int {
		if c := cmp.Compare(a.CreatedIter, b.CreatedIter); c != 0 {
			return c
		}
		return cmp.Compare(a.ShortID, b.ShortID)
	})
}

// SortEvidence orders evidence by (CreatedIter, ID).
func SortEvidence(es []Evidence) {
	sortStable(es, func(a, b *Evidence) int {
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

// SortEdges orders edges by (EdgeKindRank(Kind), From, To). The ranks
// are computed once per edge: EdgeKindRank compares strings, and a sort
// calls its comparison n log n times.
func SortEdges(es []Edge) {
	rank := make([]int8, len(es))
	for i := range es {
		rank[i] = int8(EdgeKindRank(es[i].Kind))
	}
	sortStableBy(es, func(i, j int) int {
		if c := cmp.Compare(rank[i], rank[j]); c != 0 {
			return c
		}
		if c := cmp.Compare(es[i].From, es[j].From); c != 0 {
			return c
		}
		return cmp.Compare(es[i].To, es[j].To)
	})
}

// sortStable sorts s by cmpf with ties in input order, as
// slices.SortStableFunc does, through sortStableBy.
func sortStable[T any](s []T, cmpf func(a, b *T) int) {
	sortStableBy(s, func(i, j int) int { return cmpf(&s[i], &s[j]) })
}

// sortStableBy sorts s by the order of its indices that cmpi gives, with
// ties in input order, as slices.SortStableFunc does, but through a
// permutation: the stable sort's merges rotate the elements themselves,
// and with structs of several words (an Edge is 56 bytes, a Task or an
// Evidence several hundred) that moved far more memory than sorting
// indices and placing each element once (docs/long-session.md, "Sorts").
// Input already in order is left as it is after one pass.
func sortStableBy[T any](s []T, cmpi func(i, j int) int) {
	sorted := true
	for i := 1; i < len(s) && sorted; i++ {
		sorted = cmpi(i-1, i) <= 0
	}
	if sorted {
		return
	}
	perm := make([]int, len(s))
	for i := range perm {
		perm[i] = i
	}
	slices.SortFunc(perm, func(i, j int) int {
		if c := cmpi(i, j); c != 0 {
			return c
		}
		return cmp.Compare(i, j)
	})
	out := make([]T, len(s))
	for k, i := range perm {
		out[k] = s[i]
	}
	copy(s, out)
}
