package algebra

import (
	"math"
	"slices"
)

// Local personalized PageRank by forward push (Andersen, Chung & Lang,
// FOCS 2006), for the Expand activity (docs/local-ppr.md). Power iteration
// (PPR) touches every node of the graph on every step; the push touches only
// the nodes the walk reaches with non-negligible mass, so it can run on the
// part of the graph read from the store around the seeds.
//
// It solves the same system as PPR: π = α·s + (1 − α)·A·π, where A moves
// a node's mass to its neighbours in proportion to the edge weights, and a
// dangling node's mass back to the seeds (A is column-stochastic). It keeps
// an estimate p and a residual r with the invariant
//
//	π = p + G·r,   G = α·(I − (1 − α)·A)⁻¹   (non-negative, columns sum to 1)
//
// starting from p = 0, r = s. A push at u moves α·r_u into p_u and spreads
// (1 − α)·r_u over A's column u. So at any point, whatever stopped it:
//
//	0 ≤ π_v − p_v ≤ ‖r‖₁ for every v, and ‖π − p‖₁ = ‖r‖₁.
//
// ‖r‖₁ is returned as the error bound. A node is pushed while
// r_u ≥ tol·w_u (w_u its weighted degree; tol for a dangling node), so
// after a complete run ‖r‖₁ ≤ tol·Σ w over the nodes touched, and on an
// undirected graph, π_v − p_v ≤ tol·w_v (the ACL lemma: w_u·π_u(v) =
// w_v·π_v(u)). Each push removes α·tol·w_u of residual and costs deg(u), so
// a complete run does at most about 1/(α·tol) edge operations whatever the
// graph's size.

// Adjacency gives the out-edges of node u (neighbours and positive
// weights) and whether they are known yet. A node not known yet keeps its
// residual until the caller has read its edges; LocalPPR.Run reports it.
// Self-loops and non-positive weights must not be returned.
type Adjacency func(u int) (nbrs []int, w []float64, known bool)

// LocalPPR is a forward push in progress over nodes numbered 0, 1, …; the
// caller grows the graph between runs (Run, read what Run needs, Run again).
// It is not safe for concurrent use.
type LocalPPR struct {
	alpha, tol float64
	seeds      []int     // distinct seeds, in the given order
	sw         float64   // teleport weight of each seed (1/len(seeds))
	p, r       []float64 // estimate and residual, indexed by node
	seen       []float64 // weight of the edges seen into a node: a lower bound of its degree
	queued     []bool
	queue      []int
	pushes     int
}

// NewLocalPPR starts a push from the uniform distribution over the
// distinct non-negative seeds. alpha outside (0, 1] uses DefaultPPRAlpha;
// tol ≤ 0 uses DefaultPPRTol. With no valid seed nothing is ever pushed
// (global PageRank is not local).
func NewLocalPPR(seeds []int, alpha, tol float64) *LocalPPR {
	if !(alpha > 0 && alpha <= 1) {
		alpha = DefaultPPRAlpha
	}
	if !(tol > 0) {
		tol = DefaultPPRTol
	}
	l := &LocalPPR{alpha: alpha, tol: tol}
	for _, u := range seeds {
		if u < 0 {
			continue
		}
		l.grow(u)
		if !l.queued[u] {
			l.queued[u] = true
			l.seeds = append(l.seeds, u)
		}
	}
	if len(l.seeds) > 0 {
		l.sw = 1 / float64(len(l.seeds))
	}
	for _, u := range l.seeds {
		l.r[u] = l.sw
	}
	l.queue = append(l.queue, l.seeds...)
	return l
}

func (l *LocalPPR) grow(u int) {
	if u < len(l.p) {
		return
	}
	n := max(u+1, 2*len(l.p))
	l.p = append(l.p, make([]float64, n-len(l.p))...)
	l.r = append(l.r, make([]float64, n-len(l.r))...)
	l.seen = append(l.seen, make([]float64, n-len(l.seen))...)
	l.queued = append(l.queued, make([]bool, n-len(l.queued))...)
}

// Run pushes, in FIFO order (deterministic), until no node whose edges are
// known has residual above its threshold, or the total number of pushes
// reaches maxPushes (≤ 0: no limit). It returns the nodes whose edges are
// not known yet and whose residual is at least tol times the weight seen
// into them (a lower bound of their degree), ascending: what the caller
// should read before the next Run. Nodes reported stay pending.
func (l *LocalPPR) Run(adj Adjacency, maxPushes int) []int {
	var need []int
	var pending []int
	for len(l.queue) > 0 {
		if maxPushes > 0 && l.pushes >= maxPushes {
			break
		}
		u := l.queue[0]
		l.queue = l.queue[1:]
		nbrs, w, known := adj(u)
		if !known {
			pending = append(pending, u)
			continue
		}
		l.queued[u] = false
		if l.r[u] < l.tol*degree(w) {
			continue
		}
		l.push(u, nbrs, w)
	}
	// nodes not known go back in the queue for the next Run
	for _, u := range pending {
		l.queue = append(l.queue, u)
		if l.r[u] >= l.tol*l.seen[u] {
			need = append(need, u)
		}
	}
	slices.Sort(need)
	return need
}

// degree is the weighted degree of a node, 1 for a dangling node (its
// threshold is tol).
func degree(w []float64) float64 {
	var d float64
	for _, x := range w {
		d += x
	}
	if !(d > 0) {
		return 1
	}
	return d
}

func (l *LocalPPR) push(u int, nbrs []int, w []float64) {
	ru := l.r[u]
	l.pushes++
	l.p[u] += l.alpha * ru
	l.r[u] = 0
	var d float64
	for _, x := range w {
		d += x
	}
	if !(d > 0) {
		// dangling: the damped mass goes back to the seeds, as in PPR
		for _, v := range l.seeds {
			l.add(v, (1-l.alpha)*ru*l.sw)
		}
		return
	}
	f := (1 - l.alpha) * ru / d
	for i, v := range nbrs {
		l.grow(v)
		l.seen[v] += w[i]
		l.add(v, f*w[i])
	}
}

func (l *LocalPPR) add(v int, x float64) {
	l.r[v] += x
	if !l.queued[v] {
		l.queued[v] = true
		l.queue = append(l.queue, v)
	}
}

// Scores returns the estimate p for nodes 0 … n−1 (a new slice; nodes never
// reached have 0).
func (l *LocalPPR) Scores(n int) []float64 {
	out := make([]float64, n)
	copy(out, l.p)
	return out
}

// Residual is ‖r‖₁, the bound on the error of Scores (see above).
func (l *LocalPPR) Residual() float64 {
	var s float64
	for _, x := range l.r {
		s += x
	}
	return s
}

// ResidualAt is node u's residual (0 for a node never reached).
func (l *LocalPPR) ResidualAt(u int) float64 {
	if u < 0 || u >= len(l.r) {
		return 0
	}
	return l.r[u]
}

// Pushes is the number of pushes done so far.
func (l *LocalPPR) Pushes() int { return l.pushes }

// PushPPR is LocalPPR over an explicit graph: the push run to completion
// (or maxPushes), returning the scores of all g.N nodes and the error
// bound ‖r‖₁. Seeds outside [0, g.N) are ignored.
func PushPPR(g CSR, seeds []int, alpha, tol float64, maxPushes int) ([]float64, float64) {
	var valid []int
	for _, u := range seeds {
		if u >= 0 && u < g.N {
			valid = append(valid, u)
		}
	}
	l := NewLocalPPR(valid, alpha, tol)
	l.Run(func(u int) ([]int, []float64, bool) {
		lo, hi := g.RowPtr[u], g.RowPtr[u+1]
		return g.Col[lo:hi], g.W[lo:hi], true
	}, maxPushes)
	return l.Scores(g.N), math.Max(l.Residual(), 0)
}
