package activities

import (
	"regexp"
	"strings"
	"unicode"

	"github.com/lethe-research/lethe/contract"
)

// Citation checking by containment (docs/citations.md): a sentence copied
// from its source, or one whose quoted span is, is supported by the text
// itself. Asking a 1.5B model about it rejected most of them (0 of 9 in
// the CI report), and a model call cannot add anything to an exact match.

// containMinWords is the fewest words (after normalisation) a sentence or
// a quoted span must have to be proved by containment: shorter runs ("it
// is fast") occur in almost any source.
const containMinWords = 4

var (
	// containMarkRe is a citation bracket as composition writes it:
	// [1], [1, 3], [1; 3], and the verifier's own marker.
	containMarkRe = regexp.MustCompile(`\[(?:\d+(?:\s*[,;]\s*\d+)*|unverified)\]`)
	// containQuoteRe is a span in straight or typographic double quotes.
	containQuoteRe = regexp.MustCompile(`"([^"]+)"|“([^”]+)”`)
	// containEllipsisRe cuts an excerpt where words were left out.
	containEllipsisRe = regexp.MustCompile(`…|\.\.\.`)
)

// NormalizeContain is the form containment compares: citation marks
// removed, case folded, every run of punctuation and space one space,
// with a space at each end so that a match starts and ends at word
// boundaries ("cat" is not in "concatenate").
func NormalizeContain(s string) string {
	s = containMarkRe.ReplaceAllString(s, " ")
	f := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	if len(f) == 0 {
		return ""
	}
	return " " + strings.Join(f, " ") + " "
}

// ContainedIn says whether the sentence is supported by containment in
// one of the source's texts, already normalised by NormalizeContain: the
// whole sentence (an excerpt with "…" where words were left out counts
// when each of its pieces is in the same text, in order), or one of its
// quoted spans when the span is a phrase of at least containMinWords
// words as written and that text holds every anchor of the sentence (a
// quoted path proves nothing of what the sentence says about it). It
// returns the span that proved it.
func ContainedIn(sentence string, normTexts []string) (string, bool) {
	if containsPieces(sentence, normTexts) {
		return strings.TrimSpace(sentence), true
	}
	anchors := anchorTerms(sentence)
	for _, m := range containQuoteRe.FindAllStringSubmatch(sentence, -1) {
		q := m[1] + m[2]
		if len(strings.Fields(q)) < containMinWords { // a quoted name ("/usr/share/i18n/SUPPORTED") is not a claim
			continue
		}
		if t, ok := containingText(q, normTexts); ok && anchorsIn(anchors, t) {
			return strings.TrimSpace(q), true
		}
	}
	return "", false
}

// containingText is the first normalised text that holds the span's
// pieces in order.
func containingText(span string, normTexts []string) (string, bool) {
	for _, t := range normTexts {
		if containsPieces(span, []string{t}) {
			return t, true
		}
	}
	return "", false
}

// containsPieces: the text cut at ellipses has at least containMinWords
// words, and one normalised source text holds all its pieces in order.
func containsPieces(s string, normTexts []string) bool {
	var pieces []string
	words := 0
	for _, p := range containEllipsisRe.Split(s, -1) {
		if n := NormalizeContain(p); n != "" {
			pieces = append(pieces, n)
			words += strings.Count(n, " ") - 1
		}
	}
	if words < containMinWords {
		return false
	}
	for _, t := range normTexts {
		if inOrder(t, pieces) {
			return true
		}
	}
	return false
}

func inOrder(text string, pieces []string) bool {
	for _, p := range pieces {
		i := strings.Index(text, p)
		if i < 0 {
			return false
		}
		text = text[i+len(p)-1:] // keep the trailing space: the next piece starts at a boundary
	}
	return true
}

// SplitByContainment returns, in item order, a Supported verdict (via
// containment, else coverage) for each item its source's text contains
// or covers, and the items left for the model. Each source's texts are
// normalised once.
func SplitByContainment(items []VerifyItem, sources map[string][]string) (contained []VerifyVerdict, rest []VerifyItem) {
	norm := map[string][]string{}
	for _, it := range items {
		if span, via, ok := holds(it.Sentence, it.URL, sources, norm); ok {
			contained = append(contained, VerifyVerdict{I: it.I, Status: contract.Supported, Quote: truncate(span, 300), Via: via})
			continue
		}
		rest = append(rest, it)
	}
	return contained, rest
}
