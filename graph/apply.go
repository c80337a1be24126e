package graph

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/lethe-research/lethe/algebra"
)

// LLMEvidenceStrength is the strength of evidence written by an evidence op.
const LLMEvidenceStrength = 0.5

// ApplyPlan is the outcome of PlanApply: the result to report and the writes
// that realise it. When Result.RolledBack is set, Tasks and Evidence are
// empty and only the idempotency key must be recorded.
type ApplyPlan struct {
	Result   ApplyResult
	Tasks    []Task     // full new state of every created or modified task, in Tasks order
	Evidence []Evidence // evidence to insert (SUPPORTS edge = Evidence.TaskID), in Evidence order
}

// PlanApply computes the effect of one Apply request on a session whose
// current tasks are `existing` (Parent and DependsOn filled, as Tasks
// returns them). hasEvidence reports whether the session already holds
// evidence with a content hash. It is pure: backends load the state inside
// their write transaction, call PlanApply and write the plan, so that every
// backend has exactly the same semantics. Idempotency keys are the
// backend's job (check before, record after, in the same transaction).
//
// Rules, in the order they are applied:
//
//  1. Creates are registered first, in op order, so later ops (and earlier
//     ones: forward references are allowed) can name the new short ids.
//     Semantic dedup: when req.DedupThreshold > 0 and the create's embedding
//     has cosine > DedupThreshold with an existing task or an earlier create
//     of the request (the most similar one wins, ties to the first in
//     Tasks order), the create is skipped and its short id maps onto that
//     task (Result.Mapped). A skipped create adds no edges. A create whose
//     short id already exists, or repeats an earlier create's id, is an error.
//  2. The ops run in order. Targets are resolved through the dedup mapping.
//     An op whose target reaches a FAILED task only through the mapping is
//     skipped silently (the caller could not know); so is a create whose
//     parent does, together with every op naming that create and every
//     create deduplicated onto it. A dependency that reaches a FAILED task
//     through the mapping is dropped (the create itself stays). A FAILED task
//     named directly (the caller validated against it, so this is a bug) is
//     an error wrapping ErrImmutable; an unknown short id is an error
//     wrapping ErrNotFound. Errors discard the whole write.
//     - create: PENDING task, parent = op.Parent or req.ActiveTask,
//     SUBTASK_OF to the parent, DEPENDS_ON to op.DependsOn,
//     CreatedIter = req.Iteration, Depth = parent depth + 1.
//     - update: description / embed_text / embedding (non-empty fields) of a
//     PENDING or ACTIVE task; a DONE task is left unchanged.
//     - depend: DEPENDS_ON task -> on.
//     - complete: DONE, ResultSummary = op.Result, ResultEmbedding = op.Embedding.
//     - fail: FAILED, ResultSummary = op.Reason.
//     - continue: ACTIVE -> PENDING; other statuses unchanged.
//     - evidence: Evidence of kind llm (strength LLMEvidenceStrength,
//     content hash dedup against the session and the request).
//  3. Result.Applied counts the ops that changed something. When it is > 0,
//     NProductive of req.ActiveTask grows by one (unless that task was
//     FAILED before the request).
//  4. A cycle in SUBTASK_OF ∪ DEPENDS_ON discards every change:
//     Result = {RolledBack: true, Reason: "cycle in SUBTASK_OF/DEPENDS_ON: a -> b -> a"}.
func PlanApply(existing []Task, hasEvidence func(contentHash string) (bool, error), req ApplyRequest) (ApplyPlan, error) {
	if req.SessionID == "" {
		return ApplyPlan{}, errors.New("graph: apply: empty session id")
	}
	p := planner{
		req:     req,
		nodes:   make(map[string]*planNode, len(existing)+len(req.Ops)),
		mapped:  map[string]string{},
		dropped: map[string]bool{},
		newHash: map[string]bool{},
		hasEv:   hasEvidence,
	}
	sorted := slices.Clone(existing)
	SortTasks(sorted)
	for i := range sorted {
		t := sorted[i]
		n := &planNode{t: t, failedAtStart: t.Status == Failed, order: i}
		n.t.DependsOn = slices.Clone(t.DependsOn)
		p.nodes[t.ShortID] = n
		p.order = append(p.order, t.ShortID)
	}
	return p.run()
}

type planNode struct {
	t             Task
	failedAtStart bool
	created       bool
	modified      bool
	order         int
}

type planner struct {
	req      ApplyRequest
	nodes    map[string]*planNode
	order    []string          // short ids: existing (Tasks order), then registered creates
	mapped   map[string]string // new short id -> existing/created short id
	dropped  map[string]bool   // creates skipped because they hang below a FAILED task reached by mapping
	createOp map[string]int    // registered create short id -> op index
	newHash  map[string]bool
	hasEv    func(string) (bool, error)
	res      ApplyResult
	newEv    []Evidence
}

func (p *planner) taskID(short string) string { return TaskID(p.req.SessionID, short) }

func (p *planner) run() (ApplyPlan, error) {
	req := p.req
	if req.ActiveTask != "" {
		if _, ok := p.nodes[req.ActiveTask]; !ok {
			return ApplyPlan{}, fmt.Errorf("graph: apply: active task %q: %w", req.ActiveTask, ErrNotFound)
		}
	}
	if err := p.registerCreates(); err != nil {
		return ApplyPlan{}, err
	}
	if err := p.dropBelowFailed(); err != nil {
		return ApplyPlan{}, err
	}
	for i, op := range req.Ops {
		if err := p.apply(i, op); err != nil {
			return ApplyPlan{}, fmt.Errorf("graph: apply op %d (%s %q): %w", i, op.Kind, op.Task, err)
		}
	}

	// Cycle check over SUBTASK_OF ∪ DEPENDS_ON.
	adj := make(map[string][]string, len(p.nodes))
	for short, n := range p.nodes {
		if n.created && !n.modified {
			continue // registered but never materialised (cannot happen; defensive)
		}
		var out []string
		if n.t.Parent != "" {
			out = append(out, ShortIDOf(n.t.Parent))
		}
		for _, d := range n.t.DependsOn {
			out = append(out, ShortIDOf(d))
		}
		adj[short] = out
	}
	if cyc := FindCycle(adj); cyc != nil {
		return ApplyPlan{Result: ApplyResult{
			RolledBack: true,
			Reason:     "cycle in SUBTASK_OF/DEPENDS_ON: " + strings.Join(cyc, " -> "),
		}}, nil
	}

	// Depths of created tasks (parents may be created tasks themselves).
	var depth func(short string, guard int) int
	depth = func(short string, guard int) int {
		n := p.nodes[short]
		if !n.created || guard > len(p.nodes) {
			return n.t.Depth
		}
		if n.t.Parent == "" {
			return 0
		}
		return depth(ShortIDOf(n.t.Parent), guard+1) + 1
	}
	for _, short := range p.order {
		if n := p.nodes[short]; n.created {
			n.t.Depth = depth(short, 0)
		}
	}

	if p.res.Applied > 0 && req.ActiveTask != "" {
		if n := p.nodes[req.ActiveTask]; !n.failedAtStart {
			n.t.NProductive++
			n.modified = true
		}
	}

	plan := ApplyPlan{Result: p.res, Evidence: p.newEv}
	for _, short := range p.order {
		if n := p.nodes[short]; n.modified {
			plan.Tasks = append(plan.Tasks, n.t)
		}
	}
	SortTasks(plan.Tasks)
	SortEvidence(plan.Evidence)
	if len(plan.Result.Mapped) == 0 {
		plan.Result.Mapped = nil
	}
	return plan, nil
}

// registerCreates decides dedup for every create, in op order.
func (p *planner) registerCreates() error {
	p.createOp = map[string]int{}
	thr := p.req.DedupThreshold
	for i, op := range p.req.Ops {
		if op.Kind != OpCreate {
			continue
		}
		id := op.Task
		if id == "" {
			return fmt.Errorf("graph: apply op %d (create): empty short id", i)
		}
		if strings.Contains(id, "/t/") {
			return fmt.Errorf("graph: apply op %d (create %q): short id must not contain \"/t/\"", i, id)
		}
		if _, ok := p.nodes[id]; ok {
			return fmt.Errorf("graph: apply op %d (create %q): short id already exists", i, id)
		}
		if _, ok := p.mapped[id]; ok {
			return fmt.Errorf("graph: apply op %d (create %q): duplicate new short id", i, id)
		}
		if thr > 0 && len(op.Embedding) > 0 {
			best, bestCos := "", math.Inf(-1)
			for _, short := range p.order {
				c := algebra.Cosine32(op.Embedding, p.nodes[short].t.Embedding)
				if c > bestCos {
					best, bestCos = short, c
				}
			}
			if best != "" && bestCos > thr {
				p.mapped[id] = best
				continue
			}
		}
		p.nodes[id] = &planNode{
			created: true,
			order:   len(p.order),
			t: Task{
				ID:          p.taskID(id),
				SessionID:   p.req.SessionID,
				ShortID:     id,
				Description: op.Description,
				EmbedText:   op.EmbedText,
				Embedding:   slices.Clone(op.Embedding),
				Status:      Pending,
				CreatedIter: p.req.Iteration,
			},
		}
		p.order = append(p.order, id)
		p.createOp[id] = i
	}
	return nil
}

// dropBelowFailed skips creates whose parent reaches a FAILED task through
// the dedup mapping (directly or via another dropped create), and mappings
// onto dropped creates.
func (p *planner) dropBelowFailed() error {
	for changed := true; changed; {
		changed = false
		for _, short := range p.order {
			i, ok := p.createOp[short]
			if !ok || p.dropped[short] {
				continue
			}
			parent := p.req.Ops[i].Parent
			if parent == "" {
				parent = p.req.ActiveTask
			}
			if parent == "" {
				return fmt.Errorf("graph: apply op %d (create %q): no parent and no active task", i, short)
			}
			drop := p.dropped[parent]
			if m, ok := p.mapped[parent]; ok {
				if n := p.nodes[m]; p.dropped[m] || (n != nil && n.t.Status == Failed) {
					drop = true
				}
			}
			if drop {
				p.dropped[short] = true
				changed = true
			}
		}
		for id, m := range p.mapped {
			if p.dropped[m] && !p.dropped[id] {
				p.dropped[id] = true
				changed = true
			}
		}
	}
	for id := range p.dropped {
		delete(p.mapped, id)
	}
	// Dropped creates are never materialised.
	kept := p.order[:0]
	for _, short := range p.order {
		if p.dropped[short] {
			delete(p.nodes, short)
			continue
		}
		kept = append(kept, short)
	}
	p.order = kept
	return nil
}

// errSkip marks an op target that reaches a FAILED task (or a dropped
// create) only through the dedup mapping: the op is skipped, not an error.
var errSkip = errors.New("skip")

// resolve returns the node a short id names within the request.
func (p *planner) resolve(ref string) (*planNode, error) {
	if ref == "" {
		return nil, errors.New("empty short id")
	}
	if p.dropped[ref] {
		return nil, errSkip
	}
	if m, ok := p.mapped[ref]; ok {
		n := p.nodes[m]
		if n == nil || n.t.Status == Failed {
			return nil, errSkip
		}
		return n, nil
	}
	n, ok := p.nodes[ref]
	if !ok {
		return nil, fmt.Errorf("task %q: %w", ref, ErrNotFound)
	}
	return n, nil
}

// target resolves an op's target, which must not be FAILED.
func (p *planner) target(ref string) (*planNode, error) {
	n, err := p.resolve(ref)
	if err != nil {
		return nil, err
	}
	if n.t.Status == Failed {
		return nil, fmt.Errorf("task %q: %w", ref, ErrImmutable)
	}
	return n, nil
}

func (p *planner) apply(i int, op Op) error {
	err := p.applyOp(i, op)
	if errors.Is(err, errSkip) {
		return nil
	}
	return err
}

func (p *planner) changed(n *planNode) {
	n.modified = true
}

func (p *planner) applyOp(i int, op Op) error {
	switch op.Kind {
	case OpCreate:
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
		p.changed(n)
		p.res.Applied++
		p.res.Created = append(p.res.Created, op.Task)
	case OpUpdate:
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
	case OpDepend:
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
	case OpComplete:
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
	case OpFail:
		n, err := p.target(op.Task)
		if err != nil {
			return err
		}
		n.t.Status = Failed
		n.t.ResultSummary = op.Reason
		p.changed(n)
		p.res.Applied++
	case OpContinue:
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
	case OpEvidence:
		n, err := p.target(op.Task)
		if err != nil {
			return err
		}
		if strings.TrimSpace(op.Content) == "" {
			return errors.New("empty evidence content")
		}
		h := ContentHash(op.Content)
		if p.newHash[h] {
			return nil
		}
		if p.hasEv != nil {
			ok, err := p.hasEv(h)
			if err != nil {
				return fmt.Errorf("evidence lookup: %w", err)
			}
			if ok {
				return nil
			}
		}
		p.newHash[h] = true
		p.newEv = append(p.newEv, Evidence{
			ID:          EvidenceID(p.req.SessionID, h),
			SessionID:   p.req.SessionID,
			TaskID:      n.t.ID,
			Content:     op.Content,
			SourceURL:   op.Source,
			Kind:        KindLLM,
			Strength:    LLMEvidenceStrength,
			Embedding:   slices.Clone(op.Embedding),
			CreatedIter: p.req.Iteration,
			ContentHash: h,
		})
		p.res.Applied++
		p.res.Evidence++
	default:
		return fmt.Errorf("unknown op kind %q", op.Kind)
	}
	return nil
}

func addSorted(s []string, v string) []string {
	i, found := slices.BinarySearch(s, v)
	if found {
		return s
	}
	return slices.Insert(s, i, v)
}
