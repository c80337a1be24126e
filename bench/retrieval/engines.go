package main

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strconv"
	"sync"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/index/scorch"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/lethe-research/lethe/algebra"
	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/llm"
	"github.com/lethe-research/lethe/research"
)

type params struct {
	chunkChars, perPage, embedded int
	lambda                        float64
	maxChars, k                   int
	// The session engine's options (research.corpus_candidates,
	// research.corpus_rrf_k, research.ingest_hits_in_order,
	// research.ingest_min_trim).
	candidates  int
	dense       int
	rrfK        float64
	hitsInOrder bool
	minTrim     int
	// pdf adds the corpus's PDFs, as a worker with pdftotext indexes
	// them (the Debian Reference ships its PDF beside the HTML); dedup is
	// research.corpus_dedup (0: keep all).
	pdf   string
	dedup float64
	// planURL and planCache are -plan's chat server and answer file.
	planURL, planCache string
}

// cachedEmbedder remembers every vector by kind and text: the same
// chapters and passages come back question after question. With a file,
// the vectors also outlive the run (save), so a second run of the
// benchmark embeds only what changed; the file is per embedder (-cache).
type cachedEmbedder struct {
	e     research.Embedder
	mu    sync.Mutex
	cache map[string][]float32
	dirty bool
}

func newCachedEmbedder(e research.Embedder, file string) (*cachedEmbedder, error) {
	c := &cachedEmbedder{e: e, cache: map[string][]float32{}}
	if file == "" {
		return c, nil
	}
	f, err := os.Open(file)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := gob.NewDecoder(f).Decode(&c.cache); err != nil {
		return nil, fmt.Errorf("vector cache %s: %w", file, err)
	}
	return c, nil
}

// save writes the vectors to file when any were added.
func (c *cachedEmbedder) save(file string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if file == "" || !c.dirty {
		return nil
	}
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(c.cache); err != nil {
		return err
	}
	if err := os.WriteFile(file+".tmp", b.Bytes(), 0o644); err != nil {
		return err
	}
	c.dirty = false
	return os.Rename(file+".tmp", file)
}

func (c *cachedEmbedder) Embed(ctx context.Context, kind llm.EmbedKind, texts []string) ([][]float32, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([][]float32, len(texts))
	var miss []string
	var at []int
	for i, t := range texts {
		if v, ok := c.cache[kind.String()+"\x00"+t]; ok {
			out[i] = v
			continue
		}
		miss, at = append(miss, t), append(at, i)
	}
	if len(miss) > 0 {
		vs, err := c.e.Embed(ctx, kind, miss)
		if err != nil {
			return nil, err
		}
		for j, v := range vs {
			out[at[j]] = v
			c.cache[kind.String()+"\x00"+miss[j]] = v
		}
		c.dirty = true
	}
	return out, nil
}

type engines struct {
	c     *research.Corpus
	docs  bleve.Index // whole documents: the old engine's grain
	text  map[string]research.Document
	emb   research.Embedder
	p     params
	stats research.IndexStats
	dense *denseIndex // every passage embedded (dense.go)
}

func newEngines(ctx context.Context, root, indexDir string, emb research.Embedder, p params) (*engines, error) {
	cc := research.CorpusConfig{Root: root, IndexDir: indexDir, Embedder: emb, EmbedModel: "bench",
		Chunk: research.IngestChunkConfig(p.chunkChars), Dense: p.dense, Dedup: p.dedup}
	if p.dedup == 0 {
		cc.Dedup = -1
	}
	if p.pdf != "" {
		cc.Extensions = append(research.DefaultCorpusExtensions(), ".pdf")
		cc.Extractors = map[string]research.Extractor{".pdf": research.PDFConverter{Path: p.pdf, MaxPages: config.Defaults().Research.PDFMaxPages}.Extractor()}
	}
	c, err := research.NewCorpus(cc)
	if err != nil {
		return nil, err
	}
	st, err := c.Refresh(ctx)
	if err == nil {
		err = c.AwaitDense(ctx) // the search's own dense stage (-dense), complete before the first question
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	e := &engines{c: c, emb: emb, p: p, stats: st, text: map[string]research.Document{}}
	if err := e.buildDocIndex(root); err != nil {
		c.Close()
		return nil, err
	}
	if e.dense, err = newDenseIndex(ctx, emb, e.text, p.chunkChars); err != nil {
		e.close()
		return nil, err
	}
	return e, nil
}

func (e *engines) close() {
	e.c.Close()
	e.docs.Close()
}

// buildDocIndex indexes whole documents (title ×2 and text, as the old
// corpus index weighted them) with bleve's BM25.
func (e *engines) buildDocIndex(root string) error {
	im := bleve.NewIndexMapping()
	im.ScoringModel = index.BM25Scoring
	im.DefaultAnalyzer = en.AnalyzerName
	idx, err := bleve.NewUsing("", im, scorch.Name, bleve.Config.DefaultKVStore, nil)
	if err != nil {
		return err
	}
	e.docs = idx
	files, err := htmlFiles(root)
	if err != nil {
		return err
	}
	b := idx.NewBatch()
	for _, rel := range files {
		d, err := e.c.Open(research.CorpusURL(rel))
		if err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		e.text[rel] = d
		if err := b.Index(rel, map[string]any{"title": d.Title, "text": d.Text}); err != nil {
			return err
		}
	}
	return idx.Batch(b)
}

// all returns what each engine ingests for question q.
func (e *engines) all(ctx context.Context, q string) (map[string][]string, error) {
	out := map[string][]string{}
	old, err := e.old(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("old: %w", err)
	}
	out["old"] = old
	bm, err := e.c.BM25Passages(q, e.p.k)
	if err != nil {
		return nil, err
	}
	for _, p := range bm {
		out["bm25-5"] = append(out["bm25-5"], p.Text)
	}
	for name, unmarked := range map[string]bool{"new": false, "new-unmarked": true} {
		nw, err := e.new(ctx, q, unmarked)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out[name] = nw
	}
	eng, err := e.engine(ctx, q, e.p)
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	out["engine"] = eng
	hy, _, err := e.c.SearchPassages(ctx, q, e.p.k)
	if err != nil {
		return nil, err
	}
	for _, p := range hy {
		out["hybrid-5"] = append(out["hybrid-5"], p.Text)
	}
	if out["dense-5"], out["union-5"], err = e.denseAndUnion(ctx, q, e.p); err != nil {
		return nil, fmt.Errorf("dense: %w", err)
	}
	return out, nil
}

// old is the engine before the passage index: BM25 top-k documents, each
// chunked, 48 chunks per page by BM25 embedded, then the 12 chunks of each
// page with the highest information gain against what was judged before.
func (e *engines) old(ctx context.Context, q string) ([]string, error) {
	text := bleve.NewMatchQuery(q)
	text.SetField("text")
	title := bleve.NewMatchQuery(q)
	title.SetField("title")
	title.SetBoost(2)
	res, err := e.docs.Search(bleve.NewSearchRequestOptions(bleve.NewDisjunctionQuery(text, title), e.p.k, 0, false))
	if err != nil {
		return nil, err
	}
	var held [][]float64
	var kept []string
	for _, h := range res.Hits {
		all := research.Chunk(e.text[h.ID].Text, research.IngestChunkConfig(e.p.chunkChars))
		var chunks []string
		for _, i := range research.SelectChunks(all, q, e.p.embedded) {
			chunks = append(chunks, all[i])
		}
		if len(chunks) == 0 {
			continue
		}
		vs, err := e.emb.Embed(ctx, llm.Document, chunks)
		if err != nil {
			return nil, err
		}
		type sc struct {
			i  int
			ig float64
		}
		s := make([]sc, len(chunks))
		for i, v := range vs {
			f := algebra.ToFloat64(v)
			s[i] = sc{i, algebra.InformationGain(f, held)}
			held = append(held, f)
		}
		sort.SliceStable(s, func(a, b int) bool { return s[a].ig > s[b].ig })
		s = s[:min(len(s), e.p.perPage)]
		sort.SliceStable(s, func(a, b int) bool { return s[a].i < s[b].i })
		for _, x := range s {
			kept = append(kept, chunks[x.i])
		}
	}
	return kept, nil
}

// new is the passage engine: hybrid top-k passages, each fetched with its
// neighbours (the window marks its hit passage), chunked as Ingest chunks
// (hits apart from their neighbours, duplicates across windows once), and
// Ingest's selection: hits first, relevance first and novelty second,
// research.ingest_max_chars. A fresh session holds no evidence, so novelty
// is among the batch's chunks only. unmarked drops the hit marks: the
// engine before hits were carried to Ingest.
func (e *engines) new(ctx context.Context, q string, unmarked bool) ([]string, error) {
	ps, _, err := e.c.SearchPassages(ctx, q, e.p.k)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var chunks []string
	var page []int
	var hits []bool
	for i, p := range ps {
		d, err := e.c.Open(research.PassageURL(p.Rel, p.N))
		if err != nil {
			return nil, err
		}
		if unmarked {
			d.Hit = nil
		}
		all, hit := research.WindowChunks(d, research.IngestChunkConfig(e.p.chunkChars))
		for _, j := range research.WithHits(research.SelectChunks(all, q, e.p.embedded), hit) {
			if !seen[all[j]] {
				seen[all[j]] = true
				chunks, page, hits = append(chunks, all[j]), append(page, i), append(hits, hit[j])
			}
		}
	}
	if len(chunks) == 0 {
		return nil, nil
	}
	qv, err := e.emb.Embed(ctx, llm.Query, []string{q})
	if err != nil {
		return nil, err
	}
	vs, err := e.emb.Embed(ctx, llm.Document, chunks)
	if err != nil {
		return nil, err
	}
	cands := make([]research.ChunkCandidate, len(chunks))
	for i, v := range vs {
		cands[i] = research.ChunkCandidate{Page: page[i], Chars: len([]rune(chunks[i])), Relevance: algebra.Cosine32(v, qv[0]), Hit: hits[i]}
	}
	sim := func(i, j int) float64 { return algebra.Cosine32(vs[i], vs[j]) }
	var kept []string
	for _, i := range research.SelectRelevant(cands, sim, e.p.lambda, e.p.perPage, e.p.maxChars) {
		kept = append(kept, chunks[i])
	}
	return kept, nil
}

type row struct {
	name   string
	n      int
	full   int // questions whose every gold string was ingested
	recall float64
	chars  []int
	kinds  map[string][2]int // kind → (full, n)
}

func (r *row) add(kind string, ev float64, chars int) {
	if r.kinds == nil {
		r.kinds = map[string][2]int{}
	}
	k := r.kinds[kind]
	k[1]++
	r.n++
	r.recall += ev
	if ev >= 1 {
		r.full++
		k[0]++
	}
	r.kinds[kind] = k
	r.chars = append(r.chars, chars)
}

func median(v []int) int {
	if len(v) == 0 {
		return 0
	}
	s := append([]int(nil), v...)
	sort.Ints(s)
	return s[len(s)/2]
}

func mean(v []int) int {
	if len(v) == 0 {
		return 0
	}
	t := 0
	for _, x := range v {
		t += x
	}
	return t / len(v)
}

func pct(a, b int) string {
	if b == 0 {
		return "–"
	}
	return strconv.Itoa(a) + "/" + strconv.Itoa(b)
}

func printTable(w interface{ Write([]byte) (int, error) }, names []string, rows map[string]*row, n int, p params) {
	fmt.Fprintf(w, "| engine | all gold strings ingested | mean evidence recall | fact | multihop | paraphrase | chars ingested (mean) | (median) |\n")
	fmt.Fprintf(w, "|---|---|---|---|---|---|---|---|\n")
	for _, name := range names {
		r := rows[name]
		k := func(kind string) string { return pct(r.kinds[kind][0], r.kinds[kind][1]) }
		fmt.Fprintf(w, "| %s | %s | %.2f | %s | %s | %s | %d | %d |\n", name, pct(r.full, r.n), r.recall/float64(max(r.n, 1)),
			k("fact"), k("multihop"), k("paraphrase"), mean(r.chars), median(r.chars))
	}
	fmt.Fprintf(w, "\n%d questions; top-%d; chunk %d chars; old: 12 chunks/page by information gain; new: λ = %.2f, ingest_max_chars = %d\n",
		n, p.k, p.chunkChars, p.lambda, p.maxChars)
}

// engine is what a session ingests with p's options: the corpus search's
// top-k passages (p.candidates BM25 candidates, RRF constant p.rrfK), each
// fetched as Fetch does (with its neighbours, the hit marked), chunked as
// Ingest chunks, and Ingest's selection (research.SelectEvidence): the hits
// first in the search's order when p.hitsInOrder, the chunk that would
// overflow p.maxChars cut to its best window for the query when p.minTrim
// allows, the rest by relevance and novelty.
func (e *engines) engine(ctx context.Context, q string, p params) ([]string, error) {
	kept, _, err := e.engineChunks(ctx, q, p)
	return kept, err
}

// engineChunks is engine with the search rank of the page each kept chunk
// came from.
func (e *engines) engineChunks(ctx context.Context, q string, p params) ([]string, []int, error) {
	ps, _, err := e.c.SearchPassagesWith(ctx, q, p.k, research.SearchOptions{Candidates: p.candidates, RRFK: p.rrfK})
	if err != nil {
		return nil, nil, err
	}
	var chunks []string
	var cands []research.ChunkCandidate
	for i, ps := range ps {
		d, err := e.c.Open(research.PassageURL(ps.Rel, ps.N))
		if err != nil {
			return nil, nil, err
		}
		all, hit := research.WindowChunks(d, research.IngestChunkConfig(p.chunkChars))
		for _, j := range research.WithHits(research.SelectChunks(all, q, p.embedded), hit) {
			chunks = append(chunks, all[j])
			cands = append(cands, research.ChunkCandidate{Page: i, Chars: len([]rune(all[j])), Hit: hit[j]})
		}
	}
	if len(chunks) == 0 {
		return nil, nil, nil
	}
	qv, err := e.emb.Embed(ctx, llm.Query, []string{q})
	if err != nil {
		return nil, nil, err
	}
	vs, err := e.emb.Embed(ctx, llm.Document, chunks)
	if err != nil {
		return nil, nil, err
	}
	for i, v := range vs {
		cands[i].Relevance = algebra.Cosine32(v, qv[0])
	}
	sim := func(i, j int) float64 { return algebra.Cosine32(vs[i], vs[j]) }
	seen := map[string]bool{}
	var kept []string
	var pages []int
	o := research.SelectOptions{Lambda: p.lambda, MaxPerPage: p.perPage, MaxChars: p.maxChars, HitsInOrder: p.hitsInOrder, MinTrim: p.minTrim}
	for _, pk := range research.SelectEvidence(cands, sim, o) {
		t := chunks[pk.Index]
		if pk.Chars > 0 {
			t = research.BestWindow(t, q, pk.Chars)
		}
		if !seen[t] { // the store keeps a chunk once (content hash)
			seen[t] = true
			kept = append(kept, t)
			pages = append(pages, cands[pk.Index].Page)
		}
	}
	return kept, pages, nil
}
