package contract

import (
	"regexp"
	"strings"
	"unicode"
)

// Terminal escape sequences a page (its title, its text) or a model can
// put into a report: OSC (ESC ] ... BEL or ESC \: set a terminal's title,
// write a hyperlink, on some terminals the clipboard), CSI (ESC [ ...:
// colours, cursor moves that hide text) and any other two-byte ESC form.
var (
	oscSeq  = regexp.MustCompile(`\x1b\][^\x07\x1b]*(\x07|\x1b\\)?`)
	csiSeq  = regexp.MustCompile(`\x1b\[[0-?]*[ -/]*[@-~]?`)
	escPair = regexp.MustCompile(`\x1b.?`)
	// A Markdown image (inline or by reference): a viewer fetches it
	// unasked, so a URL that carries the report's text in its query
	// leaks it to the URL's host the moment the report is opened.
	mdImage = regexp.MustCompile(`!\[([^\]\n]*)\](\([^)\n]*\)|\[[^\]\n]*\])`)
	// Raw HTML opens a tag (<img>, <iframe>, <script>, <style>, <link>);
	// escaped, it shows as text.
	htmlTag = regexp.MustCompile(`<([A-Za-z/!?])`)
)

// SanitizeReport makes a report safe to print in a terminal and to open in
// a Markdown viewer: terminal escape sequences and control characters are
// removed (newlines and tabs kept), bidirectional-override characters too
// (they reorder what a reader sees), images become their alt text, and
// raw HTML tags are escaped. Ordinary Markdown (headings, lists, links,
// citations) is unchanged, and so is a report already sanitized.
func SanitizeReport(md string) string {
	md = mdImage.ReplaceAllString(StripControl(md), "$1")
	return htmlTag.ReplaceAllString(md, "&lt;$1")
}

// StripControl removes from s what a page may supply to act on a terminal
// or a reader rather than be read: escape sequences (OSC, CSI and the
// two-character ones), C0 and C1 control characters but newline and tab,
// and bidirectional-override characters. The report and every title and
// text a page supplies pass through it.
func StripControl(s string) string {
	s = oscSeq.ReplaceAllString(s, "")
	s = csiSeq.ReplaceAllString(s, "")
	s = escPair.ReplaceAllString(s, "")
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' || !unicode.IsControl(r) && !isBidiControl(r) {
			return r
		}
		return -1
	}, s)
}

// isBidiControl: the embedding, override and isolate controls of Unicode's
// bidirectional algorithm (LRE to RLO, LRI to PDI).
func isBidiControl(r rune) bool {
	return r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069
}
