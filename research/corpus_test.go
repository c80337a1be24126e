package research

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lethe-research/lethe/graph"
)

func writeFile(t *testing.T, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// smallCorpus writes four documents on distinct topics.
func smallCorpus(t *testing.T) string {
	root := t.TempDir()
	writeFile(t, root, "gardening/tomatoes.md", `# Growing tomatoes

Tomatoes need full sun, deep watering and a sturdy stake. Prune the suckers
of indeterminate tomato plants to get bigger fruit.

Blossom end rot in tomatoes comes from uneven watering and calcium uptake.`)
	writeFile(t, root, "astronomy/mars.html", `<!doctype html><html><head><title>Mars exploration</title></head>
<body><nav>Home | Planets | Contact</nav><main>
<h1>Mars</h1><p>Mars is the fourth planet. Rovers such as Curiosity and Perseverance
explore its surface and study ancient river deltas.</p>
<p>Mars has two small moons, Phobos and Deimos.</p></main></body></html>`)
	writeFile(t, root, "cooking/bread.txt", `Sourdough bread

A sourdough starter is flour and water fermented by wild yeast and lactobacilli.
Bake the loaf in a hot Dutch oven for a crisp crust.`)
	writeFile(t, root, "cooking/sauce.txt", `Tomato sauce

Simmer crushed tomatoes with garlic and olive oil. A pinch of sugar balances acidity.`)
	writeFile(t, root, "notes/ignored.csv", "tomato,tomato,tomato\n")
	writeFile(t, root, ".hidden/secret.md", "# tomato secrets\ntomato tomato tomato")
	return root
}

func newTestCorpus(t *testing.T, root string) *Corpus {
	t.Helper()
	c, err := NewCorpus(CorpusConfig{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func hitURLs(h []Hit) []string {
	var out []string
	for _, x := range h {
		out = append(out, docURL(x.URL))
	}
	return out
}

// docURL is the document URL of a passage hit.
func docURL(u string) string {
	doc, _, _ := strings.Cut(u, "?passage=")
	return doc
}

func TestCorpusBM25Ranking(t *testing.T) {
	ctx := context.Background()
	c := newTestCorpus(t, smallCorpus(t))

	hits, err := c.Search(ctx, "growing tomato plants", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) < 2 {
		t.Fatalf("want >= 2 hits, got %v", hitURLs(hits))
	}
	if docURL(hits[0].URL) != "corpus:///gardening/tomatoes.md" {
		t.Fatalf("top hit %s, want tomatoes.md; all %v", hits[0].URL, hitURLs(hits))
	}
	if hits[0].Title != "Growing tomatoes" || hits[0].Provider != "corpus" || hits[0].Score <= hits[1].Score {
		t.Fatalf("bad top hit %+v / second %+v", hits[0], hits[1])
	}
	if !strings.Contains(strings.ToLower(hits[0].Snippet), "tomato") || len([]rune(hits[0].Snippet)) > SnippetChars+2 {
		t.Fatalf("snippet %q", hits[0].Snippet)
	}
	for _, h := range hits {
		if strings.Contains(h.URL, "hidden") || strings.Contains(h.URL, ".csv") {
			t.Fatalf("indexed a hidden or non-corpus file: %s", h.URL)
		}
	}

	// Title and HTML body count; nav text is not indexed.
	hits, _ = c.Search(ctx, "Perseverance rover", 3)
	if len(hits) != 1 || docURL(hits[0].URL) != "corpus:///astronomy/mars.html" || hits[0].Title != "Mars exploration" {
		t.Fatalf("mars: %+v", hits)
	}
	if hits, _ = c.Search(ctx, "contact", 3); len(hits) != 0 {
		t.Fatalf("nav text indexed: %+v", hits)
	}
	// Stopwords only / nothing matching.
	if hits, _ = c.Search(ctx, "the of and", 3); len(hits) != 0 {
		t.Fatalf("stopword query: %+v", hits)
	}
	if hits, _ = c.Search(ctx, "quantum chromodynamics", 3); len(hits) != 0 {
		t.Fatalf("unrelated query: %+v", hits)
	}
	// Limit.
	if hits, _ = c.Search(ctx, "tomato", 1); len(hits) != 1 {
		t.Fatalf("limit: %+v", hits)
	}
	st := c.Stats()
	if st.Docs != 4 || st.Files != 4 || len(st.Skipped) != 0 || st.Passages == 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestCorpusDeterministicTies(t *testing.T) {
	root := t.TempDir()
	for _, n := range []string{"c.txt", "a.txt", "b.txt"} {
		writeFile(t, root, n, "identical\n\nzebra crossing")
	}
	c := newTestCorpus(t, root)
	hits, err := c.Search(context.Background(), "zebra", 10)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(hitURLs(hits), " ")
	if got != "corpus:///a.txt corpus:///b.txt corpus:///c.txt" {
		t.Fatalf("tie order %s", got)
	}
}

func TestCorpusReindex(t *testing.T) {
	ctx := context.Background()
	root := smallCorpus(t)
	c := newTestCorpus(t, root)
	if hits, _ := c.Search(ctx, "kombucha", 5); len(hits) != 0 {
		t.Fatalf("unexpected %v", hitURLs(hits))
	}
	first := c.Stats()

	// Added.
	writeFile(t, root, "cooking/kombucha.md", "# Kombucha\n\nKombucha is fermented sweet tea with a SCOBY.")
	hits, err := c.Search(ctx, "kombucha", 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 1 || docURL(hits[0].URL) != "corpus:///cooking/kombucha.md" {
		t.Fatalf("after add: %v", hitURLs(hits))
	}
	st := c.Stats()
	if st.Docs != 5 || st.Extracted != 1 || st.Fingerprint == first.Fingerprint {
		t.Fatalf("incremental re-index stats %+v", st)
	}

	// Changed.
	p := filepath.Join(root, "cooking", "bread.txt")
	writeFile(t, root, "cooking/bread.txt", "Rye bread\n\nRye bread with caraway seeds and kombucha vinegar.")
	later := time.Now().Add(2 * time.Second)
	if err := os.Chtimes(p, later, later); err != nil {
		t.Fatal(err)
	}
	hits, _ = c.Search(ctx, "caraway", 5)
	if len(hits) != 1 || docURL(hits[0].URL) != "corpus:///cooking/bread.txt" || hits[0].Title != "Rye bread" {
		t.Fatalf("after change: %+v", hits)
	}
	if hits, _ = c.Search(ctx, "sourdough", 5); len(hits) != 0 {
		t.Fatalf("stale content still indexed: %v", hitURLs(hits))
	}

	// Removed.
	if err := os.Remove(filepath.Join(root, "cooking", "kombucha.md")); err != nil {
		t.Fatal(err)
	}
	hits, _ = c.Search(ctx, "kombucha", 5)
	if got := hitURLs(hits); len(got) != 1 || got[0] != "corpus:///cooking/bread.txt" {
		t.Fatalf("after remove: %v", got)
	}
	if st := c.Stats(); st.Docs != 4 {
		t.Fatalf("docs after remove %d", st.Docs)
	}

	// Unchanged: no rebuild.
	built := c.Stats().Built
	c.Search(ctx, "kombucha", 5)
	if !c.Stats().Built.Equal(built) {
		t.Fatal("rebuilt an unchanged corpus")
	}
}

func TestCorpusRecheckInterval(t *testing.T) {
	ctx := context.Background()
	root := smallCorpus(t)
	c, err := NewCorpus(CorpusConfig{Root: root, RecheckInterval: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_000_000, 0)
	c.now = func() time.Time { return now }
	c.Search(ctx, "x", 1)
	writeFile(t, root, "new.txt", "Walrus\n\nwalrus facts")
	if hits, _ := c.Search(ctx, "walrus", 5); len(hits) != 0 {
		t.Fatal("re-checked before the interval elapsed")
	}
	now = now.Add(61 * time.Second)
	if hits, _ := c.Search(ctx, "walrus", 5); len(hits) != 1 {
		t.Fatal("did not re-check after the interval")
	}
	// Refresh forces.
	writeFile(t, root, "new2.txt", "Narwhal\n\nnarwhal facts")
	if _, err := c.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if hits, _ := c.Search(ctx, "narwhal", 5); len(hits) != 1 {
		t.Fatal("Refresh did not re-index")
	}
}

func TestCorpusOpen(t *testing.T) {
	root := smallCorpus(t)
	c := newTestCorpus(t, root)
	doc, err := c.Open("corpus:///astronomy/mars.html#moons")
	if err != nil {
		t.Fatal(err)
	}
	if doc.URL != "corpus:///astronomy/mars.html" || doc.Title != "Mars exploration" || doc.Kind != graph.KindHTML ||
		!strings.Contains(doc.Text, "Phobos") || strings.Contains(doc.Text, "Contact") || doc.Bytes == 0 {
		t.Fatalf("doc %+v", doc)
	}
	doc, err = c.Fetch(context.Background(), "corpus:///cooking/sauce.txt")
	if err != nil || doc.Kind != graph.KindText || doc.Title != "Tomato sauce" {
		t.Fatalf("fetch: %+v %v", doc, err)
	}
	// A file name that needs escaping round-trips through CorpusURL.
	writeFile(t, root, "dir with space/a#b?.md", "# Odd\n\nodd name")
	u := CorpusURL("dir with space/a#b?.md")
	if doc, err = c.Open(u); err != nil || doc.Title != "Odd" {
		t.Fatalf("escaped %s: %+v %v", u, doc, err)
	}
}

func TestCorpusOpenRefusals(t *testing.T) {
	root := smallCorpus(t)
	outside := t.TempDir()
	writeFile(t, outside, "secret.txt", "TOP SECRET password hunter2")
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(root, "link.txt")); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(root, filepath.Join(outside, "secret.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(rel, filepath.Join(root, "rellink.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "linkdir")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "cooking", "sauce.txt"), filepath.Join(root, "inside.txt")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, root, "big.txt", strings.Repeat("x", 2000))
	// Dedup off: the file inside the root and its symlink are one text,
	// and the test shows that both are indexed.
	c, err := NewCorpus(CorpusConfig{Root: root, MaxFileBytes: 1000, Dedup: -1})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{
		"corpus:///../" + filepath.Base(outside) + "/secret.txt",
		"corpus:///cooking/../../etc/passwd",
		"corpus:///%2e%2e/etc/passwd",
		"corpus:////etc/passwd",
		"corpus://host/cooking/sauce.txt",
		"corpus:cooking/sauce.txt",
		"corpus:///",
		"corpus:///cooking//sauce.txt",
		"corpus:///cooking/sauce.txt?x=1",
		"corpus:///link.txt",
		"corpus:///rellink.txt",
		"corpus:///linkdir/secret.txt",
		"corpus:///.hidden/secret.md",
		"corpus:///notes/ignored.csv",
		"corpus:///cooking",
		"corpus:///big.txt",
		"file:///etc/passwd",
		"http://example.com/cooking/sauce.txt",
		"/etc/passwd",
		"cooking/sauce.txt",
	} {
		doc, err := c.Open(u)
		if err == nil {
			t.Errorf("%s: opened, want refusal: %q", u, doc.Text)
			continue
		}
		if !errors.Is(err, ErrRefused) {
			t.Errorf("%s: error %v does not wrap ErrRefused", u, err)
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: error leaks content", u)
		}
	}
	if _, err := c.Open("corpus:///link.txt"); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "escapes") {
		t.Errorf("symlink out of root: %v", err)
	}
	if doc, err := c.Open("corpus:///inside.txt"); err != nil || !strings.Contains(doc.Text, "garlic") {
		t.Errorf("symlink inside root: %v", err)
	}
	// The index never sees the outside file, and skips the big one.
	hits, err := c.Search(context.Background(), "hunter2 password secret", 10)
	if err != nil || len(hits) != 0 {
		t.Fatalf("outside content indexed: %v %v", hitURLs(hits), err)
	}
	st := c.Stats()
	if len(st.Skipped) != 1 || !strings.HasPrefix(st.Skipped[0], "big.txt:") {
		t.Fatalf("skipped %v", st.Skipped)
	}
	if hits, _ := c.Search(context.Background(), "garlic", 10); len(hits) != 2 {
		t.Fatalf("symlink inside root not indexed: %v", hitURLs(hits))
	}
}

func TestNewCorpusErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f.txt")
	writeFile(t, dir, "f.txt", "x")
	for _, tc := range []struct {
		cfg  CorpusConfig
		want string
	}{
		{CorpusConfig{}, "empty"},
		{CorpusConfig{Root: filepath.Join(dir, "nope")}, "does not exist"},
		{CorpusConfig{Root: file}, "not a directory"},
		{CorpusConfig{Root: dir, Extensions: []string{".pdf"}}, "no extractor"},
		{CorpusConfig{Root: dir, MaxFileBytes: -1}, "negative"},
	} {
		_, err := NewCorpus(tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err %v, want %q", tc.cfg, err, tc.want)
		}
	}
	// A root reached through a symlink is resolved.
	link := filepath.Join(t.TempDir(), "docs")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	c, err := NewCorpus(CorpusConfig{Root: link})
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := filepath.EvalSymlinks(dir); c.Root() != want {
		t.Fatalf("root %s want %s", c.Root(), want)
	}
}

func TestCorpusCustomExtractor(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "paper.pdf", "pretend PDF about lithium batteries")
	writeFile(t, root, "other.PDF", "pretend PDF about sodium batteries")
	fakePDF := func(r io.Reader, u string) (Document, error) {
		d, err := ExtractText(r, u)
		d.Kind = graph.KindPDF
		return d, err
	}
	c, err := NewCorpus(CorpusConfig{Root: root, Extensions: []string{"pdf"}, Extractors: map[string]Extractor{".PDF": fakePDF}})
	if err != nil {
		t.Fatal(err)
	}
	hits, err := c.Search(context.Background(), "lithium", 5)
	if err != nil || len(hits) != 1 || docURL(hits[0].URL) != "corpus:///paper.pdf" {
		t.Fatalf("%v %v", hits, err)
	}
	if doc, err := c.Open("corpus:///other.PDF"); err != nil || doc.Kind != graph.KindPDF {
		t.Fatalf("%+v %v", doc, err)
	}
}

func TestCorpusConcurrentSearch(t *testing.T) {
	root := smallCorpus(t)
	c := newTestCorpus(t, root)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if i%4 == 0 {
				writeFile(t, root, "extra/"+string(rune('a'+i))+".txt", "Concurrency\n\nparallel tomato writes")
			}
			if _, err := c.Search(context.Background(), "tomato", 5); err != nil {
				t.Error(err)
			}
		}(i)
	}
	wg.Wait()
	hits, _ := c.Search(context.Background(), "parallel", 10)
	if len(hits) != 2 {
		t.Fatalf("got %v", hitURLs(hits))
	}
}

func TestCorpusCancelled(t *testing.T) {
	c := newTestCorpus(t, smallCorpus(t))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Search(ctx, "tomato", 5); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
}

func TestCorpusURL(t *testing.T) {
	for in, want := range map[string]string{
		"a.html":        "corpus:///a.html",
		"dir/b c.md":    "corpus:///dir/b%20c.md",
		"/x/y.txt":      "corpus:///x/y.txt",
		"q?.txt":        "corpus:///q%3F.txt",
		"ünï/çødé.html": "corpus:///%C3%BCn%C3%AF/%C3%A7%C3%B8d%C3%A9.html",
	} {
		if got := CorpusURL(in); got != want {
			t.Errorf("CorpusURL(%q) = %q want %q", in, got, want)
		}
		rel, err := corpusRel(CorpusURL(in))
		if err != nil || rel != strings.TrimPrefix(in, "/") {
			t.Errorf("round trip %q: %q %v", in, rel, err)
		}
	}
}
