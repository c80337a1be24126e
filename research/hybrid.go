package research

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"sort"

	bolt "go.etcd.io/bbolt"

	"github.com/lethe-research/lethe/algebra"
	"github.com/lethe-research/lethe/llm"
)

// Embedder embeds texts (llm.EmbedClient implements it).
type Embedder interface {
	Embed(ctx context.Context, kind llm.EmbedKind, texts []string) ([][]float32, error)
}

// DefaultRRFK is the constant k of reciprocal rank fusion, score = Σ
// 1/(k + rank), when the caller gives none: 60, the value of Cormack,
// Clarke and Büttcher (SIGIR 2009). Sessions configure it
// (research.corpus_rrf_k, default 10, measured in docs/research.md); this
// fallback stays 60 because a session recorded before that parameter
// existed carries no value, and it must keep selecting as it did.
const DefaultRRFK = 60

// DefaultRerankCandidates is how many BM25 passages the embedding model
// reranks: enough to reach an answer BM25 ranks low, few enough that a
// cold query (no cached vectors) embeds them in about a second.
const DefaultRerankCandidates = 40

// FuseRRF fuses rankings by reciprocal rank: rankings[r][i] is the 0-based
// rank of item i in ranking r (a negative rank: the item is absent from
// that ranking). It returns the fused score of each item, Σ_r 1/(k + rank
// + 1). k <= 0 means DefaultRRFK.
func FuseRRF(k float64, rankings ...[]int) []float64 {
	if k <= 0 {
		k = DefaultRRFK
	}
	n := 0
	for _, r := range rankings {
		n = max(n, len(r))
	}
	out := make([]float64, n)
	for _, r := range rankings {
		for i, rank := range r {
			if rank >= 0 {
				out[i] += 1 / (k + float64(rank) + 1)
			}
		}
	}
	return out
}

// RankOf returns the 0-based rank of every item when sorted by score
// descending (ties: lower index first; NaN last).
func RankOf(score []float64) []int {
	order := make([]int, len(score))
	for i := range order {
		order[i] = i
	}
	key := func(i int) float64 {
		if math.IsNaN(score[i]) {
			return math.Inf(-1)
		}
		return score[i]
	}
	sort.SliceStable(order, func(a, b int) bool { return key(order[a]) > key(order[b]) })
	rank := make([]int, len(score))
	for r, i := range order {
		rank[i] = r
	}
	return rank
}

var embBucket = []byte("passages")

// embKey names a cached passage vector: the model, the embedding kind and
// the passage text's hash, so a change of model never reuses a vector.
func embKey(model, hash string) []byte {
	h := sha256.Sum256([]byte(model + "\x00" + llm.Document.String() + "\x00" + hash))
	return []byte(hex.EncodeToString(h[:16]))
}

// passageVectors returns the document embedding of every passage, from the
// cache where it holds them, embedding (in one call) and caching the rest,
// and the tokens it sent to the embedder (llm.EstimateAll).
func (p *passageIndex) passageVectors(ctx context.Context, e Embedder, model string, ps []Passage) ([][]float32, int, error) {
	out := make([][]float32, len(ps))
	var miss []int
	p.cacheGet(model, ps, out)
	for i := range ps {
		if out[i] == nil {
			miss = append(miss, i)
		}
	}
	if len(miss) == 0 {
		return out, 0, nil
	}
	texts := make([]string, len(miss))
	for j, i := range miss {
		texts[j] = ps[i].Title + "\n" + ps[i].Text
	}
	tokens := llm.EstimateAll(texts)
	vecs, err := e.Embed(ctx, llm.Document, texts)
	if err != nil {
		return nil, tokens, fmt.Errorf("research: embed corpus passages: %w", err)
	}
	if len(vecs) != len(miss) {
		return nil, tokens, fmt.Errorf("research: embed corpus passages: %d vectors for %d texts", len(vecs), len(miss))
	}
	for j, i := range miss {
		out[i] = vecs[j]
	}
	return out, tokens, p.cachePut(model, ps, miss, vecs)
}

func (p *passageIndex) cacheGet(model string, ps []Passage, out [][]float32) {
	if p.emb == nil {
		for i, ps := range ps {
			out[i] = p.mem[string(embKey(model, ps.Hash))]
		}
		return
	}
	_ = p.emb.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(embBucket)
		if b == nil {
			return nil
		}
		for i, ps := range ps {
			if v := b.Get(embKey(model, ps.Hash)); len(v) > 0 && len(v)%4 == 0 {
				out[i] = decodeVec(v)
			}
		}
		return nil
	})
}

func (p *passageIndex) cachePut(model string, ps []Passage, idx []int, vecs [][]float32) error {
	if p.emb == nil {
		for j, i := range idx {
			p.mem[string(embKey(model, ps[i].Hash))] = vecs[j]
		}
		return nil
	}
	err := p.emb.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(embBucket)
		if err != nil {
			return err
		}
		for j, i := range idx {
			if err := b.Put(embKey(model, ps[i].Hash), encodeVec(vecs[j])); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("research: corpus embedding cache: %w", err)
	}
	return nil
}

func encodeVec(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

func decodeVec(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// hybridOrder reranks BM25 candidates (best first) with the embedding model:
// the cosine between the query's embedding and each passage's, fused with
// the BM25 rank by reciprocal rank (k). It returns the candidates' indices,
// best first, their fused scores and the tokens sent to the embedder (the
// query, and the passages the cache did not hold).
func (p *passageIndex) hybridOrder(ctx context.Context, e Embedder, model, q string, ps []Passage, k float64) ([]int, []float64, int, error) {
	qv, tokens, err := embedQuery(ctx, e, q)
	if err != nil {
		return nil, nil, tokens, err
	}
	vecs, n, err := p.passageVectors(ctx, e, model, ps)
	tokens += n
	if err != nil {
		return nil, nil, tokens, err
	}
	cos := make([]float64, len(ps))
	bm := make([]int, len(ps))
	for i := range ps {
		cos[i] = algebra.Cosine32(qv, vecs[i])
		bm[i] = i // ps is in BM25 order
	}
	fused := FuseRRF(k, bm, RankOf(cos))
	rank := RankOf(fused)
	order := make([]int, len(ps))
	for i, r := range rank {
		order[r] = i
	}
	return order, fused, tokens, nil
}

// embedQuery is the query's embedding and the tokens it sent.
func embedQuery(ctx context.Context, e Embedder, q string) ([]float32, int, error) {
	tokens := llm.EstimateAll([]string{q})
	qv, err := e.Embed(ctx, llm.Query, []string{q})
	if err != nil {
		return nil, tokens, fmt.Errorf("research: embed corpus query: %w", err)
	}
	if len(qv) != 1 {
		return nil, tokens, fmt.Errorf("research: embed corpus query: %d vectors for 1 text", len(qv))
	}
	return qv[0], tokens, nil
}
