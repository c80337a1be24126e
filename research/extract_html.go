package research

import (
	"bytes"
	"fmt"
	"io"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/lethe-research/lethe/graph"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// ExtractHTML returns the readable text of an HTML page.
//
//   - Title: <title>, else <meta property="og:title">, else the first <h1>.
//   - Content root: the first <main> (or role="main"); else every top-level
//     <article>; else <body>. If the chosen root has no text, <body> is used.
//   - Dropped subtrees: script, style, noscript, template, nav, aside, svg,
//     canvas, iframe, object, embed, button, select, textarea, elements with
//     the hidden attribute, aria-hidden="true", an inline display:none, or
//     role navigation/banner/contentinfo/complementary; header and footer
//     unless they are inside a <main> or an <article> (where the header
//     holds the content's own heading).
//   - Layout: whitespace is collapsed as a browser would; block elements
//     (p, div, section, h1–h6, table, blockquote, pre, …) are separated by a
//     blank line; list items, table rows, dt/dd and <br> start a new line;
//     table cells are separated by a space; <pre> keeps its whitespace.
//   - Links: <a href> inside the content, resolved against <base href> and
//     baseURL, kept when http, https or corpus, fragment stripped, without
//     links to the page itself, deduplicated in document order. With an
//     empty baseURL only absolute links are kept.
//
// The input is assumed to be UTF-8 (invalid bytes are replaced). Title,
// text and links are bounded by DefaultLimits (Limits.ExtractHTML for
// others).
func ExtractHTML(r io.Reader, baseURL string) (Document, error) {
	return DefaultLimits().ExtractHTML(r, baseURL)
}

// ExtractHTML is ExtractHTML bounded by l: the title is cut to
// MaxTitleChars (only a bounded prefix of a huge <title> is read), links
// over MaxURLBytes are dropped, the text is cut to MaxTextBytes.
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
	doc.Title = htmlTitle(root, l)

	body := findFirst(root, func(n *html.Node) bool { return n.DataAtom == atom.Body })
	if body == nil {
		body = root
	}
	var roots []*html.Node
	if m := findFirst(body, func(n *html.Node) bool {
		return n.DataAtom == atom.Main || strings.EqualFold(attr(n, "role"), "main")
	}); m != nil {
		roots = []*html.Node{m}
	} else {
		roots = findTopLevel(body, atom.Article)
	}

	newEx := func() *htmlExtractor {
		return &htmlExtractor{links: linkCollector{base: base, self: stripFragment(baseURL), seen: map[string]bool{}, maxURL: l.MaxURLBytes}}
	}
	ex := newEx()
	if len(roots) > 0 {
		for _, n := range roots {
			ex.walk(n, false, isInsideContent(n))
			ex.out.paragraph()
		}
		if strings.TrimSpace(ex.out.String()) == "" {
			roots = nil
		}
	}
	if len(roots) == 0 {
		ex = newEx()
		ex.walk(body, false, false)
	}
	doc.Text = tidyText(ex.out.String())
	doc.Links = ex.links.links
	if doc.Title == "" {
		if h := findFirst(body, func(n *html.Node) bool { return n.DataAtom == atom.H1 }); h != nil {
			doc.Title = l.Title(boundedText(h, titleScanBytes(l)))
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

// titleScanBytes is how much of a title element's text is looked at: enough
// for MaxTitleChars runes after whitespace collapsing.
func titleScanBytes(l Limits) int { return 8*l.MaxTitleChars + 64 }

func htmlTitle(root *html.Node, l Limits) string {
	if t := findFirst(root, func(n *html.Node) bool {
		return n.DataAtom == atom.Title && !isInside(n, atom.Svg)
	}); t != nil {
		if s := l.Title(boundedText(t, titleScanBytes(l))); s != "" {
			return s
		}
	}
	if m := findFirst(root, func(n *html.Node) bool {
		return n.DataAtom == atom.Meta && strings.EqualFold(attr(n, "property"), "og:title")
	}); m != nil {
		return l.Title(attr(m, "content"))
	}
	return ""
}

type htmlExtractor struct {
	out   textBuilder
	links linkCollector
}

// walk appends the readable text of n. pre: inside <pre>; inContent: inside
// <main> or <article> (header/footer kept).
func (e *htmlExtractor) walk(n *html.Node, pre, inContent bool) {
	switch n.Type {
	case html.TextNode:
		if pre {
			e.out.raw(n.Data)
		} else {
			e.out.text(n.Data)
		}
		return
	case html.CommentNode, html.DoctypeNode:
		return
	case html.ElementNode:
		if dropElement(n, inContent) {
			return
		}
	}
	a := n.DataAtom
	if a == atom.Article || a == atom.Main {
		inContent = true
	}
	if a == atom.Pre || a == atom.Textarea || a == atom.Listing {
		pre = true
	}
	level := blockLevel(a)
	switch {
	case a == atom.Br:
		e.out.line()
		return
	case a == atom.Hr:
		e.out.paragraph()
		return
	case a == atom.Td || a == atom.Th:
		e.out.space()
	case level == 2:
		e.out.paragraph()
	case level == 1:
		e.out.line()
	}
	if a == atom.A {
		e.links.add(attr(n, "href"))
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		e.walk(c, pre, inContent)
	}
	switch {
	case a == atom.Td || a == atom.Th:
		e.out.space()
	case level == 2:
		e.out.paragraph()
	case level == 1:
		e.out.line()
	}
}

// blockLevel: 2 = paragraph-level block (blank line around), 1 = line-level
// block (newline around), 0 = inline.
func blockLevel(a atom.Atom) int {
	switch a {
	case atom.P, atom.Div, atom.Section, atom.Article, atom.Main, atom.Header, atom.Footer,
		atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6,
		atom.Ul, atom.Ol, atom.Dl, atom.Table, atom.Blockquote, atom.Pre, atom.Listing,
		atom.Figure, atom.Figcaption, atom.Address, atom.Details, atom.Fieldset,
		atom.Form, atom.Caption, atom.Center, atom.Body, atom.Html:
		return 2
	case atom.Li, atom.Tr, atom.Dt, atom.Dd, atom.Summary, atom.Legend, atom.Thead, atom.Tbody, atom.Tfoot, atom.Option:
		return 1
	}
	return 0
}

func dropElement(n *html.Node, inContent bool) bool {
	switch n.DataAtom {
	case atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Nav, atom.Aside,
		atom.Svg, atom.Math, atom.Canvas, atom.Iframe, atom.Object, atom.Embed,
		atom.Button, atom.Select, atom.Textarea, atom.Input, atom.Head, atom.Dialog:
		return true
	case atom.Header, atom.Footer:
		if !inContent {
			return true
		}
	}
	if n.Data == "svg" || n.Data == "math" { // foreign content without atoms
		return true
	}
	for _, at := range n.Attr {
		switch strings.ToLower(at.Key) {
		case "hidden":
			return true
		case "aria-hidden":
			if strings.EqualFold(strings.TrimSpace(at.Val), "true") {
				return true
			}
		case "style":
			s := strings.ToLower(strings.Join(strings.Fields(at.Val), ""))
			if strings.Contains(s, "display:none") || strings.Contains(s, "visibility:hidden") {
				return true
			}
		case "role":
			switch strings.ToLower(strings.TrimSpace(at.Val)) {
			case "navigation", "banner", "contentinfo", "complementary":
				return true
			}
		}
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

// findTopLevel returns the elements with atom a that have no ancestor with
// the same atom below n, in document order.
func findTopLevel(n *html.Node, a atom.Atom) []*html.Node {
	var out []*html.Node
	var rec func(*html.Node)
	rec = func(x *html.Node) {
		for c := x.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.ElementNode && c.DataAtom == a {
				out = append(out, c)
				continue
			}
			rec(c)
		}
	}
	rec(n)
	return out
}

func isInside(n *html.Node, a atom.Atom) bool {
	for p := n.Parent; p != nil; p = p.Parent {
		if p.DataAtom == a {
			return true
		}
	}
	return false
}

func isInsideContent(n *html.Node) bool {
	return n.DataAtom == atom.Article || n.DataAtom == atom.Main || isInside(n, atom.Article) || isInside(n, atom.Main)
}

// boundedText is textContent that stops after max bytes (at a rune
// boundary): a title or heading of megabytes is never copied whole.
func boundedText(n *html.Node, max int) string {
	var sb strings.Builder
	var rec func(*html.Node) bool
	rec = func(x *html.Node) bool {
		if x.Type == html.TextNode {
			left := max - sb.Len()
			if len(x.Data) > left {
				sb.WriteString(truncateUTF8(x.Data, left))
				return false
			}
			sb.WriteString(x.Data)
		}
		for c := x.FirstChild; c != nil; c = c.NextSibling {
			if !rec(c) {
				return false
			}
		}
		return true
	}
	rec(n)
	return sb.String()
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
}

func (b *textBuilder) String() string { return b.sb.String() }

func (b *textBuilder) line() {
	if b.pendingBreak < 1 {
		b.pendingBreak = 1
	}
}

func (b *textBuilder) paragraph() { b.pendingBreak = 2 }

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
	}
	if isSpaceByte(s[len(s)-1]) {
		b.pendingSpace = true
	}
}

// raw appends s keeping its whitespace (inside <pre>).
func (b *textBuilder) raw(s string) {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	if strings.TrimSpace(s) == "" && b.sb.Len() == 0 {
		return
	}
	b.flush()
	b.sb.WriteString(s)
}

func isSpaceByte(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

func collapseSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

func lowerTrim(s string) string { return strings.ToLower(strings.TrimSpace(s)) }
