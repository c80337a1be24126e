package research

import (
	"bytes"
	"fmt"
	"io"
	"net/url"
	"strings"
	"unicode/utf8"

	readability "codeberg.org/readeck/go-readability/v2"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/lethe-research/lethe/graph"
)

// ExtractHTML returns the readable text of an HTML page.
//
// The main content and the title are found by go-readability (a port of
// Mozilla's Readability.js, docs/research.md "HTML extraction"): it drops
// scripts, styles, hidden elements, navigation, sidebars, headers and
// footers by its scoring. What readability has no answer for is ours:
//
//   - Text: the content node is written as Markdown-like text, so that the
//     chunker and the model see its structure: headings as "## Heading",
//     list items as "- item", tables as "| cell | cell |" rows, <pre> as a
//     fenced code block keeping its whitespace, paragraphs separated by a
//     blank line, whitespace collapsed as a browser would.
//   - Links: <a href> inside the content, resolved against <base href> and
//     baseURL, kept when http, https or corpus, fragment stripped, without
//     links to the page itself, deduplicated in document order, each with
//     its anchor text (Document.LinkText: what a following crawl ranks
//     them by). With an empty baseURL only absolute links are kept.
//
// The input is assumed to be UTF-8 (invalid bytes are replaced). Title,
// text and links are bounded by DefaultLimits (Limits.ExtractHTML for
// others).
func ExtractHTML(r io.Reader, baseURL string) (Document, error) {
	return DefaultLimits().ExtractHTML(r, baseURL)
}

// ExtractHTML is ExtractHTML bounded by l: the title is cut to
// MaxTitleChars, links over MaxURLBytes are dropped, the text is cut to
// MaxTextBytes.
func (l Limits) ExtractHTML(r io.Reader, baseURL string) (Document, error) {
	l = l.withDefaults()
	data, err := io.ReadAll(r)
	if err != nil {
		return Document{}, fmt.Errorf("research: read HTML %s: %w", baseURL, err)
	}
	doc := Document{URL: baseURL, Kind: graph.KindHTML, Bytes: len(data)}
	if !utf8.Valid(data) {
		data = bytes.ToValidUTF8(data, []byte("\uFFFD"))
	}
	root, err := html.Parse(bytes.NewReader(data))
	if err != nil {
		return doc, fmt.Errorf("research: parse HTML %s: %w", baseURL, err)
	}
	base := htmlBase(root, baseURL)
	unwrapPlaceholders(root)
	boundTitles(root, l)
	holdTableLinks(root) // extract_tables.go: data tables are content, however linky
	// readability resolves relative links against the page URL itself; with
	// <base href> honoured here first, both agree.
	parser := readability.NewParser()
	art, err := parser.ParseAndMutate(root, base)
	if err != nil {
		return doc, fmt.Errorf("research: readability %s: %w", baseURL, err)
	}
	doc.Title = art.Title()
	if art.Node != nil {
		releaseTableLinks(art.Node)
		w := &markdownWriter{links: linkCollector{base: base, self: stripFragment(baseURL), seen: map[string]bool{}, maxURL: l.MaxURLBytes}}
		w.block(art.Node)
		doc.Text = tidyText(w.out.String())
		doc.Links, doc.LinkText = w.links.links, w.links.text
		if doc.Title == "" { // no <title>, og:title or JSON-LD name
			doc.Title = w.heading
		}
	}
	return l.Document(doc, baseURL), nil
}

// htmlBase is the base URL of links: <base href> resolved against baseURL.
func htmlBase(root *html.Node, baseURL string) *url.URL {
	base := parseBase(baseURL)
	if b := findFirst(root, func(n *html.Node) bool { return n.DataAtom == atom.Base && attr(n, "href") != "" }); b != nil {
		if u, err := url.Parse(strings.TrimSpace(attr(b, "href"))); err == nil {
			if base != nil {
				base = base.ResolveReference(u)
			} else if u.IsAbs() {
				base = u
			}
		}
	}
	return base
}

// unwrapPlaceholders replaces every <a> without href (a placeholder, not a
// link) by its children. Why: XHTML pages (DocBook output such as the
// Debian Reference) write anchors as <a id="x"/>, which an HTML parser
// reads as an open <a> that swallows the section after it; readability
// then counts the whole section as link text and drops it.
func unwrapPlaceholders(n *html.Node) {
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		unwrapPlaceholders(c)
		if c.Type == html.ElementNode && c.DataAtom == atom.A && attr(c, "href") == "" {
			for g := c.FirstChild; g != nil; g = c.FirstChild {
				c.RemoveChild(g)
				n.InsertBefore(g, c)
			}
			n.RemoveChild(c)
		}
		c = next
	}
}

// boundTitles cuts the text of every <title> to what Limits.Title looks at
// (8 bytes a rune of MaxTitleChars, and room for whitespace), before
// readability runs its title heuristics (regular expressions over the
// whole title): a 1 MB title costs no more than a short one.
func boundTitles(n *html.Node, l Limits) {
	if n.Type == html.ElementNode && n.DataAtom == atom.Title {
		max := 8*l.MaxTitleChars + 64
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.TextNode {
				c.Data = truncateUTF8(c.Data, max)
				max -= len(c.Data)
			}
		}
		return
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		boundTitles(c, l)
	}
}

// markdownWriter writes readability's content node as Markdown-like text.
type markdownWriter struct {
	out     textBuilder
	links   linkCollector
	list    int    // depth of nested lists
	heading string // the first heading's text
}

// block writes the children of n.
func (w *markdownWriter) block(n *html.Node) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		w.node(c)
	}
}

func (w *markdownWriter) node(n *html.Node) {
	switch n.Type {
	case html.TextNode:
		w.out.text(n.Data)
		return
	case html.ElementNode:
	default:
		return
	}
	// readability renames elements (a <div> of phrasing content becomes a
	// <p>, <h1> an <h2>) by their name only: the atom is looked up again.
	switch a := atom.Lookup([]byte(n.Data)); {
	case skipElement(n):
	case a == atom.Br:
		w.out.line()
	case a == atom.Hr:
		w.out.paragraph()
	case headingLevel(a) > 0:
		w.out.paragraph()
		w.out.raw(strings.Repeat("#", headingLevel(a)))
		w.out.space()
		start := w.out.sb.Len()
		w.block(n)
		if w.heading == "" {
			w.heading = collapseSpace(w.out.sb.String()[start:])
		}
		w.out.paragraph()
	case a == atom.Pre:
		w.out.paragraph()
		w.out.raw("```\n")
		w.out.raw(strings.Trim(strings.ReplaceAll(textContent(n), "\r\n", "\n"), "\n"))
		w.out.raw("\n```")
		w.out.paragraph()
	case a == atom.Table:
		w.table(n)
	case a == atom.Ul || a == atom.Ol || a == atom.Dl:
		w.list++
		w.out.paragraph()
		w.block(n)
		w.list--
		w.out.paragraph()
	case a == atom.Li:
		w.out.line()
		w.out.raw(strings.Repeat("  ", max(w.list-1, 0)) + "-")
		w.out.space()
		w.out.hold = true // <li><p>text</p></li>: the text stays on the marker's line
		w.block(n)
		w.out.line()
	case a == atom.A:
		start := w.out.sb.Len()
		w.block(n)
		w.links.add(attr(n, "href"), w.out.sb.String()[start:])
	case blockElement(a):
		w.out.paragraph()
		w.block(n)
		w.out.paragraph()
	case a == atom.Dt || a == atom.Dd || a == atom.Figcaption || a == atom.Caption:
		w.out.line()
		w.block(n)
		w.out.line()
	default:
		w.block(n)
	}
}

// table writes each row as "| cell | cell |" on its own line.
func (w *markdownWriter) table(n *html.Node) {
	w.out.paragraph()
	var rows []*html.Node
	collect(n, atom.Tr, atom.Table, &rows)
	for _, tr := range rows {
		w.out.line()
		w.out.raw("|")
		for c := tr.FirstChild; c != nil; c = c.NextSibling {
			if a := atom.Lookup([]byte(c.Data)); a != atom.Td && a != atom.Th {
				continue
			}
			w.out.raw(" ")
			w.block(c)
			w.out.raw(" |")
		}
	}
	w.out.paragraph()
}

// collect appends the descendants of n with atom a, not looking inside
// elements with atom stop (a nested table has its own rows).
func collect(n *html.Node, a, stop atom.Atom, out *[]*html.Node) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		switch atom.Lookup([]byte(c.Data)) {
		case a:
			*out = append(*out, c)
		case stop:
		default:
			collect(c, a, stop, out)
		}
	}
}

// skipElement: elements that hold no readable text even when readability
// leaves them in (it keeps what its scoring does not judge, e.g. an inline
// <svg> or a form control).
func skipElement(n *html.Node) bool {
	switch n.DataAtom {
	case atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Svg, atom.Math,
		atom.Canvas, atom.Iframe, atom.Object, atom.Embed, atom.Button, atom.Select,
		atom.Textarea, atom.Input, atom.Head:
		return true
	}
	return n.Data == "svg" || n.Data == "math"
}

func headingLevel(a atom.Atom) int {
	switch a {
	case atom.H1:
		return 1
	case atom.H2:
		return 2
	case atom.H3:
		return 3
	case atom.H4:
		return 4
	case atom.H5:
		return 5
	case atom.H6:
		return 6
	}
	return 0
}

// blockElement: elements that stand in their own paragraph.
func blockElement(a atom.Atom) bool {
	switch a {
	case atom.P, atom.Div, atom.Section, atom.Article, atom.Main, atom.Header, atom.Footer,
		atom.Blockquote, atom.Listing, atom.Figure, atom.Address, atom.Details, atom.Summary,
		atom.Fieldset, atom.Form, atom.Center, atom.Body, atom.Html, atom.Aside, atom.Nav:
		return true
	}
	return false
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Namespace == "" && strings.EqualFold(a.Key, key) {
			return a.Val
		}
	}
	return ""
}

func findFirst(n *html.Node, pred func(*html.Node) bool) *html.Node {
	if n.Type == html.ElementNode && pred(n) {
		return n
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if f := findFirst(c, pred); f != nil {
			return f
		}
	}
	return nil
}

func textContent(n *html.Node) string {
	var sb strings.Builder
	var rec func(*html.Node)
	rec = func(x *html.Node) {
		if x.Type == html.TextNode {
			sb.WriteString(x.Data)
		}
		for c := x.FirstChild; c != nil; c = c.NextSibling {
			rec(c)
		}
	}
	rec(n)
	return sb.String()
}

func parseBase(raw string) *url.URL {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() {
		return nil
	}
	return u
}

func stripFragment(raw string) string {
	if i := strings.IndexByte(raw, '#'); i >= 0 {
		return raw[:i]
	}
	return raw
}

// textBuilder accumulates text with browser-like whitespace collapsing and
// pending line/paragraph breaks that are only written before further text.
type textBuilder struct {
	sb           strings.Builder
	pendingBreak int // 0 none, 1 newline, 2 blank line
	pendingSpace bool
	hold         bool // breaks are ignored until the next text (after a list marker)
}

func (b *textBuilder) String() string { return b.sb.String() }

func (b *textBuilder) line() {
	if b.pendingBreak < 1 && !b.hold {
		b.pendingBreak = 1
	}
}

func (b *textBuilder) paragraph() {
	if !b.hold {
		b.pendingBreak = 2
	}
}

func (b *textBuilder) space() { b.pendingSpace = true }

func (b *textBuilder) flush() {
	if b.sb.Len() == 0 {
		b.pendingBreak, b.pendingSpace = 0, false
		return
	}
	switch {
	case b.pendingBreak == 2:
		b.sb.WriteString("\n\n")
	case b.pendingBreak == 1:
		b.sb.WriteString("\n")
	case b.pendingSpace:
		b.sb.WriteByte(' ')
	}
	b.pendingBreak, b.pendingSpace = 0, false
}

// text appends s with its whitespace collapsed.
func (b *textBuilder) text(s string) {
	if s == "" {
		return
	}
	fields := strings.Fields(s)
	if len(fields) == 0 {
		b.pendingSpace = true
		return
	}
	if isSpaceByte(s[0]) {
		b.pendingSpace = true
	}
	for i, f := range fields {
		if i > 0 {
			b.pendingSpace = true
		}
		b.flush()
		b.sb.WriteString(f)
		b.hold = false
	}
	if isSpaceByte(s[len(s)-1]) {
		b.pendingSpace = true
	}
}

// raw appends s as it is (markup, <pre> text), after any pending break;
// a pending space is dropped (markup starts its own line or cell).
func (b *textBuilder) raw(s string) {
	if s == "" {
		return
	}
	if b.pendingBreak == 0 {
		b.pendingSpace = false
	}
	b.flush()
	b.sb.WriteString(s)
	b.hold = false
}

func isSpaceByte(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

func collapseSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

func lowerTrim(s string) string { return strings.ToLower(strings.TrimSpace(s)) }
