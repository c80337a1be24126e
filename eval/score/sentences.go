// Package score holds the evaluation's pure scoring functions: sentence
// splitting with citations, citation recall, chunk ranking for the
// baselines, the judge prompts and the parsing of their answers, and the
// aggregation into the Markdown table and the SVG plot (docs/eval.md
// defines every metric). No I/O: the LLM calls live in activities.
package score

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/lethe-research/lethe/contract"
)

// Sentence is one sentence of an answer with the source numbers it cites.
type Sentence struct {
	Text    string `json:"text"` // citation markers removed
	Cites   []int  `json:"cites,omitempty"`
	Factual bool   `json:"factual"`
}

// MinFactualWords is the length from which a sentence counts as factual
// (docs/eval.md): shorter ones are labels, transitions and fragments.
const MinFactualWords = 6

var (
	citeRe       = regexp.MustCompile(`\[(\d+)\]`)
	sourceLineRe = regexp.MustCompile(`^\[\d+\]\s`)
	sourcesHdRe  = regexp.MustCompile(`(?i)^(#+\s*)?(sources|references)\s*:?\s*$`)
	listRe       = regexp.MustCompile(`^(\s*([-*+]|\d+[.)])\s+)`)
	leadCiteRe   = regexp.MustCompile(`^\s*((?:\[\d+\]\s*)+)`)
)

// Sentences splits an answer into sentences. Skipped: the source list
// (from a "Sources"/"References" heading on, and lines "[n] …"), headings,
// the italic footer lines ("_…_"), table rows and code fences. A list item
// is a sentence of its own; one that ends in ":" is a label (not factual).
func Sentences(answer string) []Sentence {
	var out []Sentence
	fence := false
	for _, line := range strings.Split(answer, "\n") {
		l := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(l, "```"):
			fence = !fence
			continue
		case fence || l == "":
			continue
		case sourcesHdRe.MatchString(l):
			return out
		case strings.HasPrefix(l, "#"), strings.HasPrefix(l, "|"), sourceEntry(l),
			strings.HasPrefix(l, "_") && strings.HasSuffix(l, "_"):
			continue
		}
		label := false
		if m := listRe.FindString(l); m != "" {
			l = strings.TrimSpace(l[len(m):])
			label = strings.HasSuffix(l, ":")
		}
		for _, s := range splitSentences(l) {
			s.Factual = !label && s.Factual
			out = append(out, s)
		}
	}
	return out
}

// sourceEntry tells a source list's entry ("[1] Debian Reference —
// file:///ch03", "[2] thermal") from a claim that opens with its
// citation ("[2] The secure IMAP service, imaps, uses port 993.", as the
// baselines' small model writes its answers: until the twentieth run the
// scorer skipped such claims, so they counted in neither citation
// precision nor recall). An entry holds a link or is shorter than a
// factual sentence.
func sourceEntry(l string) bool {
	if !sourceLineRe.MatchString(l) {
		return false
	}
	rest := strings.TrimSpace(l[len(leadCiteRe.FindString(l)):])
	return strings.Contains(rest, "://") || wordCount(rest) < MinFactualWords
}

// closers are what may stand between a sentence's end and the space after
// it: closing quotes, a parenthesis, emphasis.
const closers = `"')”’*_`

// splitSentences splits one line at ., ! or ? followed by a space, or by
// closers and a space ("… was \"vi\".) Next": one run of the twelve
// joined such a sentence to the table row after it and judged the pair);
// a run of citations right after the break ("… grows. [2] Next") belongs
// to the sentence before it.
func splitSentences(line string) []Sentence {
	var parts []string
	start := 0
	rs := []rune(line)
	for i := 0; i < len(rs)-1; i++ {
		if !strings.ContainsRune(".!?", rs[i]) || abbreviation(rs[:i]) {
			continue
		}
		j := i + 1
		for j < len(rs) && strings.ContainsRune(closers, rs[j]) {
			j++
		}
		if j < len(rs) && unicode.IsSpace(rs[j]) {
			parts = append(parts, string(rs[start:j]))
			start, i = j, j-1
		}
	}
	parts = append(parts, string(rs[start:]))
	var out []Sentence
	for i := 0; i < len(parts); i++ {
		p := parts[i]
		if i+1 < len(parts) {
			if m := leadCiteRe.FindString(parts[i+1]); m != "" {
				p += " " + strings.TrimSpace(m)
				parts[i+1] = parts[i+1][len(m):]
			}
		}
		if s, ok := sentence(p); ok {
			out = append(out, s)
		}
	}
	return out
}

// abbreviation: "e.g." and "i.e." and single letters before a period do
// not end a sentence.
func abbreviation(before []rune) bool {
	w := string(before)
	if i := strings.LastIndexFunc(w, unicode.IsSpace); i >= 0 {
		w = w[i+1:]
	}
	w = strings.ToLower(w)
	return w == "e.g" || w == "i.e" || w == "etc" || w == "vs" || len([]rune(w)) == 1
}

func sentence(p string) (Sentence, bool) {
	var cites []int
	for _, m := range citeRe.FindAllStringSubmatch(p, -1) {
		n, err := strconv.Atoi(m[1])
		if err == nil && !containsInt(cites, n) {
			cites = append(cites, n)
		}
	}
	// The verifier's marker is not part of the claim (docs/citations.md).
	p = strings.ReplaceAll(p, contract.UnverifiedMarker, "")
	text := strings.Join(strings.Fields(citeRe.ReplaceAllString(p, "")), " ")
	text = strings.TrimSpace(strings.ReplaceAll(text, " .", "."))
	if text == "" {
		return Sentence{}, false
	}
	return Sentence{Text: text, Cites: cites, Factual: wordCount(text) >= MinFactualWords}, true
}

func wordCount(s string) int {
	n := 0
	for _, f := range strings.Fields(s) {
		if strings.IndexFunc(f, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0 {
			n++
		}
	}
	return n
}

func containsInt(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// Recall counts the factual sentences and those of them that cite a
// source: citation recall is cited/factual (0 when there are none).
func Recall(ss []Sentence) (factual, cited int) {
	for _, s := range ss {
		if s.Factual {
			factual++
			if len(s.Cites) > 0 {
				cited++
			}
		}
	}
	return factual, cited
}

// Ratio is num/den, 0 when den is 0.
func Ratio(num, den int) float64 {
	if den == 0 {
		return 0
	}
	return float64(num) / float64(den)
}

// Body is the answer without its source list and footer: what containment
// and the judge read (a source title must not count as an answer).
func Body(answer string) string {
	lines := strings.Split(answer, "\n")
	for i, line := range lines {
		if sourcesHdRe.MatchString(strings.TrimSpace(line)) {
			return strings.TrimSpace(strings.Join(lines[:i], "\n"))
		}
	}
	return strings.TrimSpace(answer)
}

// unverifiedSentinel stands in for contract.UnverifiedMarker while
// Verified splits a text: as a citation mark, it belongs to its sentence
// by the report's own rules ("… copies. [unverified]" ends the sentence
// before it, as the mark it replaced did). No report has 9,999 sources.
const unverifiedSentinel = "[9999]"

// Verified is body without the sentences the session's citation check
// marked contract.UnverifiedMarker: what the report states on evidence.
// Containment on it (EvalRecord.UnverifiedOnly) tells an answer the
// system read from one its model guessed and the check flagged; a
// baseline's answer, never checked, has no marks and is returned whole.
func Verified(body string) string {
	if !strings.Contains(body, contract.UnverifiedMarker) {
		return body
	}
	t := strings.ReplaceAll(body, contract.UnverifiedMarker, unverifiedSentinel)
	var b strings.Builder
	at := 0
	for _, s := range contract.SplitSentences(t) {
		if !slices.Contains(s.Cited(), 9999) {
			continue
		}
		b.WriteString(t[at:s.Start])
		at = s.End
	}
	b.WriteString(t[at:])
	return strings.ReplaceAll(b.String(), unverifiedSentinel, contract.UnverifiedMarker)
}
