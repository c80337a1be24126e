package research

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/blevesearch/bleve/v2"

	"github.com/lethe-research/lethe/algebra"
	"github.com/lethe-research/lethe/llm"
)

// The dense stage (docs/research.md, "A dense first stage"): every
// passage of the index embedded, so that the corpus search's candidates
// are BM25's best and the embedding's best over the whole corpus. Without
// it the embedding model only reranks BM25's candidates, and a passage
// that shares no word with a paraphrased question is never a candidate:
// on the 69 Debian Reference questions (bench/retrieval) the search's
// top five held every gold string of 6 of the 16 paraphrase questions,
// and 10 of 16 with the dense stage.
//
// The stage is the worker's, like the BM25 index: it is built in the
// background after an index build or change, from the vector cache where
// it holds a passage, and a search uses it once it is complete for the
// index it searches. Until then, and when the corpus has more passages
// than CorpusConfig.DenseMax, the search is BM25 reranked as before.

// DefaultDenseMax bounds the passages of a dense stage: about 30 MB of
// 384-dimension vectors, and about an hour of embedding on a 2-core CPU
// at the first build.
const DefaultDenseMax = 20000

// denseBatch is how many passages one embedding call of the build sends:
// the build's progress is cached batch by batch, so a restarted worker or
// an embedding outage loses at most one batch.
const denseBatch = 64

// denseStage is every passage of the index for fingerprint fp, with its
// document embedding, in the index's id order.
type denseStage struct {
	fp   uint64
	ps   []Passage
	vecs [][]float32
}

// Nearest returns the indexes of the n vectors nearest q by cosine, best
// first (ties: index order).
func Nearest(q []float32, vecs [][]float32, n int) []int {
	cos := make([]float64, len(vecs))
	for i, v := range vecs {
		cos[i] = algebra.Cosine32(q, v)
	}
	order := make([]int, len(cos))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return cos[order[a]] > cos[order[b]] })
	return order[:min(max(n, 0), len(order))]
}

// DefaultDenseWait is how long a search waits for a dense stage being
// built (CorpusConfig.DenseWait).
const DefaultDenseWait = 30 * time.Second

// denseFor is the dense stage a search uses: the complete one, or the one
// being built once it completes within c.denseWait. A small corpus (a
// test's, a few hundred passages from the vector cache) is then searched
// the same way whenever the search comes, by a worker just started or
// restarted; a large one does not hold a search longer than the wait.
func (c *Corpus) denseFor(ctx context.Context) *denseStage {
	c.mu.Lock()
	d, done, building := c.dense, c.denseDone, c.denseStop != nil
	c.mu.Unlock()
	if d != nil || !building || c.denseWait <= 0 {
		return d
	}
	t := time.NewTimer(c.denseWait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	case <-ctx.Done():
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dense
}

// DenseStatus says where the dense stage stands.
type DenseStatus struct {
	Ready    bool   // complete for the current index
	Passages int    // passages embedded so far (or in the stage, when ready)
	Total    int    // passages of the index
	Off      string // why there is none ("" when it is built or building)
	LastErr  string // the last embedding error of the build, if any
}

// DenseStatus returns the dense stage's status.
func (c *Corpus) DenseStatus() DenseStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.denseSt
}

// AwaitDense waits until the dense stage is complete for the current
// index, or has none (DenseStatus.Off), or ctx ends.
func (c *Corpus) AwaitDense(ctx context.Context) error {
	for {
		st := c.DenseStatus()
		if st.Ready || st.Off != "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("research: dense stage: %d of %d passages: %w", st.Passages, st.Total, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// startDense starts the build of the dense stage for the current index
// when it has none or one of an older index (c.mu held). A build of an
// older index is cancelled: its passages may name other texts now.
func (c *Corpus) startDense() error {
	switch {
	case c.embed == nil:
		c.denseSt = DenseStatus{Off: "no embedding model"}
		return nil
	case c.denseN <= 0:
		c.denseSt = DenseStatus{Off: "research.corpus_dense is 0"}
		return nil
	}
	if (c.dense != nil && c.dense.fp == c.fp) || (c.denseStop != nil && c.denseFP == c.fp) {
		return nil
	}
	c.stopDenseLocked()
	c.dense = nil
	if n := c.stats.Passages; n > c.denseMax {
		c.denseSt = DenseStatus{Total: n, Off: fmt.Sprintf("%d passages, over research.corpus_dense_max (%d)", n, c.denseMax)}
		return nil
	}
	ps, err := c.ix.all(c.stats.Passages)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	c.denseStop, c.denseDone, c.denseFP = cancel, done, c.fp
	c.denseSt = DenseStatus{Total: len(ps)}
	go func() {
		defer close(done)
		c.buildDense(ctx, c.ix, c.fp, ps)
	}()
	return nil
}

// stopDenseLocked cancels a running build without waiting for it (c.mu
// held: the build takes c.mu between batches, so waiting here would
// deadlock; Close waits after releasing it).
func (c *Corpus) stopDenseLocked() {
	if c.denseStop != nil {
		c.denseStop()
		c.denseStop = nil
	}
}

// buildDense embeds ps batch by batch, each from the vector cache where it
// holds them, and installs the stage if the index is still ix at fp. An
// embedding error is retried after a growing pause (an outage of the
// embedding server at worker start is waited out, never turned into a
// missing stage).
func (c *Corpus) buildDense(ctx context.Context, ix *passageIndex, fp uint64, ps []Passage) {
	vecs := make([][]float32, 0, len(ps))
	pause := time.Second
	for len(vecs) < len(ps) {
		batch := ps[len(vecs):min(len(vecs)+denseBatch, len(ps))]
		c.mu.Lock()
		stale := c.ix != ix || c.fp != fp
		c.mu.Unlock()
		if stale || ctx.Err() != nil {
			return
		}
		v, err := c.denseVectors(ctx, ix, batch)
		if err != nil {
			c.mu.Lock()
			c.denseSt.LastErr = err.Error()
			c.mu.Unlock()
			select {
			case <-ctx.Done():
				return
			case <-time.After(max(pause, llm.RetryAfterOf(err))): // a rate-limited server said how long
			}
			pause = min(2*pause, time.Minute)
			continue
		}
		vecs, pause = append(vecs, v...), time.Second
		c.mu.Lock()
		c.denseSt.Passages = len(vecs)
		c.mu.Unlock()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ix == ix && c.fp == fp && ctx.Err() == nil {
		c.dense = &denseStage{fp: fp, ps: ps, vecs: vecs}
		c.denseSt = DenseStatus{Ready: true, Passages: len(ps), Total: len(ps)}
		c.denseStop = nil
	}
}

// denseVectors is passageVectors for one batch of the build: the cache is
// read and written under c.mu, the embedding call made without it.
func (c *Corpus) denseVectors(ctx context.Context, ix *passageIndex, batch []Passage) ([][]float32, error) {
	out := make([][]float32, len(batch))
	c.mu.Lock()
	ix.cacheGet(c.embedModel, batch, out)
	c.mu.Unlock()
	var miss []int
	var texts []string
	for i, v := range out {
		if v == nil {
			miss = append(miss, i)
			texts = append(texts, batch[i].Title+"\n"+batch[i].Text)
		}
	}
	if len(miss) == 0 {
		return out, nil
	}
	vecs, err := c.embed.Embed(ctx, llm.Document, texts)
	if err != nil {
		return nil, fmt.Errorf("research: dense stage: embed passages: %w", err)
	}
	if len(vecs) != len(miss) {
		return nil, fmt.Errorf("research: dense stage: %d vectors for %d passages", len(vecs), len(miss))
	}
	for j, i := range miss {
		out[i] = vecs[j]
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ix != ix { // closed or reopened: its cache is gone
		return nil, fmt.Errorf("research: dense stage: index closed")
	}
	return out, ix.cachePut(c.embedModel, batch, miss, vecs)
}

// all returns the index's passages, at most n, in id order.
func (p *passageIndex) all(n int) ([]Passage, error) {
	if n <= 0 {
		return nil, nil
	}
	kind := bleve.NewTermQuery(kindPassage)
	kind.SetField("kind")
	out, err := p.passages(kind, n, "_id")
	if err != nil {
		return nil, fmt.Errorf("research: corpus passages: %w", err)
	}
	return out, nil
}

// unionOrder is the search's order with a dense stage: BM25's candidates
// (in BM25 order) and the dense stage's n nearest passages, fused by
// reciprocal rank over the two corpus-wide ranks; a passage one stage did
// not return adds nothing from it:
//
//	score(p) = 1/(k + rank_bm25(p)) + 1/(k + rank_dense(p))
//
// It returns the passages, best first, and their fused scores (ties: BM25's
// candidates first, in their order, then the dense stage's).
func unionOrder(cands []Passage, d *denseStage, qv []float32, n int, k float64) ([]Passage, []float64) {
	key := func(p Passage) string { return fmt.Sprintf("%s\x00%d", p.Rel, p.N) }
	pos := make(map[string]int, len(cands)+n)
	pool := append([]Passage(nil), cands...)
	bm := make([]int, len(cands), len(cands)+n)
	for i, p := range cands {
		pos[key(p)], bm[i] = i, i
	}
	dn := make([]int, len(cands), len(cands)+n)
	for i := range dn {
		dn[i] = -1
	}
	for r, i := range Nearest(qv, d.vecs, n) {
		if j, ok := pos[key(d.ps[i])]; ok {
			dn[j] = r
			continue
		}
		pos[key(d.ps[i])] = len(pool)
		pool, bm, dn = append(pool, d.ps[i]), append(bm, -1), append(dn, r)
	}
	fused := FuseRRF(k, bm, dn)
	order := make([]int, len(pool))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return fused[order[a]] > fused[order[b]] })
	out := make([]Passage, len(pool))
	scores := make([]float64, len(pool))
	for r, i := range order {
		out[r], scores[r] = pool[i], fused[i]
	}
	return out, scores
}
