package activities

import (
	"context"
	"fmt"
	"sort"

	"github.com/lethe-research/lethe/algebra"
	"github.com/lethe-research/lethe/contract"
	"github.com/lethe-research/lethe/graph"
)

// The bounded task view (lane payloads, #14; docs/bounded-view.md).

// readView is ReadState with ReadStateInput.View: one task read (no
// evidence rows: the counts come from Store.EvidenceCounts), the ready set
// ranked as the workflow ranks it and cut at the cap, and status counts.
// The payload is bounded by the cap, whatever the number of tasks.
func (a *Activities) readView(ctx context.Context, in ReadStateInput) (ReadStateResult, error) {
	s, err := a.Store.GetSession(ctx, in.SessionID)
	if err != nil {
		return ReadStateResult{}, fmt.Errorf("read view session: %w", err)
	}
	tasks, err := a.Store.Tasks(ctx, in.SessionID)
	if err != nil {
		return ReadStateResult{}, fmt.Errorf("read view tasks: %w", err)
	}
	_, total, err := a.Store.EvidenceCounts(ctx, in.SessionID)
	if err != nil {
		return ReadStateResult{}, fmt.Errorf("read view evidence counts: %w", err)
	}
	prev, err := a.prevSignals(ctx, s, in.Iteration)
	if err != nil {
		return ReadStateResult{}, err
	}
	goal := algebra.ToFloat64(s.GoalQueryEmb)
	out := ReadStateResult{Evidence: total, GapGoalCos: algebra.Cosine(prev.Gap, goal), Counts: map[string]int{}}
	for _, t := range tasks {
		out.Counts[string(t.Status)]++
		if t.ShortID == graph.RootShortID {
			out.RootDone = t.Status == graph.Done
		}
	}
	var ready []contract.ReadyTask
	for _, t := range graph.ReadyTasks(tasks) {
		e := algebra.ToFloat64(t.Embedding)
		ready = append(ready, contract.ReadyTask{
			ShortID: t.ShortID, CosGoal: algebra.Cosine(e, goal), CosGap: algebra.Cosine(e, prev.Gap),
			Coverage: prev.SVD.Coverage(e), Depth: t.Depth, NProductive: t.NProductive,
		})
	}
	out.ReadyTotal = len(ready)
	out.Ready = bestReady(ready, out.GapGoalCos, *in.View)
	return out, nil
}

// bestReady orders the ready tasks by contract.ReadyScore, best first (ties
// keep store order, as selection does), and keeps the first v.Ready.
func bestReady(ready []contract.ReadyTask, gapGoal float64, v contract.ViewParams) []contract.ReadyTask {
	score := make(map[string]float64, len(ready))
	for _, r := range ready {
		score[r.ShortID] = contract.ReadyScore(r, r.Depth, r.NProductive, gapGoal, v.Pressure, v.MaxWarp)
	}
	out := append([]contract.ReadyTask(nil), ready...)
	sort.SliceStable(out, func(i, j int) bool { return score[out[i].ShortID] > score[out[j].ShortID] })
	if v.Ready > 0 && len(out) > v.Ready {
		out = out[:v.Ready]
	}
	return out
}

// FocusView is Focus (the task becomes ACTIVE, SIMILAR_TO sync, PPR
// context) and the task's bounded neighbourhood for the DIN-Read, in one
// round trip. Every step is idempotent, so the whole is. The evidence
// counts are read once, for Expand's read prior and the view: Focus
// changes no SUPPORTS edge.
func (a *Activities) FocusView(ctx context.Context, in contract.FocusViewInput) (contract.FocusViewResult, error) {
	per, _, err := a.Store.EvidenceCounts(ctx, in.Focus.SessionID)
	if err != nil {
		return contract.FocusViewResult{}, fmt.Errorf("focus view evidence counts: %w", err)
	}
	ex, err := a.focus(ctx, in.Focus, per)
	if err != nil {
		return contract.FocusViewResult{}, err
	}
	tasks, err := a.Store.Tasks(ctx, in.Focus.SessionID)
	if err != nil {
		return contract.FocusViewResult{}, fmt.Errorf("focus view tasks: %w", err)
	}
	hood, omitted := neighbourhood(tasks, in.Focus.Task, in.Neighbour)
	out := contract.FocusViewResult{Expand: ex, Omitted: omitted}
	shown := map[string]bool{}
	for _, t := range hood {
		out.Tasks = append(out.Tasks, info(t, per[t.ShortID]))
		shown[t.ShortID] = true
	}
	status := make(map[string]graph.Status, len(tasks))
	for _, t := range tasks {
		status[t.ShortID] = t.Status
	}
	for _, c := range ex.Candidates {
		if st, ok := status[c.Task]; ok && !shown[c.Task] {
			out.Named = append(out.Named, contract.TaskRef{ShortID: c.Task, Status: st})
			shown[c.Task] = true
		}
	}
	return out, nil
}

// neighbourhood is the focus task's part of the tree, in store order: the
// focus, its ancestors (nearest first, at most max, and the root always),
// its subtasks, its siblings and its dependencies, each relation cut at max
// with open tasks kept first (they are what the warn lines and the model
// act on). omitted counts what the caps left out.
func neighbourhood(tasks []graph.Task, focus string, max int) ([]graph.Task, int) {
	byID := make(map[string]graph.Task, len(tasks))
	for _, t := range tasks {
		byID[t.ID] = t
	}
	var f graph.Task
	for _, t := range tasks {
		if t.ShortID == focus {
			f = t
		}
	}
	if f.ID == "" {
		return nil, 0
	}
	keep := map[string]bool{f.ID: true}
	for p, n := f.Parent, 0; p != "" && n < max; n++ {
		keep[p] = true
		p = byID[p].Parent
	}
	for _, t := range tasks {
		if t.ShortID == graph.RootShortID {
			keep[t.ID] = true
		}
	}
	var children, siblings, deps []graph.Task
	for _, t := range tasks {
		switch {
		case t.ID == f.ID:
		case t.Parent == f.ID:
			children = append(children, t)
		case f.Parent != "" && t.Parent == f.Parent:
			siblings = append(siblings, t)
		}
	}
	for _, d := range f.DependsOn {
		if t, ok := byID[d]; ok {
			deps = append(deps, t)
		}
	}
	omitted := 0
	for _, rel := range [][]graph.Task{children, siblings, deps} {
		kept, dropped := openFirst(rel, max)
		omitted += dropped
		for _, t := range kept {
			keep[t.ID] = true
		}
	}
	var out []graph.Task
	for _, t := range tasks {
		if keep[t.ID] {
			out = append(out, t)
		}
	}
	return out, omitted
}

// openFirst keeps at most max tasks: ACTIVE, then PENDING, then FAILED,
// then DONE, store order within each status.
func openFirst(ts []graph.Task, max int) ([]graph.Task, int) {
	if len(ts) <= max {
		return ts, 0
	}
	rank := map[graph.Status]int{graph.Active: 0, graph.Pending: 1, graph.Failed: 2, graph.Done: 3}
	out := append([]graph.Task(nil), ts...)
	sort.SliceStable(out, func(i, j int) bool { return rank[out[i].Status] < rank[out[j].Status] })
	return out[:max], len(ts) - max
}

// renameCollisions gives a create whose id names a task that existed
// before this iteration (one the model could not see in its bounded view)
// a fresh id, "<id>-<iteration>" (then "-2", "-3", ...), and renames every
// reference to it in the answer: the workflow validated the answer against
// the tasks it showed, so each of those references means the new task. The
// result depends only on the tasks created before the iteration, so a
// retry after the write committed renames the same way. It returns the
// renamed ops (a copy) and the renames made.
func renameCollisions(ops []contract.Op, before map[string]bool, iter int) ([]contract.Op, map[string]string) {
	taken := map[string]bool{}
	for _, op := range ops {
		if op.Op == "create" {
			taken[op.ID] = true
		}
	}
	renamed := map[string]string{}
	for _, op := range ops {
		if op.Op != "create" || !before[op.ID] || renamed[op.ID] != "" {
			continue
		}
		for n := 1; ; n++ {
			suffix := fmt.Sprintf("-%d", iter)
			if n > 1 {
				suffix += fmt.Sprintf("-%d", n)
			}
			base := op.ID
			if len(base)+len(suffix) > 32 { // din.ShortIDPattern: at most 32 characters
				base = base[:32-len(suffix)]
			}
			if id := base + suffix; !before[id] && !taken[id] {
				renamed[op.ID], taken[id] = id, true
				break
			}
		}
	}
	if len(renamed) == 0 {
		return ops, nil
	}
	re := func(id string) string {
		if r, ok := renamed[id]; ok {
			return r
		}
		return id
	}
	out := make([]contract.Op, len(ops))
	for i, op := range ops {
		op.ID, op.Task, op.Parent, op.On = re(op.ID), re(op.Task), re(op.Parent), re(op.On)
		if len(op.DependsOn) > 0 {
			deps := make([]string, len(op.DependsOn))
			for j, d := range op.DependsOn {
				deps[j] = re(d)
			}
			op.DependsOn = deps
		}
		out[i] = op
	}
	return out, renamed
}

// renameUnseen applies renameCollisions against the tasks created before
// the iteration. It reads only the tasks the answer's new ids (and the
// fresh ids tried for them) name, not the task list (#14): it looks up the
// ids the renaming depends on until every id it chose was looked up.
func (a *Activities) renameUnseen(ctx context.Context, in ApplyInput) ([]contract.Op, error) {
	before, looked := map[string]bool{}, map[string]bool{}
	var ask []string
	for _, op := range in.Ops {
		if op.Op == "create" {
			ask = append(ask, op.ID)
		}
	}
	ops, renamed := in.Ops, map[string]string(nil)
	for {
		var q []string
		for _, id := range ask {
			if !looked[id] {
				looked[id] = true
				q = append(q, id)
			}
		}
		if len(q) == 0 {
			break
		}
		tasks, err := a.Store.TasksByIDs(ctx, in.SessionID, q)
		if err != nil {
			return nil, fmt.Errorf("apply read task ids: %w", err)
		}
		for _, t := range tasks {
			if t.CreatedIter < in.Iteration {
				before[t.ShortID] = true
			}
		}
		ops, renamed = renameCollisions(in.Ops, before, in.Iteration)
		ask = ask[:0]
		for _, id := range renamed {
			ask = append(ask, id)
		}
	}
	if len(renamed) > 0 {
		logger(ctx, in.SessionID).Info("new task ids renamed: they name tasks outside the model's view", "iteration", in.Iteration, "renamed", renamed)
	}
	return ops, nil
}
