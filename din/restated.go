package din

import (
	"slices"

	"github.com/lethe-research/lethe/graph"
)

// dropRestated removes the creates of tasks that already exist when they
// are the answer's only errors: a create whose id names a task of the
// session that is not FAILED (the id_exists error), in an answer that holds
// other ops. It returns ops and errs unchanged otherwise.
//
// A small model restates its plan: in the twenty-fifth evaluation run the
// 1.5B model began later answers with `create` of the tasks it had created
// in an earlier iteration, same id and mostly the same words, and then
// updated, searched or completed them; such answers were behind about
// eight of its 21 repair calls, and some repairs restated them again
// (docs/din-guards.md). The task exists, so the create asks for nothing the
// graph lacks; the ops after it were validated against the task as it is.
// A create that reuses the id of a FAILED task stays an error (the model
// may mean a retry, which needs a new id), and so does an answer of
// restated creates alone (dropping them would leave an empty answer that
// the model did not write).
func dropRestated(ops []Op, errs []Error, known Known) ([]Op, []Error) {
	if len(errs) == 0 {
		return ops, errs
	}
	drop := map[int]bool{}
	for _, e := range errs {
		if e.Code != CodeIDExists || e.Index < 0 || e.Index >= len(ops) || ops[e.Index].Op != OpCreate {
			return ops, errs
		}
		st, ok := known.Status[ops[e.Index].ID]
		if !ok || st == graph.Failed {
			return ops, errs
		}
		drop[e.Index] = true
	}
	if len(drop) == len(ops) {
		return ops, errs
	}
	kept := slices.Clone(ops)
	for i := len(ops) - 1; i >= 0; i-- {
		if drop[i] {
			kept = slices.Delete(kept, i, i+1)
		}
	}
	return kept, nil
}
