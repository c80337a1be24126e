package embedded

// Lane "ann" (#14): a small HNSW graph (Malkov & Yashunin, "Efficient and
// robust approximate nearest neighbor search using Hierarchical Navigable
// Small World graphs", 2016/2018: algorithms 1, 2, 4 and 5), written here
// because the Go library we tried first (github.com/coder/hnsw v0.6.1)
// ends a layer search at the first expansion that does not improve the
// best result and picks its entry point by map order: on pages of
// near-duplicate chunks it found 54-65% of the pairs over the threshold
// (docs/similarity-index.md). This one is deterministic: the levels come
// from a generator seeded per session and the graph depends only on the
// insertion order, so a rebuild after a restart is the same graph.

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/blas/blas32"
)

// hnswGraph holds unit vectors (float32 copies) and their links per layer.
type hnswGraph struct {
	m, efC int
	ml     float64
	rng    uint64
	vec    [][]float32
	links  [][][]int32 // links[node][layer]
	// held[node][layer] is what the neighbour heuristic found for a list
	// it has shrunk (zero until the list first overflows): see relink.
	held [][]heldLinks
	// fullShrink makes every overflow run the heuristic over the whole
	// list, as before held existed: the reference the test of relink
	// compares with.
	fullShrink bool
	entry      int32
	top        int // layer of entry
	visited    []uint32
	visitGen   uint32
	near       candHeap // searchLayer's scratch
	far        candHeap
}

func newHNSW(m, efC int, seed uint64) *hnswGraph {
	return &hnswGraph{m: m, efC: efC, ml: 1 / math.Log(float64(m)), rng: seed | 1, entry: -1}
}

func (h *hnswGraph) len() int { return len(h.vec) }

// maxLinks is M on the upper layers and 2M on layer 0 (the paper's Mmax0).
func (h *hnswGraph) maxLinks(layer int) int {
	if layer == 0 {
		return 2 * h.m
	}
	return h.m
}

// level draws floor(-ln(U)·mL) from a xorshift generator.
func (h *hnswGraph) level() int {
	h.rng ^= h.rng << 13
	h.rng ^= h.rng >> 7
	h.rng ^= h.rng << 17
	u := (float64(h.rng>>11) + 0.5) / (1 << 53)
	return int(-math.Log(u) * h.ml)
}

// dot32 is the dot product of two vectors of one length through gonum's
// BLAS: SIMD assembly on amd64, four times the plain loop at 384
// dimensions, and distances are most of an insertion's and a search's
// work. (Its summation order differs from the loop's; the index only
// ranks with it, and every answer's cosine is recomputed exactly.)
func dot32(a, b []float32) float32 {
	return blas32.Dot(blas32.Vector{N: len(a), Inc: 1, Data: a}, blas32.Vector{N: len(a), Inc: 1, Data: b})
}

// dist is the cosine distance of two unit vectors.
func (h *hnswGraph) dist(q []float32, n int32) float32 { return 1 - dot32(q, h.vec[n]) }

type cand struct {
	n int32
	d float32
}

// before orders candidates nearest first, ties by node.
func (a cand) before(b cand) bool { return a.d < b.d || (a.d == b.d && a.n < b.n) }

// neg reverses the order of before (nodes are >= 0, so -n reverses
// theirs): a heap of negated candidates pops the farthest first.
func (a cand) neg() cand { return cand{-a.n, -a.d} }

// candHeap is a binary min-heap by before. Written out rather than through
// container/heap, whose Push and Pop box every candidate in an interface
// (an allocation each) and call Less through it: a search pushes hundreds.
type candHeap []cand

func (x *candHeap) push(c cand) {
	h := append(*x, c)
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if !h[i].before(h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
	*x = h
}

func (x *candHeap) pop() cand {
	h := *x
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	for i := 0; ; {
		m, l, r := i, 2*i+1, 2*i+2
		if l < len(h) && h[l].before(h[m]) {
			m = l
		}
		if r < len(h) && h[r].before(h[m]) {
			m = r
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	*x = h
	return top
}

// add inserts a unit vector as the next node (algorithm 1).
func (h *hnswGraph) add(v []float32) {
	n := int32(len(h.vec))
	lvl := h.level()
	h.vec = append(h.vec, v)
	h.links = append(h.links, make([][]int32, lvl+1))
	h.held = append(h.held, make([]heldLinks, lvl+1))
	if h.entry < 0 {
		h.entry, h.top = n, lvl
		return
	}
	ep := []cand{{h.entry, h.dist(v, h.entry)}}
	for l := h.top; l > lvl; l-- {
		ep = h.searchLayer(v, ep, 1, l)
	}
	for l := min(lvl, h.top); l >= 0; l-- {
		w := h.searchLayer(v, ep, h.efC, l)
		chosen, _ := h.heuristic(sortedCands(w), h.m)
		h.links[n][l] = candNodes(chosen)
		for _, c := range chosen {
			h.link(c.n, cand{n, c.d}, l)
		}
		ep = w
	}
	if lvl > h.top {
		h.entry, h.top = n, lvl
	}
}

// heldLinks records, for a link list the heuristic shrank, each link's
// distance to the list's node and how many of the links (a prefix) the
// heuristic selected; the rest filled the list from the pruned ones.
type heldLinks struct {
	d    []float32
	good int
}

// link adds c (a node and its distance to a) to a's links on layer l,
// shrinking them by the heuristic when they overflow.
func (h *hnswGraph) link(a int32, c cand, l int) {
	ls := h.links[a][l]
	mx := h.maxLinks(l)
	if len(ls) < mx {
		h.links[a][l] = append(ls, c.n)
		return
	}
	hl := &h.held[a][l]
	var out []cand
	var good int
	if hl.d == nil || h.fullShrink {
		cs := make([]cand, len(ls), len(ls)+1)
		for i, b := range ls {
			cs[i] = cand{b, h.dist(h.vec[a], b)}
		}
		out, good = h.heuristic(sortedCands(append(cs, c)), mx)
	} else {
		out, good = h.relink(ls, *hl, c, mx)
	}
	h.links[a][l] = candNodes(out)
	hl.d = hl.d[:0]
	for _, o := range out {
		hl.d = append(hl.d, o.d)
	}
	hl.good = good
}

// sortedCands sorts cs nearest first (ties by node: a total order).
func sortedCands(cs []cand) []cand {
	slices.SortFunc(cs, func(a, b cand) int {
		if a.before(b) {
			return -1
		}
		if b.before(a) {
			return 1
		}
		return 0
	})
	return cs
}

func candNodes(cs []cand) []int32 {
	out := make([]int32, len(cs))
	for i, c := range cs {
		out[i] = c.n
	}
	return out
}

// heuristic is the neighbour heuristic (algorithm 4, keeping pruned
// connections) over candidates sorted nearest first: a candidate is
// selected when it is nearer to the base than to every one selected
// before it, so that links reach out of a tight cluster; the pruned fill
// up to m. It returns the selected, then the pruned, and how many were
// selected.
func (h *hnswGraph) heuristic(sorted []cand, m int) ([]cand, int) {
	var kept, pruned []cand
	for _, c := range sorted {
		if len(kept) >= m {
			break
		}
		if h.prunes(kept, c) {
			pruned = append(pruned, c)
		} else {
			kept = append(kept, c)
		}
	}
	return fill(kept, pruned, m)
}

// fill is the heuristic's answer: the selected, then the pruned up to m,
// and how many were selected.
func fill(kept, pruned []cand, m int) ([]cand, int) {
	good := len(kept)
	for _, p := range pruned {
		if len(kept) >= m {
			break
		}
		kept = append(kept, p)
	}
	return kept, good
}

// prunes says whether a selected node is nearer to c than the base is.
func (h *hnswGraph) prunes(selected []cand, c cand) bool {
	for _, k := range selected {
		if h.dist(h.vec[c.n], k.n) < c.d {
			return true
		}
	}
	return false
}

// relink is the heuristic over a full list the heuristic made (ls, with
// what it found in hl) and one more candidate c, with the same result,
// computing only what c can change. A link's verdict depends only on the
// selected links nearer than it, and the link the last shrink dropped was
// a pruned one or the farthest, which judges nothing: so every link
// nearer than c keeps its verdict, and so does every link when c is
// pruned. When c is selected, a link farther than c is judged again only
// as far as its judges changed: a selected one against c alone while no
// pruned link before it was promoted, a pruned one not at all while no
// selected link before it was demoted, and in full otherwise. An
// overflowing list took about (2M)²/2 distances; this takes about 2M.
func (h *hnswGraph) relink(ls []int32, hl heldLinks, c cand, m int) ([]cand, int) {
	var kept, pruned []cand
	// demoted and promoted say whether a link before the one judged
	// changed its verdict either way.
	seen, cGood, demoted, promoted := false, false, false, false
	judge := func(x cand, wasGood bool) {
		switch {
		case len(kept) >= m:
			return // the original loop stops here; x is dropped
		case x.n == c.n:
			seen, cGood = true, !h.prunes(kept, x)
			wasGood = cGood
		case !seen || !cGood:
			// c judges nothing after it: x keeps its verdict
		case wasGood && !promoted:
			if h.dist(h.vec[x.n], c.n) < x.d {
				wasGood, demoted = false, true
			}
		case wasGood:
			if h.prunes(kept, x) {
				wasGood, demoted = false, true
			}
		case demoted:
			if !h.prunes(kept, x) {
				wasGood, promoted = true, true
			}
		}
		if wasGood {
			kept = append(kept, x)
		} else {
			pruned = append(pruned, x)
		}
	}
	mergeHeld(ls, hl, c, judge)
	return fill(kept, pruned, m)
}

// mergeHeld calls fn on the links of a held list and c, nearest first,
// with each link's verdict: the list is its selected links then its
// pruned ones, each run sorted.
func mergeHeld(ls []int32, hl heldLinks, c cand, fn func(x cand, wasGood bool)) {
	at := func(k int) cand { return cand{ls[k], hl.d[k]} }
	i, j, cDone := 0, hl.good, false
	for {
		var x cand
		good, ok := false, true
		switch {
		case i < hl.good && (j >= len(ls) || at(i).before(at(j))):
			x, good = at(i), true
		case j < len(ls):
			x = at(j)
		default:
			ok = false
		}
		if !cDone && (!ok || c.before(x)) {
			fn(c, false)
			cDone = true
			continue
		}
		if !ok {
			return
		}
		if good {
			i++
		} else {
			j++
		}
		fn(x, good)
	}
}

// searchLayer is algorithm 2: the ef nearest nodes to q on layer l
// reachable from ep, nearest first.
func (h *hnswGraph) searchLayer(q []float32, ep []cand, ef, l int) []cand {
	h.visitGen++
	if len(h.visited) < len(h.vec) || h.visitGen == 0 {
		h.visited = make([]uint32, len(h.vec)+len(h.vec)/2+16)
		h.visitGen = 1
	}
	// near pops the nearest candidate to expand; far holds the ef best
	// found, negated so that its top is the farthest of them. Their
	// buffers are reused: searches of one graph never overlap (visited is
	// shared the same way).
	near, far := h.near[:0], h.far[:0]
	for _, c := range ep {
		h.visited[c.n] = h.visitGen
		near.push(c)
		far.push(c.neg())
		if len(far) > ef {
			far.pop()
		}
	}
	for len(near) > 0 {
		c := near.pop()
		if len(far) >= ef && c.d > -far[0].d {
			break
		}
		if l >= len(h.links[c.n]) {
			continue
		}
		for _, e := range h.links[c.n][l] {
			if h.visited[e] == h.visitGen {
				continue
			}
			h.visited[e] = h.visitGen
			d := h.dist(q, e)
			if len(far) < ef || d < -far[0].d {
				near.push(cand{e, d})
				far.push(cand{e, d}.neg())
				if len(far) > ef {
					far.pop()
				}
			}
		}
	}
	out := make([]cand, len(far))
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = far.pop().neg()
	}
	h.near, h.far = near, far
	return out
}

// search returns the k nearest nodes to the unit vector q, nearest first,
// searching layer 0 with a candidate list of max(ef, k) (algorithm 5).
func (h *hnswGraph) search(q []float32, k, ef int) []cand {
	if h.entry < 0 {
		return nil
	}
	ep := []cand{{h.entry, h.dist(q, h.entry)}}
	for l := h.top; l > 0; l-- {
		ep = h.searchLayer(q, ep, 1, l)
	}
	w := h.searchLayer(q, ep, max(ef, k), 0)
	return w[:min(k, len(w))]
}

// unit32 is v scaled to unit length in float32, or nil.
func unit32(v []float32, inv float64) []float32 {
	if inv == 0 {
		return nil
	}
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) * inv)
	}
	return out
}
