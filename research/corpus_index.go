package research

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/blevesearch/bleve/v2"

	"github.com/lethe-research/lethe/graph"
)

// IngestChunkConfig is the chunker configuration Ingest uses for a target
// chunk size (research.chunk_chars); the corpus index cuts its passages
// with the same one, so a passage and an ingested chunk are the same unit.
func IngestChunkConfig(chunkChars int) ChunkConfig {
	return ChunkConfig{TargetChars: chunkChars, MaxChars: 2 * chunkChars, MinChars: chunkChars / 6}
}

// PassageURL is the corpus URL of passage n of a document:
// corpus:///<rel>?passage=n. Fetching it reads the passage and its
// neighbours (the passage before and after), not the whole document.
func PassageURL(rel string, n int) string {
	return CorpusURL(rel) + "?passage=" + strconv.Itoa(n)
}

// Search implements Provider: the best passages for the query. BM25 (bleve,
// English analyzer) over passage text and document title picks
// CorpusConfig.Candidates passages; with an Embedder they are reranked by
// the cosine of their embedding to the query's, fused with the BM25 rank by
// reciprocal rank (DefaultRRFK). Each hit is one passage
// (PassageURL), its title the document's, its snippet the passage's best
// window for the query, its score the fused (or BM25) score. The index is
// brought up to date first (see CorpusConfig.RecheckInterval). limit <= 0
// means 10. A query without index terms returns no hits.
func (c *Corpus) Search(ctx context.Context, q string, limit int) ([]Hit, error) {
	hits, _, err := c.SearchWith(ctx, q, limit, SearchOptions{})
	return hits, err
}

// SearchOptions are a session's settings of one corpus search; zero fields
// take the corpus's (CorpusConfig.Candidates, CorpusConfig.RRFK).
type SearchOptions struct {
	Candidates int
	RRFK       float64
}

// SearchWith is Search with a session's options; it also returns the
// tokens it sent to the embedder (llm.EstimateAll of the query and of the
// passages the vector cache did not hold), which the session's token
// budget counts.
func (c *Corpus) SearchWith(ctx context.Context, q string, limit int, o SearchOptions) ([]Hit, int, error) {
	if err := c.refresh(ctx, false); err != nil {
		return nil, 0, err
	}
	if limit <= 0 {
		limit = defaultSearchLimit
	}
	ps, scores, tokens, err := c.searchPassages(ctx, q, limit, o)
	if err != nil {
		return nil, tokens, err
	}
	hits := make([]Hit, 0, len(ps))
	for i, p := range ps {
		hits = append(hits, Hit{
			URL: PassageURL(p.Rel, p.N), Title: p.Title, Snippet: Snippet(p.Text, q),
			Score: scores[i], Provider: CorpusProviderName,
		})
	}
	return c.limits.Hits(hits), tokens, nil
}

// SearchPassages returns the best limit passages for q, hybrid-ranked as
// Search describes, with their scores. It does not refresh the index.
func (c *Corpus) SearchPassages(ctx context.Context, q string, limit int) ([]Passage, []float64, error) {
	ps, scores, _, err := c.searchPassages(ctx, q, limit, SearchOptions{})
	return ps, scores, err
}

// SearchPassagesWith is SearchPassages with a session's options.
func (c *Corpus) SearchPassagesWith(ctx context.Context, q string, limit int, o SearchOptions) ([]Passage, []float64, error) {
	ps, scores, _, err := c.searchPassages(ctx, q, limit, o)
	return ps, scores, err
}

func (c *Corpus) searchPassages(ctx context.Context, q string, limit int, o SearchOptions) ([]Passage, []float64, int, error) {
	c.mu.Lock()
	ix := c.ix
	c.mu.Unlock()
	if ix == nil {
		if err := c.refresh(ctx, false); err != nil {
			return nil, nil, 0, err
		}
		c.mu.Lock()
		ix = c.ix
		c.mu.Unlock()
	}
	if o.Candidates <= 0 {
		o.Candidates = c.candidates
	}
	if o.RRFK <= 0 {
		o.RRFK = c.rrfK
	}
	cands, err := ix.bm25(q, max(limit, o.Candidates))
	if err != nil {
		return nil, nil, 0, err
	}
	scores := make([]float64, len(cands))
	for i, p := range cands {
		scores[i] = p.Score
	}
	tokens := 0
	d := c.denseFor(ctx)
	if d != nil && c.embed != nil && strings.TrimSpace(q) != "" {
		qv, n, err := embedQuery(ctx, c.embed, q)
		if err != nil {
			return nil, nil, n, err
		}
		cands, scores = unionOrder(cands, d, qv, c.denseN, o.RRFK)
		cands, scores = dropNearDuplicates(cands, scores, limit, c.dedup)
		return cands, scores, n, nil
	}
	if c.embed != nil && len(cands) > 1 {
		c.mu.Lock() // the cache's in-memory map and bolt writes
		order, fused, n, err := ix.hybridOrder(ctx, c.embed, c.embedModel, q, cands, o.RRFK)
		c.mu.Unlock()
		tokens = n
		if err != nil {
			return nil, nil, tokens, err
		}
		re := make([]Passage, len(order))
		rs := make([]float64, len(order))
		for r, i := range order {
			re[r], rs[r] = cands[i], fused[i]
		}
		cands, scores = re, rs
	}
	cands, scores = dropNearDuplicates(cands, scores, limit, c.dedup)
	return cands, scores, tokens, nil
}

// BM25Passages returns the best limit passages for q by BM25 alone (no
// rerank), for comparison. It does not refresh the index.
func (c *Corpus) BM25Passages(q string, limit int) ([]Passage, error) {
	c.mu.Lock()
	ix := c.ix
	c.mu.Unlock()
	if ix == nil {
		return nil, fmt.Errorf("research: corpus index not built (call Refresh)")
	}
	return ix.bm25(q, limit)
}

// Refresh brings the index up to date now (whatever RecheckInterval says)
// and returns its statistics.
func (c *Corpus) Refresh(ctx context.Context) (IndexStats, error) {
	if err := c.refresh(ctx, true); err != nil {
		return IndexStats{}, err
	}
	return c.Stats(), nil
}

// Stats returns the statistics of the current index (zero before the first
// build).
func (c *Corpus) Stats() IndexStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stats
	s.Skipped = append([]string(nil), s.Skipped...)
	return s
}

// Close releases the index (and its lock on the slot directory).
func (c *Corpus) Close() error {
	c.mu.Lock()
	done := c.denseDone
	c.stopDenseLocked()
	c.mu.Unlock()
	if done != nil { // the build takes c.mu between batches: wait unlocked
		<-done
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dense, c.denseDone = nil, nil
	if c.ix == nil {
		return nil
	}
	err := c.ix.close()
	c.ix, c.records, c.fpValid = nil, nil, false
	return err
}

// open opens the index and reads its file records (c.mu held).
func (c *Corpus) open() error {
	if c.ix != nil {
		return nil
	}
	ix, err := openPassageIndex(c.indexDir, c.slots, indexMeta{Format: indexFormat, Extraction: c.extraction, Chunk: c.chunk})
	if err != nil {
		return err
	}
	recs, err := ix.records()
	if err != nil {
		_ = ix.close()
		return err
	}
	c.ix, c.records = ix, recs
	c.stats.Dir, c.stats.Rebuilt = ix.dir, ix.rebuilt
	return nil
}

func (c *Corpus) refresh(ctx context.Context, force bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if !force && c.ix != nil && c.fpValid && c.recheck > 0 && now.Sub(c.lastCheck) < c.recheck {
		return nil
	}
	start := time.Now()
	opened := c.ix == nil
	if err := c.open(); err != nil {
		return err
	}
	root, err := os.OpenRoot(c.root)
	if err != nil {
		return fmt.Errorf("research: open corpus root %s: %w", c.root, err)
	}
	defer root.Close()
	files, err := c.scan(ctx, root)
	if err != nil {
		return err
	}
	fp := fingerprint(files)
	c.lastCheck = now
	if c.fpValid && fp == c.fp {
		return c.startDense()
	}
	extracted, changed, err := c.update(ctx, root, files)
	if err != nil {
		return err
	}
	c.fp, c.fpValid = fp, true
	c.recordStats(len(files), extracted, changed, fp, now, start)
	if c.onUpdate != nil && (extracted > 0 || changed > 0) {
		st := c.stats
		if !opened {
			st.Rebuilt = ""
		}
		c.onUpdate(st)
	}
	return c.startDense()
}

// updateGroup is how many changed files are extracted and written to the
// index in one bleve batch: bounds the memory of a first build of a large
// corpus, and what a crash mid-build loses.
const updateGroup = 512

// update brings the index in line with files: files whose size or mtime
// changed (or that are new) are extracted again, and their entries replaced
// when their text changed; files gone from the corpus are removed. A crash
// mid-update leaves the records of the groups not written: they are
// extracted again next time.
func (c *Corpus) update(ctx context.Context, root *os.Root, files []fileStat) (extracted, changed int, err error) {
	seen := make(map[string]bool, len(files))
	var todo []fileStat
	for _, f := range files {
		seen[f.rel] = true
		if r, ok := c.records[f.rel]; ok && r.Size == f.size && r.MTime == f.mtime {
			continue
		}
		todo = append(todo, f)
	}
	b := c.ix.idx.NewBatch()
	var gone []string
	for rel, r := range c.records {
		if !seen[rel] {
			deleteFile(b, rel, r)
			gone = append(gone, rel)
		}
	}
	if len(gone) > 0 {
		if err := c.ix.writeBatch(ctx, b, len(todo) == 0); err != nil {
			return 0, 0, fmt.Errorf("research: corpus index remove: %w", err)
		}
		for _, rel := range gone {
			delete(c.records, rel)
		}
	}
	changed = len(gone)
	for g := 0; g < len(todo); g += updateGroup {
		group := todo[g:min(g+updateGroup, len(todo))]
		n, err := c.updateGroup(ctx, root, group, g+updateGroup >= len(todo))
		if err != nil {
			return extracted, changed, err
		}
		extracted += len(group)
		changed += n
	}
	return extracted, changed, nil
}

type extractedFile struct {
	rel string
	rec fileRecord
	ps  []Passage
}

// updateGroup extracts files in parallel and writes their entries in one
// batch (durable: the last of an update, waited for on disk); it returns
// how many files' passages changed.
func (c *Corpus) updateGroup(ctx context.Context, root *os.Root, files []fileStat, durable bool) (int, error) {
	out := make([]extractedFile, len(files))
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < min(c.workers, len(files)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i] = c.extractFile(root, files[i])
			}
		}()
	}
feed:
	for i := range files {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	b := c.ix.idx.NewBatch()
	changed := 0
	for _, e := range out {
		old, had := c.records[e.rel]
		if had && old.Hash == e.rec.Hash && old.Err == e.rec.Err && old.Title == e.rec.Title && old.Passages == e.rec.Passages {
			// Touched, not changed: only the size/mtime record moves.
			if err := putRecord(b, e.rel, e.rec); err != nil {
				return 0, err
			}
			continue
		}
		var op *fileRecord
		if had {
			op = &old
		}
		if err := putFile(b, e.rel, op, e.rec, e.ps); err != nil {
			return 0, err
		}
		changed++
	}
	if err := c.ix.writeBatch(ctx, b, durable); err != nil {
		return 0, fmt.Errorf("research: corpus index write: %w", err)
	}
	for _, e := range out {
		c.records[e.rel] = e.rec
	}
	return changed, nil
}

func putRecord(b *bleve.Batch, rel string, rec fileRecord) error {
	return putFile(b, rel, nil, rec, nil)
}

// extractFile reads one file and cuts it into passages; a file that cannot
// be read or extracted gets a record with the reason and no passages.
func (c *Corpus) extractFile(root *os.Root, f fileStat) extractedFile {
	e := extractedFile{rel: f.rel, rec: fileRecord{Size: f.size, MTime: f.mtime}}
	if limit := c.limit(f.rel); f.size > limit {
		e.rec.Err = fmt.Sprintf("%d bytes exceeds the %d-byte limit", f.size, limit)
		return e
	}
	doc, err := c.read(root, f.rel)
	if err != nil {
		e.rec.Err = err.Error()
		return e
	}
	e.rec.Title = doc.Title
	e.rec.Hash = graph.ContentHash(doc.Title + "\x00" + doc.Text)
	e.ps = cutPassages(f.rel, doc.Title, doc.Text, c.chunk)
	if len(e.ps) == 0 && doc.Title != "" && len(doc.Media) > 0 {
		// A media file: its name is all there is to find it by until it
		// is transcribed.
		e.ps = []Passage{{Rel: f.rel, Title: doc.Title, Text: doc.Title, Start: -1, Hash: graph.ContentHash(doc.Title)}}
	}
	e.rec.Passages = len(e.ps)
	return e
}

// cutPassages chunks a document's text into passages with their byte
// offsets in text (-1 where the chunker changed the text too much to find
// it: a hard-split sentence).
func cutPassages(rel, title, text string, cfg ChunkConfig) []Passage {
	chunks := Chunk(text, cfg)
	out := make([]Passage, len(chunks))
	pos := 0
	for i, ch := range chunks {
		start := -1
		head := ch
		if k := strings.IndexByte(head, '\n'); k >= 0 {
			head = head[:k]
		}
		if k := strings.Index(text[pos:], head); k >= 0 && head != "" {
			start = pos + k
			pos = start + len(head)
		}
		out[i] = Passage{Rel: rel, N: i, Start: start, Title: title, Text: ch, Hash: graph.ContentHash(ch)}
	}
	return out
}

func (c *Corpus) recordStats(files, extracted, changed int, fp uint64, now, start time.Time) {
	var skipped []string
	docs, passages := 0, 0
	for rel, r := range c.records {
		if r.Err != "" {
			skipped = append(skipped, rel+": "+r.Err)
			continue
		}
		docs++
		passages += r.Passages
	}
	sort.Strings(skipped)
	c.stats = IndexStats{
		Root: c.root, Files: files, Docs: docs, Passages: passages, Skipped: skipped,
		Extracted: extracted, Changed: changed, Fingerprint: strconv.FormatUint(fp, 16),
		Built: now, Duration: time.Since(start), Dir: c.stats.Dir, Rebuilt: c.stats.Rebuilt,
	}
}

// openPassage reads passage n of a document with its neighbours: the
// document is extracted and chunked again (the file, not the index, is
// the source of truth), and passages n−1 … n+1 become the text.
func (c *Corpus) openPassage(doc Document, raw string, n int) (Document, error) {
	chunks := Chunk(doc.Text, c.chunk)
	if len(chunks) == 0 && n == 0 && len(doc.Media) > 0 {
		return doc, nil // a media file: its passage is its name
	}
	if n >= len(chunks) {
		return Document{}, refused(raw, fmt.Sprintf("passage %d does not exist (the document has %d now)", n, len(chunks)))
	}
	lo, hi := max(n-1, 0), min(n+2, len(chunks))
	doc.Text = strings.Join(chunks[lo:hi], "\n\n")
	start := 0
	for _, ch := range chunks[lo:n] {
		start += len(ch) + len("\n\n")
	}
	doc.Hit = &Span{Start: start, End: start + len(chunks[n])}
	doc.URL = raw
	doc.Links = nil
	return doc, nil
}

type fileStat struct {
	rel   string
	size  int64
	mtime int64
}
