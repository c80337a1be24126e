package research

import (
	"strings"
	"unicode/utf8"

	"github.com/lethe-research/lethe/contract"
)

// Defaults of Limits (config: research.max_title_chars, max_url_bytes,
// max_text_bytes, child_memory_bytes).
const (
	DefaultMaxTitleChars    = 300
	DefaultMaxURLBytes      = 2048
	DefaultMaxTextBytes     = 2 << 20
	DefaultChildMemoryBytes = 1 << 30
)

// Limits bound what a page controls before it enters memory, the graph or
// Temporal history (DESIGN.md §9): a page's title is a label copied onto
// each of its evidence items, its URL and links travel through history,
// and its text is chunked and embedded. Every extractor, fetcher and
// provider applies them; Ingest applies them again. Zero fields take the
// defaults.
type Limits struct {
	MaxTitleChars int // runes of a title; longer ones are cut
	MaxURLBytes   int // bytes of a URL; longer ones are dropped, never fetched
	MaxTextBytes  int // bytes of text kept from one page, PDF or transcript
}

// DefaultLimits are the limits with every field at its default.
func DefaultLimits() Limits { return Limits{}.withDefaults() }

func (l Limits) withDefaults() Limits {
	if l.MaxTitleChars <= 0 {
		l.MaxTitleChars = DefaultMaxTitleChars
	}
	if l.MaxURLBytes <= 0 {
		l.MaxURLBytes = DefaultMaxURLBytes
	}
	if l.MaxTextBytes <= 0 {
		l.MaxTextBytes = DefaultMaxTextBytes
	}
	return l
}

// Title returns s without control characters and escape sequences
// (contract.StripControl), its whitespace collapsed, cut to MaxTitleChars
// runes (an ellipsis marks the cut). Only a bounded prefix of s is looked
// at, so a 1 MB title costs no more than a short one.
func (l Limits) Title(s string) string {
	l = l.withDefaults()
	// 4 bytes per rune at most, and room for the whitespace collapsed away.
	if limit := 8*l.MaxTitleChars + 64; len(s) > limit {
		s = truncateUTF8(s, limit)
	}
	return truncateRunes(collapseSpace(contract.StripControl(s)), l.MaxTitleChars)
}

// URLOK reports whether u is within MaxURLBytes.
func (l Limits) URLOK(u string) bool { return len(u) <= l.withDefaults().MaxURLBytes }

// Text cuts s to MaxTextBytes at a UTF-8 boundary, without control
// characters and escape sequences (contract.StripControl); cut reports
// whether it was cut.
func (l Limits) Text(s string) (out string, cut bool) {
	l = l.withDefaults()
	if len(s) <= l.MaxTextBytes {
		return contract.StripControl(s), false
	}
	return contract.StripControl(truncateUTF8(s, l.MaxTextBytes)), true
}

// Document bounds d: the title is cut, the text cut, links and media whose
// URL is over the cap are dropped. A document URL over the cap (a redirect
// or history.pushState to a huge URL) is replaced by fallback, the URL
// that was asked for (itself checked before the fetch).
func (l Limits) Document(d Document, fallback string) Document {
	if !l.URLOK(d.URL) {
		d.URL = fallback
	}
	d.Title = l.Title(d.Title)
	var cut bool
	if d.Text, cut = l.Text(d.Text); cut {
		d.Truncated = true
	}
	d.Links = l.urls(d.Links)
	if len(d.LinkText) > 0 {
		text := make(map[string]string, len(d.LinkText))
		for u, t := range d.LinkText {
			if l.URLOK(u) {
				text[u] = truncateRunes(t, maxAnchorRunes)
			}
		}
		d.LinkText = text
	}
	if len(d.Media) > 0 {
		media := d.Media[:0:0]
		for _, m := range d.Media {
			if l.URLOK(m.URL) {
				media = append(media, m)
			}
		}
		d.Media = media
	}
	return d
}

func (l Limits) urls(in []string) []string {
	if len(in) == 0 {
		return in
	}
	out := in[:0:0]
	for _, u := range in {
		if l.URLOK(u) {
			out = append(out, u)
		}
	}
	return out
}

// Hits bounds search results: a hit whose URL is over the cap is dropped,
// titles are cut and snippets cut to 2×SnippetChars runes (room for a
// provider's own snippet with its ellipses).
func (l Limits) Hits(in []Hit) []Hit {
	out := in[:0:0]
	for _, h := range in {
		if !l.URLOK(h.URL) {
			continue
		}
		h.Title = l.Title(h.Title)
		h.Snippet = Limits{MaxTitleChars: 2 * SnippetChars}.Title(h.Snippet)
		out = append(out, h)
	}
	return out
}

// truncateUTF8 cuts s to at most n bytes without splitting a rune.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// truncateRunes cuts s to n runes, marking the cut with an ellipsis (which
// counts as one of the n).
func truncateRunes(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for j := range s {
		if i == n-1 {
			return strings.TrimSpace(s[:j]) + "…"
		}
		i++
	}
	return s
}
