package embedded

// Lane "similar" (#14): the reads of the incremental SIMILAR_TO sync.
//
// NearestEvidence goes through an in-memory copy of each session's
// embeddings: an exact scan in small sessions, an HNSW index (ann.go) in
// large ones (docs/similarity-index.md). The copy is built from the file
// on first use after Open (so it survives restarts by construction),
// caught up on every call by a seek in the evidence-by-iteration index that decodes only the records it
// has not seen (records are immutable but for strength and SUPPORTS
// targets), and dropped by ResetSession.

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sync"

	bolt "go.etcd.io/bbolt"

	"github.com/lethe-research/lethe/graph"
)

// vecCache holds the embeddings of the sessions queried so far, and
// their nearest-neighbour indexes (ann.go), up to ann.CacheMiB: past it
// the least recently used sessions are dropped, to be rebuilt from the file
// on their next use (a worker serves many sessions over its life, and one
// that ended would otherwise stay in memory until the process does).
type vecCache struct {
	mu   sync.Mutex
	sess map[string]*sessVecs
	ann  ANNOptions
	tick uint64
}

// sessVecs is one session's rows: content hash, CreatedIter, raw
// embedding and the inverse of its norm (0: no usable embedding); the
// highest CreatedIter among them; the HNSW index once built.
type sessVecs struct {
	row     map[string]int
	hash    []string
	iter    []int
	pre     []uint64 // the hash's first 8 bytes, big-endian: orders rows by hash without reaching the string
	emb     [][]float32
	inv     []float64
	maxIter int
	ann     *annIndex
	used    uint64 // the cache's tick at its last use
	rowMem  int    // estimated bytes of the rows (bytes)
}

func newVecCache() *vecCache {
	return &vecCache{sess: map[string]*sessVecs{}, ann: DefaultANNOptions()}
}

func (c *vecCache) drop(sessionID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.sess, sessionID)
}

// refresh brings the session's rows up to the transaction's view and calls
// fn with them under the cache lock. A key set that lost any known key (a
// reset and re-creation this cache did not see) is rebuilt from scratch.
func (c *vecCache) refresh(sb *bolt.Bucket, sessionID string, fn func(sv *sessVecs) error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	sv := c.sess[sessionID]
	for attempt := 0; attempt < 2; attempt++ {
		if sv == nil {
			sv = &sessVecs{row: map[string]int{}}
		}
		ok, err := sv.catchUp(sb)
		if err != nil {
			delete(c.sess, sessionID)
			return err
		}
		if ok {
			c.tick++
			sv.used = c.tick
			c.sess[sessionID] = sv
			defer c.trim(sessionID)
			return fn(sv)
		}
		sv = nil
	}
	return fmt.Errorf("evidence index of %q does not settle", sessionID)
}

// trim drops the least recently used sessions other than keep while the
// cache holds more than ann.CacheMiB (0: no bound).
func (c *vecCache) trim(keep string) {
	if c.ann.CacheMiB <= 0 {
		return
	}
	total := 0
	for _, sv := range c.sess {
		total += sv.bytes()
	}
	for total > c.ann.CacheMiB<<20 && len(c.sess) > 1 {
		oldest := ""
		for id, sv := range c.sess {
			if id != keep && (oldest == "" || sv.used < c.sess[oldest].used) {
				oldest = id
			}
		}
		total -= c.sess[oldest].bytes()
		delete(c.sess, oldest)
	}
}

// bytes estimates the memory of a session's rows and index: per row the
// embedding, the hash and the row's slots; per index node its unit copy of
// the embedding, about 2M links on layer 0 and their held distances (the
// upper layers add a fraction 1/M of that).
func (sv *sessVecs) bytes() int {
	n := sv.rowMem
	if a := sv.ann; a != nil {
		n += a.g.len() * (4*a.dim + 16*a.g.m + 112)
	}
	return n
}

// catchUp decodes the records not yet known; false means keys it knew
// vanished (the caller rebuilds). With the iteration index (since.go) the
// cost follows the new rows: the index's key count says whether anything
// is new, a seek from the highest known iteration finds what usually is,
// and only an item that arrived late (an older CreatedIter) costs a walk
// over the index's keys. A session older than the index walks the records.
func (sv *sessVecs) catchUp(sb *bolt.Bucket) (bool, error) {
	evb, ix := sb.Bucket(bktEvidence), sb.Bucket(bktEvIter)
	if ix == nil {
		seen := 0
		err := evb.ForEach(func(k, v []byte) error {
			seen++
			return sv.add(k, v)
		})
		return err == nil && seen == len(sv.row), err
	}
	n := indexedCount(sb, ix)
	if n < len(sv.row) {
		return false, nil
	}
	walk := func(from []byte) error {
		c := ix.Cursor()
		for k, _ := c.Seek(from); k != nil && len(sv.row) < n; k, _ = c.Next() {
			if err := sv.addHash(evb, k[8:]); err != nil {
				return err
			}
		}
		return nil
	}
	if n > len(sv.row) {
		if err := walk(iterKey(sv.maxIter)); err != nil {
			return false, err
		}
	}
	if n > len(sv.row) {
		if err := walk(nil); err != nil {
			return false, err
		}
	}
	return n == len(sv.row), nil
}

// indexedCount is the number of keys of the iteration index: the
// session's evidence counter, which every write of a new record bumps in
// the same transaction as the index (putNewEvidence), so a read is one Get
// where the index's Stats walk every page of it (a tenth of an iteration's
// store work at 100k evidence). A file without the counter is counted.
func indexedCount(sb *bolt.Bucket, ix *bolt.Bucket) int {
	if meta := sb.Bucket(bktMeta); len(meta.Get(keyEvTotal)) == 8 {
		return int(readCount(meta, keyEvTotal))
	}
	return ix.Stats().KeyN
}

// addHash adds the record named by an iteration-index key when unknown.
func (sv *sessVecs) addHash(evb *bolt.Bucket, hash []byte) error {
	if _, ok := sv.row[string(hash)]; ok {
		return nil
	}
	v := evb.Get(hash)
	if v == nil {
		return fmt.Errorf("evidence index names %q, which is not stored", hash)
	}
	return sv.add(hash, v)
}

// add decodes one evidence record into a row, unless it is known.
func (sv *sessVecs) add(k, v []byte) error {
	if _, ok := sv.row[string(k)]; ok {
		return nil
	}
	var r struct {
		Embedding   []byte `json:"embedding"`
		CreatedIter int    `json:"created_iter"`
	}
	if err := json.Unmarshal(v, &r); err != nil {
		return fmt.Errorf("decode evidence %q: %w", k, err)
	}
	emb, err := unpackF32(r.Embedding)
	if err != nil {
		return fmt.Errorf("decode evidence %q: %w", k, err)
	}
	sv.row[string(k)] = len(sv.hash)
	sv.hash = append(sv.hash, string(k))
	sv.iter = append(sv.iter, r.CreatedIter)
	sv.pre = append(sv.pre, prefix8(k))
	sv.emb = append(sv.emb, emb)
	sv.inv = append(sv.inv, invNorm(emb))
	sv.rowMem += 4*len(emb) + len(k) + 128 // the embedding, the hash, the row's slots and map entry
	sv.maxIter = max(sv.maxIter, r.CreatedIter)
	return nil
}

// prefix8 is the first 8 bytes of k as a big-endian number, zero-padded:
// prefix8(a) < prefix8(b) implies a < b, and equal prefixes leave the
// order to the whole keys.
func prefix8(k []byte) uint64 {
	var b [8]byte
	copy(b[:], k)
	return binary.BigEndian.Uint64(b[:])
}

// invNorm is 1/|v| computed as graph.UnitVector does, or 0 when v has no
// usable direction.
func invNorm(v []float32) float64 {
	var nn float64
	for _, x := range v {
		nn += float64(x) * float64(x)
	}
	if len(v) == 0 || nn == 0 || math.IsNaN(nn) || math.IsInf(nn, 0) {
		return 0
	}
	return 1 / math.Sqrt(nn)
}

// EvidenceCount is the number of evidence items of the session.
func (s *Store) EvidenceCount(ctx context.Context, sessionID string) (int, error) {
	n := 0
	err := s.view(ctx, "evidence count", func(tx *bolt.Tx) error {
		sb, err := session(tx, sessionID)
		if err != nil {
			return err
		}
		n = int(readCount(sb.Bucket(bktMeta), keyEvTotal)) // lane storecost: a counter, not a page walk
		return nil
	})
	return n, err
}

// EvidenceByIDs returns the named evidence.
func (s *Store) EvidenceByIDs(ctx context.Context, sessionID string, ids []string) ([]graph.Evidence, error) {
	var out []graph.Evidence
	err := s.view(ctx, "evidence by ids", func(tx *bolt.Tx) error {
		sb, err := session(tx, sessionID)
		if err != nil {
			return err
		}
		hashes := make([]string, 0, len(ids))
		for _, id := range ids {
			h, ok := evidenceHash(sessionID, id)
			if !ok {
				return fmt.Errorf("evidence %q: %w", id, graph.ErrNotFound)
			}
			hashes = append(hashes, h)
		}
		out, err = evidenceByHash(sb, sessionID, hashes)
		return err
	})
	if err != nil {
		return nil, err
	}
	graph.SortEvidence(out)
	return out, nil
}

func evidenceByHash(sb *bolt.Bucket, sessionID string, hashes []string) ([]graph.Evidence, error) {
	evb := sb.Bucket(bktEvidence)
	out := make([]graph.Evidence, 0, len(hashes))
	for _, h := range hashes {
		v := evb.Get([]byte(h))
		if v == nil {
			return nil, fmt.Errorf("evidence %q: %w", graph.EvidenceID(sessionID, h), graph.ErrNotFound)
		}
		var r evidenceRec
		if err := json.Unmarshal(v, &r); err != nil {
			return nil, fmt.Errorf("decode evidence %q: %w", h, err)
		}
		e, err := recToEvidence(sessionID, h, r)
		if err != nil {
			return nil, fmt.Errorf("decode evidence %q: %w", h, err)
		}
		out = append(out, e)
	}
	return out, nil
}

// NearestEvidence answers each query by an exact scan of the session's
// rows, or through the HNSW index (ann.go) once the session has
// ANNOptions.MinItems rows; never behind the file (the rows are caught up
// first).
func (s *Store) NearestEvidence(ctx context.Context, sessionID string, queries [][]float32, threshold float64) ([][]graph.Neighbor, error) {
	out := make([][]graph.Neighbor, len(queries))
	err := s.eachQuery(ctx, "nearest evidence", sessionID, queries, func(i int, sv *sessVecs, q []float32, uq []float64, ann bool) {
		if ann {
			out[i] = sv.nearestANN(sessionID, q, uq, threshold, s.vecs.ann)
		} else {
			out[i] = sv.scan(sessionID, uq, threshold)
		}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// NearestCosine answers each query like NearestEvidence does, exactly or
// through the HNSW index by the same rule, keeping only the largest
// cosine.
func (s *Store) NearestCosine(ctx context.Context, sessionID string, queries [][]float32) ([]float64, error) {
	out := make([]float64, len(queries))
	err := s.eachQuery(ctx, "nearest cosine", sessionID, queries, func(i int, sv *sessVecs, _ []float32, uq []float64, ann bool) {
		if ann {
			out[i] = sv.maxANN(uq, s.vecs.ann)
		} else {
			out[i] = sv.maxScan(uq)
		}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// eachQuery calls fn for every query with a direction (uq, its unit
// vector), under the session's rows caught up to the transaction's view;
// ann says whether the session's queries go through the index.
func (s *Store) eachQuery(ctx context.Context, op, sessionID string, queries [][]float32, fn func(i int, sv *sessVecs, q []float32, uq []float64, ann bool)) error {
	return s.view(ctx, op, func(tx *bolt.Tx) error {
		sb, err := session(tx, sessionID)
		if err != nil {
			return err
		}
		return s.vecs.refresh(sb, sessionID, func(sv *sessVecs) error {
			ann := sv.useANN(sessionID, s.vecs.ann)
			for i, q := range queries {
				if err := ctx.Err(); err != nil {
					return err
				}
				if uq := graph.UnitVector(q); uq != nil {
					fn(i, sv, q, uq, ann)
				}
			}
			return nil
		})
	})
}

// maxScan is the largest cosine of the unit query with any usable row of
// its dimension, floored at 0.
func (sv *sessVecs) maxScan(uq []float64) float64 {
	best := 0.0
	for i, emb := range sv.emb {
		if sv.inv[i] != 0 && len(emb) == len(uq) {
			best = max(best, sv.cosine(uq, i))
		}
	}
	return best
}

// annTop is how many of the index's nearest items maxANN recomputes
// exactly: the index ranks by float32 distances, so the exact maximum may
// sit one or two places down among near-ties.
const annTop = 4

// maxANN is maxScan through the index: the exact cosines of its annTop
// nearest items. (A query of another dimension than the index's is
// scanned: it can only meet the rows the index set aside.)
func (sv *sessVecs) maxANN(uq []float64, o ANNOptions) float64 {
	a := sv.ann
	if len(uq) != a.dim || a.g.len() == 0 {
		return sv.maxScan(uq)
	}
	q32 := make([]float32, len(uq))
	for i, x := range uq {
		q32[i] = float32(x)
	}
	best := 0.0
	for _, nd := range a.g.search(q32, annTop, o.EfSearch) {
		best = max(best, sv.cosine(uq, int(a.rowOf[nd.n])))
	}
	return best
}

// scan is one exact scan for the unit query uq.
func (sv *sessVecs) scan(sessionID string, uq []float64, threshold float64) []graph.Neighbor {
	var res []graph.Neighbor
	for i, emb := range sv.emb {
		if sv.inv[i] == 0 || len(emb) != len(uq) {
			continue
		}
		if c := sv.cosine(uq, i); c >= threshold {
			res = append(res, graph.Neighbor{ID: graph.EvidenceID(sessionID, sv.hash[i]), Cosine: c})
		}
	}
	sortNeighbors(res)
	return res
}

// cosine of the unit query and row i (same length, usable), summed term
// by term as graph.Dot(graph.UnitVector(q), graph.UnitVector(row)), so it
// equals the full sync's value bit for bit.
func (sv *sessVecs) cosine(uq []float64, i int) float64 {
	inv := sv.inv[i]
	var c float64
	for k, x := range sv.emb[i] {
		c += uq[k] * (float64(x) * inv)
	}
	return c
}

// sortNeighbors orders by cosine, highest first, ties by id.
func sortNeighbors(res []graph.Neighbor) {
	slices.SortFunc(res, func(a, b graph.Neighbor) int {
		if a.Cosine != b.Cosine {
			if a.Cosine > b.Cosine {
				return -1
			}
			return 1
		}
		return bytes.Compare([]byte(a.ID), []byte(b.ID))
	})
}

// SimilarEdges returns the SIMILAR_TO edges only.
func (s *Store) SimilarEdges(ctx context.Context, sessionID string) ([]graph.Edge, error) {
	var out []graph.Edge
	err := s.view(ctx, "similar edges", func(tx *bolt.Tx) error {
		out = nil
		sb, err := session(tx, sessionID)
		if err != nil {
			return err
		}
		return appendSimilar(sb.Bucket(bktEdges), sessionID, &out)
	})
	if err != nil {
		return nil, err
	}
	graph.SortEdges(out)
	return out, nil
}

// appendSimilar appends the SIMILAR_TO edges stored in a session's edge
// bucket (keys "from\x00to" of evidence hashes) to out.
func appendSimilar(b *bolt.Bucket, sessionID string, out *[]graph.Edge) error {
	return b.ForEach(func(k, v []byte) error {
		from, to, ok := bytes.Cut(k, []byte{0})
		if !ok {
			return fmt.Errorf("bad edge key %q", k)
		}
		var r similarRec
		if err := json.Unmarshal(v, &r); err != nil {
			return fmt.Errorf("decode edge %q: %w", k, err)
		}
		*out = append(*out, graph.Edge{
			From:   graph.EvidenceID(sessionID, string(from)),
			To:     graph.EvidenceID(sessionID, string(to)),
			Kind:   graph.SimilarTo,
			Weight: r.Weight,
			Label:  r.Label,
		})
		return nil
	})
}

// SimilarEdgesOf returns the SIMILAR_TO edges with an endpoint among ids,
// through the similar_adj index: it costs the edges it returns, not the
// KeepsPairs is false: the embedded index answers a query in the
// worker's memory, so the sync asks it again for a displaced item (see
// graph.Store).
func (s *Store) KeepsPairs() bool { return false }

// SimilarPairsOf is ErrNoPairs (KeepsPairs).
func (s *Store) SimilarPairsOf(context.Context, string, []string) ([]graph.Edge, error) {
	return nil, graph.ErrNoPairs
}

// session's (the incremental sync's local cap, graph/similar_local.go).
func (s *Store) SimilarEdgesOf(ctx context.Context, sessionID string, ids []string) ([]graph.Edge, error) {
	var out []graph.Edge
	err := s.view(ctx, "similar edges of", func(tx *bolt.Tx) error {
		out = nil
		sb, err := session(tx, sessionID)
		if err != nil {
			return err
		}
		ix, eb := sb.Bucket(bktSimilarAdj), sb.Bucket(bktEdges)
		seen := map[string]bool{}
		for _, id := range ids {
			h, ok := evidenceHash(sessionID, id)
			if !ok {
				continue
			}
			err := prefixed(ix, h, func(rest []byte) error {
				a, b := h, string(rest)
				if a > b {
					a, b = b, a
				}
				k := edgeKey(a, b)
				if seen[string(k)] {
					return nil
				}
				seen[string(k)] = true
				v := eb.Get(k)
				if v == nil {
					return fmt.Errorf("similar_adj names edge %q that is not stored", k)
				}
				var r similarRec
				if err := json.Unmarshal(v, &r); err != nil {
					return fmt.Errorf("decode edge %q: %w", k, err)
				}
				out = append(out, graph.Edge{
					From: graph.EvidenceID(sessionID, a), To: graph.EvidenceID(sessionID, b),
					Kind: graph.SimilarTo, Weight: r.Weight, Label: r.Label,
				})
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	graph.SortEdges(out)
	return out, nil
}
