package workflows

import (
	"github.com/lethe-research/lethe/contract"
	"github.com/lethe-research/lethe/din"
)

// changeNoop: an iteration whose answer changed nothing is answered with a
// warn line in the next DIN-Read and a rotation away from its task, and
// loop.noop_limit of them in a row stop the session (StopNoProgress).
const changeNoop = "noop-iterations"

// changedNothing reports whether an iteration whose answer was valid and
// applied moved the research nowhere: the write did not roll back, and it
// created no task (a create deduplicated onto an existing task is not
// new), added no evidence (content the session held is not new), ran no
// web search (a call skipped as a duplicate query did not run), and had no
// complete, fail or depend operation. What remains are continue and update:
// a continue puts the task back in the queue and an update rewords it, and
// neither gives the next iteration anything it did not have.
//
// A rolled-back write changed nothing either, but it is the seed's failed
// iteration (the task goes back to PENDING), so it is not counted here;
// neither are invalid answers and failed calls, which never reach apply.
func changedNothing(ops []din.Op, res contract.ApplyResult, searches int) bool {
	if res.RolledBack {
		return false
	}
	if len(res.Created) > 0 || res.Evidence > 0 || searches > 0 {
		return false
	}
	for _, op := range ops {
		switch op.Op {
		case "complete", "fail", "depend":
			return false
		}
	}
	return true
}

// trackProgress updates the count of consecutive no-op iterations (and the
// task of the last one) after an applied answer.
func trackProgress(st *SessionState, task string, noop bool) {
	if !noop {
		st.NoOps, st.NoOpTask = 0, ""
		return
	}
	st.NoOps++
	st.NoOpTask = task
}

// rotateAfterNoop leaves the task of the last no-op iteration out of the
// ready set when another task is ready: the model said nothing new about
// it, and the same context would get the same answer. Alone in the ready
// set it stays (the warn line is then the only change, and the no-op limit
// decides).
func rotateAfterNoop(rs contract.ReadStateResult, noOps int, task string) contract.ReadStateResult {
	if noOps == 0 || task == "" || len(rs.Ready) < 2 {
		return rs
	}
	out := rs
	out.Ready = make([]contract.ReadyTask, 0, len(rs.Ready))
	for _, r := range rs.Ready {
		if r.ShortID != task {
			out.Ready = append(out.Ready, r)
		}
	}
	if len(out.Ready) == 0 {
		return rs
	}
	return out
}
