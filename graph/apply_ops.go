package graph

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// applyOp dispatches one op to its kind's step. Every step reports "nothing
// to do" as a nil error without touching Applied, so that a replayed or
// redundant op is not counted as productive (rule 3 of PlanApply).
func (p *planner) applyOp(i int, op Op) error {
	switch op.Kind {
	case OpCreate:
		return p.applyCreate(op)
	case OpUpdate:
		return p.applyUpdate(op)
	case OpDepend:
		return p.applyDepend(op)
	case OpComplete:
		return p.applyComplete(op)
	case OpFail:
		return p.applyFail(op)
	case OpContinue:
		return p.applyContinue(op)
	case OpEvidence:
		return p.applyEvidence(op)
	default:
		return fmt.Errorf("unknown op kind %q", op.Kind)
	}
}

// applyCreate materialises a create registered by registerCreates. Dedup and
// dropping were decided up front so that forward references resolve; here a
// mapped create only reports its mapping, and a kept one gets its edges.
func (p *planner) applyCreate(op Op) error {
	if p.dropped[op.Task] {
		return nil
	}
	if m, ok := p.mapped[op.Task]; ok {
		if p.res.Mapped == nil {
			p.res.Mapped = map[string]string{}
		}
		p.res.Mapped[op.Task] = m
		return nil
	}
	n := p.nodes[op.Task]
	if err := p.linkParent(n, op); err != nil {
		return err
	}
	if err := p.linkCreateDeps(n, op); err != nil {
		return err
	}
	p.changed(n)
	p.res.Applied++
	p.res.Created = append(p.res.Created, op.Task)
	return nil
}

// linkParent hangs a created task below op.Parent, or below the active task
// when the model left the parent out (the common case: subtasks of the task
// being worked on).
func (p *planner) linkParent(n *planNode, op Op) error {
	parentRef := op.Parent
	if parentRef == "" {
		parentRef = p.req.ActiveTask
	}
	parent, err := p.target(parentRef)
	if err != nil {
		if errors.Is(err, errSkip) { // cannot happen after dropBelowFailed; be safe
			return err
		}
		return fmt.Errorf("parent: %w", err)
	}
	n.t.Parent = parent.t.ID
	return nil
}

// linkCreateDeps adds a create's prerequisites. A prerequisite that was
// deduplicated onto a FAILED task loses only its edge: the caller could not
// know, and the new task is still worth doing.
func (p *planner) linkCreateDeps(n *planNode, op Op) error {
	for _, d := range op.DependsOn {
		dn, err := p.target(d)
		if errors.Is(err, errSkip) {
			continue // prerequisite deduplicated onto a FAILED task: drop the edge
		}
		if err != nil {
			return fmt.Errorf("depends_on: %w", err)
		}
		n.t.DependsOn = addSorted(n.t.DependsOn, dn.t.ID)
	}
	return nil
}

// applyUpdate rewrites the non-empty fields of an open task. A DONE task keeps
// its text so that its result stays consistent with what was asked.
func (p *planner) applyUpdate(op Op) error {
	n, err := p.target(op.Task)
	if err != nil {
		return err
	}
	if n.t.Status != Pending && n.t.Status != Active {
		return nil
	}
	ch := false
	if op.Description != "" && op.Description != n.t.Description {
		n.t.Description, ch = op.Description, true
	}
	if op.EmbedText != "" && op.EmbedText != n.t.EmbedText {
		n.t.EmbedText, ch = op.EmbedText, true
	}
	if len(op.Embedding) > 0 && !slices.Equal(op.Embedding, n.t.Embedding) {
		n.t.Embedding, ch = slices.Clone(op.Embedding), true
	}
	if ch {
		p.changed(n)
		p.res.Applied++
	}
	return nil
}

// applyDepend adds one DEPENDS_ON edge; an edge that already exists is not a
// change, so repeating it does not count as progress.
func (p *planner) applyDepend(op Op) error {
	n, err := p.target(op.Task)
	if err != nil {
		return err
	}
	on, err := p.target(op.On)
	if err != nil {
		if errors.Is(err, errSkip) {
			return err
		}
		return fmt.Errorf("on: %w", err)
	}
	if slices.Contains(n.t.DependsOn, on.t.ID) {
		return nil
	}
	n.t.DependsOn = addSorted(n.t.DependsOn, on.t.ID)
	p.changed(n)
	p.res.Applied++
	return nil
}

// applyComplete marks a task DONE with its result. Completing again with the
// same result is a no-op, so a retried request does not count twice.
func (p *planner) applyComplete(op Op) error {
	n, err := p.target(op.Task)
	if err != nil {
		return err
	}
	if n.t.Status == Done && n.t.ResultSummary == op.Result && slices.Equal(n.t.ResultEmbedding, op.Embedding) {
		return nil
	}
	n.t.Status = Done
	n.t.ResultSummary = op.Result
	n.t.ResultEmbedding = slices.Clone(op.Embedding)
	p.changed(n)
	p.res.Applied++
	return nil
}

// applyFail marks a task FAILED with its reason; from then on target refuses
// it, which is what makes FAILED terminal.
func (p *planner) applyFail(op Op) error {
	n, err := p.target(op.Task)
	if err != nil {
		return err
	}
	n.t.Status = Failed
	n.t.ResultSummary = op.Reason
	p.changed(n)
	p.res.Applied++
	return nil
}

// applyContinue puts an ACTIVE task back in the queue; on any other status it
// is a no-op so that a stale continue cannot reopen finished work.
func (p *planner) applyContinue(op Op) error {
	n, err := p.target(op.Task)
	if err != nil {
		return err
	}
	if n.t.Status != Active {
		return nil
	}
	n.t.Status = Pending
	p.changed(n)
	p.res.Applied++
	return nil
}

// applyEvidence records LLM evidence for a task. Content already held by the
// session, or given earlier in the same request, is skipped so that a
// repeated claim does not inflate support.
func (p *planner) applyEvidence(op Op) error {
	n, err := p.target(op.Task)
	if err != nil {
		return err
	}
	if strings.TrimSpace(op.Content) == "" {
		return errors.New("empty evidence content")
	}
	h := ContentHash(op.Content)
	if seen, err := p.evidenceSeen(h); err != nil || seen {
		return err
	}
	p.newHash[h] = true
	p.newEv = append(p.newEv, Evidence{
		ID:          EvidenceID(p.req.SessionID, h),
		SessionID:   p.req.SessionID,
		TaskID:      n.t.ID,
		Content:     op.Content,
		SourceURL:   op.Source,
		Kind:        KindLLM,
		Strength:    p.evidenceStrength(),
		Embedding:   slices.Clone(op.Embedding),
		CreatedIter: p.req.Iteration,
		ContentHash: h,
	})
	p.res.Applied++
	p.res.Evidence++
	return nil
}

// evidenceSeen checks the request first so that a session lookup (a store
// read inside the write transaction) is only made for new content.
func (p *planner) evidenceSeen(h string) (bool, error) {
	if p.newHash[h] {
		return true, nil
	}
	if p.hasEv == nil {
		return false, nil
	}
	ok, err := p.hasEv(h)
	if err != nil {
		return false, fmt.Errorf("evidence lookup: %w", err)
	}
	return ok, nil
}
