package main

import (
	"context"
	"fmt"
	"sort"

	"github.com/lethe-research/lethe/llm"
	"github.com/lethe-research/lethe/research"
)

// denseIndex is every passage of the corpus with its document embedding:
// each document cut with Ingest's chunker (research.IngestChunkConfig), as
// the passage index cuts it. It is the measurement of a dense first stage,
// which the corpus search does not have: there the embedding model only
// reranks the BM25 candidates, so a passage that shares no word with the
// question is never seen (docs/research.md, "A dense first stage").
type denseIndex struct {
	texts []string
	vecs  [][]float32
}

// newDenseIndex embeds every passage of docs (in rel order) once.
func newDenseIndex(ctx context.Context, emb research.Embedder, docs map[string]research.Document, chunkChars int) (*denseIndex, error) {
	rels := make([]string, 0, len(docs))
	for rel := range docs {
		rels = append(rels, rel)
	}
	sort.Strings(rels)
	d := &denseIndex{}
	var inputs []string
	for _, rel := range rels {
		doc := docs[rel]
		for _, c := range research.Chunk(doc.Text, research.IngestChunkConfig(chunkChars)) {
			d.texts = append(d.texts, c)
			inputs = append(inputs, doc.Title+"\n"+c)
		}
	}
	vecs, err := emb.Embed(ctx, llm.Document, inputs)
	if err != nil {
		return nil, fmt.Errorf("dense index: %w", err)
	}
	if len(vecs) != len(inputs) {
		return nil, fmt.Errorf("dense index: %d vectors for %d passages", len(vecs), len(inputs))
	}
	d.vecs = vecs
	return d, nil
}

// dense and union are two first stages for question q, k passages each:
//
//   - dense: the k passages nearest the query over the whole corpus;
//   - union: BM25's `candidates` passages and the dense stage's as many,
//     fused by reciprocal rank over the two corpus-wide ranks (a passage
//     one stage did not return adds nothing from it),
//     score = 1/(rrfK + rank_bm25) + 1/(rrfK + rank_dense).
func (e *engines) denseAndUnion(ctx context.Context, q string, p params) (dense, union []string, err error) {
	qv, err := e.emb.Embed(ctx, llm.Query, []string{q})
	if err != nil {
		return nil, nil, err
	}
	order := research.Nearest(qv[0], e.dense.vecs, len(e.dense.vecs))
	for _, i := range order[:min(p.k, len(order))] {
		dense = append(dense, e.dense.texts[i])
	}
	bm, err := e.c.BM25Passages(q, p.candidates)
	if err != nil {
		return nil, nil, err
	}
	score := map[string]float64{}
	var pool []string
	add := func(t string, rank int) {
		if _, ok := score[t]; !ok {
			pool = append(pool, t)
		}
		score[t] += 1 / (p.rrfK + float64(rank+1))
	}
	for r, ps := range bm {
		add(ps.Text, r)
	}
	for r, i := range order[:min(p.candidates, len(order))] {
		add(e.dense.texts[i], r)
	}
	sort.SliceStable(pool, func(a, b int) bool { return score[pool[a]] > score[pool[b]] })
	return dense, pool[:min(p.k, len(pool))], nil
}
