package embedded

// Lane "ann" (#14): an approximate nearest-neighbour index (HNSW,
// ann_hnsw.go) behind NearestEvidence, so that the incremental
// SIMILAR_TO sync stops scanning the whole session for every new item
// (docs/similarity-index.md).
//
// The index lives in memory only, beside the rows of vecCache: it is
// derived from the bbolt file, never written to it, so a crash or a
// restart cannot leave the two out of step. It is built lazily on the
// first query after Open once the session has ANNOptions.MinItems rows,
// extended with the rows that catchUp adds (AddEvidence), and dropped with
// the rows by ResetSession.

import (
	"fmt"
	"hash/fnv"

	"github.com/lethe-research/lethe/graph"
)

// ANNOptions tune the embedded store's nearest-neighbour index (the
// worker's graph.ann_* parameters; docs/parameters.md). They shape an
// in-memory structure of the store, like the vector index settings of a
// Neo4j server, and never change which pairs the exact paths find.
type ANNOptions struct {
	// MinItems is the session size from which NearestEvidence answers
	// through the index; smaller sessions are scanned exactly (0: always
	// exact).
	MinItems int
	// M is the HNSW graph's links per node on the upper layers (2M on
	// layer 0).
	M int
	// EfConstruction is the candidate list size of an insertion.
	EfConstruction int
	// EfSearch is the candidate list size of a nearest-cosine search.
	EfSearch int
	// ThresholdK is the first k a threshold query asks for, with a
	// candidate list as long (0: EfSearch, as before ThresholdK existed).
	// The search's cost follows the list, and an item rarely has more
	// than a few near-duplicates over the threshold, so a short first
	// list answers in one round; what it costs is recall (measured in
	// docs/similarity-index.md, "Where a threshold query starts").
	ThresholdK int
	// CacheMiB bounds the memory of the sessions' embeddings and indexes
	// kept between calls; the least recently used are dropped past it (0:
	// no bound).
	CacheMiB int
}

// DefaultANNOptions are the defaults of graph.ann_min_items, graph.ann_m,
// graph.ann_ef_construction, graph.ann_ef_search and
// graph.ann_threshold_k.
func DefaultANNOptions() ANNOptions {
	return ANNOptions{MinItems: 2048, M: 16, EfConstruction: 100, EfSearch: 64, ThresholdK: 16, CacheMiB: 2048}
}

// annMaxK is the widest k a threshold query asks the index for before it
// scans the session exactly: a query whose 4,096 nearest items are all over
// the threshold sits in a dense region where the graph search gains nothing
// (the same bound the Neo4j backend uses). Fixed: a cost bound, not a
// decision threshold.
const annMaxK = 4096

// OpenWith is Open with the nearest-neighbour index tuned by ann.
func OpenWith(path string, ann ANNOptions) (*Store, error) {
	s, err := Open(path)
	if err != nil {
		return nil, err
	}
	if err := ann.validate(); err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("embedded open %s: %w", path, err)
	}
	s.vecs.ann = ann
	return s, nil
}

func (o ANNOptions) validate() error {
	if o.MinItems < 0 || o.M < 2 || o.EfConstruction < 1 || o.EfSearch < 1 || o.ThresholdK < 0 || o.ThresholdK > annMaxK || o.CacheMiB < 0 {
		return fmt.Errorf("ann options %+v: need min_items >= 0, m >= 2, ef_construction and ef_search >= 1, threshold_k in [0, %d], cache_mib >= 0", o, annMaxK)
	}
	return nil
}

// thresholdK is the first k of a threshold query: ThresholdK, or as
// before it existed, EfSearch (at least 16).
func (o ANNOptions) thresholdK() int {
	if o.ThresholdK > 0 {
		return o.ThresholdK
	}
	return max(o.EfSearch, 16)
}

// annIndex is one session's HNSW graph over its rows.
type annIndex struct {
	g     *hnswGraph
	rowOf []int32 // graph node -> row
	dim   int
	added int     // rows [0, added) were inserted or set aside
	odd   []int32 // usable rows of another dimension: scanned exactly
}

// newANN is an empty index whose level draws are seeded by the session id,
// so that a rebuild after a restart is the same graph.
func newANN(sessionID string, o ANNOptions) *annIndex {
	h := fnv.New64a()
	_, _ = h.Write([]byte(sessionID))
	return &annIndex{g: newHNSW(o.M, o.EfConstruction, h.Sum64())}
}

// extend inserts the rows the index has not seen. The first usable row
// fixes the dimension (a session has one embedding model).
func (a *annIndex) extend(sv *sessVecs) {
	for ; a.added < len(sv.emb); a.added++ {
		i := a.added
		if sv.inv[i] == 0 {
			continue
		}
		if a.dim == 0 {
			a.dim = len(sv.emb[i])
		}
		if len(sv.emb[i]) != a.dim {
			a.odd = append(a.odd, int32(i))
			continue
		}
		a.g.add(unit32(sv.emb[i], sv.inv[i]))
		a.rowOf = append(a.rowOf, int32(i))
	}
}

// useANN says whether the session's queries go through the index, and
// brings the index up to the rows when they do.
func (sv *sessVecs) useANN(sessionID string, o ANNOptions) bool {
	if o.MinItems <= 0 || len(sv.emb) < o.MinItems {
		return false
	}
	if sv.ann == nil {
		sv.ann = newANN(sessionID, o)
	}
	sv.ann.extend(sv)
	return true
}

// nearestANN is a threshold query through the index: it asks for the k
// nearest items, widening k fourfold while all k are over the threshold
// (then more may be), up to annMaxK, past which it scans exactly. Each
// candidate's cosine is recomputed exactly (cosine), so every returned
// pair is a true pair with the exact sync's weight; what the index can
// miss is a pair it never offered (recall, measured in
// docs/similarity-index.md).
func (sv *sessVecs) nearestANN(sessionID string, q []float32, uq []float64, threshold float64, o ANNOptions) []graph.Neighbor {
	a := sv.ann
	if len(q) != a.dim || a.g.len() == 0 {
		return sv.scan(sessionID, uq, threshold)
	}
	q32 := make([]float32, len(uq))
	for i, x := range uq {
		q32[i] = float32(x)
	}
	var res []graph.Neighbor
	for k := o.thresholdK(); ; k *= 4 {
		if k > annMaxK {
			return sv.scan(sessionID, uq, threshold)
		}
		nodes := a.g.search(q32, k, k)
		res = res[:0]
		below := len(nodes) < k
		for _, nd := range nodes {
			row := a.rowOf[nd.n]
			if c := sv.cosine(uq, int(row)); c >= threshold {
				res = append(res, graph.Neighbor{ID: graph.EvidenceID(sessionID, sv.hash[row]), Cosine: c})
			} else {
				below = true
			}
		}
		if below {
			break
		}
	}
	for _, i := range a.odd {
		if len(sv.emb[i]) != len(uq) {
			continue
		}
		if c := sv.cosine(uq, int(i)); c >= threshold {
			res = append(res, graph.Neighbor{ID: graph.EvidenceID(sessionID, sv.hash[i]), Cosine: c})
		}
	}
	sortNeighbors(res)
	return res
}
