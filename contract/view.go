package contract

import "github.com/lethe-research/lethe/algebra"

// The bounded task view (lane payloads, #14; docs/bounded-view.md): the
// task list never crosses into the workflow whole. ReadState returns the
// ready set, best first and capped, with the status counts; FocusView
// returns the task in focus with its neighbourhood, capped per relation.

// ViewParams ask ReadState for the bounded view: the ready set ranked with
// the session's pressure and warp angle and cut at Ready. Nil (older
// workflow code) is the full task list and an unranked ready set.
type ViewParams struct {
	Ready    int     `json:"ready"`
	Pressure float64 `json:"pressure"`
	MaxWarp  float64 `json:"max_warp"`
}

// ReadyScore is step 3's rank of one ready task (seed 000 step 2): the goal
// alignment of its embedding warped toward the gap direction by the angle
// θ = WarpAngle(pressure, maxWarp), then RankScore(GA, EvidenceDeficit,
// depth, n_productive). ReadState ranks with it and the workflow selects
// with it, so the capped set holds the task the full set would give.
func ReadyScore(r ReadyTask, depth, nProductive int, gapGoal, pressure, maxWarp float64) float64 {
	theta := algebra.WarpAngle(pressure, maxWarp)
	ga := algebra.NormalizeCosine(algebra.WarpedCosine(r.CosGoal, r.CosGap, gapGoal, theta))
	return algebra.RankScore(ga, algebra.EvidenceDeficit(r.Coverage), depth, nProductive)
}

// FocusViewInput is FocusInput and the cap of each relation of the focus.
type FocusViewInput struct {
	Focus     FocusInput `json:"focus"`
	Neighbour int        `json:"neighbour"`
}

// FocusViewResult is the context expansion and the focus's neighbourhood:
// the focus, its ancestors up to the root, its subtasks, its siblings and
// its dependencies, each relation capped (open tasks kept first), in store
// order, with evidence counts; and the status of the other tasks named by
// the evidence candidates, so the model may name what it was shown.
type FocusViewResult struct {
	Expand ExpandResult `json:"expand"`
	Tasks  []TaskInfo   `json:"tasks"`
	Named  []TaskRef    `json:"named,omitempty"`
	// Omitted counts the tasks of each relation the caps left out.
	Omitted int `json:"omitted,omitempty"`
}

// TaskRef is a task's short id and status.
type TaskRef struct {
	ShortID string     `json:"id"`
	Status  TaskStatus `json:"s"`
}
