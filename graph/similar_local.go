package graph

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
)

// The local incremental sync (#14): the degree cap is recomputed only
// around the new evidence, from the stored edges of the items it touches
// (Store.SimilarEdgesOf), so that a sync costs what changed, not the
// session's edge count. docs/similarity-index.md, "Local cap", gives the
// argument that the result equals the global cap; the conformance tests
// compare it with the full recomputation.
//
// Names: A is the set of compared items (every pair over the threshold of
// an item of A is known, from the index and exact comparisons among A);
// D, in a bounded sync only, holds the items the cascade cut: they are
// capped with their stored pairs but never queried. The greedy cap visits
// the pairs of A and D by weight, strongest first, ties by (A, B), and
// keeps a pair when both endpoints have fewer than MaxPerNode kept pairs
// before it. For an item x outside A and D, its kept pairs before a given
// pair are its pairs with A and D kept so far plus its other stored pairs
// that come earlier in the order: those did not change, as long as none
// of x's pairs with A and D changed (the fixpoint below), because a
// change reaches a pair only through an earlier change at one of its
// endpoints. An item whose pair changed joins A (or D, past the cascade
// bound) and the cap runs again.

// localCap is the state of one local sync.
type localCap struct {
	s       Store
	sid     string
	p       SimilarParams
	dim     int
	active  map[string]bool // A
	order   []string        // A in join order
	vecs    map[string][]float64
	raw     map[string][]float32
	cut     map[string]bool // D: cut from the cascade (bounded sync): capped with their stored pairs, not queried
	cand    map[[2]string]float64
	stored  map[[2]string]Edge
	byNode  map[string][]idPair // stored pairs of each loaded item
	loaded  map[string]bool
	queried int
	preload <-chan error // the fresh items' edges, read beside the first round's queries
	// pairs says the store holds every pair of the session's items over
	// the threshold (similarMark.Pairs): a displaced item joins A from its
	// stored pairs, without an index query. found are the pairs the
	// sync's queries found, for a store that keeps them (nil otherwise).
	pairs bool
	found []Edge
}

// syncLocal is the capped pair set after adding fresh (of which unseen
// were never compared), computed around them. It returns the pairs of the result that touch a loaded item (an
// item whose stored edges were read) and those stored edges: the two
// cover the same part of the graph, so their difference is the sync's.
func syncLocal(ctx context.Context, s Store, sid string, p SimilarParams, mark similarMark, fresh, unseen []Evidence, st *SimilarStats) ([]idPair, []Edge, []Edge, error) {
	lc := &localCap{s: s, sid: sid, p: p, dim: mark.Dim, active: map[string]bool{}, vecs: map[string][]float64{},
		raw: map[string][]float32{}, cut: map[string]bool{}, cand: map[[2]string]float64{},
		stored: map[[2]string]Edge{}, byNode: map[string][]idPair{}, loaded: map[string]bool{},
		pairs: mark.Pairs && s.KeepsPairs() && !p.Requery}
	if s.KeepsPairs() {
		lc.found = []Edge{}
	}
	kept, stored, err := lc.run(ctx, fresh, unseen, st)
	return kept, stored, lc.found, err
}

// run is syncLocal's cascade.
func (lc *localCap) run(ctx context.Context, fresh, unseen []Evidence, st *SimilarStats) ([]idPair, []Edge, error) {
	s, sid, p := lc.s, lc.sid, lc.p
	lc.join(unseen)
	// Every new item is refined (a re-scored strength is rebased), also
	// those the last sync already compared: their edges are read too,
	// beside the first round's index queries, which do not need them.
	ids := make([]string, len(fresh))
	for i, e := range fresh {
		ids[i] = e.ID
	}
	preload := make(chan error, 1)
	go func() { preload <- lc.load(ctx, ids) }()
	lc.preload = preload
	defer func() { // a sync given up before its first round still waits for the read
		if lc.preload != nil {
			<-lc.preload
		}
	}()
	bounded := p.bounded(st.Evidence)
	cost, budget, displaced := 0, fullBudget(st.Evidence, p), 0
	for {
		pending := len(lc.order) - lc.queried
		if cost += pending * (st.Evidence + len(lc.order)); cost > budget && !bounded {
			return nil, nil, errCascade
		}
		if err := lc.round(ctx, !bounded || pending*len(lc.order) <= boundedAmong, st); err != nil {
			return nil, nil, err
		}
		p.progress()
		kept, changed := lc.capAll()
		cutNow := false
		if room := max(p.CascadeItems-displaced, 0); bounded && len(changed) > room {
			for _, id := range changed[room:] {
				lc.cut[id] = true
			}
			st.CascadeCut += len(changed) - room
			changed, cutNow = changed[:room], true
		}
		displaced += len(changed)
		st.Displaced += len(changed)
		if len(changed) == 0 {
			if cutNow {
				continue // the cut items' partners are loaded, and the cap runs again
			}
			return lc.localEdges(kept), lc.storedEdges(), nil
		}
		if lc.pairs {
			if err := lc.admitPairs(ctx, changed); err != nil {
				return nil, nil, err
			}
			continue
		}
		evs, err := s.EvidenceByIDs(ctx, sid, changed)
		if err != nil {
			return nil, nil, fmt.Errorf("graph: sync similar: read displaced evidence: %w", err)
		}
		lc.join(evs)
		for _, id := range changed {
			if !lc.active[id] {
				lc.cut[id] = true // no usable embedding: capped with what it has
			}
		}
	}
}

// admitPairs makes the displaced items ids members of A from their
// stored pairs, which the store holds whole (lc.pairs), instead of asking
// the index for them again.
func (lc *localCap) admitPairs(ctx context.Context, ids []string) error {
	ps, err := lc.s.SimilarPairsOf(ctx, lc.sid, ids)
	if err != nil {
		return fmt.Errorf("graph: sync similar: read displaced pairs: %w", err)
	}
	for _, e := range ps {
		lc.know(e.From, e.To, e.Weight)
	}
	for _, id := range ids {
		lc.active[id] = true
	}
	return nil
}

// know makes (a, b) a known pair of weight w, unless it is one already.
func (lc *localCap) know(a, b string, w float64) {
	if k := pairKey(a, b); a != b {
		if _, ok := lc.cand[k]; !ok {
			lc.cand[k] = w
		}
	}
}

// join adds items with a usable embedding of the sync's dimension to A.
func (lc *localCap) join(evs []Evidence) {
	for _, e := range evs {
		if lc.active[e.ID] || len(e.Embedding) != lc.dim {
			continue
		}
		if u := UnitVector(e.Embedding); u != nil {
			lc.vecs[e.ID], lc.raw[e.ID] = u, e.Embedding
			lc.active[e.ID] = true
			lc.order = append(lc.order, e.ID)
		}
	}
}

// round queries the pending items of A (index, and exactly among A), then
// loads the stored edges of every item a known pair touches.
func (lc *localCap) round(ctx context.Context, among bool, st *SimilarStats) error {
	add := func(a, b string, w float64) {
		if k := pairKey(a, b); a != b && lc.found != nil {
			lc.found = append(lc.found, Edge{From: k[0], To: k[1], Kind: SimilarTo, Weight: w})
		}
		lc.know(a, b, w)
	}
	err := queryActive(ctx, lc.s, lc.sid, lc.p, lc.vecs, lc.raw, lc.order, lc.queried, among, add, st)
	if lc.preload != nil { // the first round: the fresh items' edges, read meanwhile
		err = errors.Join(err, <-lc.preload)
		lc.preload = nil
	}
	if err != nil {
		return err
	}
	lc.queried = len(lc.order)
	for {
		var need []string
		for _, id := range lc.order {
			if !lc.loaded[id] {
				need = append(need, id)
			}
		}
		for k := range lc.cand {
			for _, id := range k {
				if !lc.loaded[id] {
					need = append(need, id)
				}
			}
		}
		for x := range lc.cut {
			for _, c := range lc.byNode[x] {
				for _, id := range []string{c.A, c.B} {
					if !lc.loaded[id] {
						need = append(need, id)
					}
				}
			}
		}
		if len(need) == 0 {
			lc.admitStored()
			return nil
		}
		if err := lc.load(ctx, sortedSet(need)); err != nil {
			return err
		}
		lc.admitStored()
	}
}

// admitStored makes every loaded stored edge of an item of A a known pair,
// with its stored weight (the index's cosine is the same number, computed
// the same way).
func (lc *localCap) admitStored() {
	for k, e := range lc.stored {
		if lc.active[k[0]] || lc.active[k[1]] {
			lc.cand[k] = e.Weight
		}
	}
}

// load reads the stored edges of ids.
func (lc *localCap) load(ctx context.Context, ids []string) error {
	es, err := lc.s.SimilarEdgesOf(ctx, lc.sid, ids)
	if err != nil {
		return fmt.Errorf("graph: sync similar: read edges: %w", err)
	}
	for _, id := range ids {
		lc.loaded[id] = true
	}
	for _, e := range es {
		k := pairKey(e.From, e.To)
		if _, ok := lc.stored[k]; ok {
			continue
		}
		lc.stored[k] = e
		c := idPair{A: k[0], B: k[1], W: e.Weight}
		lc.byNode[c.A] = append(lc.byNode[c.A], c)
		lc.byNode[c.B] = append(lc.byNode[c.B], c)
	}
	return nil
}

// capAll runs the greedy cap over the pairs of A and D (the known pairs
// of A, the stored pairs of D) and returns the kept ones, in (A, B)
// order, and the items outside both whose pairs changed against the
// stored edges, sorted.
func (lc *localCap) capAll() ([]idPair, []string) {
	inner := func(x string) bool { return lc.active[x] || lc.cut[x] }
	pairs := make([]idPair, 0, len(lc.cand))
	for k, w := range lc.cand {
		pairs = append(pairs, idPair{A: k[0], B: k[1], W: w})
	}
	for k, e := range lc.stored {
		if _, ok := lc.cand[k]; !ok && (lc.cut[k[0]] || lc.cut[k[1]]) {
			pairs = append(pairs, idPair{A: k[0], B: k[1], W: e.Weight})
		}
	}
	slices.SortFunc(pairs, capOrder)
	static := map[string][]idPair{} // stored pairs outside A and D, in cap order
	outside := func(x string) []idPair {
		if l, ok := static[x]; ok {
			return l
		}
		var l []idPair
		for _, c := range lc.byNode[x] {
			if !inner(c.A) && !inner(c.B) {
				l = append(l, c)
			}
		}
		slices.SortFunc(l, capOrder)
		static[x] = l
		return l
	}
	deg := map[string]int{}
	degree := func(x string, c idPair) int {
		if inner(x) {
			return deg[x]
		}
		n, _ := slices.BinarySearchFunc(outside(x), c, capOrder)
		return deg[x] + n
	}
	var kept []idPair
	var changed []string
	for _, c := range pairs {
		_, was := lc.stored[[2]string{c.A, c.B}]
		keep := lc.p.MaxPerNode <= 0 || (degree(c.A, c) < lc.p.MaxPerNode && degree(c.B, c) < lc.p.MaxPerNode)
		if keep {
			deg[c.A]++
			deg[c.B]++
			kept = append(kept, c)
		}
		if keep != was {
			for _, x := range []string{c.A, c.B} {
				if !inner(x) {
					changed = append(changed, x)
				}
			}
		}
	}
	slices.SortFunc(kept, cmpIDPair)
	return kept, sortedSet(changed)
}

// storedEdges is every loaded stored edge, in (From, To) order.
func (lc *localCap) storedEdges() []Edge {
	out := make([]Edge, 0, len(lc.stored))
	for _, e := range lc.stored {
		out = append(out, e)
	}
	slices.SortFunc(out, func(x, y Edge) int {
		if c := cmp.Compare(x.From, y.From); c != 0 {
			return c
		}
		return cmp.Compare(x.To, y.To)
	})
	return out
}

// localEdges is the sync's result over the loaded part of the graph: the
// kept pairs of A and D, and the stored edges between other items, which
// did not change.
func (lc *localCap) localEdges(kept []idPair) []idPair {
	out := slices.Clone(kept)
	for k, e := range lc.stored {
		if !lc.active[k[0]] && !lc.active[k[1]] && !lc.cut[k[0]] && !lc.cut[k[1]] {
			out = append(out, idPair{A: k[0], B: k[1], W: e.Weight})
		}
	}
	slices.SortFunc(out, cmpIDPair)
	return out
}

// capOrder is the greedy cap's visiting order: weight, strongest first,
// ties to the smaller (A, B), as capPairs.
func capOrder(x, y idPair) int {
	if c := cmp.Compare(y.W, x.W); c != 0 {
		return c
	}
	return cmpIDPair(x, y)
}
