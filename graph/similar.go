package graph

import (
	"github.com/lethe-research/lethe/contract"

	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"
	"sync"
)

// NLI labels of SIMILAR_TO edges.
const (
	LabelEntailment    = "entailment"
	LabelContradiction = "contradiction"
	LabelNeutral       = "neutral"
)

// TextPair is one pair handed to an NLI classifier: does Premise entail,
// contradict or say nothing about Hypothesis?
type TextPair struct {
	Premise    string
	Hypothesis string
}

// NLIClassifier labels text pairs with LabelEntailment, LabelContradiction
// or LabelNeutral, one label per pair, in order.
type NLIClassifier interface {
	Classify(ctx context.Context, pairs []TextPair) ([]string, error)
}

// SimilarParams tune SyncSimilar.
type SimilarParams struct {
	// Threshold is the cosine at or above which two evidence items are
	// linked by SIMILAR_TO (e.g. 0.80).
	Threshold float64
	// MaxPerNode caps the SIMILAR_TO degree of every evidence item; the
	// strongest edges win (0 = no cap).
	MaxPerNode int
	// ClusterSize is the target number of items per pre-filter cluster;
	// 0 means about √n clusters of about √n items.
	ClusterSize int
	// Probes is how many of its nearest centroids each item is compared
	// through (0 = DefaultProbes). With k clusters and Probes >= k the
	// comparison is exhaustive.
	Probes int
	// NLIBatch is the number of pairs per Classify call (0 = 64).
	NLIBatch int
	// MaxClassify bounds the pairs sent to the classifier in one sync,
	// strongest edges first, so that a sync after a large ingest stays
	// bounded; the rest wait for later syncs (0 = no bound).
	MaxClassify int
	// Refine is how labelled edges move evidence strengths (the session's
	// algebra.corroboration_boost and algebra.contradiction_penalty); nil
	// means DefaultRefinement.
	Refine *Refinement
	// Progress, when set, is called between the steps of a long sync (each
	// nearest-neighbour round, each NLI batch): the activity heartbeats
	// from it.
	Progress func()
	// Full forces the full recomputation even when a watermark allows the
	// incremental sync (tests compare the two; an operator can repair a
	// session with it).
	Full bool
	// Requery asks the index again for the items a sync displaces even
	// where the store keeps their pairs (Store.KeepsPairs; tests compare
	// the two ways).
	Requery bool
	// ExactMax is the session size (evidence items) up to which every
	// sync is exact: the incremental sync follows the degree cap's cascade
	// to its end, and falls back to the full sync when that would cost
	// more. Past it the cascade is bounded by CascadeItems and the full
	// sync runs only on a session's first sync, a changed threshold, cap
	// or dimension, or a late item. 0: always exact (inputs older than
	// algebra.similar_exact_max).
	ExactMax int
	// CascadeItems bounds, past ExactMax, how many displaced items one
	// incremental sync re-queries (the rest are cut: SimilarStats.CascadeCut).
	CascadeItems int
}

// bounded says whether a sync of n items bounds its cascade.
func (p SimilarParams) bounded(n int) bool { return p.ExactMax > 0 && n > p.ExactMax }

// Refinement is the strength refinement of phase 4 (contract.Refinement: it
// travels in the SyncSimilar and Finalize inputs).
type Refinement = contract.Refinement

// DefaultRefinement is StrengthBoost and StrengthPenalty.
func DefaultRefinement() Refinement {
	return Refinement{Boost: StrengthBoost, Penalty: StrengthPenalty}
}

// refinement is p.Refine, or the default.
func (p SimilarParams) refinement() Refinement {
	if p.Refine == nil {
		return DefaultRefinement()
	}
	return *p.Refine
}

// DefaultProbes is the default SimilarParams.Probes. Not a decision
// threshold: it trades the pre-filter's speed against its recall of pairs
// over the same similarity threshold (exhaustive when k <= probes); see
// docs/parameters.md.
const DefaultProbes = 2

// Default strength refinement (DefaultRefinement): the defaults of the
// session parameters algebra.corroboration_boost and
// algebra.contradiction_penalty.
const (
	StrengthBoost   = 0.30
	StrengthPenalty = 0.10
)

// StrengthBaseBlob is the blob key under which SyncSimilar keeps the
// pre-refinement strength of every evidence item, so that refinement is a
// function of (base strength, current edges) and repeating a sync changes
// nothing.
// The records are kept in strengthShards blobs under this key and a
// shard suffix (similar_strength.go); a session written before the shards
// has the single blob, moved into them by the next sync.
const StrengthBaseBlob = "graph/similar/strength-base"

// NLILabelBlob is the blob key of a session's NLI label cache: the label of
// every pair ever classified, keyed by the two content hashes (PairKey), so
// that no pair is paid for twice, whether its edge was dropped by the
// degree cap and came back, or the activity was retried after a crash
// mid-sync (the cache is written after every batch).
const NLILabelBlob = "graph/similar/nli-labels"

// SimilarStats says what a sync did.
type SimilarStats struct {
	Evidence   int    // evidence items with an embedding
	Clusters   int    // pre-filter clusters (1 = exhaustive comparison)
	Compared   int    // pairs whose cosine was computed
	Edges      int    // SIMILAR_TO edges after the sync
	Classified int    // pairs sent to the NLI classifier
	Reused     int    // labels kept from the previous sync (same pair)
	Cached     int    // labels found in the label cache (NLILabelBlob)
	Deferred   int    // unlabelled pairs left for a later sync (MaxClassify)
	NLIError   string // classification failed: edges were kept without new labels
	Refined    int    // evidence strengths changed by refinement
	New        int    // incremental sync: evidence read since the watermark
	// Incremental says the sync compared only new evidence (and the items
	// it displaced) through the store's nearest-neighbour index.
	Incremental bool
	// Local says the incremental sync ran the degree cap around the new
	// evidence only, from the stored edges it touches (similar_local.go).
	Local bool
	// Displaced is how many items the local sync compared besides the new
	// ones, because the cap changed one of their pairs (the cascade).
	Displaced int
	// CascadeCut is how many displaced items a bounded sync did not
	// re-query (SimilarParams.CascadeItems): 0 means the result is exact
	// up to the index's recall.
	CascadeCut int
}

// SyncSimilar recomputes the SIMILAR_TO edges of a session in four phases:
//
//  1. prepare: read the evidence, cluster it around ~√n centroids (seeded
//     deterministically by farthest-point traversal from the first item, then
//     three spherical k-means rounds) and compare only pairs whose items
//     share a cluster among their Probes nearest centroids; keep pairs with
//     cosine >= Threshold, at most MaxPerNode per item (strongest first).
//  2. classify (nli != nil): label the pairs that have no label from a
//     previous sync, from the label cache when the pair was classified
//     before, else by the classifier, strongest edges first and at most
//     MaxClassify of them. A classifier error is not fatal: the edges are
//     committed without the new labels and SimilarStats.NLIError says why.
//  3. refine: strength = base strength, boosted for entailment by items of a
//     different source (host), lowered for contradiction, clamped to [0,1]
//     (Refinement.Strength with p.Refine).
//  4. commit: the edges over all the session's evidence, the strengths and
//     the watermark, in one Store.Commit.
//
// The result depends only on the stored evidence and the classifier's
// answers, never on map order or timing.
func SyncSimilar(ctx context.Context, s Store, sessionID string, p SimilarParams, nli NLIClassifier) (SimilarStats, error) {
	var st SimilarStats
	if p.Threshold <= 0 || p.Threshold > 1 {
		return st, fmt.Errorf("graph: sync similar: threshold %v outside (0,1]", p.Threshold)
	}
	// The count is read beside the watermark, before the new evidence:
	// an item written between the count and that read makes the equation
	// below fail and costs a full sync, never a missed item.
	var (
		mark         similarMark
		ok           bool
		total        int
		errM, errCnt error
		wg           sync.WaitGroup
	)
	wg.Go(func() { mark, ok, errM = loadMark(ctx, s, sessionID) })
	wg.Go(func() { total, errCnt = s.EvidenceCount(ctx, sessionID) })
	wg.Wait()
	if errM != nil {
		return st, fmt.Errorf("graph: sync similar: %w", errM)
	}
	if ok && !p.Full && mark.matches(p) {
		if errCnt != nil {
			return st, fmt.Errorf("graph: sync similar: count evidence: %w", errCnt)
		}
		fresh, err := s.EvidenceSince(ctx, sessionID, mark.Iter)
		if err != nil {
			return st, fmt.Errorf("graph: sync similar: read new evidence: %w", err)
		}
		if total-len(fresh) == mark.Total-mark.AtOrAfter {
			st, err := syncIncremental(ctx, s, sessionID, p, nli, mark, fresh, total)
			if !errors.Is(err, errCascade) {
				return st, err
			}
		}
	}
	return syncFull(ctx, s, sessionID, p, nli)
}

// syncFull is SyncSimilar over all of the session's evidence; it ends by
// writing the watermark that lets the next sync be incremental.
func syncFull(ctx context.Context, s Store, sessionID string, p SimilarParams, nli NLIClassifier) (SimilarStats, error) {
	var st SimilarStats
	evs, err := s.Evidence(ctx, sessionID, "")
	if err != nil {
		return st, fmt.Errorf("graph: sync similar: read evidence: %w", err)
	}
	old, err := s.Edges(ctx, sessionID)
	if err != nil {
		return st, fmt.Errorf("graph: sync similar: read edges: %w", err)
	}

	// Phase 1: prepare.
	out, todo, pairs := prepareSimilar(evs, old, p, &st)

	// Phase 2: classify.
	if nli != nil && len(todo) > 0 {
		if err := labelSimilar(ctx, s, sessionID, nli, evs, out, todo, p, &st); err != nil {
			return st, err
		}
	}

	// Phases 3 and 4: the edges, the refined strengths and the watermark,
	// committed together.
	p.progress()
	w := Writes{SimilarScope: make([]string, len(evs)), Similar: out, RecountEvidence: true}
	if s.KeepsPairs() {
		w.Pairs, w.ResetPairs = pairs, true
	}
	for i := range evs {
		w.SimilarScope[i] = evs[i].ID
	}
	if err := refineStrengths(ctx, s, sessionID, evs, out, p.refinement(), &w); err != nil {
		return st, fmt.Errorf("graph: sync similar: refine: %w", err)
	}
	if dim := unitDim(evs); dim > 0 {
		m := newMark(p, dim, len(evs), evs, similarMark{})
		m.Counted, m.Edges, m.Unlabelled = true, len(out), unlabelled(out)
		m.Pairs = w.ResetPairs
		if err := putMark(&w, m); err != nil {
			return st, fmt.Errorf("graph: sync similar: %w", err)
		}
	}
	if err := commitSync(ctx, s, sessionID, w, &st); err != nil {
		return st, err
	}
	return st, nil
}

// commitSync writes a sync's result in one commit (Store.Commit): the
// edges, the strengths with the records they were refined from, and the
// watermark land together or not at all, so no crash leaves a watermark
// that disagrees with the edges, or strengths without their records. A
// sync that changes nothing writes nothing.
func commitSync(ctx context.Context, s Store, sessionID string, w Writes, st *SimilarStats) error {
	st.Refined = len(w.Strengths)
	if w.Empty() {
		return nil
	}
	if err := s.Commit(ctx, sessionID, w); err != nil {
		return fmt.Errorf("graph: sync similar: commit: %w", err)
	}
	return nil
}

// prepareSimilar is phase 1 of SyncSimilar: the capped SIMILAR_TO edges in
// canonical (From < To) form, with the labels a previous sync already paid
// the classifier for, the indexes into the edges that still need one, and
// every pair over the threshold (kept or not), for a store that keeps them.
func prepareSimilar(evs []Evidence, old []Edge, p SimilarParams, st *SimilarStats) ([]Edge, []int, []Edge) {
	items := unitRows(evs)
	st.Evidence = len(items.vec)
	cands, clusters, compared := similarPairs(items, p)
	st.Clusters, st.Compared = clusters, compared
	pairs := make([]Edge, len(cands))
	for k, c := range cands {
		pairs[k] = Edge{From: evs[items.idx[c.i]].ID, To: evs[items.idx[c.j]].ID, Kind: SimilarTo, Weight: c.cos}
	}
	edges := capByID(evs, items, cands, p.MaxPerNode)
	st.Edges = len(edges)
	out, todo := reuseLabels(evs, items, edges, old, st)
	return out, todo, pairs
}

// reuseLabels turns candidates into edges and carries over the label of an
// unchanged pair: classification is the expensive part of a sync, and a
// pair's label depends only on its two (immutable) texts.
func reuseLabels(evs []Evidence, items unit, edges []candidate, old []Edge, st *SimilarStats) ([]Edge, []int) {
	oldLabel := map[[2]string]string{}
	for _, e := range old {
		if e.Kind == SimilarTo && e.Label != "" {
			oldLabel[pairKey(e.From, e.To)] = e.Label
		}
	}
	out := make([]Edge, len(edges))
	var todo []int
	for i, c := range edges {
		a, b := evs[items.idx[c.i]], evs[items.idx[c.j]]
		out[i] = Edge{From: a.ID, To: b.ID, Kind: SimilarTo, Weight: c.cos}
		if a.ID > b.ID {
			out[i].From, out[i].To = b.ID, a.ID
		}
		if l, ok := oldLabel[pairKey(a.ID, b.ID)]; ok {
			out[i].Label = l
			st.Reused++
		} else {
			todo = append(todo, i)
		}
	}
	return out, todo
}

// labelSimilar is phase 2 of SyncSimilar: cached labels first, then the
// classifier on at most p.MaxClassify of the remaining pairs, the cache
// saved after every batch.
func labelSimilar(ctx context.Context, s Store, sessionID string, nli NLIClassifier, evs []Evidence, out []Edge, todo []int, p SimilarParams, st *SimilarStats) error {
	cache, err := loadLabelCache(ctx, s, sessionID)
	if err != nil {
		return fmt.Errorf("graph: sync similar: %w", err)
	}
	byID := evidenceByID(evs)
	todo = applyCachedLabels(out, todo, byID, cache, st)
	todo, st.Deferred = selectForNLI(out, todo, p.MaxClassify)
	save := func() error {
		data, err := json.Marshal(cache) // sorted keys: deterministic bytes
		if err != nil {
			return err
		}
		return s.PutBlob(ctx, sessionID, NLILabelBlob, data)
	}
	return classifySimilar(ctx, nli, byID, out, todo, p.NLIBatch, cache, save, st)
}

// loadLabelCache reads the session's NLI label cache; none yet is empty.
func loadLabelCache(ctx context.Context, s Store, sessionID string) (map[string]string, error) {
	cache := map[string]string{}
	raw, err := s.GetBlob(ctx, sessionID, NLILabelBlob)
	switch {
	case errors.Is(err, ErrNotFound):
	case err != nil:
		return nil, fmt.Errorf("read %s: %w", NLILabelBlob, err)
	default:
		if err := json.Unmarshal(raw, &cache); err != nil {
			return nil, fmt.Errorf("decode %s: %w", NLILabelBlob, err)
		}
	}
	return cache, nil
}

// PairKey is the label-cache key of two evidence items: their content
// hashes (ids when a hash is missing), in sorted order. A label depends
// only on the two texts, which the hashes name.
func PairKey(a, b Evidence) string {
	ka, kb := a.ContentHash, b.ContentHash
	if ka == "" || kb == "" {
		ka, kb = a.ID, b.ID
	}
	if ka > kb {
		ka, kb = kb, ka
	}
	return ka + "|" + kb
}

// applyCachedLabels labels out[todo] from the cache and returns the
// indexes still without a label.
func applyCachedLabels(out []Edge, todo []int, byID map[string]*Evidence, cache map[string]string, st *SimilarStats) []int {
	var rest []int
	for _, ei := range todo {
		a, b := byID[out[ei].From], byID[out[ei].To]
		if a != nil && b != nil {
			if l := normalizeLabel(cache[PairKey(*a, *b)]); l != "" {
				out[ei].Label = l
				st.Cached++
				continue
			}
		}
		rest = append(rest, ei)
	}
	return rest
}

// selectForNLI orders the unlabelled edges strongest first (ties in pair
// order) and keeps at most max of them (max ≤ 0: all); it returns the kept
// indexes and how many were deferred. The strongest pairs come first
// because they are the likeliest to corroborate or contradict and carry
// the most weight in the refinement and in PPR.
func selectForNLI(out []Edge, todo []int, max int) ([]int, int) {
	sel := slices.Clone(todo)
	slices.SortStableFunc(sel, func(a, b int) int { return cmp.Compare(out[b].Weight, out[a].Weight) })
	if max <= 0 || len(sel) <= max {
		return sel, 0
	}
	return sel[:max], len(sel) - max
}

// classifySimilar labels out[todo] in batches, recording each batch's
// labels in the cache and saving it (save) before the next batch. A
// classifier failure stops labelling but is not an error, because
// unlabelled edges are still useful and a later sync retries them; only a
// cancelled context or a failed save is, since then the caller is going
// away or the store is failing.
func classifySimilar(ctx context.Context, nli NLIClassifier, byID map[string]*Evidence, out []Edge, todo []int, batch int, cache map[string]string, save func() error, st *SimilarStats) error {
	if batch <= 0 {
		batch = 64
	}
	for start := 0; start < len(todo); start += batch {
		chunk := todo[start:min(start+batch, len(todo))]
		labels, err := classifyChunk(ctx, nli, byID, out, chunk)
		if err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return fmt.Errorf("graph: sync similar: classify: %w", errors.Join(err, ctxErr))
			}
			st.NLIError = err.Error()
			return nil
		}
		for k, ei := range chunk {
			l := normalizeLabel(labels[k])
			out[ei].Label = l
			if l != "" {
				cache[PairKey(*byID[out[ei].From], *byID[out[ei].To])] = l
			}
		}
		st.Classified += len(chunk)
		if err := save(); err != nil {
			return fmt.Errorf("graph: sync similar: save labels: %w", err)
		}
	}
	return nil
}

// classifyChunk asks for one batch of labels and treats a short or long
// answer as a failure, so that a label is never attached to the wrong pair.
func classifyChunk(ctx context.Context, nli NLIClassifier, byID map[string]*Evidence, out []Edge, chunk []int) ([]string, error) {
	pairs := make([]TextPair, len(chunk))
	for k, ei := range chunk {
		// Both endpoints are evidence of evs: prepareSimilar built the edges from it.
		pairs[k] = TextPair{Premise: byID[out[ei].From].Content, Hypothesis: byID[out[ei].To].Content}
	}
	labels, err := nli.Classify(ctx, pairs)
	if err == nil && len(labels) != len(pairs) {
		err = fmt.Errorf("classifier returned %d labels for %d pairs", len(labels), len(pairs))
	}
	return labels, err
}

// evidenceByID indexes evs by id; the pointers alias evs.
func evidenceByID(evs []Evidence) map[string]*Evidence {
	byID := make(map[string]*Evidence, len(evs))
	for i := range evs {
		byID[evs[i].ID] = &evs[i]
	}
	return byID
}

func normalizeLabel(l string) string {
	switch strings.ToLower(strings.TrimSpace(l)) {
	case LabelEntailment, "entails", "entailed", "supports":
		return LabelEntailment
	case LabelContradiction, "contradicts", "contradicted", "contradict":
		return LabelContradiction
	case LabelNeutral:
		return LabelNeutral
	}
	return ""
}

func pairKey(a, b string) [2]string {
	if a > b {
		a, b = b, a
	}
	return [2]string{a, b}
}

// unit holds unit-normalised embeddings (float64) of the evidence that has
// one of the common dimension, with their indexes into the evidence slice.
type unit struct {
	vec [][]float64
	idx []int
}

// unitDim is the common dimension: that of the first embedded item.
func unitDim(evs []Evidence) int {
	for _, e := range evs {
		if len(e.Embedding) > 0 {
			return len(e.Embedding)
		}
	}
	return 0
}

func unitRows(evs []Evidence) unit {
	dim := unitDim(evs)
	var u unit
	for i, e := range evs {
		if dim == 0 || len(e.Embedding) != dim {
			continue
		}
		if v := UnitVector(e.Embedding); v != nil {
			u.vec = append(u.vec, v)
			u.idx = append(u.idx, i)
		}
	}
	return u
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

type candidate struct {
	i, j int // indexes into unit rows, i < j
	cos  float64
}

// similarPairs returns the pairs with cosine >= threshold among the items,
// compared through centroid pre-filtering; it also reports the number of
// clusters and of pairs compared.
func similarPairs(u unit, p SimilarParams) ([]candidate, int, int) {
	n := len(u.vec)
	if n < 2 {
		return nil, min(n, 1), 0
	}
	k := int(math.Ceil(math.Sqrt(float64(n))))
	if p.ClusterSize > 0 {
		k = (n + p.ClusterSize - 1) / p.ClusterSize
	}
	probes := p.Probes
	if probes <= 0 {
		probes = DefaultProbes
	}
	if k <= probes || k < 2 {
		out, compared := exhaustivePairs(u, p.Threshold)
		return out, 1, compared
	}
	cents := kmeans(u.vec, k)
	probeOf, members := probeLists(u.vec, cents, probes)
	out, compared := clusteredPairs(u, probeOf, members, p.Threshold)
	slices.SortFunc(out, comparePairs)
	return out, len(cents), compared
}

// exhaustivePairs compares every pair: when each item would probe every
// cluster anyway, clustering only costs time.
func exhaustivePairs(u unit, threshold float64) ([]candidate, int) {
	var out []candidate
	compared := 0
	n := len(u.vec)
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			compared++
			if c := dot(u.vec[i], u.vec[j]); c >= threshold {
				out = append(out, candidate{i, j, c})
			}
		}
	}
	return out, compared
}

// probeLists gives each item its `probes` nearest centroids, nearest first,
// and files it as a member of the nearest one only, so that an item is
// compared through several clusters without being stored in several.
func probeLists(vec [][]float64, cents [][]float64, probes int) (probeOf, members [][]int) {
	k := len(cents)
	probeOf = make([][]int, len(vec))
	members = make([][]int, k)
	order := make([]int, k)
	sims := make([]float64, k)
	for i, v := range vec {
		for c := range cents {
			sims[c] = dot(v, cents[c])
			order[c] = c
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(sims[b], sims[a]) })
		probeOf[i] = slices.Clone(order[:min(probes, k)])
		members[probeOf[i][0]] = append(members[probeOf[i][0]], i)
	}
	return probeOf, members
}

// clusteredPairs compares each item with the members of the clusters it
// probes. A pair reachable from both ends is compared once, so that Compared
// counts real work and no pair is emitted twice.
func clusteredPairs(u unit, probeOf, members [][]int, threshold float64) ([]candidate, int) {
	var out []candidate
	compared := 0
	primary := func(i int) int { return probeOf[i][0] }
	for i := range u.vec {
		for _, c := range probeOf[i] {
			for _, j := range members[c] {
				if j == i {
					continue
				}
				// The pair is also reachable from j when j probes i's cluster;
				// then only the lower index compares it.
				if slices.Contains(probeOf[j], primary(i)) && j < i {
					continue
				}
				compared++
				if cs := dot(u.vec[i], u.vec[j]); cs >= threshold {
					a, b := min(i, j), max(i, j)
					out = append(out, candidate{a, b, cs})
				}
			}
		}
	}
	return out, compared
}

// comparePairs is pair order (i, then j): the canonical order of candidates,
// which keeps the edges written independent of clustering and map order.
func comparePairs(a, b candidate) int {
	if c := cmp.Compare(a.i, b.i); c != 0 {
		return c
	}
	return cmp.Compare(a.j, b.j)
}

// kmeans runs spherical k-means on unit vectors with farthest-point seeding
// from item 0; it is deterministic.
func kmeans(vec [][]float64, k int) [][]float64 {
	n, dim := len(vec), len(vec[0])
	cents := [][]float64{slices.Clone(vec[0])}
	best := make([]float64, n) // max similarity to a chosen seed
	for i := range vec {
		best[i] = dot(vec[i], cents[0])
	}
	for len(cents) < k {
		far, farSim := -1, math.Inf(1)
		for i, b := range best {
			if b < farSim {
				far, farSim = i, b
			}
		}
		if far < 0 || farSim >= 1-1e-12 { // fixed numerical guard, not a parameter
			break // fewer distinct points than k
		}
		c := slices.Clone(vec[far])
		cents = append(cents, c)
		for i := range vec {
			best[i] = max(best[i], dot(vec[i], c))
		}
	}
	k = len(cents)
	assign := make([]int, n)
	for round := 0; round < 3; round++ {
		for i, v := range vec {
			bc, bs := 0, math.Inf(-1)
			for c := range cents {
				if s := dot(v, cents[c]); s > bs {
					bc, bs = c, s
				}
			}
			assign[i] = bc
		}
		sum := make([][]float64, k)
		for c := range sum {
			sum[c] = make([]float64, dim)
		}
		for i, v := range vec {
			s := sum[assign[i]]
			for d := range v {
				s[d] += v[d]
			}
		}
		for c := range cents {
			nn := math.Sqrt(dot(sum[c], sum[c]))
			if nn == 0 {
				continue // empty cluster keeps its centroid
			}
			for d := range sum[c] {
				sum[c][d] /= nn
			}
			cents[c] = sum[c]
		}
	}
	return cents
}

// capByID is capPairs on row candidates: the degree cap with ties broken
// by evidence id, as the incremental sync breaks them. The result is in
// pair order.
func capByID(evs []Evidence, u unit, cands []candidate, maxPer int) []candidate {
	if maxPer <= 0 {
		return cands
	}
	back := make(map[[2]string]candidate, len(cands))
	pairs := make([]idPair, len(cands))
	for k, c := range cands {
		pairs[k] = newIDPair(evs[u.idx[c.i]].ID, evs[u.idx[c.j]].ID, c.cos)
		back[[2]string{pairs[k].A, pairs[k].B}] = c
	}
	kept := capPairs(pairs, maxPer)
	out := make([]candidate, len(kept))
	for k, c := range kept {
		out[k] = back[[2]string{c.A, c.B}]
	}
	slices.SortFunc(out, comparePairs)
	return out
}

// sourceKey is the independence key of a source URL: its host without
// "www.", or the trimmed string when it is not a URL. Empty means unknown.
func sourceKey(raw string) string {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return ""
	}
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		return strings.TrimPrefix(strings.ToLower(u.Hostname()), "www.")
	}
	return strings.ToLower(raw)
}

// RefineStrength is Refinement.Strength with DefaultRefinement.
func RefineStrength(base, support, against float64) float64 {
	return DefaultRefinement().Strength(base, support, against)
}

// strengthRecord is what StrengthBaseBlob keeps per evidence id: the base
// strength and the refined value last written. When the stored strength no
// longer equals Refined, something else (re-scoring) changed it, and the
// stored strength becomes the new base.
type strengthRecord struct {
	Base    float64 `json:"b"`
	Refined float64 `json:"r"`
	Prev    float64 `json:"p"` // refined value written by the sync before, in case that write never landed
}

// refineStrengths is phase 3 of SyncSimilar. Strengths are recomputed from
// the recorded bases rather than from the stored values, so that a repeated
// sync is a no-op instead of compounding the boost; the changed strengths
// and the records they came from go into w.
func refineStrengths(ctx context.Context, s Store, sessionID string, evs []Evidence, edges []Edge, ref Refinement, w *Writes) error {
	ids := make([]string, len(evs))
	for i := range evs {
		ids[i] = evs[i].ID
	}
	rec, shards, err := loadStrengthRecords(ctx, s, sessionID, ids)
	if err != nil {
		return err
	}
	support, against := independentWeights(evs, edges)
	next, updates := nextStrengths(evs, rec, support, against, ref)
	if len(updates) > 0 {
		w.Strengths = updates
	}
	return strengthBlobs(w, shards, next)
}

// independentWeights sums, per evidence id, the weights of labelled edges to
// items from other sources: agreement with oneself (same host, or unknown
// source) is not corroboration.
func independentWeights(evs []Evidence, edges []Edge) (support, against map[string]float64) {
	byID := evidenceByID(evs)
	support = map[string]float64{}
	against = map[string]float64{}
	add := func(self, selfKey, otherKey, label string, w float64) {
		if otherKey == "" || otherKey == selfKey {
			return // not an independent source
		}
		if label == LabelEntailment {
			support[self] += w
		} else {
			against[self] += w
		}
	}
	for _, e := range edges {
		if e.Label != LabelEntailment && e.Label != LabelContradiction {
			continue
		}
		a, b := byID[e.From], byID[e.To]
		if a == nil || b == nil {
			continue
		}
		ka, kb := sourceKey(a.SourceURL), sourceKey(b.SourceURL)
		w := math.Max(0, e.Weight)
		add(a.ID, ka, kb, e.Label, w)
		add(b.ID, kb, ka, e.Label, w)
	}
	return support, against
}

// nextStrengths derives each item's new record and the stored strengths to
// change. A stored strength that matches neither the last refined value nor
// the one before was changed by someone else (re-scoring), so it becomes the
// new base instead of being overwritten.
func nextStrengths(evs []Evidence, rec map[string]strengthRecord, support, against map[string]float64, ref Refinement) (map[string]strengthRecord, map[string]float64) {
	next := make(map[string]strengthRecord, len(evs))
	updates := map[string]float64{}
	for i := range evs {
		e := &evs[i]
		r, ok := rec[e.ID]
		if !ok || (e.Strength != r.Refined && e.Strength != r.Prev) {
			r = strengthRecord{Base: e.Strength, Refined: e.Strength}
		}
		if want := ref.Strength(r.Base, support[e.ID], against[e.ID]); want != r.Refined {
			r.Prev, r.Refined = r.Refined, want
		}
		if r.Refined != e.Strength {
			updates[e.ID] = r.Refined
		}
		next[e.ID] = r
	}
	return next, updates
}
