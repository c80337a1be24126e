package research

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lethe-research/lethe/graph"
)

// samplePage is a page as sites serve them: a site header, navigation,
// a sidebar and a footer around an article long enough for readability's
// scoring (it keeps everything on pages under 500 characters of text).
const samplePage = `<!DOCTYPE html>
<html><head>
  <title>  The   Lighthouse
   Keeper </title>
  <style>body { color: red } .secret { }</style>
  <script>var tracking = "SCRIPTTEXT";</script>
</head>
<body>
  <header class="site-header"><div class="logo">SiteHeader</div></header>
  <nav class="menu"><a href="/home">NavHome</a> <a href="/about">NavAbout</a></nav>
  <div class="sidebar"><p>SidebarText: <a href="/related">related posts</a>, <a href="/tags">tags</a>.</p></div>
  <main>
    <article>
    <h1>Keeping the light</h1>
    <p>The keeper   climbed the <b>tower</b> every
       evening, trimmed the wick, polished the great lens and wound the clockwork that turned it,
       so that ships passing the reef could count the flashes and know where they were.<br>He trimmed the wick.</p>
    <p>Read the <a href="logbook.html#1887">keeper's logbook</a>, the <a href="https://other.example/x?y=1">other site</a>,
       <a href="mailto:keeper@example.com">mail</a>, <a href="javascript:alert(1)">js</a>,
       <a href="#top">top</a> and <a href="logbook.html">logbook again</a>. The logbook records the weather,
       the ships seen, the oil burnt and every repair, in the keeper's own hand, for forty years.</p>
    <h2>Supplies</h2>
    <p>Every spring a boat brought oil, wicks, food and letters; in a hard winter the supplies ran low,
       and the keeper rationed the oil before the food, because the light came first.</p>
    <ul><li>Oil</li><li>Wicks</li></ul>
    <table><tr><th>Year</th><th>Ships</th></tr><tr><td>1887</td><td>12</td></tr></table>
    <pre>line one
    indented line</pre>
    <div hidden>HiddenText</div>
    <p style="display: none">InvisibleText</p>
    <noscript>NoScriptText</noscript>
    <script>document.write("INLINESCRIPT")</script>
    </article>
  </main>
  <footer class="site-footer"><p>FooterText, <a href="/imprint">imprint</a></p></footer>
</body></html>`

func TestExtractHTML(t *testing.T) {
	doc, err := ExtractHTML(strings.NewReader(samplePage), "https://example.org/light/index.html")
	if err != nil {
		t.Fatal(err)
	}
	if doc.Title != "The Lighthouse Keeper" {
		t.Errorf("title %q", doc.Title)
	}
	if doc.Kind != graph.KindHTML || doc.URL != "https://example.org/light/index.html" || doc.Bytes != len(samplePage) {
		t.Errorf("meta %+v", doc)
	}
	for _, bad := range []string{"SCRIPTTEXT", "color", "SiteHeader", "NavHome", "SidebarText", "HiddenText",
		"InvisibleText", "NoScriptText", "INLINESCRIPT", "FooterText"} {
		if strings.Contains(doc.Text, bad) {
			t.Errorf("text contains %q:\n%s", bad, doc.Text)
		}
	}
	// The structure readability keeps, written as Markdown.
	for _, want := range []string{
		"The keeper climbed the tower every evening, trimmed the wick,",
		"know where they were.\nHe trimmed the wick.",
		"Read the keeper's logbook, the other site, mail, js, top and logbook again.",
		"\n\n## Supplies\n\n",
		"- Oil\n- Wicks",
		"| Year | Ships |\n| 1887 | 12 |",
		"```\nline one\n    indented line\n```",
	} {
		if !strings.Contains(doc.Text, want) {
			t.Errorf("text lacks %q:\n%s", want, doc.Text)
		}
	}
	wantLinks := []string{"https://example.org/light/logbook.html", "https://other.example/x?y=1"}
	if !reflect.DeepEqual(doc.Links, wantLinks) {
		t.Errorf("links %q want %q", doc.Links, wantLinks)
	}
	wantText := map[string]string{"https://example.org/light/logbook.html": "keeper's logbook", "https://other.example/x?y=1": "other site"}
	if !reflect.DeepEqual(doc.LinkText, wantText) {
		t.Errorf("anchor texts %q want %q", doc.LinkText, wantText)
	}
}

func TestExtractHTMLSmallPages(t *testing.T) {
	// No <title>: og:title; then the first heading of the content.
	doc, err := ExtractHTML(strings.NewReader(`<html><head><meta property="og:title" content="OG Title"></head><body><article><p>Alpha text.</p></article></body></html>`), "")
	if err != nil || doc.Title != "OG Title" || doc.Text != "Alpha text." {
		t.Errorf("og:title: %+v %v", doc, err)
	}
	// <base href> resolves links; relative links are dropped without a
	// base URL.
	page := `<html><head><base href="https://base.example/dir/"></head><body><h1>Heading  One</h1>
	<p>Body <a href="rel.html">text</a> <a href="http://abs.example/">abs</a></p></body></html>`
	doc, _ = ExtractHTML(strings.NewReader(page), "")
	if doc.Title != "Heading One" || doc.Text != "## Heading One\n\nBody text abs" {
		t.Errorf("heading title %+v", doc)
	}
	if want := []string{"https://base.example/dir/rel.html", "http://abs.example/"}; !reflect.DeepEqual(doc.Links, want) {
		t.Errorf("base links %q", doc.Links)
	}
	doc, _ = ExtractHTML(strings.NewReader(`<p><a href="rel.html">x</a><a href="https://a.example/">y</a></p>`), "")
	if want := []string{"https://a.example/"}; !reflect.DeepEqual(doc.Links, want) {
		t.Errorf("no-base links %q", doc.Links)
	}
	// An empty <main> (filled by JavaScript): the server's text is kept.
	doc, _ = ExtractHTML(strings.NewReader(`<body><main></main><p>Server text</p></body>`), "https://x.example/")
	if doc.Text != "Server text" {
		t.Errorf("empty main %q", doc.Text)
	}
	// Corpus base URLs resolve like any hierarchical URL.
	doc, _ = ExtractHTML(strings.NewReader(`<p><a href="ch02.html#s1">next</a> <a href="../up.html">up</a></p>`), "corpus:///book/ch01.html")
	if want := []string{"corpus:///book/ch02.html", "corpus:///up.html"}; !reflect.DeepEqual(doc.Links, want) {
		t.Errorf("corpus links %q", doc.Links)
	}
	// Invalid UTF-8 and empty input do not fail.
	if doc, err = ExtractHTML(strings.NewReader("<p>caf\xe9</p>"), ""); err != nil || doc.Text != "caf\uFFFD" {
		t.Errorf("invalid utf8: %q %v", doc.Text, err)
	}
	if doc, err = ExtractHTML(strings.NewReader(""), ""); err != nil || doc.Text != "" {
		t.Errorf("empty: %+v %v", doc, err)
	}
}

const sampleMarkdown = `---
title: "Front Title"
tags: [a, b]
---

Intro paragraph before any heading, with **bold**, *emphasis*, _under_ and snake_case_name.

# Main   Heading #

Text with a [link](https://example.com/page#frag "T") and an ![diagram](img/d.png) and ` + "`inline code`" + `.
Second line of the same paragraph, \*not emphasis\*.

Setext heading
--------------

> Quoted text
> continues.

- item one
- [x] item two
1. numbered

| Col A | Col B |
|-------|:-----:|
| 1     | 2     |

` + "```go\nfunc main() {}\n```" + `

See [ref link][r] and <https://auto.example/x>.

[r]: https://ref.example/doc
`

func TestExtractMarkdown(t *testing.T) {
	doc, err := ExtractMarkdown(strings.NewReader(sampleMarkdown), "corpus:///notes/a.md")
	if err != nil {
		t.Fatal(err)
	}
	if doc.Title != "Main Heading" || doc.Kind != graph.KindText {
		t.Errorf("title %q kind %s", doc.Title, doc.Kind)
	}
	want := []string{
		"Intro paragraph before any heading, with bold, emphasis, under and snake_case_name.",
		"Main Heading",
		"Text with a link and an diagram and inline code.\nSecond line of the same paragraph, *not emphasis*.",
		"Setext heading",
		"Quoted text\ncontinues.",
		"item one\nitem two\nnumbered",
		"Col A | Col B\n1     | 2",
		"func main() {}",
		"See ref link and https://auto.example/x.",
	}
	if got := strings.Split(doc.Text, "\n\n"); !reflect.DeepEqual(got, want) {
		t.Errorf("paragraphs:\n%q\nwant\n%q", got, want)
	}
	wantLinks := []string{"https://example.com/page", "corpus:///notes/img/d.png", "https://auto.example/x", "https://ref.example/doc"}
	if !reflect.DeepEqual(doc.Links, wantLinks) {
		t.Errorf("links %q want %q", doc.Links, wantLinks)
	}

	// Title fallbacks: front matter, then first line.
	doc, _ = ExtractMarkdown(strings.NewReader("---\ntitle: Only Front\n---\nplain text"), "")
	if doc.Title != "Only Front" || doc.Text != "plain text" {
		t.Errorf("front matter title: %+v", doc)
	}
	doc, _ = ExtractMarkdown(strings.NewReader("just **words** here\n\nmore"), "")
	if doc.Title != "just words here" {
		t.Errorf("first-line title %q", doc.Title)
	}
}

func TestExtractText(t *testing.T) {
	doc, err := ExtractText(strings.NewReader("\xEF\xBB\xBF\r\n  Title line  \r\n\r\n\r\n\r\nBody   one\r\nBody two   \r\n"), "corpus:///a.txt")
	if err != nil {
		t.Fatal(err)
	}
	if doc.Title != "Title line" || doc.Text != "Title line\n\nBody   one\nBody two" || doc.Kind != graph.KindText {
		t.Errorf("%+v", doc)
	}
	long := strings.Repeat("word ", 100)
	doc, _ = ExtractText(strings.NewReader(long), "")
	if n := len([]rune(doc.Title)); n > maxTitleRunes+1 || !strings.HasSuffix(doc.Title, "…") {
		t.Errorf("long title %d %q", n, doc.Title)
	}
}

func TestExtractorForType(t *testing.T) {
	for mt, ok := range map[string]bool{
		"text/html; charset=utf-8": true, "application/xhtml+xml": true, "text/markdown": true,
		"TEXT/PLAIN": true, "application/pdf": false, "": false,
	} {
		if _, got := ExtractorForType(mt); got != ok {
			t.Errorf("%q: %v", mt, got)
		}
	}
}

// TestExtractHTMLHostileShapes: shapes of page that cost a DOM walker
// time or stack are bounded: nesting past the parser's limit fails the
// page quickly, a script-only or invisible-only page yields no text.
func TestExtractHTMLHostileShapes(t *testing.T) {
	deep := "<html><body><main><p>start</p>" + strings.Repeat("<div>", 100000) + "deep" + strings.Repeat("</div>", 100000) + "</main></body></html>"
	start := time.Now()
	if _, err := ExtractHTML(strings.NewReader(deep), "https://x.example/"); err == nil || time.Since(start) > 5*time.Second {
		t.Errorf("100,000 nested elements: %v after %s", err, time.Since(start))
	}
	invisible := `<html><body><script>document.write("SCRIPTTEXT")</script><div hidden><p>` + strings.Repeat("HiddenText ", 200) +
		`</p></div><div style="display:none"><p>` + strings.Repeat("InvisibleText ", 200) + `</p></div><p aria-hidden="true">` + strings.Repeat("AriaText ", 200) + `</p></body></html>`
	doc, err := ExtractHTML(strings.NewReader(invisible), "https://x.example/")
	if err != nil || strings.TrimSpace(doc.Text) != "" {
		t.Errorf("invisible page: %v %.200q", err, doc.Text)
	}
}

// TestExtractDataTableLinks: a section that is mostly a package table of
// links (the Debian Reference's shape) keeps the table, and the table's
// links come out with their real targets, never the placeholder they
// carry while readability runs (extract_tables.go).
func TestExtractDataTableLinks(t *testing.T) {
	var rows strings.Builder
	for _, p := range []string{"whois", "openssl", "pwgen", "makepasswd", "apg"} {
		fmt.Fprintf(&rows, `<tr><td><a href="https://packages.debian.org/sid/%[1]s">%[1]s</a></td><td><a href="https://qa.debian.org/popcon.php?p=%[1]s">V:28, I:307</a></td>`+
			`<td><a href="https://packages.qa.debian.org/%[1]s.html">380</a></td><td><code>cmd-%[1]s</code></td><td>generates passwords</td></tr>`, p)
	}
	page := `<html><head><title>Authentication</title></head><body>
<div class="navheader"><table><tr><th colspan="3">Chapter 4</th></tr><tr><td><a href="ch03.html">Prev</a></td><td></td><td><a href="ch05.html">Next</a></td></tr></table></div>
<div class="chapter"><h1>Chapter 4. Authentication</h1>
<div class="section"><h2>4.1 Passwords</h2><p>` + strings.Repeat("A good password is long, and it is never a word of a dictionary, a name or a date. ", 12) + `</p></div>
<div class="section"><h2>4.4 Creating encrypted password</h2><p>There are independent tools to <a href="https://en.wikipedia.org/wiki/Salt">generate encrypted passwords with salt</a>.</p>
<div class="table"><p class="title"><b>Table 4.4. List of tools to generate password</b></p><div class="table-contents">
<table summary="List of tools to generate password"><thead><tr><th>package</th><th>popcon</th><th>size</th><th>command</th><th>function</th></tr></thead><tbody>` + rows.String() + `</tbody></table></div></div></div>
</div></body></html>`
	d, err := ExtractHTML(strings.NewReader(page), "https://www.debian.org/doc/ch04.html")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(d.Text, "cmd-pwgen") {
		t.Errorf("the package table was dropped:\n%s", d.Text)
	}
	if !slices.Contains(d.Links, "https://packages.debian.org/sid/pwgen") {
		t.Errorf("a table link lost its target: %q", d.Links)
	}
	for _, l := range d.Links {
		if strings.Contains(l, "lethe-table-link") {
			t.Errorf("placeholder target in the links: %q", l)
		}
	}
	if strings.Contains(d.Text, "Prev") {
		t.Errorf("the navigation header came back:\n%s", d.Text)
	}
}
