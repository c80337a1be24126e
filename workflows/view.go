package workflows

import (
	"fmt"

	"github.com/lethe-research/lethe/contract"
	"github.com/lethe-research/lethe/din"
)

// view is step 7's view on the session's state.
func (s *session) view(rs contract.ReadStateResult, sel string, packed []contract.Candidate) din.View {
	v := buildView(s.in.Goal, rs, sel, packed, s.st.ZeroYield, s.st.Guides)
	if s.st.NoOps > 0 { // the last answer changed nothing (changeNoop)
		v.Warns = append(v.Warns, din.NoProgressHint)
	}
	return v
}

// buildView builds the DIN-Read view of step 7 from the task structure and
// the packed evidence: the focus task, its parent, subtasks and siblings,
// and warn lines (coverage tags, dead ends, siblings, zero-yield hint,
// unresearched focus), plus the user's guide notes.
func buildView(goal string, rs contract.ReadStateResult, sel string, packed []contract.Candidate, zeroYield int, guides []string) din.View {
	byID := make(map[string]contract.TaskInfo, len(rs.Tasks))
	for _, t := range rs.Tasks {
		byID[t.ShortID] = t
	}
	focus := byID[sel]
	v := din.View{Goal: goal, Tools: []string{"web_search(query)"}}
	if sel != contract.RootShortID {
		fl := line(focus)
		v.Focus = &fl
	}
	var w din.WarnInput
	w.ZeroYield = zeroYield
	// Subtasks of the focus first (most relevant), then its parent, then
	// siblings: the order din.Render folds into U-shaped zones.
	for _, t := range rs.Tasks {
		if t.Parent == sel {
			v.Tasks = append(v.Tasks, line(t))
			w.Subtasks = append(w.Subtasks, din.SubtaskCoverage{ShortID: t.ShortID, Description: t.Description, Status: t.Status, Evidence: t.Evidence, Result: t.Result})
		}
	}
	if p, ok := byID[focus.Parent]; ok {
		v.Tasks = append(v.Tasks, line(p))
	}
	for _, t := range rs.Tasks {
		if t.ShortID == sel || t.Parent != focus.Parent || focus.Parent == "" {
			continue
		}
		v.Tasks = append(v.Tasks, line(t))
		switch t.Status {
		case contract.TaskFailed:
			w.DeadEnds = append(w.DeadEnds, line(t))
		case contract.TaskPending, contract.TaskActive:
			w.Siblings = append(w.Siblings, line(t))
		}
	}
	for i, c := range packed {
		v.Evidence = append(v.Evidence, din.EvidenceLine{Ref: fmt.Sprintf("e%d", i+1), Task: c.Task, Content: c.Text, Source: c.Source, Title: c.Title})
	}
	// Unresearched: nothing found for the task or under it (a parent whose
	// subtasks hold evidence has material to synthesize).
	w.Unresearched = focus.Evidence == 0
	for _, st := range w.Subtasks {
		w.Unresearched = w.Unresearched && st.Evidence == 0
	}
	v.Guide = guides
	v.Warns = din.Warnings(w)
	return v
}

func line(t contract.TaskInfo) din.TaskLine {
	return din.TaskLine{ShortID: t.ShortID, Description: t.Description, Status: t.Status, Result: t.Result, Parent: t.Parent, DependsOn: t.DependsOn}
}
