package graph

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
)

// syncIncremental is SyncSimilar when a watermark says which evidence is
// new: only the fresh items (and the old items whose edges they displace)
// are compared, through the store's nearest-neighbour index, against the
// stored SIMILAR_TO edges; see docs/similarity-index.md for why the result
// equals the full recomputation when the index answers exactly.
func syncIncremental(ctx context.Context, s Store, sessionID string, p SimilarParams, nli NLIClassifier, mark similarMark, fresh []Evidence, total int) (SimilarStats, error) {
	local := mark.Counted && (nli == nil || mark.Unlabelled == 0)
	st := SimilarStats{Evidence: total, New: len(fresh), Incremental: true, Local: local}
	unseen := unseenSince(fresh, mark)
	var kept []idPair
	var stored, found []Edge
	var err error
	if local {
		kept, stored, found, err = syncLocal(ctx, s, sessionID, p, mark, fresh, unseen, &st)
	} else {
		// Unlabelled edges anywhere in the session wait for the classifier
		// (MaxClassify, an outage), or the mark predates its counts: the
		// cap runs over all stored edges, and the edges and labels are
		// counted again.
		if stored, err = s.SimilarEdges(ctx, sessionID); err != nil {
			return st, fmt.Errorf("graph: sync similar: read edges: %w", err)
		}
		kept, err = deltaPairs(ctx, s, sessionID, p, mark.Dim, unseen, stored, &st)
	}
	if err != nil {
		return st, err
	}
	out, todo := keptEdges(kept, stored, &st)
	if nli != nil && len(todo) > 0 {
		evs, err := s.EvidenceByIDs(ctx, sessionID, edgeEnds(out, todo))
		if err != nil {
			return st, fmt.Errorf("graph: sync similar: read labelled evidence: %w", err)
		}
		if err := labelSimilar(ctx, s, sessionID, nli, evs, out, todo, p, &st); err != nil {
			return st, err
		}
	}
	scope, write := changedScope(stored, out)
	p.progress()
	w := Writes{SimilarScope: scope, Similar: write, Pairs: found}
	affected := slices.Clone(scope)
	for _, e := range fresh { // all of them: a re-scored strength is rebased (conformance)
		affected = append(affected, e.ID)
	}
	if err := refineSome(ctx, s, sessionID, sortedSet(affected), out, p.refinement(), &w); err != nil {
		return st, fmt.Errorf("graph: sync similar: refine: %w", err)
	}
	next := newMark(p, mark.Dim, total, fresh, mark)
	next.Counted, next.Edges, next.Unlabelled = true, len(out), unlabelled(out)
	// The store's pairs stay complete when this sync wrote what it found
	// (the local sync, on a store that keeps them).
	next.Pairs = mark.Pairs && local && s.KeepsPairs()
	if local { // out and stored cover the same part of the graph
		next.Edges += mark.Edges - len(stored)
		next.Unlabelled += mark.Unlabelled - unlabelled(stored)
	}
	st.Edges = next.Edges
	// The local sync keeps the unlabelled count by difference; the new
	// count commits with the edges it counts (commitSync), so no crash
	// leaves an old count beside new edges.
	if !sameMark(mark, next) {
		if err := putMark(&w, next); err != nil {
			return st, fmt.Errorf("graph: sync similar: %w", err)
		}
	}
	if err := commitSync(ctx, s, sessionID, w, &st); err != nil {
		return st, err
	}
	return st, nil
}

// sameMark says whether two watermarks are stored as the same bytes: a
// sync that found nothing new leaves the mark as it was and need not
// write it.
func sameMark(a, b similarMark) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// unseenSince drops from fresh the items at the watermark's iteration
// that the last sync already compared (mark.SeenAt): they are read again
// because their CreatedIter is the watermark's, and comparing them again
// costs time, never a pair. Measured on bench/long: a fill of 9,000 items
// at one iteration was compared again on every sync until the iteration
// moved on (48-80 s per Focus at 10k).
func unseenSince(fresh []Evidence, mark similarMark) []Evidence {
	seen := make(map[string]bool, len(mark.SeenAt))
	for _, id := range mark.SeenAt {
		seen[id] = true
	}
	out := make([]Evidence, 0, len(fresh))
	for _, e := range fresh {
		if e.CreatedIter != mark.Iter || !seen[e.ID] {
			out = append(out, e)
		}
	}
	return out
}

// deltaPairs is the capped SIMILAR_TO pair set after adding the fresh
// items. Known pairs are the stored edges; the fresh items contribute all
// their pairs over the threshold (from the index, and exactly among
// themselves, which the index may not hold yet). When the cap drops a
// stored edge, its endpoints may now take a pair that an earlier sync
// capped away and that no store keeps, so they join the compared items
// and the cap runs again, until no stored edge of an uncompared item is
// dropped. Then every pair missing from the known set is one whose
// endpoint kept all its stronger edges, which the cap rejects in the
// full computation too.
func deltaPairs(ctx context.Context, s Store, sessionID string, p SimilarParams, dim int, fresh []Evidence, stored []Edge, st *SimilarStats) ([]idPair, error) {
	known := make(map[[2]string]float64, len(stored))
	for _, e := range stored {
		known[pairKey(e.From, e.To)] = e.Weight
	}
	add := func(a, b string, w float64) {
		if k := pairKey(a, b); a != b {
			if _, ok := known[k]; !ok {
				known[k] = w
			}
		}
	}
	vecs := map[string][]float64{}
	raw := map[string][]float32{}
	var active []string // compared items, in the order they joined
	join := func(evs []Evidence) {
		for _, e := range evs {
			if _, ok := vecs[e.ID]; ok || len(e.Embedding) != dim {
				continue
			}
			if u := UnitVector(e.Embedding); u != nil {
				vecs[e.ID], raw[e.ID] = u, e.Embedding
				active = append(active, e.ID)
			}
		}
	}
	join(fresh)
	bounded := p.bounded(st.Evidence)
	queried, cost, budget, displaced := 0, 0, fullBudget(st.Evidence, p), 0
	for {
		// The round's cost is known before it runs: each pending item is
		// scanned against the session (the embedded index is an exact
		// scan in small sessions) and against every compared item. In
		// exact mode a cascade through whole topics is given up before it
		// costs more than the full sync (measured at 10k evidence: 185 s
		// of scans when checked only after the round, against about 30 s
		// for the full sync); in bounded mode the cascade is cut instead.
		pending := len(active) - queried
		if cost += pending * (st.Evidence + len(active)); cost > budget && !bounded {
			return nil, errCascade
		}
		among := !bounded || pending*len(active) <= boundedAmong
		if err := queryActive(ctx, s, sessionID, p, vecs, raw, active, queried, among, add, st); err != nil {
			return nil, err
		}
		queried = len(active)
		p.progress()
		kept := capPairs(pairList(known), p.MaxPerNode)
		lost := droppedEnds(stored, kept, vecs)
		if bounded {
			lost = cutCascade(lost, p.CascadeItems-displaced, st)
			displaced += len(lost)
		}
		if len(lost) == 0 {
			return kept, nil
		}
		evs, err := s.EvidenceByIDs(ctx, sessionID, lost)
		if err != nil {
			return nil, fmt.Errorf("graph: sync similar: read displaced evidence: %w", err)
		}
		n := len(active)
		join(evs)
		if len(active) == n {
			return kept, nil // the displaced items have no usable embedding
		}
	}
}

// cutCascade keeps at most room of the displaced items (sorted: the
// smallest ids, a deterministic choice) and counts the rest in
// st.CascadeCut: their freed degree slots may stay empty where the exact
// sync would refill them from pairs an earlier sync capped away
// (docs/similarity-index.md, "Bounded cascade").
func cutCascade(lost []string, room int, st *SimilarStats) []string {
	room = max(room, 0)
	if len(lost) <= room {
		return lost
	}
	st.CascadeCut += len(lost) - room
	return lost[:room]
}

// errCascade says the displaced items grew past what the full sync would
// cost: SyncSimilar then runs the full sync instead.
var errCascade = errors.New("graph: sync similar: cascade exceeds the full sync")

// fullBudget is about the comparisons of the full sync of n items (n × √n
// × probes through the pre-filter, n²/2 when exhaustive), which the
// incremental path must not exceed: in dense topics where every item is
// at the degree cap, a few new items displace edges through whole topics
// (measured: 293 s against 27 s for the full sync at n = 10,000).
func fullBudget(n int, p SimilarParams) int {
	probes := p.Probes
	if probes <= 0 {
		probes = DefaultProbes
	}
	// The floor keeps small sessions incremental: 2^18 comparisons take
	// milliseconds.
	return max(1<<18, min(n*n/2, n*int(math.Ceil(math.Sqrt(float64(n))))*probes))
}

// boundedAmong bounds, in a bounded sync, the exact comparisons among the
// compared items themselves (about 1.5 s of dot products at 384
// dimensions): a bulk ingest of 90,000 items would otherwise cost 4·10^9
// of them. Past it the store's index alone finds the pairs among new
// items (the embedded index is caught up before every query; Neo4j's
// vector index is eventually consistent and may miss some until the next
// exact sync). Fixed: a cost bound, not a decision threshold.
const boundedAmong = 1 << 22

// queryActive finds the pairs over the threshold of active[from:]: through
// the index against the whole session, and (among) exactly against every
// active item.
func queryActive(ctx context.Context, s Store, sessionID string, p SimilarParams, vecs map[string][]float64, raw map[string][]float32, active []string, from int, among bool, add func(a, b string, w float64), st *SimilarStats) error {
	pending := active[from:]
	if len(pending) == 0 {
		return nil
	}
	queries := make([][]float32, len(pending))
	for i, id := range pending {
		queries[i] = raw[id]
	}
	res, err := s.NearestEvidence(ctx, sessionID, queries, p.Threshold)
	if err != nil {
		return fmt.Errorf("graph: sync similar: nearest evidence: %w", err)
	}
	for i, id := range pending {
		st.Compared += len(res[i])
		for _, nb := range res[i] {
			add(id, nb.ID, nb.Cosine)
		}
	}
	if !among {
		return nil
	}
	for i, id := range pending {
		for j, other := range active {
			if j >= from+i {
				break // each pair among the active items once
			}
			st.Compared++
			if c := dot(vecs[id], vecs[other]); c >= p.Threshold {
				add(id, other, c)
			}
		}
	}
	return nil
}

func pairList(known map[[2]string]float64) []idPair {
	out := make([]idPair, 0, len(known))
	for k, w := range known {
		out = append(out, idPair{A: k[0], B: k[1], W: w})
	}
	return out
}

// droppedEnds lists, sorted, the endpoints of stored edges the cap dropped
// that were not compared yet.
func droppedEnds(stored []Edge, kept []idPair, compared map[string][]float64) []string {
	in := make(map[[2]string]bool, len(kept))
	for _, c := range kept {
		in[[2]string{c.A, c.B}] = true
	}
	var lost []string
	for _, e := range stored {
		if in[pairKey(e.From, e.To)] {
			continue
		}
		for _, id := range []string{e.From, e.To} {
			if _, ok := compared[id]; !ok {
				lost = append(lost, id)
			}
		}
	}
	return sortedSet(lost)
}

// keptEdges turns the kept pairs into edges with the stored labels and
// returns the indexes of those without one.
func keptEdges(kept []idPair, stored []Edge, st *SimilarStats) ([]Edge, []int) {
	label := make(map[[2]string]string, len(stored))
	for _, e := range stored {
		if e.Label != "" {
			label[pairKey(e.From, e.To)] = e.Label
		}
	}
	out := make([]Edge, len(kept))
	var todo []int
	for i, c := range kept {
		out[i] = Edge{From: c.A, To: c.B, Kind: SimilarTo, Weight: c.W}
		if l, ok := label[[2]string{c.A, c.B}]; ok {
			out[i].Label = l
			st.Reused++
		} else {
			todo = append(todo, i)
		}
	}
	st.Edges = len(out)
	return out, todo
}

// edgeEnds lists, sorted, the endpoints of out[idx].
func edgeEnds(out []Edge, idx []int) []string {
	ids := make([]string, 0, 2*len(idx))
	for _, i := range idx {
		ids = append(ids, out[i].From, out[i].To)
	}
	return sortedSet(ids)
}

// changedScope is the ReplaceSimilar call that turns the stored edges into
// out: the scope is every endpoint of an edge added, dropped or changed
// (weight or label), and the edges written are those of out inside it.
// Unchanged edges with an endpoint outside the scope are left alone.
func changedScope(stored, out []Edge) ([]string, []Edge) {
	old := make(map[[2]string]Edge, len(stored))
	for _, e := range stored {
		old[pairKey(e.From, e.To)] = e
	}
	var ends []string
	seen := make(map[[2]string]bool, len(out))
	for _, e := range out {
		k := pairKey(e.From, e.To)
		seen[k] = true
		if o, ok := old[k]; !ok || o.Weight != e.Weight || o.Label != e.Label {
			ends = append(ends, e.From, e.To)
		}
	}
	for k := range old {
		if !seen[k] {
			ends = append(ends, k[0], k[1])
		}
	}
	scope := sortedSet(ends)
	var write []Edge
	for _, e := range out {
		if _, a := slices.BinarySearch(scope, e.From); a {
			if _, b := slices.BinarySearch(scope, e.To); b {
				write = append(write, e)
			}
		}
	}
	return scope, write
}

// refineSome is refineStrengths for the affected items only: an item
// whose labelled edges did not change keeps its refined strength. Only
// the record shards of the affected items are read, and written (into w).
func refineSome(ctx context.Context, s Store, sessionID string, affected []string, edges []Edge, ref Refinement, w *Writes) error {
	if len(affected) == 0 {
		return nil
	}
	var touching []Edge
	need := slices.Clone(affected)
	for _, e := range edges {
		_, a := slices.BinarySearch(affected, e.From)
		_, b := slices.BinarySearch(affected, e.To)
		if (a || b) && (e.Label == LabelEntailment || e.Label == LabelContradiction) {
			touching = append(touching, e)
			need = append(need, e.From, e.To)
		}
	}
	// The two reads are independent: a round trip each on Neo4j, on the
	// sync's path before its commit.
	var (
		evs        []Evidence
		rec        map[string]strengthRecord
		shards     map[string]map[string]strengthRecord
		errE, errR error
		wg         sync.WaitGroup
	)
	wg.Go(func() { evs, errE = s.EvidenceByIDs(ctx, sessionID, sortedSet(need)) })
	wg.Go(func() { rec, shards, errR = loadStrengthRecords(ctx, s, sessionID, affected) })
	wg.Wait()
	if err := errors.Join(errE, errR); err != nil {
		return err
	}
	support, against := independentWeights(evs, touching)
	var mine []Evidence
	for _, e := range evs {
		if _, ok := slices.BinarySearch(affected, e.ID); ok {
			mine = append(mine, e)
		}
	}
	next, updates := nextStrengths(mine, rec, support, against, ref)
	if len(updates) > 0 {
		w.Strengths = updates
	}
	return strengthBlobs(w, shards, next)
}

func sortedSet(ids []string) []string {
	out := slices.Clone(ids)
	slices.Sort(out)
	return slices.Compact(out)
}

// unlabelled counts the edges without an NLI label.
func unlabelled(es []Edge) int {
	n := 0
	for _, e := range es {
		if e.Label == "" {
			n++
		}
	}
	return n
}
