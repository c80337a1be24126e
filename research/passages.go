package research

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search/query"
	index "github.com/blevesearch/bleve_index_api"
	bolt "go.etcd.io/bbolt"
)

// The passage index: one bleve (scorch) index per corpus with two kinds of
// entries, keyed by the corpus-relative path:
//
//   - "d:<rel>"   a document: its title (searchable) and, stored, what the
//     incremental update compares (size, mtime, text hash, passage count,
//     the extraction error of a file that could not be indexed);
//   - "p:<rel>#n" passage n of the document: the chunk Chunk made of its
//     text (the same chunker Ingest uses), with its byte offset, the
//     document title and the hash of the passage text.
//
// Scoring is bleve's BM25 (IndexMapping.ScoringModel = "bm25", k1 = 1.2,
// b = 0.75) over the English analyzer (Unicode tokenizer, possessives,
// lowercase, stop words, Porter stemmer).
const (
	kindDoc     = "doc"
	kindPassage = "passage"
	metaKey     = "lethe/meta"
	// indexFormat changes whenever what is indexed changes meaning: an index
	// of another format (or another chunk configuration, or extraction
	// version: extractionVersion) is rebuilt.
	// 2: no "_all" field, no doc values.
	indexFormat = 2
	// lockWait is how long opening a slot waits for another process's lock
	// before trying the next slot.
	lockWait = 300 * time.Millisecond
	// DefaultIndexSlots is how many index copies may live under one index
	// directory: one per worker process sharing the machine.
	DefaultIndexSlots = 4
)

// indexMeta is stored inside the index; a mismatch rebuilds it.
type indexMeta struct {
	Format     int         `json:"format"`
	Extraction int         `json:"extraction"` // extractionVersion; absent (0) before it was recorded
	Chunk      ChunkConfig `json:"chunk"`
}

// fileRecord is the stored state of one corpus file: what the incremental
// update compares with a new scan.
type fileRecord struct {
	Size     int64
	MTime    int64
	Hash     string // ContentHash of the extracted text; "" when skipped
	Title    string
	Passages int
	Err      string // why the file is not indexed
}

// passageIndex is an open bleve index and its embedding cache. Not safe for
// concurrent writes; Corpus serializes them.
type passageIndex struct {
	dir     string // slot directory; "" for an in-memory index
	idx     bleve.Index
	emb     *bolt.DB // nil for an in-memory index (then mem holds the vectors)
	mem     map[string][]float32
	rebuilt string // why the slot was rebuilt at open ("" when reopened or new)
}

// ErrIndexLocked says every slot of a corpus index directory is held by
// another process.
var ErrIndexLocked = errors.New("research: corpus index is locked by other workers")

func passageMapping() mapping.IndexMapping {
	im := bleve.NewIndexMapping()
	im.ScoringModel = index.BM25Scoring
	im.DefaultAnalyzer = en.AnalyzerName
	dm := bleve.NewDocumentStaticMapping()
	// Every query names its field, and results sort by score and id: no
	// field goes into the composite "_all" field (it indexed the text a
	// second time) and none keeps doc values (bench/index: both were
	// about a fifth of the build's CPU and of the index's size).
	text := bleve.NewTextFieldMapping()
	text.Analyzer = en.AnalyzerName
	text.IncludeTermVectors, text.IncludeInAll, text.DocValues = false, false, false
	dm.AddFieldMappingsAt("text", text)
	title := bleve.NewTextFieldMapping()
	title.Analyzer = en.AnalyzerName
	title.IncludeTermVectors, title.IncludeInAll, title.DocValues = false, false, false
	dm.AddFieldMappingsAt("title", title)
	kw := bleve.NewKeywordFieldMapping()
	kw.IncludeTermVectors, kw.IncludeInAll, kw.DocValues = false, false, false
	dm.AddFieldMappingsAt("kind", kw)
	for _, f := range []string{"rel", "hash", "err", "size", "mtime"} {
		s := bleve.NewKeywordFieldMapping()
		s.Index, s.IncludeTermVectors, s.IncludeInAll, s.DocValues = false, false, false, false
		dm.AddFieldMappingsAt(f, s)
	}
	for _, f := range []string{"n", "start", "passages"} {
		s := bleve.NewNumericFieldMapping()
		s.Index, s.IncludeInAll, s.DocValues = false, false, false
		dm.AddFieldMappingsAt(f, s)
	}
	im.DefaultMapping = dm
	return im
}

// openPassageIndex opens (or creates) the first slot under dir that no other
// process holds: <dir>/0, <dir>/1, … A restarted worker gets its old slot
// back (the lock died with the old process) and reopens it instead of
// rebuilding; a second worker on the machine gets the next slot. A slot
// that cannot be opened for any other reason (corrupt, from another bleve
// format) is removed and rebuilt, and rebuilt says why. dir "" is an
// in-memory index.
func openPassageIndex(dir string, slots int, meta indexMeta) (*passageIndex, error) {
	if dir == "" {
		idx, err := bleve.NewUsing("", passageMapping(), scorch.Name, bleve.Config.DefaultKVStore, nil)
		if err != nil {
			return nil, fmt.Errorf("research: in-memory corpus index: %w", err)
		}
		return &passageIndex{idx: idx, mem: map[string][]float32{}}, nil
	}
	if slots <= 0 {
		slots = DefaultIndexSlots
	}
	for s := 0; s < slots; s++ {
		p, err := openSlot(filepath.Join(dir, strconv.Itoa(s)), meta)
		if errors.Is(err, ErrIndexLocked) {
			continue
		}
		return p, err
	}
	return nil, fmt.Errorf("%w: all %d slots under %s are in use", ErrIndexLocked, slots, dir)
}

func isLockTimeout(err error) bool {
	return errors.Is(err, bolt.ErrTimeout) || (err != nil && strings.Contains(err.Error(), "timeout"))
}

func openSlot(dir string, meta indexMeta) (*passageIndex, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("research: corpus index dir %s: %w", dir, err)
	}
	// The embedding cache's lock doubles as the slot's lock: bbolt takes it
	// before bleve's, with a timeout (bleve's own bolt open would wait).
	emb, err := bolt.Open(filepath.Join(dir, "embeddings.db"), 0o600, &bolt.Options{Timeout: lockWait})
	if err != nil {
		if isLockTimeout(err) {
			return nil, ErrIndexLocked
		}
		// A corrupt cache is only a cache.
		_ = os.Remove(filepath.Join(dir, "embeddings.db"))
		if emb, err = bolt.Open(filepath.Join(dir, "embeddings.db"), 0o600, &bolt.Options{Timeout: lockWait}); err != nil {
			return nil, fmt.Errorf("research: corpus embedding cache %s: %w", dir, err)
		}
	}
	p := &passageIndex{dir: dir, emb: emb}
	bdir := filepath.Join(dir, "bleve")
	idx, err := bleve.OpenUsing(bdir, scorchConfig())
	ok := err == nil // (a failed open returns a typed nil, not nil)
	switch {
	case ok:
		if why := checkMeta(idx, meta); why != "" {
			_ = idx.Close()
			ok, p.rebuilt = false, why
		}
	case errors.Is(err, bleve.ErrorIndexPathDoesNotExist):
	case isLockTimeout(err):
		_ = emb.Close()
		return nil, ErrIndexLocked
	default:
		p.rebuilt = "cannot open: " + err.Error()
	}
	if !ok {
		if err := os.RemoveAll(bdir); err != nil {
			_ = emb.Close()
			return nil, fmt.Errorf("research: remove corpus index %s: %w", bdir, err)
		}
		if idx, err = createIndex(bdir, meta); err != nil {
			_ = emb.Close()
			return nil, err
		}
	}
	p.idx = idx
	return p, nil
}

// scorchConfig is the runtime configuration of an on-disk index. Batches
// are unsafe: Batch returns once the segment is searchable, and the
// persister writes it to disk while the next group is extracted, instead
// of each batch waiting for its own fsync. A write is made durable by
// writeBatch(…, durable=true); a crash before that loses whole segments,
// passages and file records together, so their files are extracted again
// at the next refresh.
func scorchConfig() map[string]interface{} {
	return map[string]interface{}{"bolt_timeout": lockWait.String(), "unsafe_batch": true}
}

// writeBatch applies b; durable waits until it (and every batch before
// it) is on disk. An in-memory index is never waited for.
func (p *passageIndex) writeBatch(ctx context.Context, b *bleve.Batch, durable bool) error {
	if !durable || p.dir == "" {
		return p.idx.Batch(b)
	}
	done := make(chan error, 1)
	b.SetPersistedCallback(func(err error) { done <- err })
	if err := p.idx.Batch(b); err != nil {
		return err
	}
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func createIndex(bdir string, meta indexMeta) (bleve.Index, error) {
	idx, err := bleve.NewUsing(bdir, passageMapping(), scorch.Name, bleve.Config.DefaultKVStore, scorchConfig())
	if err != nil {
		return nil, fmt.Errorf("research: create corpus index %s: %w", bdir, err)
	}
	b, _ := json.Marshal(meta)
	if err := idx.SetInternal([]byte(metaKey), b); err != nil {
		_ = idx.Close()
		return nil, fmt.Errorf("research: corpus index %s: %w", bdir, err)
	}
	return idx, nil
}

// checkMeta returns why an opened index cannot be used as it is ("" when
// it can).
func checkMeta(idx bleve.Index, want indexMeta) string {
	b, err := idx.GetInternal([]byte(metaKey))
	if err != nil || len(b) == 0 {
		return "no format record"
	}
	var got indexMeta
	if err := json.Unmarshal(b, &got); err != nil {
		return "unreadable format record"
	}
	if got != want {
		return fmt.Sprintf("built with format %d, extraction %d and chunks %+v, want format %d, extraction %d and chunks %+v",
			got.Format, got.Extraction, got.Chunk, want.Format, want.Extraction, want.Chunk)
	}
	return ""
}

func (p *passageIndex) close() error {
	var errs []error
	if p.idx != nil {
		errs = append(errs, p.idx.Close())
	}
	if p.emb != nil {
		errs = append(errs, p.emb.Close())
	}
	return errors.Join(errs...)
}

func docID(rel string) string            { return "d:" + rel }
func passageID(rel string, n int) string { return "p:" + rel + "#" + strconv.Itoa(n) }

// records reads the stored state of every file in the index.
func (p *passageIndex) records() (map[string]fileRecord, error) {
	n, err := p.idx.DocCount()
	if err != nil {
		return nil, fmt.Errorf("research: corpus index count: %w", err)
	}
	out := map[string]fileRecord{}
	const page = 10000
	q := bleve.NewTermQuery(kindDoc)
	q.SetField("kind")
	for from := 0; from < int(n); from += page {
		req := bleve.NewSearchRequestOptions(q, page, from, false)
		req.Fields = []string{"rel", "size", "mtime", "hash", "title", "passages", "err"}
		req.SortBy([]string{"_id"})
		res, err := p.idx.Search(req)
		if err != nil {
			return nil, fmt.Errorf("research: corpus index records: %w", err)
		}
		for _, h := range res.Hits {
			rel, _ := h.Fields["rel"].(string)
			out[rel] = fileRecord{
				Size: atoi64(h.Fields["size"]), MTime: atoi64(h.Fields["mtime"]),
				Hash: str(h.Fields["hash"]), Title: str(h.Fields["title"]),
				Passages: int(num(h.Fields["passages"])), Err: str(h.Fields["err"]),
			}
		}
		if len(res.Hits) < page {
			break
		}
	}
	return out, nil
}

// atoi64 reads an int64 stored as a decimal string (a float64 would lose
// the nanoseconds of an mtime).
func atoi64(v any) int64 {
	n, _ := strconv.ParseInt(str(v), 10, 64)
	return n
}

func num(v any) float64 {
	f, _ := v.(float64)
	return f
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// Passage is one indexed passage.
type Passage struct {
	Rel   string
	N     int
	Start int // byte offset of the passage in the document's text; -1 when unknown
	Title string
	Text  string
	Hash  string
	Score float64 // BM25
}

// put replaces the entries of one file in b: the old passages (old.Passages
// of them) are deleted, the new ones and the document entry added.
func putFile(b *bleve.Batch, rel string, old *fileRecord, rec fileRecord, ps []Passage) error {
	if old != nil {
		for n := 0; n < old.Passages; n++ {
			b.Delete(passageID(rel, n))
		}
	}
	for _, ps := range ps {
		if err := b.Index(passageID(rel, ps.N), map[string]any{
			"kind": kindPassage, "rel": rel, "n": float64(ps.N), "start": float64(ps.Start),
			"title": ps.Title, "text": ps.Text, "hash": ps.Hash,
		}); err != nil {
			return fmt.Errorf("research: index %s: %w", rel, err)
		}
	}
	return b.Index(docID(rel), map[string]any{
		"kind": kindDoc, "rel": rel, "title": rec.Title, "size": strconv.FormatInt(rec.Size, 10), "mtime": strconv.FormatInt(rec.MTime, 10),
		"hash": rec.Hash, "passages": float64(rec.Passages), "err": rec.Err,
	})
}

func deleteFile(b *bleve.Batch, rel string, old fileRecord) {
	for n := 0; n < old.Passages; n++ {
		b.Delete(passageID(rel, n))
	}
	b.Delete(docID(rel))
}

// titleBoost weighs a match in the document title against one in the
// passage text: the title names the subject of every passage of the
// document, so it helps but must not lift a whole chapter's passages over
// the one that answers.
const titleBoost = 0.3

// bm25 returns the best n passages for q by BM25 over their text and
// (boosted by titleBoost) their document's title.
func (p *passageIndex) bm25(q string, n int) ([]Passage, error) {
	if strings.TrimSpace(q) == "" || n <= 0 {
		return nil, nil
	}
	text := bleve.NewMatchQuery(q)
	text.SetField("text")
	title := bleve.NewMatchQuery(q)
	title.SetField("title")
	title.SetBoost(titleBoost)
	kind := bleve.NewTermQuery(kindPassage)
	kind.SetField("kind")
	kind.SetBoost(0) // a filter: adds nothing to the score
	full := bleve.NewConjunctionQuery(kind, bleve.NewDisjunctionQuery(text, title))
	out, err := p.passages(query.Query(full), n, "-_score", "_id") // ties: deterministic
	if err != nil {
		return nil, fmt.Errorf("research: corpus search: %w", err)
	}
	return out, nil
}

// passages runs q for at most n passages in the given order.
func (p *passageIndex) passages(q query.Query, n int, order ...string) ([]Passage, error) {
	req := bleve.NewSearchRequestOptions(q, n, 0, false)
	req.Fields = []string{"rel", "n", "start", "title", "text", "hash"}
	req.SortBy(order)
	res, err := p.idx.Search(req)
	if err != nil {
		return nil, err
	}
	out := make([]Passage, 0, len(res.Hits))
	for _, h := range res.Hits {
		out = append(out, Passage{
			Rel: str(h.Fields["rel"]), N: int(num(h.Fields["n"])), Start: int(num(h.Fields["start"])),
			Title: str(h.Fields["title"]), Text: str(h.Fields["text"]), Hash: str(h.Fields["hash"]), Score: h.Score,
		})
	}
	return out, nil
}
