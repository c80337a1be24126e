package research

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLimitsTitleAndText(t *testing.T) {
	l := Limits{MaxTitleChars: 10, MaxTextBytes: 5}
	if got := l.Title("  short \n tit "); got != "short tit" {
		t.Errorf("title %q", got)
	}
	got := l.Title(strings.Repeat("é", 1<<20))
	if n := utf8.RuneCountInString(got); n != 10 || !strings.HasSuffix(got, "…") {
		t.Errorf("cut title %q (%d runes)", got, n)
	}
	if s, cut := l.Text("ab€cd"); s != "ab€" || !cut { // € is 3 bytes: no split rune
		t.Errorf("text %q %v", s, cut)
	}
	if s, cut := l.Text("abc"); s != "abc" || cut {
		t.Errorf("short text %q %v", s, cut)
	}
}

func TestLimitsDocumentAndHits(t *testing.T) {
	l := Limits{MaxTitleChars: 20, MaxURLBytes: 40, MaxTextBytes: 100}
	long := "https://example.org/" + strings.Repeat("x", 40)
	d := l.Document(Document{
		URL: long, Title: strings.Repeat("t", 1000), Text: strings.Repeat("y", 1000),
		Links: []string{"https://example.org/a", long}, Media: []MediaRef{{URL: long}, {URL: "https://example.org/m.mp3"}},
	}, "https://example.org/asked")
	if d.URL != "https://example.org/asked" || utf8.RuneCountInString(d.Title) != 20 || len(d.Text) != 100 || !d.Truncated ||
		len(d.Links) != 1 || len(d.Media) != 1 || d.Media[0].URL != "https://example.org/m.mp3" {
		t.Fatalf("bounded document %+v", d)
	}
	hits := l.Hits([]Hit{{URL: long, Title: "dropped"}, {URL: "https://example.org/ok", Title: strings.Repeat("h", 100), Snippet: strings.Repeat("s ", 2000)}})
	if len(hits) != 1 || utf8.RuneCountInString(hits[0].Title) != 20 || utf8.RuneCountInString(hits[0].Snippet) > 2*SnippetChars {
		t.Fatalf("bounded hits %+v", hits)
	}
}

// TestExtractHostileHTML: a 1 MB title and a 1 MB link are bounded by the
// extractor itself, and the title is not copied whole on the way.
func TestExtractHostileHTML(t *testing.T) {
	title := strings.Repeat("Hostile title ", 80_000) // 1.1 MB
	page := fmt.Sprintf(`<html><head><title>%s</title></head><body><main><p>Body text.</p>
<a href="/%s">long link</a><a href="/ok">ok</a></main></body></html>`, title, strings.Repeat("a", 1<<20))
	l := Limits{MaxTitleChars: 300, MaxURLBytes: 2048}
	d, err := l.ExtractHTML(strings.NewReader(page), "https://example.org/")
	if err != nil {
		t.Fatal(err)
	}
	if n := utf8.RuneCountInString(d.Title); n > 300 || !strings.HasPrefix(d.Title, "Hostile title Hostile") {
		t.Errorf("title of %d runes: %.80q", n, d.Title)
	}
	if len(d.Links) != 1 || d.Links[0] != "https://example.org/ok" {
		t.Errorf("links %.200v", d.Links)
	}
	// The defaults apply to the plain extractors too.
	d, _ = ExtractHTML(strings.NewReader(page), "https://example.org/")
	if utf8.RuneCountInString(d.Title) > DefaultMaxTitleChars {
		t.Errorf("default title cap: %d runes", utf8.RuneCountInString(d.Title))
	}
	// (Markdown's inline regexps are slow on a megabyte line; 20 KB shows
	// the cap as well.)
	md, _ := ExtractMarkdown(strings.NewReader("# "+title[:20<<10]+"\n\ntext"), "corpus:///a.md")
	if utf8.RuneCountInString(md.Title) > DefaultMaxTitleChars {
		t.Errorf("markdown title: %d runes", utf8.RuneCountInString(md.Title))
	}
}

func TestSelectChunks(t *testing.T) {
	chunks := []string{
		"An introduction to the site and its authors.",
		"Recipes for bread and cakes.",
		"Lithium dendrites grow through the solid electrolyte and short the cell.",
		"More recipes: soups.",
		"Dendrite growth depends on the current density at the lithium anode.",
	}
	got := SelectChunks(chunks, "lithium dendrites in solid electrolytes", 2)
	if fmt.Sprint(got) != "[2 4]" {
		t.Errorf("selected %v, want [2 4] (page order)", got)
	}
	// No query term anywhere: the beginning of the page.
	if got := SelectChunks(chunks, "quantum chromodynamics", 2); fmt.Sprint(got) != "[0 1]" {
		t.Errorf("no match: %v", got)
	}
	if got := SelectChunks(chunks, "", 0); len(got) != len(chunks) {
		t.Errorf("n=0 keeps all: %v", got)
	}
	// Thousands of chunks: only n are kept, quickly.
	many := make([]string, 4000)
	for i := range many {
		many[i] = fmt.Sprintf("Filler paragraph number %d about nothing in particular.", i)
	}
	many[3210] = "The garnet electrolyte cracks under lithium plating."
	if got := SelectChunks(many, "garnet electrolyte cracking", 48); len(got) != 48 || !containsInt(got, 3210) {
		t.Errorf("4000 chunks: %d kept, 3210 in: %v", len(got), containsInt(got, 3210))
	}
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// TestDocumentStripsControl: a page's title and text reach evidence, the
// UI and the operator's terminal; escape sequences (an OSC that sets the
// terminal's title, a CSI that clears the screen) and control characters
// (BEL, C1) in them are removed, newlines and tabs kept.
func TestDocumentStripsControl(t *testing.T) {
	d := Limits{}.Document(Document{
		URL:   "https://example.org/p",
		Title: "Real \x1b]0;owned\x07title\x1b[2J\u009b",
		Text:  "line one\x07\n\tline \x1b[31mtwo\x1b[0m\u202e",
	}, "https://example.org/p")
	if d.Title != "Real title" {
		t.Errorf("title %q, want %q", d.Title, "Real title")
	}
	if d.Text != "line one\n\tline two" {
		t.Errorf("text %q, want %q", d.Text, "line one\n\tline two")
	}
	h := Limits{}.Hits([]Hit{{Title: "a\x1b]8;;https://x\x07b", Snippet: "c\x1bd"}})
	if h[0].Title != "ab" || strings.ContainsRune(h[0].Snippet, 0x1b) {
		t.Errorf("hit %+v keeps control characters", h[0])
	}
}
