package graph

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
)

// Lane fullreads (#14): helpers shared by the backends' TaskOutline and
// SetStatusWhere.

// SortTaskNodes orders outline rows like SortTasks: by (CreatedIter,
// ShortID).
func SortTaskNodes(ns []TaskNode) {
	slices.SortStableFunc(ns, func(a, b TaskNode) int {
		if c := cmp.Compare(a.CreatedIter, b.CreatedIter); c != 0 {
			return c
		}
		return cmp.Compare(a.ShortID, b.ShortID)
	})
}

// CheckStatusWhere validates the arguments of Store.SetStatusWhere: a
// valid target, a non-empty from, and no FAILED among them (a FAILED task
// never changes).
func CheckStatusWhere(from []Status, to Status) error {
	if !to.Valid() {
		return fmt.Errorf("graph: set status where: invalid status %q", to)
	}
	if len(from) == 0 {
		return errors.New("graph: set status where: no source status")
	}
	for _, f := range from {
		if f == Failed {
			return fmt.Errorf("graph: set status where %v -> %s: %w", from, to, ErrImmutable)
		}
		if !f.Valid() {
			return fmt.Errorf("graph: set status where: invalid status %q", f)
		}
	}
	return nil
}
