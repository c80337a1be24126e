package research

import (
	"bytes"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/lethe-research/lethe/graph"
)

// maxTitleRunes caps titles taken from the first line of a text file.
const maxTitleRunes = 200

// ExtractText returns a plain-text document: the text with line endings
// normalized and invalid UTF-8 replaced; the title is the first non-empty
// line (at most 200 characters). Kind is graph.KindText. Bounded by
// DefaultLimits.
func ExtractText(r io.Reader, url string) (Document, error) {
	return DefaultLimits().ExtractText(r, url)
}

// ExtractText is ExtractText bounded by l.
func (l Limits) ExtractText(r io.Reader, url string) (Document, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return Document{}, fmt.Errorf("research: read text %s: %w", url, err)
	}
	text := tidyText(decodeText(data))
	doc := Document{URL: url, Kind: graph.KindText, Bytes: len(data), Text: text}
	for _, line := range strings.Split(text, "\n") {
		if t := collapseSpace(line); t != "" {
			doc.Title = truncateRunes(t, maxTitleRunes)
			break
		}
	}
	return l.Document(doc, url), nil
}

var (
	mdATX         = regexp.MustCompile(`^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$`)
	mdSetextH1    = regexp.MustCompile(`^ {0,3}=+[ \t]*$`)
	mdSetextH2    = regexp.MustCompile(`^ {0,3}-+[ \t]*$`)
	mdRule        = regexp.MustCompile(`^ {0,3}(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$`)
	mdFence       = regexp.MustCompile("^ {0,3}(```+|~~~+)")
	mdRefDef      = regexp.MustCompile(`^ {0,3}\[[^\]]+\]:[ \t]*<?([^\s>]+)>?`)
	mdQuote       = regexp.MustCompile(`^ {0,3}>[ ]?`)
	mdList        = regexp.MustCompile(`^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+(?:\[[ xX]\][ \t]+)?`)
	mdTableSep    = regexp.MustCompile(`^[ \t]*\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$`)
	mdLink        = regexp.MustCompile(`!?\[([^\]]*)\]\(([^)\s]*)(?:\s+"[^"]*")?\)`)
	mdRefLink     = regexp.MustCompile(`\[([^\]]+)\]\[[^\]]*\]`)
	mdAutoLink    = regexp.MustCompile(`<((?:https?|corpus)://[^>\s]+)>`)
	mdCode        = regexp.MustCompile("`+([^`]+)`+")
	mdStrongStar  = regexp.MustCompile(`\*\*([^*\s](?:[^*]*[^*\s])?)\*\*`)
	mdStrongUnder = regexp.MustCompile(`(^|[^\pL\pN_])__([^_\s](?:[^_]*[^_\s])?)__`)
	mdEmStar      = regexp.MustCompile(`\*([^*\s](?:[^*]*[^*\s])?)\*`)
	mdEmUnder     = regexp.MustCompile(`(^|[^\pL\pN_])_([^_\s](?:[^_]*[^_\s])?)_`)
	mdStrike      = regexp.MustCompile(`~~([^~]+)~~`)
	mdTag         = regexp.MustCompile(`</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>`)
	mdEscape      = regexp.MustCompile("\\\\([!-/:-@\\[-`{-~])")
	mdFrontTitle  = regexp.MustCompile(`^title:[ \t]*["']?(.*?)["']?[ \t]*$`)
)

// ExtractMarkdown returns a Markdown file as text with the syntax stripped
// lightly: heading markers, emphasis, inline code ticks, list and quote
// markers, table separator rows, code fences (the code is kept), HTML tags
// and backslash escapes are removed; links and images keep their text (alt
// text for images) and their targets go to Links, resolved against url.
// Paragraph breaks (blank lines) are kept and every heading is a paragraph
// of its own. The title is the first heading, else a YAML front matter
// "title:", else the first non-empty line. Kind is graph.KindText. Bounded
// by DefaultLimits.
func ExtractMarkdown(r io.Reader, url string) (Document, error) {
	return DefaultLimits().ExtractMarkdown(r, url)
}

// ExtractMarkdown is ExtractMarkdown bounded by l.
func (l Limits) ExtractMarkdown(r io.Reader, url string) (Document, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return Document{}, fmt.Errorf("research: read Markdown %s: %w", url, err)
	}
	doc := Document{URL: url, Kind: graph.KindText, Bytes: len(data)}
	frontTitle, lines := mdFrontMatter(strings.Split(decodeText(data), "\n"))
	md := &mdWriter{doc: &doc, lc: &linkCollector{base: parseBase(url), self: stripFragment(url), seen: map[string]bool{}, maxURL: l.withDefaults().MaxURLBytes}}
	for i := 0; i < len(lines); i++ {
		i = md.line(lines, i)
	}
	doc.Text = tidyText(strings.Join(md.out, "\n"))
	doc.Links, doc.LinkText = md.lc.links, md.lc.text
	doc.Title = mdTitle(doc.Title, frontTitle, doc.Text)
	return l.Document(doc, url), nil
}

// mdFrontMatter splits off a YAML front matter block (--- … --- or ...),
// returning its title: and the lines after it.
func mdFrontMatter(lines []string) (string, []string) {
	if len(lines) == 0 || strings.TrimSpace(lines[0]) != "---" {
		return "", lines
	}
	for i := 1; i < len(lines) && i < 200; i++ {
		if t := strings.TrimSpace(lines[i]); t != "---" && t != "..." {
			continue
		}
		title := ""
		for _, fl := range lines[1:i] {
			if m := mdFrontTitle.FindStringSubmatch(strings.TrimSpace(fl)); m != nil && title == "" {
				title = collapseSpace(m[1])
			}
		}
		return title, lines[i+1:]
	}
	return "", lines
}

// mdTitle is the first heading, else the front matter's title, else the
// first line of text.
func mdTitle(heading, front, text string) string {
	if heading != "" {
		return heading
	}
	if front != "" {
		return front
	}
	for _, l := range strings.Split(text, "\n") {
		if t := collapseSpace(l); t != "" {
			return truncateRunes(t, maxTitleRunes)
		}
	}
	return ""
}

// mdWriter turns Markdown lines into plain text lines: headings on lines of
// their own (the first is the title), code fences kept verbatim, block
// syntax (quotes, lists, rules, tables, reference definitions) removed.
type mdWriter struct {
	doc   *Document
	lc    *linkCollector
	out   []string
	fence string // the open code fence, "" outside one
}

func (m *mdWriter) heading(h string) {
	h = collapseSpace(mdInline(h, m.lc))
	if h == "" {
		return
	}
	if m.doc.Title == "" {
		m.doc.Title = h
	}
	m.out = append(m.out, "", h, "")
}

// line handles lines[i] and returns the index of the last line it used (a
// setext heading uses two).
func (m *mdWriter) line(lines []string, i int) int {
	line := strings.TrimRight(lines[i], " \t")
	if m.fence != "" {
		if strings.HasPrefix(strings.TrimLeft(line, " "), m.fence) && strings.Trim(strings.TrimSpace(line), m.fence[:1]) == "" {
			m.fence = ""
			m.out = append(m.out, "")
		} else {
			m.out = append(m.out, line)
		}
		return i
	}
	if f := mdFence.FindStringSubmatch(line); f != nil {
		m.fence = f[1]
		m.out = append(m.out, "")
		return i
	}
	for { // blockquote markers, possibly nested
		loc := mdQuote.FindStringIndex(line)
		if loc == nil {
			break
		}
		line = line[loc[1]:]
	}
	return m.block(lines, i, line)
}

// block handles a line outside code fences, its quote markers removed.
func (m *mdWriter) block(lines []string, i int, line string) int {
	trimmed := strings.TrimSpace(line)
	switch { // in this order: a setext heading's text may look like a rule
	case trimmed == "":
		m.out = append(m.out, "")
		return i
	case mdATX.MatchString(line):
		m.heading(mdATX.FindStringSubmatch(line)[2])
		return i
	case mdSetext(lines, i, line, trimmed):
		m.heading(trimmed)
		return i + 1
	case mdRule.MatchString(line):
		m.out = append(m.out, "")
		return i
	case mdRefDef.MatchString(line):
		m.lc.add(mdRefDef.FindStringSubmatch(line)[1], "")
		return i
	case mdTableSep.MatchString(line) && strings.Contains(line, "-") && strings.Contains(line, "|"):
		return i
	}
	if loc := mdList.FindStringIndex(line); loc != nil {
		line = line[loc[1]:]
	}
	if strings.Contains(trimmed, "|") && strings.HasPrefix(trimmed, "|") {
		line = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(line), "|"), "|")
	}
	m.out = append(m.out, strings.TrimSpace(mdInline(line, m.lc)))
	return i
}

// mdSetext reports whether line is a setext heading: a text line followed
// by === or ---.
func mdSetext(lines []string, i int, line, trimmed string) bool {
	if i+1 >= len(lines) || mdList.MatchString(line) || strings.Contains(trimmed, "|") {
		return false
	}
	next := strings.TrimRight(lines[i+1], " \t")
	return mdSetextH1.MatchString(next) || (mdSetextH2.MatchString(next) && strings.TrimSpace(next) != "")
}

// mdInline strips inline Markdown syntax from one line, collecting link
// targets into lc.
func mdInline(s string, lc *linkCollector) string {
	// Backslash escapes first: the escaped character is literal. It is
	// parked in the private-use area and restored at the end.
	s = mdEscape.ReplaceAllStringFunc(s, func(m string) string { return string(rune(0xE000) + rune(m[1])) })
	// Inline code next: its content is literal.
	var codes []string
	s = mdCode.ReplaceAllStringFunc(s, func(m string) string {
		sub := mdCode.FindStringSubmatch(m)
		codes = append(codes, strings.TrimSpace(sub[1]))
		return "\x00" + fmt.Sprint(len(codes)-1) + "\x00"
	})
	s = mdLink.ReplaceAllStringFunc(s, func(m string) string {
		sub := mdLink.FindStringSubmatch(m)
		lc.add(sub[2], sub[1])
		return sub[1]
	})
	s = mdAutoLink.ReplaceAllStringFunc(s, func(m string) string {
		sub := mdAutoLink.FindStringSubmatch(m)
		lc.add(sub[1], "")
		return sub[1]
	})
	s = mdRefLink.ReplaceAllString(s, "$1")
	s = mdTag.ReplaceAllString(s, "")
	s = mdStrongStar.ReplaceAllString(s, "$1")
	s = mdStrongUnder.ReplaceAllString(s, "$1$2")
	s = mdEmStar.ReplaceAllString(s, "$1")
	s = mdEmUnder.ReplaceAllString(s, "$1$2")
	s = mdStrike.ReplaceAllString(s, "$1")
	for i, c := range codes {
		s = strings.Replace(s, "\x00"+fmt.Sprint(i)+"\x00", c, 1)
	}
	return strings.Map(func(r rune) rune {
		if r > 0xE000 && r < 0xE080 {
			return r - 0xE000
		}
		return r
	}, s)
}

type linkCollector struct {
	base   *url.URL
	self   string
	seen   map[string]bool
	links  []string
	text   map[string]string // anchor text by link, the first non-empty one
	maxURL int               // links longer than this are dropped (0: no cap)
}

// add records href (resolved) with its anchor text.
func (lc *linkCollector) add(href, text string) {
	href = strings.TrimSpace(href)
	if href == "" || strings.HasPrefix(href, "#") {
		return
	}
	u, err := url.Parse(href)
	if err != nil {
		return
	}
	if lc.base != nil {
		u = lc.base.ResolveReference(u)
	} else if !u.IsAbs() {
		return
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https", "corpus":
	default:
		return
	}
	u.Fragment, u.RawFragment = "", ""
	s := u.String()
	if lc.maxURL > 0 && len(s) > lc.maxURL {
		return
	}
	if s == lc.self {
		return
	}
	if text = collapseSpace(text); text != "" && lc.text[s] == "" {
		if lc.text == nil {
			lc.text = map[string]string{}
		}
		lc.text[s] = truncateRunes(text, maxAnchorRunes)
	}
	if lc.seen[s] {
		return
	}
	lc.seen[s] = true
	lc.links = append(lc.links, s)
}

// maxAnchorRunes bounds the anchor text kept per link: it is a label to
// rank the link by (like a search result's title), not content.
const maxAnchorRunes = 200

// decodeText makes raw bytes valid UTF-8 text with "\n" line endings and no
// byte-order mark.
func decodeText(data []byte) string {
	data = bytes.TrimPrefix(data, []byte("\xEF\xBB\xBF"))
	if !utf8.Valid(data) {
		data = bytes.ToValidUTF8(data, []byte("\uFFFD"))
	}
	s := strings.ReplaceAll(string(data), "\r\n", "\n")
	return strings.ReplaceAll(s, "\r", "\n")
}

// tidyText trims trailing whitespace from every line, turns whitespace-only
// lines into empty ones, collapses runs of blank lines into one, and trims
// the whole text.
func tidyText(s string) string {
	lines := strings.Split(s, "\n")
	out := lines[:0]
	blank := false
	for _, l := range lines {
		l = strings.TrimRight(l, " \t\f\v\u00a0")
		if strings.TrimSpace(l) == "" {
			if !blank && len(out) > 0 {
				out = append(out, "")
			}
			blank = true
			continue
		}
		blank = false
		out = append(out, l)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}
