package graph

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/lethe-research/lethe/algebra"
)

// LLMEvidenceStrength is the default strength of evidence written by an
// evidence op (research.llm_evidence_strength; ApplyRequest.EvidenceStrength).
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
//     - evidence: Evidence of kind llm (strength req.EvidenceStrength,
//     LLMEvidenceStrength when <= 0; content hash dedup against the
//     session and the request).
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

// evidenceStrength is the strength of evidence an evidence op writes.
func (p *planner) evidenceStrength() float64 {
	if p.req.EvidenceStrength > 0 {
		return p.req.EvidenceStrength
	}
	return LLMEvidenceStrength
}

// run applies the rules of PlanApply in their documented order. Each rule is
// its own step so that a change to one (say, how depths are derived) cannot
// silently reorder the others: the cycle check must see every edge the ops
// wrote, and depths and NProductive are only worth computing for a plan that
// is not rolled back.
func (p *planner) run() (ApplyPlan, error) {
	if err := p.checkActiveTask(); err != nil {
		return ApplyPlan{}, err
	}
	if err := p.registerCreates(); err != nil {
		return ApplyPlan{}, err
	}
	if err := p.dropBelowFailed(); err != nil {
		return ApplyPlan{}, err
	}
	if err := p.applyOps(); err != nil {
		return ApplyPlan{}, err
	}
	if cyc := FindCycle(p.adjacency()); cyc != nil {
		return ApplyPlan{Result: ApplyResult{
			RolledBack: true,
			Reason:     "cycle in SUBTASK_OF/DEPENDS_ON: " + strings.Join(cyc, " -> "),
		}}, nil
	}
	p.setCreatedDepths()
	p.countProductive()
	return p.plan(), nil
}

// checkActiveTask rejects an unknown active task before any op runs: it is
// the default parent of creates and the task credited with NProductive, so
// the request cannot be planned without it.
func (p *planner) checkActiveTask() error {
	if p.req.ActiveTask == "" {
		return nil
	}
	if _, ok := p.nodes[p.req.ActiveTask]; !ok {
		return fmt.Errorf("graph: apply: active task %q: %w", p.req.ActiveTask, ErrNotFound)
	}
	return nil
}

// applyOps runs the ops in request order; the first error discards the whole
// write, so the error names the op index the caller has to fix.
func (p *planner) applyOps() error {
	for i, op := range p.req.Ops {
		if err := p.apply(i, op); err != nil {
			return fmt.Errorf("graph: apply op %d (%s %q): %w", i, op.Kind, op.Task, err)
		}
	}
	return nil
}

// adjacency is the SUBTASK_OF ∪ DEPENDS_ON graph after the ops, by short id.
// Both kinds go into one graph because rule 4 of PlanApply forbids a cycle in
// their union, which two separate checks would miss (a task depending on its
// own descendant).
func (p *planner) adjacency() map[string][]string {
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
	return adj
}

// setCreatedDepths fills Depth for created tasks only after the cycle check:
// a parent may itself be created in this request (even by a later op), so
// depths can only be derived once every parent edge is known.
func (p *planner) setCreatedDepths() {
	for _, short := range p.order {
		if n := p.nodes[short]; n.created {
			n.t.Depth = p.depth(short, 0)
		}
	}
}

// depth walks up through created parents to the first existing task, whose
// stored depth is authoritative; guard bounds the walk should a cycle ever
// slip through.
func (p *planner) depth(short string, guard int) int {
	n := p.nodes[short]
	if !n.created || guard > len(p.nodes) {
		return n.t.Depth
	}
	if n.t.Parent == "" {
		return 0
	}
	return p.depth(ShortIDOf(n.t.Parent), guard+1) + 1
}

// countProductive credits the active task with one productive iteration when
// the request changed anything; a task that was already FAILED stays frozen.
func (p *planner) countProductive() {
	if !(p.res.Applied > 0 && p.req.ActiveTask != "") {
		return
	}
	if n := p.nodes[p.req.ActiveTask]; !n.failedAtStart {
		n.t.NProductive++
		n.modified = true
	}
}

// plan collects the writes in canonical order so that every backend (and a
// replay of the same request) writes, and reports, exactly the same thing.
func (p *planner) plan() ApplyPlan {
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
	return plan
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

func addSorted(s []string, v string) []string {
	i, found := slices.BinarySearch(s, v)
	if found {
		return s
	}
	return slices.Insert(s, i, v)
}
