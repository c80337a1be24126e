package research

import (
	"reflect"
	"strings"
	"testing"

	"github.com/lethe-research/lethe/graph"
)

const samplePage = `<!DOCTYPE html>
<html><head>
  <title>  The   Lighthouse
   Keeper </title>
  <style>body { color: red } .secret { }</style>
  <script>var tracking = "SCRIPTTEXT";</script>
</head>
<body>
  <header><div class="logo">SiteHeader</div></header>
  <nav><a href="/home">NavHome</a> <a href="/about">NavAbout</a></nav>
  <main>
    <h1>Keeping the light</h1>
    <p>The keeper   climbed the <b>tower</b> every
       evening.<br>He trimmed the wick.</p>
    <p>Read the <a href="logbook.html#1887">logbook</a>, the <a href="https://other.example/x?y=1">other site</a>,
       <a href="mailto:keeper@example.com">mail</a>, <a href="javascript:alert(1)">js</a>,
       <a href="#top">top</a> and <a href="logbook.html">logbook again</a>.</p>
    <ul><li>Oil</li><li>Wicks</li></ul>
    <table><tr><td>Year</td><td>Ships</td></tr><tr><td>1887</td><td>12</td></tr></table>
    <pre>line one
    indented line</pre>
    <div hidden>HiddenText</div>
    <span aria-hidden="true">AriaHidden</span>
    <p style="display: none">InvisibleText</p>
    <aside>AsideText</aside>
    <noscript>NoScriptText</noscript>
    <script>document.write("INLINESCRIPT")</script>
  </main>
  <footer>FooterText</footer>
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
	for _, bad := range []string{"SCRIPTTEXT", "color", "SiteHeader", "NavHome", "HiddenText", "AriaHidden",
		"InvisibleText", "AsideText", "NoScriptText", "INLINESCRIPT", "FooterText"} {
		if strings.Contains(doc.Text, bad) {
			t.Errorf("text contains %q:\n%s", bad, doc.Text)
		}
	}
	wantParas := []string{
		"Keeping the light",
		"The keeper climbed the tower every evening.\nHe trimmed the wick.",
		"Read the logbook, the other site, mail, js, top and logbook again.",
		"Oil\nWicks",
		"Year Ships\n1887 12",
		"line one\n    indented line",
	}
	if got := strings.Split(doc.Text, "\n\n"); !reflect.DeepEqual(got, wantParas) {
		t.Errorf("paragraphs:\n%q\nwant\n%q", got, wantParas)
	}
	wantLinks := []string{"https://example.org/light/logbook.html", "https://other.example/x?y=1"}
	if !reflect.DeepEqual(doc.Links, wantLinks) {
		t.Errorf("links %q want %q", doc.Links, wantLinks)
	}
}

func TestExtractHTMLFallbacks(t *testing.T) {
	// No <main>: articles; header inside an article is kept; og:title.
	page := `<html><head><meta property="og:title" content="OG Title"></head><body>
	<nav>menu</nav>
	<article><header><h2>First post</h2></header><p>Alpha text.</p></article>
	<div>Sidebar junk outside articles</div>
	<article><p>Beta text.</p><footer>Posted Monday</footer></article>
	<base href="https://ignored.example/"></body></html>`
	doc, err := ExtractHTML(strings.NewReader(page), "")
	if err != nil {
		t.Fatal(err)
	}
	if doc.Title != "OG Title" {
		t.Errorf("title %q", doc.Title)
	}
	if want := "First post\n\nAlpha text.\n\nBeta text.\n\nPosted Monday"; doc.Text != want {
		t.Errorf("text %q want %q", doc.Text, want)
	}

	// No main, no article: body; title from <h1>; relative links dropped
	// without a base URL; <base href> used when present.
	page = `<html><head><base href="https://base.example/dir/"></head><body><h1>Heading  One</h1>
	<p>Body <a href="rel.html">text</a> <a href="http://abs.example/">abs</a></p></body></html>`
	doc, _ = ExtractHTML(strings.NewReader(page), "")
	if doc.Title != "Heading One" || doc.Text != "Heading One\n\nBody text abs" {
		t.Errorf("body fallback %+v", doc)
	}
	if want := []string{"https://base.example/dir/rel.html", "http://abs.example/"}; !reflect.DeepEqual(doc.Links, want) {
		t.Errorf("base links %q", doc.Links)
	}
	doc, _ = ExtractHTML(strings.NewReader(`<p><a href="rel.html">x</a><a href="https://a.example/">y</a></p>`), "")
	if want := []string{"https://a.example/"}; !reflect.DeepEqual(doc.Links, want) {
		t.Errorf("no-base links %q", doc.Links)
	}

	// An empty <main> (filled by JavaScript) falls back to the body.
	doc, _ = ExtractHTML(strings.NewReader(`<body><main></main><p>Server text</p></body>`), "https://x.example/")
	if doc.Text != "Server text" {
		t.Errorf("empty main fallback %q", doc.Text)
	}

	// A header inside <main> is content; the page header is not.
	doc, _ = ExtractHTML(strings.NewReader(`<body><header>Site</header><main><header><h1>Story</h1><p>By Ann</p></header><p>Text.</p></main></body>`), "")
	if doc.Text != "Story\n\nBy Ann\n\nText." {
		t.Errorf("header in main %q", doc.Text)
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
