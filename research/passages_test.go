package research

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"

	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/llm"
	"github.com/lethe-research/lethe/llm/llmtest"
)

// countingEmbedder is the llmtest deterministic embedding, counting texts.
type countingEmbedder struct {
	mu    sync.Mutex
	texts int
	calls int
	fail  error
}

func (e *countingEmbedder) Embed(_ context.Context, kind llm.EmbedKind, texts []string) ([][]float32, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.fail != nil {
		return nil, e.fail
	}
	e.calls++
	e.texts += len(texts)
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = llmtest.Embedding(kind.String()+" "+t, 64)
	}
	return out, nil
}

func (e *countingEmbedder) count() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.texts
}

func indexedCorpus(t *testing.T, root, dir string, emb Embedder) *Corpus {
	t.Helper()
	return refreshedCorpus(t, CorpusConfig{Root: root, IndexDir: dir, Embedder: emb, EmbedModel: "test", IndexSlots: 2})
}

// refreshedCorpus is a corpus of cfg with its index built, closed at the
// end of the test.
func refreshedCorpus(t *testing.T, cfg CorpusConfig) *Corpus {
	t.Helper()
	c, err := NewCorpus(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	return c
}

// touch moves a file's mtime forward so the scan sees a change even within
// one filesystem clock tick.
func touch(t *testing.T, p string, d time.Duration) {
	t.Helper()
	at := time.Now().Add(d)
	if err := os.Chtimes(p, at, at); err != nil {
		t.Fatal(err)
	}
}

// TestPassageIndexIncremental: adding, changing, touching and removing one
// file touches only that file's entries, on a persistent index.
func TestPassageIndexIncremental(t *testing.T) {
	root, dir := smallCorpus(t), t.TempDir()
	c := indexedCorpus(t, root, dir, nil)
	st := c.Stats()
	if st.Docs != 4 || st.Extracted != 4 || st.Changed != 4 || st.Passages < 4 || st.Dir != filepath.Join(dir, "0") {
		t.Fatalf("first build %+v", st)
	}
	step := func(name string, wantExtracted, wantChanged int) IndexStats {
		t.Helper()
		st, err := c.Refresh(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if st.Extracted != wantExtracted || st.Changed != wantChanged {
			t.Fatalf("%s: extracted %d changed %d, want %d and %d (%+v)", name, st.Extracted, st.Changed, wantExtracted, wantChanged, st)
		}
		return st
	}
	writeFile(t, root, "cooking/kombucha.md", "# Kombucha\n\nKombucha is fermented sweet tea with a SCOBY.")
	step("add", 1, 1)
	writeFile(t, root, "cooking/bread.txt", "Rye bread\n\nRye bread with caraway seeds.")
	touch(t, filepath.Join(root, "cooking", "bread.txt"), 2*time.Second)
	step("change", 1, 1)
	if hits, _ := c.Search(t.Context(), "sourdough", 5); len(hits) != 0 {
		t.Fatalf("old passages of a changed file remain: %v", hitURLs(hits))
	}
	touch(t, filepath.Join(root, "gardening", "tomatoes.md"), 3*time.Second)
	step("touch (same text)", 1, 0)
	if err := os.Remove(filepath.Join(root, "cooking", "kombucha.md")); err != nil {
		t.Fatal(err)
	}
	st = step("remove", 0, 1)
	if hits, _ := c.Search(t.Context(), "kombucha", 5); len(hits) != 0 || st.Docs != 4 {
		t.Fatalf("removed file still found: %v %+v", hitURLs(hits), st)
	}
	built := c.Stats().Built
	if _, err := c.Refresh(t.Context()); err != nil || !c.Stats().Built.Equal(built) {
		t.Fatalf("unchanged corpus updated again: %v", err)
	}
}

// TestPassageIndexReopens: a restarted worker opens its index instead of
// rebuilding it, and sees what changed while it was down.
func TestPassageIndexReopens(t *testing.T) {
	root, dir := smallCorpus(t), t.TempDir()
	c := indexedCorpus(t, root, dir, nil)
	want, _ := c.Search(t.Context(), "tomato sauce garlic", 3)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	writeFile(t, root, "cooking/kombucha.md", "# Kombucha\n\nKombucha is fermented sweet tea.")
	c2 := indexedCorpus(t, root, dir, nil)
	st := c2.Stats()
	if st.Extracted != 1 || st.Rebuilt != "" || st.Docs != 5 || st.Dir != filepath.Join(dir, "0") {
		t.Fatalf("restart: %+v", st)
	}
	got, _ := c2.Search(t.Context(), "tomato sauce garlic", 3)
	if strings.Join(hitURLs(got), " ") != strings.Join(hitURLs(want), " ") || len(got) == 0 {
		t.Fatalf("after restart %v, before %v", hitURLs(got), hitURLs(want))
	}
}

// TestPassageIndexLocked: a second worker on the machine gets the next
// slot; with every slot taken the error says so.
func TestPassageIndexLocked(t *testing.T) {
	root, dir := smallCorpus(t), t.TempDir()
	a := indexedCorpus(t, root, dir, nil) // slots: 2
	b := indexedCorpus(t, root, dir, nil)
	if a.Stats().Dir == b.Stats().Dir {
		t.Fatalf("two workers share slot %s", a.Stats().Dir)
	}
	if hits, err := b.Search(t.Context(), "tomato", 1); err != nil || len(hits) != 1 {
		t.Fatalf("second slot: %v %v", hits, err)
	}
	c, err := NewCorpus(CorpusConfig{Root: root, IndexDir: dir, IndexSlots: 2})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = c.Search(t.Context(), "tomato", 1)
	if !errors.Is(err, ErrIndexLocked) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("third worker: %v", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatalf("waited %s for the lock", time.Since(start))
	}
	// The first worker stops: its slot is free again.
	a.Close()
	if _, err := c.Search(t.Context(), "tomato", 1); err != nil {
		t.Fatalf("after the first worker stopped: %v", err)
	}
	c.Close()
}

// TestPassageIndexCorrupt: a damaged index is rebuilt, and the stats say
// why; a damaged embedding cache is dropped.
func TestPassageIndexCorrupt(t *testing.T) {
	for _, tc := range []struct{ name, file string }{
		{"meta", "bleve/index_meta.json"},
		{"root bolt", "bleve/store/root.bolt"},
		{"embedding cache", "embeddings.db"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, dir := smallCorpus(t), t.TempDir()
			c := indexedCorpus(t, root, dir, &countingEmbedder{})
			if _, err := c.Search(t.Context(), "tomato", 3); err != nil {
				t.Fatal(err)
			}
			c.Close()
			p := filepath.Join(dir, "0", filepath.FromSlash(tc.file))
			if _, err := os.Stat(p); err != nil {
				t.Fatalf("no %s to damage: %v", p, err)
			}
			if err := os.WriteFile(p, []byte("\x00garbage{not an index"), 0o600); err != nil {
				t.Fatal(err)
			}
			c2 := indexedCorpus(t, root, dir, &countingEmbedder{})
			st := c2.Stats()
			if tc.file != "embeddings.db" && (st.Rebuilt == "" || st.Extracted != 4) {
				t.Fatalf("damaged %s not rebuilt: %+v", tc.file, st)
			}
			if hits, err := c2.Search(t.Context(), "tomato", 3); err != nil || len(hits) == 0 {
				t.Fatalf("after rebuild: %v %v", hitURLs(hits), err)
			}
		})
	}
}

// TestPassageIndexChunkChange: another chunk size rebuilds the index.
func TestPassageIndexChunkChange(t *testing.T) {
	root, dir := smallCorpus(t), t.TempDir()
	c := indexedCorpus(t, root, dir, nil)
	c.Close()
	c2, err := NewCorpus(CorpusConfig{Root: root, IndexDir: dir, Chunk: IngestChunkConfig(600)})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	st, err := c2.Refresh(t.Context())
	if err != nil || !strings.Contains(st.Rebuilt, "chunks") || st.Extracted != 4 {
		t.Fatalf("%+v %v", st, err)
	}
}

// TestPassageIndexHostileFiles: huge, binary, empty and whitespace-only
// files neither break the index nor show up as hits.
func TestPassageIndexHostileFiles(t *testing.T) {
	root, dir := smallCorpus(t), t.TempDir()
	writeFile(t, root, "huge.txt", strings.Repeat("tomato ", (1<<20)/7+1))
	bin := make([]byte, 64<<10)
	for i := range bin {
		bin[i] = byte(i*7919 + i>>3)
	}
	writeFile(t, root, "binary.txt", string(bin))
	writeFile(t, root, "empty.md", "")
	writeFile(t, root, "blank.html", "<html><body>   \n\n  </body></html>")
	writeFile(t, root, "one-long-word.txt", strings.Repeat("x", 300_000))
	c, err := NewCorpus(CorpusConfig{Root: root, IndexDir: dir, MaxFileBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st, err := c.Refresh(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Skipped) != 1 || !strings.HasPrefix(st.Skipped[0], "huge.txt: ") {
		t.Fatalf("skipped %v", st.Skipped)
	}
	hits, err := c.Search(t.Context(), "tomato", 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		if strings.Contains(h.URL, "huge") || len(h.Snippet) > 4*SnippetChars {
			t.Fatalf("hostile hit %+v", h)
		}
	}
	// Nothing is re-extracted after a restart: the skipped and empty files
	// are recorded too.
	c.Close()
	c2 := indexedCorpus(t, root, dir, nil)
	if st := c2.Stats(); st.Extracted != 0 || len(st.Skipped) != 1 {
		t.Fatalf("after restart: %+v", st)
	}
}

// TestPassageOpenNeighbours: a hit opens as its passage and the passages
// before and after it, not the whole document.
func TestPassageOpenNeighbours(t *testing.T) {
	root := t.TempDir()
	var b strings.Builder
	for i := 0; i < 10; i++ {
		fmt.Fprintf(&b, "## Section %d\n\n%s\n\n", i, strings.Repeat(fmt.Sprintf("Filler sentence number %d about nothing in particular. ", i), 20))
	}
	b.WriteString("## Answer\n\nThe zanzibar parameter is set in /etc/zanzibar.conf.\n\n")
	for i := 10; i < 14; i++ {
		fmt.Fprintf(&b, "## Section %d\n\n%s\n\n", i, strings.Repeat(fmt.Sprintf("Filler sentence number %d about nothing in particular. ", i), 20))
	}
	writeFile(t, root, "book.md", "# Book\n\n"+b.String())
	c := indexedCorpus(t, root, "", nil)
	hits, err := c.Search(t.Context(), "zanzibar parameter", 3)
	if err != nil || len(hits) == 0 {
		t.Fatalf("%v %v", hits, err)
	}
	doc, err := c.Open(hits[0].URL)
	if err != nil {
		t.Fatal(err)
	}
	whole, _ := c.Open(CorpusURL("book.md"))
	n := len(Chunk(doc.Text, IngestChunkConfig(DefaultChunkTarget)))
	if !strings.Contains(doc.Text, "/etc/zanzibar.conf") || n < 2 || n > 3 || len(doc.Text) >= len(whole.Text)/2 || doc.URL != hits[0].URL {
		t.Fatalf("window of %d passages, %d of %d chars, url %s", n, len(doc.Text), len(whole.Text), doc.URL)
	}
	// The window marks its hit: the passage the URL names, exactly as the
	// index cut it, and not its neighbours.
	pn, _ := passageOf(hits[0].URL)
	passage := Chunk(whole.Text, IngestChunkConfig(DefaultChunkTarget))[pn]
	if doc.Hit == nil || doc.Text[doc.Hit.Start:doc.Hit.End] != passage || !strings.Contains(passage, "/etc/zanzibar.conf") {
		t.Fatalf("hit span %+v of a %d-char window; passage %d is %q", doc.Hit, len(doc.Text), pn, passage)
	}
	if whole.Hit != nil {
		t.Fatalf("a whole document has a hit span %+v", whole.Hit)
	}
	for _, bad := range []string{"corpus:///book.md?passage=999", "corpus:///book.md?passage=-1", "corpus:///book.md?passage=01", "corpus:///book.md?x=1"} {
		if _, err := c.Open(bad); err == nil {
			t.Errorf("Open(%q) allowed", bad)
		}
	}
}

// TestPassageHybridRerank: the embedding model reranks BM25's candidates,
// and a passage is embedded once: the second search hits the cache, also
// after a restart.
func TestPassageHybridRerank(t *testing.T) {
	root, dir := smallCorpus(t), t.TempDir()
	emb := &countingEmbedder{}
	c := indexedCorpus(t, root, dir, emb)
	hits, err := c.Search(t.Context(), "tomato plants watering", 5)
	if err != nil || len(hits) < 2 {
		t.Fatalf("%v %v", hits, err)
	}
	first := emb.count()
	if first < 3 { // the query and at least two passages
		t.Fatalf("embedded %d texts", first)
	}
	// The tokens a search reports are those it sent: the query and the
	// passages the cache did not hold; a session's settings apply.
	_, tokens, err := c.SearchWith(t.Context(), "tomato plants watering", 5, SearchOptions{Candidates: 2, RRFK: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := emb.count() - first; got != 1 {
		t.Fatalf("second search embedded %d texts, want only the query", got)
	}
	if want := llm.EstimateAll([]string{"tomato plants watering"}); tokens != want {
		t.Fatalf("second search reports %d embed tokens, want the query's %d", tokens, want)
	}
	_, tokens, err = c.SearchWith(t.Context(), "Mars rovers and tomato plants", 5, SearchOptions{})
	if err != nil || tokens <= llm.EstimateAll([]string{"Mars rovers and tomato plants"}) {
		t.Fatalf("a search of new passages reports %d embed tokens: %v", tokens, err)
	}
	c.Close()
	emb2 := &countingEmbedder{}
	c2 := indexedCorpus(t, root, dir, emb2)
	if _, err := c2.Search(t.Context(), "tomato plants watering", 5); err != nil {
		t.Fatal(err)
	}
	if emb2.count() != 1 {
		t.Fatalf("after restart embedded %d texts, want only the query", emb2.count())
	}
	// The embedding server down: the search fails (Discover retries it),
	// never silently degrades.
	emb2.fail = errors.New("connection refused")
	if _, err := c2.Search(t.Context(), "tomato garlic", 5); err == nil {
		t.Fatal("search without the embedding server succeeded")
	}
}

// TestPassageIndexExtractionVersion: an index persisted under an older
// extraction version is rebuilt when opened, although no file changed, so
// its passages are what the running extractors make of the files, and the
// dense stage is built from those; an index of the current version is
// reopened with its passages as they were (which is why a change of
// extraction must bump the version).
func TestPassageIndexExtractionVersion(t *testing.T) {
	for _, tc := range []struct {
		name    string
		built   int // the extraction version of the worker that built the index
		rebuilt bool
	}{
		{"current version", extractionVersion, false},
		{"older version", extractionVersion - 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, dir := t.TempDir(), t.TempDir()
			writeFile(t, root, "a.note", "the file itself never changes")
			cfg := func(text string, emb Embedder) CorpusConfig {
				return CorpusConfig{Root: root, IndexDir: dir, Extensions: []string{".note"}, Embedder: emb, EmbedModel: "test", Dense: 5,
					Extractors: map[string]Extractor{".note": func(_ io.Reader, u string) (Document, error) {
						return Document{URL: u, Title: "Tomatoes", Text: text, Kind: graph.KindText}, nil
					}}}
			}
			old, err := NewCorpus(cfg("Tomatoes ripen under the old extraction.", nil))
			if err != nil {
				t.Fatal(err)
			}
			old.extraction = tc.built
			if _, err := old.Refresh(t.Context()); err != nil {
				t.Fatal(err)
			}
			if err := old.Close(); err != nil {
				t.Fatal(err)
			}

			c := refreshedCorpus(t, cfg("Tomatoes ripen under the new extraction.", &countingEmbedder{}))
			st := c.Stats()
			if got := strings.Contains(st.Rebuilt, "extraction"); got != tc.rebuilt || (st.Extracted == 1) != tc.rebuilt {
				t.Fatalf("rebuilt %q, %d files extracted; want rebuilt %v", st.Rebuilt, st.Extracted, tc.rebuilt)
			}
			want := map[bool]string{true: "new", false: "old"}[tc.rebuilt]
			hits, err := c.Search(t.Context(), "tomatoes ripen", 1)
			if err != nil || len(hits) != 1 || !strings.Contains(hits[0].Snippet, want) {
				t.Fatalf("hits %+v %v, want the %s text", hits, err, want)
			}
			if st := awaitDense(t, c); !st.Ready {
				t.Fatalf("dense stage %+v", st)
			}
			c.mu.Lock()
			ps := c.dense.ps
			c.mu.Unlock()
			if len(ps) != 1 || !strings.Contains(ps[0].Text, want) {
				t.Fatalf("dense stage passages %+v, want the %s text", ps, want)
			}
		})
	}
}

// TestCheckMeta: the stored format record against the running worker's;
// a record written before extraction versions were recorded is version
// 0, an older one.
func TestCheckMeta(t *testing.T) {
	chunk := IngestChunkConfig(DefaultChunkTarget).withDefaults()
	want := indexMeta{Format: indexFormat, Extraction: extractionVersion, Chunk: chunk}
	record := func(m any) []byte {
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, tc := range []struct {
		name   string
		stored []byte
		why    string // a part of the reason; "" for none
	}{
		{"same", record(want), ""},
		{"before extraction versions", record(struct {
			Format int         `json:"format"`
			Chunk  ChunkConfig `json:"chunk"`
		}{indexFormat, chunk}), "extraction 0 "},
		{"older extraction", record(indexMeta{Format: indexFormat, Extraction: extractionVersion - 1, Chunk: chunk}), "extraction"},
		{"other chunks", record(indexMeta{Format: indexFormat, Extraction: extractionVersion, Chunk: IngestChunkConfig(600)}), "chunks"},
		{"none", nil, "no format record"},
		{"garbage", []byte("{"), "unreadable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			idx, err := bleve.NewMemOnly(passageMapping())
			if err != nil {
				t.Fatal(err)
			}
			defer idx.Close()
			if tc.stored != nil {
				if err := idx.SetInternal([]byte(metaKey), tc.stored); err != nil {
					t.Fatal(err)
				}
			}
			got := checkMeta(idx, want)
			if (tc.why == "") != (got == "") || !strings.Contains(got, tc.why) {
				t.Fatalf("checkMeta = %q, want %q", got, tc.why)
			}
		})
	}
}

// TestCorpusOnUpdate: the update callback reports each update that
// extracted or removed files, says why when the index was rebuilt (an
// index of another extraction version), and is silent when nothing
// changed.
func TestCorpusOnUpdate(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	writeFile(t, root, "a.txt", "Tomatoes ripen in the sun.")
	writeFile(t, root, "b.txt", "Roses need pruning in spring.")
	var got []IndexStats
	cfg := CorpusConfig{Root: root, IndexDir: dir, OnUpdate: func(st IndexStats) { got = append(got, st) }}
	old, err := NewCorpus(cfg)
	if err != nil {
		t.Fatal(err)
	}
	old.extraction = extractionVersion - 1
	if _, err := old.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Extracted != 2 || got[0].Rebuilt != "" {
		t.Fatalf("first build: %+v", got)
	}
	c := refreshedCorpus(t, cfg) // the current version: rebuilt
	if len(got) != 2 || got[1].Extracted != 2 || !strings.Contains(got[1].Rebuilt, "extraction") {
		t.Fatalf("after an upgrade: %+v", got[1:])
	}
	if _, err := c.Refresh(t.Context()); err != nil || len(got) != 2 {
		t.Fatalf("nothing changed, yet %d calls (%v)", len(got), err)
	}
	if err := os.Remove(filepath.Join(root, "b.txt")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[2].Changed != 1 || got[2].Rebuilt != "" || got[2].Docs != 1 {
		t.Fatalf("after a removal: %+v", got[2:])
	}
}
