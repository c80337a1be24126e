package research

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/lethe-research/lethe/eval/questions"
	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/internal/lethetest"
)

// debianReferenceDirs are where Debian's debian-reference-en package puts
// its HTML (the doc directory holds a "docs" symlink to the shared one).
var debianReferenceDirs = []string{
	"/usr/share/doc/debian-reference-en/docs",
	"/usr/share/debian-reference",
}

// TestCorpusDebianReference indexes a real document collection nobody here
// wrote: the Debian Reference (apt-get install debian-reference-en).
func TestCorpusDebianReference(t *testing.T) {
	root := ""
	for _, d := range debianReferenceDirs {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			root = d
			break
		}
	}
	lethetest.Need(t, lethetest.DebianDocs)
	if root == "" {
		lethetest.Missing(t, lethetest.DebianDocs, "debian-reference-en is not installed (apt-get install debian-reference-en)")
	}
	ctx := context.Background()
	c, err := NewCorpus(CorpusConfig{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.Refresh(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("debian-reference: root %s (resolved %s): %d files, %d docs, %d passages, indexed in %s",
		root, st.Root, st.Files, st.Docs, st.Passages, st.Duration)
	if st.Docs < 10 {
		t.Fatalf("only %d documents indexed: %+v", st.Docs, st)
	}

	for _, tc := range []struct {
		query       string
		wantTitle   string // a top-3 hit's title contains this
		wantSnippet string // and its snippet contains this (lowercase)
	}{
		{"apt-get package management", "package management", "apt"},
		{"configure network interface with ifupdown", "Network setup", "ifupdown"},
		{"git version control system", "Data management", "git"},
		{"backup and data archive tar", "Data management", "tar"},
	} {
		hits, err := c.Search(ctx, tc.query, 3)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for i, h := range hits {
			t.Logf("%q #%d %.2f %s %q: %.120s", tc.query, i+1, h.Score, h.URL, h.Title, h.Snippet)
			if strings.Contains(strings.ToLower(h.Title), strings.ToLower(tc.wantTitle)) &&
				strings.Contains(strings.ToLower(h.Snippet), tc.wantSnippet) {
				found = true
			}
		}
		if !found {
			t.Errorf("%q: no section about %q in the top 3", tc.query, tc.wantTitle)
		}
	}

	// A hit opens through the same corpus, as the Fetch activity will do:
	// the passage and its neighbours, not the chapter.
	hits, _ := c.Search(ctx, "apt-get package management", 1)
	doc, err := c.Open(hits[0].URL)
	if err != nil {
		t.Fatal(err)
	}
	chunks := Chunk(doc.Text, ChunkConfig{})
	t.Logf("%s: %d bytes, %d chars of text, %d chunks", doc.URL, doc.Bytes, len(doc.Text), len(chunks))
	if len(chunks) == 0 || len(chunks) > 3 || len(doc.Text) > 3*2*DefaultChunkTarget+4 || !strings.Contains(strings.ToLower(doc.Text), "apt") {
		t.Fatalf("passage window: %d chunks, %d chars", len(chunks), len(doc.Text))
	}
}

// TestCorpusDebianReferencePDF indexes the Debian Reference's PDF edition
// (shipped by debian-reference-en next to the HTML) through pdftotext,
// together with the HTML chapters, and finds a section of the book in it.
func TestCorpusDebianReferencePDF(t *testing.T) {
	const dir = "/usr/share/debian-reference"
	const pdfName = "debian-reference.en.pdf"
	lethetest.Need(t, lethetest.DebianDocs)
	if _, err := os.Stat(dir + "/" + pdfName); err != nil {
		lethetest.Missing(t, lethetest.DebianDocs, dir+"/"+pdfName+" is missing (apt-get install debian-reference-en)")
	}
	needTool(t, "pdftotext")
	pdf := PDFConverter{MaxPages: 1000}
	c, err := NewCorpus(CorpusConfig{Root: dir, Extensions: []string{".html", ".pdf"}, MaxFileBytes: 16 << 20,
		Extractors: map[string]Extractor{".pdf": pdf.Extractor()}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, err := c.Refresh(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d docs indexed in %s, skipped %v", st.Docs, st.Duration, st.Skipped)
	doc, err := c.Open(CorpusURL(pdfName))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: title %q, %d bytes of PDF, %d chars of text", doc.URL, doc.Title, doc.Bytes, len(doc.Text))
	if doc.Title != "Debian Reference" || doc.Kind != graph.KindPDF || len(doc.Text) < 200000 {
		t.Fatalf("PDF document: title %q kind %s, %d chars", doc.Title, doc.Kind, len(doc.Text))
	}
	// "<" opens no tag: pdftotext leaves it unescaped in the text.
	for _, want := range []string{"apt-get", "debootstrap", "/etc/network/interfaces", "cd </etc/motd pager", "#include <stdio.h>"} {
		if !strings.Contains(doc.Text, want) {
			t.Errorf("PDF text lacks %q", want)
		}
	}
	if strings.Contains(doc.Text, " / 233") {
		t.Error("a page footer (N / 233) is in the PDF text")
	}
	// The contents pages are gone; the sections and tables they list stay.
	for _, entry := range []string{"Console basics . . . .", "List of insecure and secure services and ports . . . ."} {
		if strings.Contains(doc.Text, entry) {
			t.Errorf("a contents entry %q is in the PDF text", entry)
		}
	}
	for _, want := range []string{"List of insecure and secure services and ports", "imaps"} {
		if !strings.Contains(doc.Text, want) {
			t.Errorf("PDF text lacks %q", want)
		}
	}
	// The book as a whole is a hit for a query its HTML chapters share.
	hits, err := c.Search(ctx, "Debian Reference Osamu Aoki system administration", 20)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, h := range hits {
		if docURL(h.URL) == CorpusURL(pdfName) {
			found = true
		}
	}
	if !found {
		t.Errorf("the PDF is not among the hits: %+v", hits)
	}
}

// TestExtractKeepsGoldStrings: every gold string of the evaluation
// question set (eval/questions) occurs in what ExtractHTML keeps of the
// Debian Reference. Readability used to drop two link-heavy package
// tables, and with them "mkpasswd" (ch04) and "etckeeper" (ch09): 89 of
// 91 (extract_tables.go).
func TestExtractKeepsGoldStrings(t *testing.T) {
	lethetest.Need(t, lethetest.DebianDocs)
	root := ""
	for _, d := range debianReferenceDirs {
		if _, err := os.Stat(filepath.Join(d, "ch01.en.html")); err == nil {
			root = d
			break
		}
	}
	if root == "" {
		lethetest.Missing(t, lethetest.DebianDocs, "debian-reference-en is not installed (apt-get install debian-reference-en)")
	}
	files, err := filepath.Glob(filepath.Join(root, "*.en.html"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no pages in %s: %v", root, err)
	}
	var all strings.Builder
	for _, f := range files {
		r, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		d, err := ExtractHTML(r, "file://"+f)
		r.Close()
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		all.WriteString(strings.ToLower(d.Text) + "\n")
	}
	qs, err := questions.DebianReference()
	if err != nil {
		t.Fatal(err)
	}
	text, n := all.String(), 0
	for _, q := range qs {
		for _, g := range q.Gold {
			n++
			if !slices.ContainsFunc(strings.Split(g, "|"), func(alt string) bool { return strings.Contains(text, strings.ToLower(alt)) }) {
				t.Errorf("%s: gold string %q is not in the extracted text", q.ID, g)
			}
		}
	}
	t.Logf("%d gold strings of %d questions checked over %d pages", n, len(qs), len(files))
}

// TestDropRunningLinesDebianReference: the Debian Reference PDF's running
// lines, "Debian Reference" and "N / 233" on every numbered page, are
// removed, and nothing else is: the lines removed are exactly those.
func TestDropRunningLinesDebianReference(t *testing.T) {
	const pdfPath = "/usr/share/debian-reference/debian-reference.en.pdf"
	lethetest.Need(t, lethetest.DebianDocs)
	if _, err := os.Stat(pdfPath); err != nil {
		lethetest.Missing(t, lethetest.DebianDocs, pdfPath+" is missing (apt-get install debian-reference-en)")
	}
	needTool(t, "pdftotext")
	res, err := runChild(context.Background(), PDFConverter{MaxPages: 1000}.spec(pdfPath))
	if err != nil {
		t.Fatal(err)
	}
	_, text := parsePdftotextHTML(res.Stdout)
	out, n := dropRunningLines(text)
	before, after := lineKeys(text), lineKeys(out)
	removed := map[string]int{}
	for k, c := range before {
		if d := c - after[k]; d != 0 {
			removed[k] = d
		}
	}
	t.Logf("%d pages, %d lines removed %v; text %d → %d bytes, %d → %d words", strings.Count(text, "\f"), n, removed,
		len(text), len(out), len(strings.Fields(text)), len(strings.Fields(out)))
	if n < 400 || removed["# / #"]+removed["Debian Reference"] != n || len(removed) != 2 {
		t.Errorf("removed %d lines: %v", n, removed)
	}
	if regexp.MustCompile(`(?m)^\s*\d+ / 233\s*$`).MatchString(out) {
		t.Error("a page number is left")
	}
}

// lineKeys counts the non-blank lines of s by runningKey.
func lineKeys(s string) map[string]int {
	out := map[string]int{}
	for _, l := range strings.Split(strings.ReplaceAll(s, "\f", "\n"), "\n") {
		if k := runningKey(l); k != "" {
			out[k]++
		}
	}
	return out
}
