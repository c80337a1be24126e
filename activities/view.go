package activities

import (
	"context"
	"fmt"
	"sort"

	"golang.org/x/sync/errgroup"

	"github.com/lethe-research/lethe/algebra"
	"github.com/lethe-research/lethe/contract"
	"github.com/lethe-research/lethe/graph"
)

// The bounded task view (lane payloads, #14; docs/bounded-view.md).

// readView is ReadState with ReadStateInput.View: the task outline for
// the status counts and the ready set's tasks whole (no other task's
// texts or vectors; no evidence rows: the total comes from
// Store.EvidenceCount), the ready set ranked as the workflow ranks it and
// cut at the cap.
// The payload is bounded by the cap, whatever the number of tasks.
func (a *Activities) readView(ctx context.Context, in ReadStateInput) (ReadStateResult, error) {
	// Four independent reads at once: on Neo4j each is a round trip of 1
	// to 7 ms, and they were separate transactions already.
	var (
		s        graph.Session
		prev     signalsDoc
		counts   graph.StatusCounts
		readySet []graph.Task
		total    int
	)
	var prevOK bool
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		if s, err = a.Store.GetSession(gctx, in.SessionID); err != nil {
			return fmt.Errorf("read view session: %w", err)
		}
		return nil
	})
	// The signals blob is keyed by the session id: read beside the
	// session, not after it (a round trip each on Neo4j).
	g.Go(func() (err error) {
		prevOK, err = getBlob(gctx, a.Store, in.SessionID, signalsKey(in.Iteration-1), &prev)
		return err
	})
	// The counts by status, not the outline: the view shows no task of
	// the tree but the ready ones, and the outline is a row per task.
	g.Go(func() (err error) {
		if counts, err = a.Store.TaskStatusCounts(gctx, in.SessionID); err != nil {
			return fmt.Errorf("read view task status counts: %w", err)
		}
		return nil
	})
	g.Go(func() (err error) {
		if readySet, err = a.Store.ReadySet(gctx, in.SessionID); err != nil {
			return fmt.Errorf("read view ready set: %w", err)
		}
		return nil
	})
	// The total only: the per-task counts cost Neo4j a degree read per
	// task, and FocusView reads them where they are used.
	g.Go(func() (err error) {
		if total, err = a.Store.EvidenceCount(gctx, in.SessionID); err != nil {
			return fmt.Errorf("read view evidence count: %w", err)
		}
		return nil
	})
	if err := g.Wait(); err != nil {
		return ReadStateResult{}, err
	}
	prev = withPrior(prev, prevOK, s)
	goal := algebra.ToFloat64(s.GoalQueryEmb)
	out := ReadStateResult{Evidence: total, GapGoalCos: algebra.Cosine(prev.Gap, goal), Counts: map[string]int{},
		RootDone: counts.Root == graph.Done}
	for st, n := range counts.Count {
		out.Counts[string(st)] = n
	}
	var ready []contract.ReadyTask
	for _, t := range readySet {
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
	f := in.Focus
	// The status change runs beside the sync, which reads and writes
	// evidence only; the task neighbourhood and the walk start after it.
	// The neighbourhood is read beside the sync and the walk: it reads
	// tasks, which neither changes, and after the status change, which it
	// shows.
	var (
		per     map[string]int
		ex      ExpandResult
		hood    []graph.Task
		outline []graph.TaskNode
		omitted int
	)
	focused := make(chan struct{})
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		if err := a.SetStatus(gctx, StatusInput{SessionID: f.SessionID, Task: f.Task, From: []graph.Status{graph.Pending}, To: graph.Active}); err != nil {
			return fmt.Errorf("focus: %w", err)
		}
		close(focused)
		hood, outline, omitted, err = a.focusHood(gctx, f.SessionID, f.Task, in.Neighbour)
		return err
	})
	g.Go(func() (err error) {
		ex, per, err = a.syncExpand(gctx, f, focused)
		return err
	})
	if err := g.Wait(); err != nil {
		return contract.FocusViewResult{}, err
	}
	out := contract.FocusViewResult{Expand: ex, Omitted: omitted}
	shown := map[string]bool{}
	for _, t := range hood {
		out.Tasks = append(out.Tasks, info(t, per[t.ShortID]))
		shown[t.ShortID] = true
	}
	status := make(map[string]graph.Status, len(outline))
	for _, t := range outline {
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

// syncExpand is the rest of Focus: the SIMILAR_TO sync beside the read of
// the per-task evidence counts (the sync does not change them), then, once
// focused is closed (the task is ACTIVE), the walk, which needs both. It
// returns the counts, which the view shows.
func (a *Activities) syncExpand(ctx context.Context, f FocusInput, focused <-chan struct{}) (ExpandResult, map[string]int, error) {
	var per map[string]int
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		if per, err = a.Store.EvidenceCounts(gctx, f.SessionID); err != nil {
			return fmt.Errorf("focus view evidence counts: %w", err)
		}
		return nil
	})
	g.Go(func() error {
		if _, err := a.SyncSimilar(gctx, SyncSimilarInput{SessionID: f.SessionID, Iteration: f.Iteration, Similar: f.Similar}); err != nil {
			return fmt.Errorf("focus: %w", err)
		}
		return nil
	})
	if err := g.Wait(); err != nil {
		return ExpandResult{}, nil, err
	}
	select {
	case <-focused:
	case <-ctx.Done():
		return ExpandResult{}, nil, ctx.Err()
	}
	ex, err := a.expand(ctx, ExpandInput{SessionID: f.SessionID, Task: f.Task, Context: f.Context, ChunkChars: f.ChunkChars}, per)
	return ex, per, err
}

// focusHood reads the focus task's neighbourhood whole: the outline (no
// texts, no vectors) and the focus's dependencies decide which tasks, and
// only those are read. It returns the outline too, for the statuses.
func (a *Activities) focusHood(ctx context.Context, sid, focus string, max int) ([]graph.Task, []graph.TaskNode, int, error) {
	outline, err := a.Store.TaskOutline(ctx, sid)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("focus view task outline: %w", err)
	}
	f, err := a.Store.TasksByIDs(ctx, sid, []string{focus})
	if err != nil {
		return nil, nil, 0, fmt.Errorf("focus view task: %w", err)
	}
	if len(f) == 0 {
		return nil, outline, 0, nil
	}
	deps := make([]string, len(f[0].DependsOn))
	for i, d := range f[0].DependsOn {
		deps[i] = graph.ShortIDOf(d)
	}
	ids, omitted := neighbourhood(outline, focus, deps, max)
	hood, err := a.Store.TasksByIDs(ctx, sid, ids)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("focus view tasks: %w", err)
	}
	return hood, outline, omitted, nil
}

// neighbourhood is the focus task's part of the tree, as short ids in
// store order: the focus, its ancestors (nearest first, at most max, and
// the root always), its subtasks, its siblings and its dependencies (deps,
// short ids), each relation cut at max with open tasks kept first (they
// are what the warn lines and the model act on). omitted counts what the
// caps left out.
func neighbourhood(outline []graph.TaskNode, focus string, deps []string, max int) ([]string, int) {
	byID := make(map[string]graph.TaskNode, len(outline))
	for _, t := range outline {
		byID[t.ShortID] = t
	}
	f, ok := byID[focus]
	if !ok {
		return nil, 0
	}
	keep := map[string]bool{focus: true}
	for p, n := f.Parent, 0; p != "" && n < max; n++ {
		keep[p] = true
		p = byID[p].Parent
	}
	if _, ok := byID[graph.RootShortID]; ok {
		keep[graph.RootShortID] = true
	}
	var children, siblings, depNodes []graph.TaskNode
	for _, t := range outline {
		switch {
		case t.ShortID == focus:
		case t.Parent == focus:
			children = append(children, t)
		case f.Parent != "" && t.Parent == f.Parent:
			siblings = append(siblings, t)
		}
	}
	for _, d := range deps {
		if t, ok := byID[d]; ok {
			depNodes = append(depNodes, t)
		}
	}
	omitted := 0
	for _, rel := range [][]graph.TaskNode{children, siblings, depNodes} {
		kept, dropped := openFirst(rel, max)
		omitted += dropped
		for _, t := range kept {
			keep[t.ShortID] = true
		}
	}
	var out []string
	for _, t := range outline {
		if keep[t.ShortID] {
			out = append(out, t.ShortID)
		}
	}
	return out, omitted
}

// openFirst keeps at most max tasks: ACTIVE, then PENDING, then FAILED,
// then DONE, store order within each status.
func openFirst(ts []graph.TaskNode, max int) ([]graph.TaskNode, int) {
	if len(ts) <= max {
		return ts, 0
	}
	rank := map[graph.Status]int{graph.Active: 0, graph.Pending: 1, graph.Failed: 2, graph.Done: 3}
	out := append([]graph.TaskNode(nil), ts...)
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
