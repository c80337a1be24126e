package activities

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"go.temporal.io/sdk/activity"

	"github.com/lethe-research/lethe/algebra"
	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/graph"
)

// Lane expand (#14): Expand reads the selected task's neighbourhood hop by
// hop and runs the forward push (algebra.LocalPPR) on it, instead of
// reading the whole session and running power iteration over it
// (docs/local-ppr.md). The walk is the same: every edge kind, undirected,
// weighted max(cos, 0) of its endpoints' embeddings, seeds the task and its
// direct neighbours.

// localWalk is the part of the session graph read so far.
type localWalk struct {
	store  graph.Store
	sid    string
	idx    map[string]int // node id -> node index
	ids    []string       // node index -> node id
	vecs   [][]float32    // node index -> embedding
	norms  []float64      // node index -> norm of its embedding, computed once
	ev     []graph.Evidence
	adj    map[int][]int // node index -> neighbours, for the nodes whose edges were read
	w      map[int][]float64
	rounds int
	// isEv marks evidence nodes; evDeg and evRead are the summed weighted
	// degree and the number of the evidence nodes read (the read prior).
	isEv   []bool
	evDeg  float64
	evRead int
	// count is each task node's number of evidence items (by short id,
	// Store.EvidenceCounts), nodeCount the same by node index (0 for an
	// evidence node); supW and supN sum the weights and count the
	// task–evidence (SUPPORTS) edges read: the task read prior.
	count      map[string]int
	taskPrefix string // graph.TaskID(sid, "")
	nodeCount  []int
	supW       float64
	supN       int
}

// pushStats says how the push went, for the log.
type pushStats struct {
	Nodes, Read, Rounds, Pushes int
	Bound                       float64
}

// localPPR runs the push from the task sel and returns the evidence it
// read, with their scores (by node index) and the node index. count is
// Store.EvidenceCounts' per-task map when the caller has read it (nil:
// read here).
func localPPR(ctx context.Context, st graph.Store, sid, sel string, c config.Context, count map[string]int) ([]graph.Evidence, []float64, map[string]int, pushStats, error) {
	if count == nil {
		var err error
		if count, err = st.EvidenceCounts(ctx, sid); err != nil {
			return nil, nil, nil, pushStats{}, fmt.Errorf("expand evidence counts: %w", err)
		}
	}
	lw := &localWalk{store: st, sid: sid, idx: map[string]int{}, adj: map[int][]int{}, w: map[int][]float64{}, count: count, taskPrefix: graph.TaskID(sid, "")}
	if err := lw.read(ctx, []string{sel}); err != nil {
		return nil, nil, nil, pushStats{}, err
	}
	u, ok := lw.idx[sel]
	if !ok {
		return nil, nil, nil, pushStats{}, nil // no such task: nothing to expand from
	}
	seeds := append([]int{u}, lw.adj[u]...)
	lp := algebra.NewLocalPPR(seeds, c.PPRAlpha, c.PPRPushTol)
	known := func(v int) ([]int, []float64, bool) {
		nb, ok := lw.adj[v]
		return nb, lw.w[v], ok
	}
	for {
		need := lp.Run(known, c.PPRMaxPushes)
		room := c.PPRMaxNodes - len(lw.adj)
		if len(need) == 0 || room <= 0 || (c.PPRMaxPushes > 0 && lp.Pushes() >= c.PPRMaxPushes) {
			break
		}
		need = lw.worthReading(lp, need, c.PPRPushTol)
		if len(need) == 0 {
			break
		}
		ids := make([]string, 0, min(len(need), room))
		for _, v := range need[:min(len(need), room)] {
			ids = append(ids, lw.ids[v])
		}
		if err := lw.read(ctx, ids); err != nil {
			return nil, nil, nil, pushStats{}, err
		}
	}
	stats := pushStats{Nodes: len(lw.ids), Read: len(lw.adj), Rounds: lw.rounds, Pushes: lp.Pushes(), Bound: lp.Residual()}
	return lw.ev, lp.Scores(len(lw.ids)), lw.idx, stats, nil
}

// worthReading keeps the nodes of need whose residual could make them
// pushed once their edges are known. The push's own test (r ≥ tol × the
// weight seen into a node) takes the one edge it came in by for the
// node's degree, so every push of a task with hundreds of evidence items
// asked for all of them to be read, though each then held about tol times
// one edge weight, an eighth of what a push needs: at 100k evidence the
// walk read thousands of nodes to push a few hundred. An evidence node
// is now read when its residual reaches tol times the mean weighted
// degree of the evidence read so far (the read prior): an unread node
// keeps its residual, which stays in the error bound ‖r‖₁, so the bound
// holds as before; what changes is that an evidence node of below-mean
// degree may be left with up to tol × the mean instead of tol × its own
// degree (docs/local-ppr.md, "Read prior").
//
// Before any evidence is read there is no prior: the evidence of need
// with the largest residuals, at most priorSample of them, are read first
// to learn it.
//
// A task node has the same test with its own estimate (the task read
// prior): its degree is mostly its SUPPORTS edges, so it is read when its
// residual reaches tol × its evidence count × the mean SUPPORTS weight
// read so far. Each task read brings all of its evidence into the walk,
// hundreds of nodes with a dot product each, and at 100k evidence most
// tasks the push reached were read for a residual far below what would
// push them. A task without evidence, or read before any SUPPORTS edge,
// is read as before (its degree is then only its few task edges).
func (lw *localWalk) worthReading(lp *algebra.LocalPPR, need []int, tol float64) []int {
	out := make([]int, 0, len(need))
	if lw.evRead == 0 {
		var ev []int
		for _, v := range need {
			switch {
			case lw.isEv[v]:
				ev = append(ev, v)
			case lw.taskWorth(lp, v, tol):
				out = append(out, v)
			}
		}
		slices.SortStableFunc(ev, func(a, b int) int { return cmp.Compare(lp.ResidualAt(b), lp.ResidualAt(a)) })
		out = append(out, ev[:min(len(ev), priorSample)]...)
		slices.Sort(out)
		return out
	}
	prior := tol * lw.evDeg / float64(lw.evRead)
	for _, v := range need {
		if lw.isEv[v] && lp.ResidualAt(v) >= prior || !lw.isEv[v] && lw.taskWorth(lp, v, tol) {
			out = append(out, v)
		}
	}
	return out
}

// taskWorth is the task read prior's test for task node v (above).
func (lw *localWalk) taskWorth(lp *algebra.LocalPPR, v int, tol float64) bool {
	n := 0
	if v < len(lw.nodeCount) {
		n = lw.nodeCount[v]
	}
	if n == 0 || lw.supN == 0 {
		return true
	}
	return lp.ResidualAt(v) >= tol*float64(n)*lw.supW/float64(lw.supN)
}

// priorSample is how many evidence nodes the walk reads to learn the read
// prior: enough for a mean degree (a page's chunks are alike), few beside
// the hundreds a task's push reaches.
const priorSample = 32

// node returns the index of a node, registering it on first sight.
func (lw *localWalk) node(id string, emb []float32, ev bool) int {
	if u, ok := lw.idx[id]; ok {
		return u
	}
	u := len(lw.ids)
	lw.idx[id] = u
	lw.isEv = append(lw.isEv, ev)
	n := 0
	if !ev {
		n = lw.count[strings.TrimPrefix(id, lw.taskPrefix)]
	}
	lw.nodeCount = append(lw.nodeCount, n)
	lw.ids = append(lw.ids, id)
	lw.vecs = append(lw.vecs, emb)
	lw.norms = append(lw.norms, algebra.Norm32(emb))
	return u
}

// read reads the edges of the given nodes (one store round trip, without
// the evidence texts, withTexts reads those of the candidates, and
// without the nodes the walk holds already) and
// records their adjacency: each edge once per endpoint among ids (an
// edge's other endpoint, if read earlier, got it then), self-loops and
// cosines ≤ 0 left out, parallel edges kept, as pprGraph does.
func (lw *localWalk) read(ctx context.Context, ids []string) error {
	nb, err := lw.store.NeighbourhoodShape(ctx, lw.sid, ids, lw.known)
	if err != nil {
		return fmt.Errorf("expand neighbourhood: %w", err)
	}
	lw.rounds++
	lw.reserve(len(nb.Tasks) + len(nb.Evidence))
	for _, t := range nb.Tasks {
		lw.node(t.ID, t.Embedding, false)
	}
	for _, e := range nb.Evidence {
		if _, seen := lw.idx[e.ID]; !seen {
			lw.ev = append(lw.ev, e)
		}
		lw.node(e.ID, e.Embedding, true)
	}
	reading := make(map[int]bool, len(ids))
	for _, id := range ids {
		if u, ok := lw.idx[id]; ok {
			reading[u] = true
			lw.adj[u], lw.w[u] = []int{}, []float64{} // read, possibly without edges
		}
	}
	for _, e := range nb.Edges {
		i, ok1 := lw.idx[e.From]
		j, ok2 := lw.idx[e.To]
		if !ok1 || !ok2 || i == j {
			continue
		}
		c := lw.cosine(i, j)
		if lw.isEv[i] != lw.isEv[j] {
			lw.supW, lw.supN = lw.supW+max(c, 0), lw.supN+1
		}
		if !(c > 0) {
			continue
		}
		if reading[i] {
			lw.adj[i], lw.w[i] = append(lw.adj[i], j), append(lw.w[i], c)
		}
		if reading[j] {
			lw.adj[j], lw.w[j] = append(lw.adj[j], i), append(lw.w[j], c)
		}
	}
	for u := range reading {
		if lw.isEv[u] {
			lw.evRead++
			for _, x := range lw.w[u] {
				lw.evDeg += x
			}
		}
	}
	return nil
}

// reserve makes room for n more nodes at once: a round at 100k evidence
// brings thousands, and growing the per-node slices (lw.ev holds whole
// evidence records) one append at a time copied them over and over
// (growslice was a fifth of the walk's own CPU in a profile at 100k).
func (lw *localWalk) reserve(n int) {
	lw.ev = slices.Grow(lw.ev, n)
	lw.ids = slices.Grow(lw.ids, n)
	lw.vecs = slices.Grow(lw.vecs, n)
	lw.norms = slices.Grow(lw.norms, n)
	lw.isEv = slices.Grow(lw.isEv, n)
	lw.nodeCount = slices.Grow(lw.nodeCount, n)
}

// known says whether the walk holds a node already: the store leaves
// those out of a round's answer.
func (lw *localWalk) known(id string) bool {
	_, ok := lw.idx[id]
	return ok
}

// cosine is algebra.Cosine32 of two nodes' embeddings with their norms
// computed once: a task of a large session has hundreds of edges, and
// each round meets its nodes again.
func (lw *localWalk) cosine(i, j int) float64 {
	a, b := lw.vecs[i], lw.vecs[j]
	if len(a) != len(b) || len(a) == 0 || lw.norms[i] == 0 || lw.norms[j] == 0 {
		return 0
	}
	return algebra.Dot32(a, b) / (lw.norms[i] * lw.norms[j])
}

// contextOf fills the context parameters an older input lacks with their
// defaults, one by one (an input from before the push parameters has the
// others set).
func contextOf(in, def config.Context) config.Context {
	c := orDefault(in, def)
	c.PPRAlpha = orDefault(c.PPRAlpha, def.PPRAlpha)
	c.PPRPushTol = orDefault(c.PPRPushTol, def.PPRPushTol)
	c.PPRMaxNodes = orDefault(c.PPRMaxNodes, def.PPRMaxNodes)
	c.PPRMaxPushes = orDefault(c.PPRMaxPushes, def.PPRMaxPushes)
	c.MaxCandidates = orDefault(c.MaxCandidates, def.MaxCandidates)
	return c
}

// logPush logs how the push went (outside an activity, as in benchmarks,
// there is no activity logger).
func logPush(ctx context.Context, sid, task string, s pushStats) {
	if !activity.IsActivity(ctx) {
		return
	}
	logger(ctx, sid).Info("expand: local PPR", "task", task, "nodes", s.Nodes, "read", s.Read,
		"rounds", s.Rounds, "pushes", s.Pushes, "error_bound", s.Bound)
}

// withTexts replaces the candidates' evidence shapes (NeighbourhoodShape)
// by the full records, in one read: the push reads thousands of nodes in
// a large session and shows at most MaxCandidates of them.
func withTexts(ctx context.Context, st graph.Store, sid string, cands []pprScored) ([]pprScored, error) {
	if len(cands) == 0 {
		return cands, nil
	}
	ids := make([]string, len(cands))
	for i, c := range cands {
		ids[i] = c.e.ID
	}
	full, err := st.EvidenceByIDs(ctx, sid, ids)
	if err != nil {
		return nil, fmt.Errorf("expand candidate texts: %w", err)
	}
	byID := make(map[string]graph.Evidence, len(full))
	for _, e := range full {
		byID[e.ID] = e
	}
	out := make([]pprScored, len(cands))
	for i, c := range cands {
		e, ok := byID[c.e.ID]
		if !ok {
			return nil, fmt.Errorf("expand candidate texts: %s: %w", c.e.ID, graph.ErrNotFound)
		}
		out[i] = pprScored{e, c.ppr}
	}
	return out, nil
}
