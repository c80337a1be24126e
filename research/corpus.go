package research

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// CorpusProviderName is the Provider name of the local corpus.
const CorpusProviderName = "corpus"

// CorpusScheme is the URL scheme of corpus documents: corpus:///<path
// relative to the root>, slash-separated.
const CorpusScheme = "corpus"

// Corpus defaults.
const (
	DefaultMaxFileBytes = 8 << 20
	defaultSearchLimit  = 10
)

// DefaultCorpusExtensions are the file extensions indexed when
// CorpusConfig.Extensions is empty.
func DefaultCorpusExtensions() []string {
	return []string{".html", ".htm", ".md", ".markdown", ".txt", ".text"}
}

// CorpusConfig configures a local corpus.
type CorpusConfig struct {
	// Root is the directory holding the documents. Symlinks in the path to
	// Root are resolved once at NewCorpus; below Root nothing outside it is
	// ever read.
	Root string
	// Extensions to index, case-insensitive, with or without the dot.
	// Default: DefaultCorpusExtensions(). Each must have an extractor.
	Extensions []string
	// MaxFileBytes: larger files are skipped by the index and refused by
	// Open. Default 8 MiB.
	MaxFileBytes int64
	// MaxMediaBytes is MaxFileBytes for audio and video files (which are
	// not read for indexing, only transcribed later). Default 512 MiB.
	MaxMediaBytes int64
	// RecheckInterval: Search compares the corpus fingerprint (relative
	// paths, sizes and modification times of the indexable files) with the
	// indexed one at most this often. 0 (the default) checks on every
	// Search: one directory walk, cheap next to an embedding call. After a
	// change only new or changed files are extracted again. A rewrite that
	// keeps both the size and the modification time (same filesystem clock
	// tick) goes unnoticed until the file changes again.
	RecheckInterval time.Duration
	// Extractors by lowercase extension, merged over DefaultExtractors():
	// this is where a PDF extractor or an audio handler slots in.
	Extractors map[string]Extractor
	// Workers extracting files in parallel while indexing. Default:
	// GOMAXPROCS, at most 8.
	Workers int
	// Limits bound the title, URL and text of every document, whatever
	// its extractor (zero fields: defaults).
	Limits Limits
	// IndexDir holds the persistent passage index (bleve) and its embedding
	// cache, in slots IndexDir/0, IndexDir/1, … (one per worker process on
	// the machine). Empty: an in-memory index, rebuilt by every process.
	IndexDir string
	// IndexSlots bounds the slots under IndexDir. Default DefaultIndexSlots.
	IndexSlots int
	// Chunk is the chunker configuration of the passages: the one Ingest
	// uses (IngestChunkConfig). Zero: IngestChunkConfig(DefaultChunkTarget).
	Chunk ChunkConfig
	// Candidates is how many BM25 passages the embedding model reranks.
	// Default DefaultRerankCandidates.
	Candidates int
	// RRFK is the reciprocal rank fusion constant. Default DefaultRRFK.
	RRFK float64
	// Embedder reranks the BM25 candidates; nil: BM25 order only.
	Embedder Embedder
	// EmbedModel names the embedding model in the vector cache's keys.
	EmbedModel string
	// Dense is how many passages nearest the query over the whole corpus
	// the dense stage adds to BM25's candidates (dense.go); 0: no dense
	// stage, BM25's candidates reranked.
	Dense int
	// DenseMax: a corpus of more passages has no dense stage. Default
	// DefaultDenseMax.
	DenseMax int
	// DenseWait is how long a search waits for a dense stage being built
	// before it searches without one. 0: DefaultDenseWait; negative: no
	// wait.
	DenseWait time.Duration
	// OnUpdate, when set, is called after an update that extracted or
	// removed files, with the index's statistics (Rebuilt only on the
	// update that followed a rebuild), under the corpus's lock: the
	// worker logs it, as a first search that takes minutes after an
	// upgrade is otherwise unexplained.
	OnUpdate func(IndexStats)
	// Dedup is the share of a passage's word sequences found in the
	// passages ranked above it at which a search leaves it out
	// (passage_dedup.go). 0: DefaultDedupShare; negative: keep all.
	Dedup float64
}

// IndexStats describes the corpus index after its last (re)build.
type IndexStats struct {
	Root        string        // resolved root directory
	Files       int           // indexable files seen (including skipped ones)
	Docs        int           // documents in the index
	Passages    int           // passages in the index
	Dir         string        // the index slot directory ("" in memory)
	Rebuilt     string        // why the on-disk index was rebuilt when opened ("" when reopened)
	Skipped     []string      // "rel: reason" for files that could not be indexed, sorted
	Extracted   int           // files extracted by the last update (the rest were reused)
	Changed     int           // files whose entries the last update replaced or removed
	Fingerprint string        // hex FNV-64a of paths, sizes and mtimes
	Built       time.Time     // when the index was last rebuilt
	Duration    time.Duration // how long the last rebuild took (walk + extraction + index)
}

// Corpus is the local-corpus Provider and Fetcher: hybrid passage search
// (bleve BM25, reranked by the embedding model) over a directory of
// documents, and safe reading of corpus:/// URLs. It is safe for
// concurrent use; Close releases the index.
type Corpus struct {
	root     string // absolute, symlinks resolved
	exts     map[string]Extractor
	maxBytes int64
	maxMedia int64
	recheck  time.Duration
	workers  int
	limits   Limits
	now      func() time.Time
	onUpdate func(IndexStats)
	// extraction is the extractionVersion the index is built under (a
	// field so that a test can build an index as an older worker did).
	extraction int

	indexDir   string
	slots      int
	chunk      ChunkConfig
	candidates int
	rrfK       float64
	dedup      float64
	embed      Embedder
	embedModel string
	denseN     int
	denseMax   int
	denseWait  time.Duration

	mu        sync.Mutex
	ix        *passageIndex
	records   map[string]fileRecord
	fp        uint64
	fpValid   bool
	lastCheck time.Time
	stats     IndexStats

	// The dense stage (dense.go): the stage of the index fingerprint it
	// was built for, and the build running for denseFP.
	dense     *denseStage
	denseSt   DenseStatus
	denseFP   uint64
	denseStop context.CancelFunc
	denseDone chan struct{}
}

// NewCorpus validates cfg and returns a corpus; the index is built lazily
// by the first Search (or Refresh).
func NewCorpus(cfg CorpusConfig) (*Corpus, error) {
	if strings.TrimSpace(cfg.Root) == "" {
		return nil, errors.New("research: corpus root is empty")
	}
	abs, err := filepath.Abs(cfg.Root)
	if err != nil {
		return nil, fmt.Errorf("research: corpus root %q: %w", cfg.Root, err)
	}
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("research: corpus root %q does not exist", cfg.Root)
		}
		return nil, fmt.Errorf("research: corpus root %q: %w", cfg.Root, err)
	}
	fi, err := os.Stat(resolved)
	if err != nil {
		return nil, fmt.Errorf("research: corpus root %q: %w", cfg.Root, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("research: corpus root %q is not a directory", cfg.Root)
	}
	if cfg.MaxFileBytes < 0 {
		return nil, fmt.Errorf("research: corpus max file bytes %d is negative", cfg.MaxFileBytes)
	}
	if cfg.RecheckInterval < 0 {
		return nil, fmt.Errorf("research: corpus recheck interval %s is negative", cfg.RecheckInterval)
	}
	lim := cfg.Limits.withDefaults()
	all := lim.Extractors()
	for ext, fn := range cfg.Extractors {
		all[normExt(ext)] = fn
	}
	extList := cfg.Extensions
	if len(extList) == 0 {
		extList = DefaultCorpusExtensions()
	}
	exts := map[string]Extractor{}
	for _, e := range extList {
		ne := normExt(e)
		if ne == "." {
			return nil, fmt.Errorf("research: corpus extension %q is empty", e)
		}
		fn := all[ne]
		if fn == nil {
			return nil, fmt.Errorf("research: corpus extension %q has no extractor (add one in CorpusConfig.Extractors)", e)
		}
		exts[ne] = fn
	}
	c := &Corpus{
		root:       resolved,
		exts:       exts,
		maxBytes:   cfg.MaxFileBytes,
		maxMedia:   cfg.MaxMediaBytes,
		recheck:    cfg.RecheckInterval,
		workers:    cfg.Workers,
		limits:     lim,
		now:        time.Now,
		onUpdate:   cfg.OnUpdate,
		extraction: extractionVersion,
		indexDir:   cfg.IndexDir, slots: cfg.IndexSlots, chunk: cfg.Chunk, candidates: cfg.Candidates,
		rrfK: cfg.RRFK, embed: cfg.Embedder, embedModel: cfg.EmbedModel, denseN: cfg.Dense, denseMax: cfg.DenseMax, denseWait: cfg.DenseWait, dedup: cfg.Dedup,
	}
	if c.denseMax <= 0 {
		c.denseMax = DefaultDenseMax
	}
	if c.denseWait == 0 {
		c.denseWait = DefaultDenseWait
	}
	if c.chunk == (ChunkConfig{}) {
		c.chunk = IngestChunkConfig(DefaultChunkTarget)
	}
	c.chunk = c.chunk.withDefaults()
	switch {
	case c.dedup == 0:
		c.dedup = DefaultDedupShare
	case c.dedup < 0:
		c.dedup = 0
	}
	if c.candidates <= 0 {
		c.candidates = DefaultRerankCandidates
	}
	if c.maxBytes == 0 {
		c.maxBytes = DefaultMaxFileBytes
	}
	if c.maxMedia <= 0 {
		c.maxMedia = 512 << 20
	}
	if c.workers <= 0 {
		c.workers = min(runtime.GOMAXPROCS(0), 8)
	}
	return c, nil
}

func normExt(e string) string {
	e = strings.ToLower(strings.TrimSpace(e))
	if !strings.HasPrefix(e, ".") {
		e = "." + e
	}
	return e
}

// Root returns the resolved root directory.
func (c *Corpus) Root() string { return c.root }

// Name implements Provider.
func (c *Corpus) Name() string { return CorpusProviderName }

// CorpusURL returns the corpus URL of a slash-separated path relative to the
// root: corpus:///<rel>, percent-escaped where needed.
func CorpusURL(rel string) string {
	return (&url.URL{Scheme: CorpusScheme, Path: "/" + strings.TrimPrefix(rel, "/")}).String()
}

// scan lists the indexable files below the root in lexical order. Hidden
// files and directories (name starting with ".") are skipped; symlinked
// directories are not followed; a symlinked file is included only if it
// resolves inside the root.
func (c *Corpus) scan(ctx context.Context, root *os.Root) ([]fileStat, error) {
	var files []fileStat
	err := filepath.WalkDir(c.root, func(p string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if p == c.root {
			if err != nil {
				return err
			}
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if err != nil { // unreadable subdirectory: skip it
			if d != nil && d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		if _, ok := c.exts[strings.ToLower(filepath.Ext(d.Name()))]; !ok {
			return nil
		}
		rel, err := filepath.Rel(c.root, p)
		if err != nil {
			return nil
		}
		var info fs.FileInfo
		if d.Type()&fs.ModeSymlink != 0 {
			info, err = c.statInRoot(root, rel) // follows the link, refuses escapes
		} else {
			info, err = d.Info()
		}
		if err != nil || !info.Mode().IsRegular() {
			return nil
		}
		files = append(files, fileStat{rel: filepath.ToSlash(rel), size: info.Size(), mtime: info.ModTime().UnixNano()})
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("research: scan corpus %s: %w", c.root, err)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].rel < files[j].rel })
	return files, nil
}

// openInRoot opens rel through root, so nothing outside the root can be
// reached. os.Root follows relative symlinks that stay inside the root but
// refuses every absolute symlink; for those the target is resolved and, if
// it lies inside the root, opened (again through root, so a concurrent
// change of the link can only lead to a refusal).
func (c *Corpus) openInRoot(root *os.Root, rel string) (*os.File, error) {
	f, err := root.Open(filepath.FromSlash(rel))
	if err == nil || !isEscape(err) {
		return f, err
	}
	inner, ok := c.resolveInside(rel)
	if !ok {
		return nil, err
	}
	return root.Open(inner)
}

func (c *Corpus) statInRoot(root *os.Root, rel string) (fs.FileInfo, error) {
	fi, err := root.Stat(rel)
	if err == nil || !isEscape(err) {
		return fi, err
	}
	inner, ok := c.resolveInside(rel)
	if !ok {
		return nil, err
	}
	return root.Stat(inner)
}

// resolveInside resolves all symlinks of rel and returns the result relative
// to the root when it stays inside.
func (c *Corpus) resolveInside(rel string) (string, bool) {
	p, err := filepath.EvalSymlinks(filepath.Join(c.root, filepath.FromSlash(rel)))
	if err != nil {
		return "", false
	}
	inner, err := filepath.Rel(c.root, p)
	if err != nil || inner == ".." || strings.HasPrefix(inner, ".."+string(filepath.Separator)) || filepath.IsAbs(inner) {
		return "", false
	}
	return inner, true
}

func isEscape(err error) bool {
	return err != nil && strings.Contains(err.Error(), "escapes from parent")
}

func fingerprint(files []fileStat) uint64 {
	h := fnv.New64a()
	var buf []byte
	for _, f := range files {
		buf = buf[:0]
		buf = append(buf, f.rel...)
		buf = append(buf, 0)
		buf = strconv.AppendInt(buf, f.size, 10)
		buf = append(buf, 0)
		buf = strconv.AppendInt(buf, f.mtime, 10)
		buf = append(buf, '\n')
		h.Write(buf)
	}
	return h.Sum64()
}

// read opens rel (slash-separated, already validated) inside root and
// extracts it.
func (c *Corpus) read(root *os.Root, rel string) (Document, error) {
	u := CorpusURL(rel)
	fn := c.exts[strings.ToLower(path.Ext(rel))]
	if fn == nil {
		return Document{}, refused(u, fmt.Sprintf("file type %q is not part of the corpus", path.Ext(rel)))
	}
	f, err := c.openInRoot(root, rel)
	if err != nil {
		if isEscape(err) {
			return Document{}, refused(u, "path escapes the corpus root")
		}
		return Document{}, fmt.Errorf("research: open %s: %w", u, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Document{}, fmt.Errorf("research: stat %s: %w", u, err)
	}
	if !fi.Mode().IsRegular() {
		return Document{}, refused(u, "not a regular file")
	}
	limit := c.limit(rel)
	if fi.Size() > limit {
		return Document{}, refused(u, fmt.Sprintf("%d bytes exceeds the %d-byte limit", fi.Size(), limit))
	}
	lr := &io.LimitedReader{R: f, N: limit + 1}
	doc, err := fn(lr, u)
	if err != nil {
		return Document{}, err
	}
	if lr.N <= 0 {
		return Document{}, refused(u, fmt.Sprintf("file grew beyond the %d-byte limit", limit))
	}
	doc.URL = u
	if doc.Title == "" {
		base := path.Base(rel)
		doc.Title = strings.TrimSuffix(base, path.Ext(base))
	}
	return c.limits.Document(doc, u), nil
}

// Open reads a corpus:///<path> URL: the whole document, or with
// ?passage=<n> (a Search hit) passage n and its neighbours. It refuses
// other schemes, hosts, other queries, absolute or non-canonical paths, ".." segments, hidden files,
// file types not in the corpus, files over MaxFileBytes, and symlinks that
// lead outside the root (the file is opened through os.Root, so the check
// and the read cannot be raced). A fragment is ignored. Refusals wrap
// ErrRefused.
func (c *Corpus) Open(raw string) (Document, error) {
	rel, err := corpusRel(raw)
	if err != nil {
		return Document{}, err
	}
	root, err := os.OpenRoot(c.root)
	if err != nil {
		return Document{}, fmt.Errorf("research: open corpus root %s: %w", c.root, err)
	}
	defer root.Close()
	doc, err := c.read(root, rel)
	if err != nil {
		return Document{}, err
	}
	if n, ok := passageOf(raw); ok {
		return c.openPassage(doc, PassageURL(rel, n), n)
	}
	return doc, nil
}

// passageQuery reports whether a corpus URL's query is passage=<n>, n a
// non-negative decimal without leading zeros.
func passageQuery(q string) bool {
	v, ok := strings.CutPrefix(q, "passage=")
	if !ok || v == "" || len(v) > 9 || (len(v) > 1 && v[0] == '0') {
		return false
	}
	for _, r := range v {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// passageOf returns the passage number of a (validated) corpus URL.
func passageOf(raw string) (int, bool) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || !passageQuery(u.RawQuery) {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimPrefix(u.RawQuery, "passage="))
	return n, err == nil
}

// limit is the size cap of a file: MaxMediaBytes for audio and video,
// MaxFileBytes for the rest.
func (c *Corpus) limit(rel string) int64 {
	if mediaExts[strings.ToLower(path.Ext(rel))] != "" {
		return c.maxMedia
	}
	return c.maxBytes
}

// LocalPath returns the file system path of the file behind a corpus URL,
// for tools that read files by name (ffmpeg). It applies Open's checks:
// the URL must be canonical, the file inside the root (symlinks resolved),
// regular, of a corpus type and within the size cap.
func (c *Corpus) LocalPath(raw string) (string, error) {
	rel, err := corpusRel(raw)
	if err != nil {
		return "", err
	}
	u := CorpusURL(rel)
	if c.exts[strings.ToLower(path.Ext(rel))] == nil {
		return "", refused(u, fmt.Sprintf("file type %q is not part of the corpus", path.Ext(rel)))
	}
	inner, ok := c.resolveInside(rel)
	if !ok {
		return "", refused(u, "path escapes the corpus root or does not exist")
	}
	p := filepath.Join(c.root, inner)
	fi, err := os.Stat(p)
	if err != nil {
		return "", fmt.Errorf("research: stat %s: %w", u, err)
	}
	if !fi.Mode().IsRegular() {
		return "", refused(u, "not a regular file")
	}
	if fi.Size() > c.limit(rel) {
		return "", refused(u, fmt.Sprintf("%d bytes exceeds the %d-byte limit", fi.Size(), c.limit(rel)))
	}
	return p, nil
}

// Fetch implements Fetcher for corpus URLs.
func (c *Corpus) Fetch(ctx context.Context, raw string) (Document, error) {
	if err := ctx.Err(); err != nil {
		return Document{}, err
	}
	return c.Open(raw)
}

// corpusRel validates a corpus URL lexically and returns its
// slash-separated path relative to the root.
func corpusRel(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	u, err := url.Parse(raw)
	if err != nil {
		return "", refused(raw, "not a valid URL: "+err.Error())
	}
	if !strings.EqualFold(u.Scheme, CorpusScheme) {
		if u.Scheme == "" {
			return "", refused(raw, "not a corpus:/// URL (no scheme)")
		}
		return "", refused(raw, fmt.Sprintf("scheme %q is not %s://", u.Scheme, CorpusScheme))
	}
	if u.Opaque != "" {
		return "", refused(raw, "corpus URLs have the form corpus:///path")
	}
	if u.Host != "" || u.User != nil {
		return "", refused(raw, "corpus URLs have no host (use corpus:///path)")
	}
	if u.ForceQuery || (u.RawQuery != "" && !passageQuery(u.RawQuery)) {
		return "", refused(raw, "corpus URLs take no query but ?passage=<n>")
	}
	p := u.Path
	if !strings.HasPrefix(p, "/") || len(p) == 1 {
		return "", refused(raw, "empty path")
	}
	rel := p[1:]
	if strings.HasPrefix(rel, "/") || filepath.IsAbs(rel) || strings.ContainsAny(rel, "\\\x00") || (len(rel) > 1 && rel[1] == ':') {
		return "", refused(raw, "absolute paths are not allowed")
	}
	for _, seg := range strings.Split(rel, "/") {
		if seg == ".." {
			return "", refused(raw, "path escapes the corpus root (..)")
		}
	}
	if path.Clean(rel) != rel {
		return "", refused(raw, "path is not canonical")
	}
	for _, seg := range strings.Split(rel, "/") {
		if strings.HasPrefix(seg, ".") {
			return "", refused(raw, "hidden files are not part of the corpus")
		}
	}
	return rel, nil
}
