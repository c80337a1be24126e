package contract

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Verified citations (docs/citations.md): the report is split into
// sentences with their [n] marks, every (sentence, source) pair is judged
// by the model against the source's stored evidence, and the verdicts are
// applied to the text. The functions here are pure: workflow code splits,
// batches and applies; the VerifyCitations activity only judges.

// CiteMark is one bracket of source numbers in a text: [3] or [1, 3].
type CiteMark struct {
	Start, End int   // byte offsets of the bracket in the text
	Ns         []int // the numbers, in the order written
	Comma      bool  // written with a separator ([1, 3]); rewritten the same way
}

// Sentence is one sentence of a report with the marks that belong to it:
// the marks inside it, and those right after its final punctuation
// ("… grain boundaries. [1]").
type Sentence struct {
	Start, End int    // byte offsets in the text, marks included
	Text       string // the sentence without its marks, spaces collapsed
	Marks      []CiteMark
}

// Cited is the distinct source numbers of the sentence, in first-cited order.
func (s Sentence) Cited() []int {
	var out []int
	seen := map[int]bool{}
	for _, m := range s.Marks {
		for _, n := range m.Ns {
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	return out
}

// UnverifiedMarker replaces the citations of a sentence that lost all of
// them: the reader sees that the claim is not backed by the material.
const UnverifiedMarker = "[unverified]"

var (
	markRe     = regexp.MustCompile(`\[(\d{1,4}(?:\s*[,;]\s*\d{1,4})*)\]`)
	codeSpanRe = regexp.MustCompile("`[^`\n]*`")
	urlRe      = regexp.MustCompile(`(?i)\b(?:https?|ftp|file|corpus)://[^\s)>\[\]]*|<[^>\s]+>`)
	linkDstRe  = regexp.MustCompile(`\]\([^)\s]*\)`) // a Markdown link's target
	listRe     = regexp.MustCompile(`^\s*(?:[-*+]|\d{1,3}[.)]|>)\s+`)
	fenceRe    = regexp.MustCompile("^\\s*(```|~~~)")
)

// abbreviations end with a period that does not end a sentence (compared
// lower-case, without the final period).
var abbreviations = map[string]bool{
	"e.g": true, "i.e": true, "etc": true, "vs": true, "cf": true, "al": true, "fig": true, "no": true,
	"dr": true, "mr": true, "mrs": true, "ms": true, "prof": true, "approx": true, "ca": true, "resp": true,
	"sec": true, "ch": true, "vol": true, "p": true, "pp": true, "eq": true, "st": true, "jr": true, "sr": true,
}

// SplitSentences splits a Markdown report into sentences, line by line:
// headings, fenced code and blank lines hold none; a list item or quote
// line is split after its marker. Code spans and URLs are opaque (no
// marks, no boundaries). A sentence wrapped over two lines counts as two:
// composition writes a paragraph per line.
func SplitSentences(text string) []Sentence {
	var out []Sentence
	inFence := false
	off := 0
	for _, line := range strings.SplitAfter(text, "\n") {
		start := off
		off += len(line)
		body := strings.TrimRight(line, "\r\n")
		if FenceLine(body) != "" {
			inFence = !inFence
			continue
		}
		t := strings.TrimSpace(body)
		if inFence || t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		skip := 0
		if m := listRe.FindString(body); m != "" {
			skip = len(m)
		}
		out = append(out, splitLine(body, start, skip)...)
	}
	return out
}

// FenceLine returns the code fence that line opens or closes, with its
// indentation ("```", "  ~~~"), or "" for any other line: the report's
// sentences (SplitSentences) and what composes them read fences alike.
func FenceLine(line string) string {
	return fenceRe.FindString(line)
}

// splitLine splits one line (its byte offset in the text is base) from
// byte from on.
func splitLine(line string, base, from int) []Sentence {
	opaque := make([]bool, len(line))
	for _, re := range []*regexp.Regexp{codeSpanRe, urlRe, linkDstRe} {
		for _, loc := range re.FindAllStringIndex(line, -1) {
			if re == urlRe { // a URL ending a sentence leaves its period to the sentence
				loc[1] = loc[0] + len(strings.TrimRight(line[loc[0]:loc[1]], ".,;:!?"))
			}
			for i := loc[0]; i < loc[1]; i++ {
				opaque[i] = true
			}
		}
	}
	marks := findMarks(line, opaque)
	var out []Sentence
	start := skipSpace(line, from)
	mi := 0
	emit := func(end int) {
		if end <= start {
			return
		}
		s := Sentence{Start: base + start, End: base + end}
		var plain strings.Builder
		pos := start
		for ; mi < len(marks) && marks[mi].Start < end; mi++ {
			m := marks[mi]
			if gap := line[pos:m.Start]; len(s.Marks) == 0 || strings.Trim(gap, " \t,;") != "" {
				plain.WriteString(gap) // not the separator between two marks
			}
			pos = m.End
			m.Start, m.End = base+m.Start, base+m.End
			s.Marks = append(s.Marks, m)
		}
		plain.WriteString(line[pos:end])
		s.Text = strings.Join(strings.Fields(plain.String()), " ")
		if s.Text != "" || len(s.Marks) > 0 {
			out = append(out, s)
		}
		start = skipSpace(line, end)
	}
	markAt := make(map[int]bool, len(marks))
	for _, m := range marks {
		markAt[m.Start] = true
	}
	for i := start; i < len(line); i++ {
		if markAt[i] {
			if end, ok := marksEnd(line, start, i, marks); ok {
				emit(end)
				i = max(i, end-1)
			}
			continue
		}
		if opaque[i] || !strings.ContainsRune(".!?", rune(line[i])) || !endsSentence(line, i) {
			continue
		}
		end := i + 1
		for end < len(line) && strings.ContainsRune(`"')*_”’`, rune(line[end])) {
			end++ // closing quote, parenthesis or emphasis
		}
		end = marksAfter(line, end, marks)
		emit(end)
		i = max(i, end-1)
	}
	emit(len(strings.TrimRightFunc(line, unicode.IsSpace)))
	return out
}

// findMarks is the citation brackets of a line outside code spans and
// URLs; a bracket followed by "(" is a Markdown link, not a citation.
func findMarks(line string, opaque []bool) []CiteMark {
	var marks []CiteMark
	for _, loc := range markRe.FindAllStringSubmatchIndex(line, -1) {
		if opaque[loc[0]] || (loc[1] < len(line) && line[loc[1]] == '(') || (loc[0] > 0 && line[loc[0]-1] == '^') {
			continue
		}
		inner := line[loc[2]:loc[3]]
		m := CiteMark{Start: loc[0], End: loc[1], Comma: strings.ContainsAny(inner, ",;")}
		for _, f := range strings.FieldsFunc(inner, func(r rune) bool { return r == ',' || r == ';' || unicode.IsSpace(r) }) {
			n, _ := strconv.Atoi(f)
			m.Ns = append(m.Ns, n)
		}
		marks = append(marks, m)
	}
	return marks
}

// endsSentence says whether the punctuation at i ends a sentence: it is
// followed by a space, a closing quote or the end of the line (so not
// "3.5" or "x.y"), and is not the period of an abbreviation or an initial.
func endsSentence(line string, i int) bool {
	j := i + 1
	for j < len(line) && strings.ContainsRune(`"')*_”’`, rune(line[j])) {
		j++
	}
	if j < len(line) && line[j] != ' ' && line[j] != '\t' && line[j] != '[' {
		return false
	}
	if line[i] != '.' {
		return true
	}
	w := i
	for w > 0 && !unicode.IsSpace(rune(line[w-1])) && line[w-1] != '(' {
		w--
	}
	word := strings.ToLower(strings.TrimLeft(line[w:i], `"'*_`))
	if abbreviations[word] {
		return false
	}
	if len(word) == 1 && unicode.IsUpper(rune(line[i-1])) {
		return false // an initial: "J. Smith"
	}
	return true
}

// marksEnd says whether the marks from byte at end a sentence that has
// no closing punctuation, and where: text stands before them in the
// sentence (from start), and a capital letter follows them. A composer
// that ends a sentence with a value writes "… Pin-Priority: -1 [1] The
// next …"; read as one sentence with the next, the pair's claim held two
// statements from different parts of the source, which no window covers
// (the seventeenth evaluation run's dr-010 summary lost its right answer
// to "[unverified]" so). "993 [1] is the port" stays one sentence.
func marksEnd(line string, start, at int, marks []CiteMark) (int, bool) {
	if strings.TrimSpace(line[start:at]) == "" {
		return 0, false
	}
	end := marksAfter(line, at, marks)
	next, _ := utf8.DecodeRuneInString(line[skipSpace(line, end):])
	return end, unicode.IsUpper(next)
}

// marksAfter extends a sentence end over the marks that follow it, and
// over the commas or semicolons between them ("done. [1], [2]"): a mark
// left to a sentence of its own would be judged with no claim.
func marksAfter(line string, end int, marks []CiteMark) int {
	for taken := false; ; taken = true {
		j := skipSpace(line, end)
		if taken {
			j = skipSeparator(line, j)
		}
		found := false
		for _, m := range marks {
			if m.Start == j {
				end, found = m.End, true
				break
			}
		}
		if !found {
			return end
		}
	}
}

// skipSeparator skips one comma or semicolon and the spaces after it.
func skipSeparator(s string, i int) int {
	if i < len(s) && (s[i] == ',' || s[i] == ';') {
		return skipSpace(s, i+1)
	}
	return i
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

// CitedPair is one (sentence, source) pair of a report to be judged.
type CitedPair struct {
	I        int    `json:"i"` // index among the report's pairs
	Sentence int    `json:"sentence"`
	N        int    `json:"n"`
	Text     string `json:"text"`
}

// CitedPairs lists every distinct (sentence, source) pair, in order.
func CitedPairs(sents []Sentence) []CitedPair {
	var out []CitedPair
	for si, s := range sents {
		for _, n := range s.Cited() {
			out = append(out, CitedPair{I: len(out), Sentence: si, N: n, Text: s.Text})
		}
	}
	return out
}

// verifyItemOverhead is the prompt tokens of one item beyond its sentence
// and excerpt (labels and separators), and verifyAnswerTokens what its
// verdict takes in the answer.
const (
	verifyItemOverhead = 16
	verifyAnswerTokens = 40
)

// VerifyBatches packs the pairs, in order, into batches whose prompt
// estimate (sentence + an excerpt of sourceChars + overhead per item)
// stays under budget tokens and whose answers fit in answerTokens. A pair
// over the budget on its own gets a batch of its own.
func VerifyBatches(pairs []CitedPair, budget, sourceChars, answerTokens int) [][]CitedPair {
	var out [][]CitedPair
	var cur []CitedPair
	used := 0
	for _, p := range pairs {
		cost := EstimateTokens(p.Text) + sourceChars/4 + verifyItemOverhead
		full := len(cur) > 0 && (used+cost > budget || (answerTokens > 0 && (len(cur)+1)*verifyAnswerTokens > answerTokens))
		if full {
			out = append(out, cur)
			cur, used = nil, 0
		}
		cur = append(cur, p)
		used += cost
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// BatchTokens is a batch's estimate for the token budget: its prompt
// (sentences, excerpts, overhead) and an answer of answerTokens.
func BatchTokens(b []CitedPair, sourceChars, answerTokens int) int {
	t := answerTokens
	for _, p := range b {
		t += EstimateTokens(p.Text) + sourceChars/4 + verifyItemOverhead
	}
	return t
}

// EstimateTokens is llm.EstimateTokens (four characters a token), for
// workflow code, which may not import llm.
func EstimateTokens(s string) int { return (len(s) + 3) / 4 }

// SummaryPassageChars bounds each passage the summary answers from: an
// evidence chunk is about research.chunk_chars (1,200) long, and a longer
// stored item (a model-written one, an older chunking) must not crowd the
// others out of the call's context. PassageTokens is its token estimate,
// for the workflow's budget check before the call.
const (
	SummaryPassageChars = 1500
	PassageTokens       = SummaryPassageChars / 4
)

// Verdict statuses.
const (
	Supported   = "supported"
	Unsupported = "unsupported"
	Unchecked   = "unchecked" // the model gave no usable verdict: the citation stays, uncounted
)

// Verdict routes: how a judged verdict was reached (VerifyVerdict.Via).
const (
	ViaContainment = "containment" // the sentence, or its quoted span, is in the source's evidence
	ViaCoverage    = "coverage"    // consecutive sentences of the source hold its content words, numbers and negation
	ViaModel       = "model"       // the model judged it (an abstractive sentence)
)

// CitationCounts is the audit of a verified report.
type CitationCounts struct {
	Pairs       int `json:"pairs"`       // cited (sentence, source) pairs
	Supported   int `json:"supported"`   // judged supported, with a quote found in the source
	Unsupported int `json:"unsupported"` // judged unsupported: the citation was removed
	Unchecked   int `json:"unchecked"`   // no usable verdict: the citation stays
	Marked      int `json:"marked"`      // sentences that lost every citation and carry UnverifiedMarker
	// Moved is the sentences that lost every citation and cite instead
	// another source of the report that holds them (VerifyVerdict.Moved).
	Moved int `json:"moved,omitempty"`
	// Of Supported: proved by containment without a model call, and
	// judged by the model (docs/citations.md). The footer's form does not
	// change; the result and the log carry the split.
	Contained      int `json:"contained,omitempty"`
	ModelSupported int `json:"model_supported,omitempty"`
}

// Precision is supported / judged pairs (judged = supported + unsupported),
// or nil when no pair was judged: unchecked pairs are neither.
func (c CitationCounts) Precision() *float64 {
	judged := c.Supported + c.Unsupported
	if judged == 0 {
		return nil
	}
	p := float64(c.Supported) / float64(judged)
	return &p
}

// Footer is the report's line on its citations.
func (c CitationCounts) Footer() string {
	if c.Pairs == 0 {
		return "Citations verified: the report cites no source."
	}
	judged := c.Supported + c.Unsupported
	var b strings.Builder
	if p := c.Precision(); p != nil {
		fmt.Fprintf(&b, "Citations verified: %d of %d supported (%.0f%%)", c.Supported, judged, 100**p)
	} else {
		b.WriteString("Citations verified: none could be checked")
	}
	if c.Unsupported > 0 {
		fmt.Fprintf(&b, "; %d unsupported removed", c.Unsupported)
	}
	if c.Moved > 0 {
		fmt.Fprintf(&b, "; %d sentence(s) re-cited to the source that holds them", c.Moved)
	}
	if c.Marked > 0 {
		fmt.Fprintf(&b, "; %d sentence(s) marked %s", c.Marked, UnverifiedMarker)
	}
	if c.Unchecked > 0 && judged > 0 {
		fmt.Fprintf(&b, "; %d could not be checked and stand unverified", c.Unchecked)
	}
	b.WriteString(".")
	return b.String()
}

// ApplyVerdicts removes the unsupported citations from text (sents must be
// SplitSentences(text), status maps a pair index of CitedPairs(sents) to
// its verdict; a missing one is Unchecked). A sentence that loses all its
// citations gets UnverifiedMarker where its last one was.
func ApplyVerdicts(text string, sents []Sentence, status map[int]string) (string, CitationCounts) {
	return ApplyVerdictsMoving(text, sents, status, nil)
}

// ApplyVerdictsMoving is ApplyVerdicts where a sentence that loses all its
// citations and has a move (moved maps a pair index to another source
// holding the sentence, VerifyVerdict.Moved; the sentence's first such
// pair decides) cites that source where its last citation was, instead of
// UnverifiedMarker.
func ApplyVerdictsMoving(text string, sents []Sentence, status map[int]string, moved map[int]int) (string, CitationCounts) {
	type edit struct {
		start, end int
		with       string
	}
	var edits []edit
	var c CitationCounts
	i := 0
	for _, s := range sents {
		ok := map[int]bool{}
		to := 0
		for _, n := range s.Cited() {
			if to == 0 && status[i] == Unsupported {
				to = moved[i]
			}
			c.Pairs++
			switch status[i] {
			case Supported:
				c.Supported++
				ok[n] = true
			case Unsupported:
				c.Unsupported++
			default:
				c.Unchecked++
				ok[n] = true
			}
			i++
		}
		if len(ok) == len(s.Cited()) {
			continue
		}
		kept := 0
		var es []edit
		for _, m := range s.Marks {
			var ns []string
			for _, n := range m.Ns {
				if ok[n] {
					ns = append(ns, strconv.Itoa(n))
				}
			}
			kept += len(ns)
			es = append(es, edit{m.Start, m.End, rewriteMark(ns, m.Comma)})
		}
		switch {
		case kept == 0 && to > 0:
			c.Moved++
			es[len(es)-1].with = rewriteMark([]string{strconv.Itoa(to)}, false)
		case kept == 0:
			c.Marked++
			es[len(es)-1].with = UnverifiedMarker
		}
		edits = append(edits, es...)
	}
	sort.Slice(edits, func(a, b int) bool { return edits[a].start > edits[b].start })
	for _, e := range edits {
		start, end := e.start, e.end
		if e.with == "" {
			start, end = removal(text, start, end)
		}
		text = text[:start] + e.with + text[end:]
	}
	return text, c
}

func rewriteMark(ns []string, comma bool) string {
	switch {
	case len(ns) == 0:
		return ""
	case comma:
		return "[" + strings.Join(ns, ", ") + "]"
	}
	return "[" + strings.Join(ns, "][") + "]"
}

// MarkedNumbers is the distinct source numbers the text cites, sorted.
func MarkedNumbers(text string) []int {
	seen := map[int]bool{}
	var out []int
	for _, s := range SplitSentences(text) {
		for _, n := range s.Cited() {
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	sort.Ints(out)
	return out
}

// RenumberCitations numbers the sources by first appearance in the parts
// (1, 2, 3 … in reading order) and rewrites every citation mark to the
// new numbers; it returns the parts and exactly the cited sources, in the
// new order. A number that names no source is dropped from its mark (a
// sentence left with no citation gets UnverifiedMarker). Parts that cite nothing come
// back unchanged with all the sources, so the reader still sees the
// material.
func RenumberCitations(parts []string, sources []Source) ([]string, []Source) {
	byN := map[int]Source{}
	for _, s := range sources {
		byN[s.N] = s
	}
	next := map[int]int{}
	var cited []Source
	out := make([]string, len(parts))
	for i, p := range parts {
		type edit struct {
			start, end int
			with       string
		}
		var edits []edit
		for _, s := range SplitSentences(p) {
			kept, first := 0, len(edits)
			for _, m := range s.Marks {
				var ns []string
				for _, n := range m.Ns {
					src, ok := byN[n]
					if !ok {
						continue
					}
					if next[n] == 0 {
						next[n] = len(cited) + 1
						src.N = next[n]
						cited = append(cited, src)
					}
					ns = append(ns, strconv.Itoa(next[n]))
				}
				kept += len(ns)
				edits = append(edits, edit{m.Start, m.End, rewriteMark(ns, m.Comma)})
			}
			if kept == 0 && len(edits) > first { // the sentence cited only unknown numbers
				edits[len(edits)-1].with = UnverifiedMarker
			}
		}
		sort.Slice(edits, func(a, b int) bool { return edits[a].start > edits[b].start })
		for _, e := range edits {
			p = p[:e.start] + e.with + p[e.end:]
		}
		out[i] = p
	}
	if len(cited) == 0 {
		return parts, sources
	}
	return out, cited
}

// removal is the span a removed mark at [start, end) takes with it: the
// comma or semicolon joining it to a mark before it ("[1], [2]" keeps
// "[1]") or after it (keeps "[2]"), or else the space before it ("claim
// [3]." becomes "claim.", not "claim .").
func removal(text string, start, end int) (int, int) {
	i := start
	for i > 0 && text[i-1] == ' ' {
		i--
	}
	if i > 0 && (text[i-1] == ',' || text[i-1] == ';') {
		j := i - 1
		for j > 0 && text[j-1] == ' ' {
			j--
		}
		if j > 0 && text[j-1] == ']' {
			return j, end
		}
	}
	if k := skipSeparator(text, skipSpace(text, end)); k > skipSpace(text, end) && k < len(text) && text[k] == '[' {
		return start, k
	}
	if start > 0 && text[start-1] == ' ' && (end >= len(text) || text[end] != '[') {
		start--
	}
	return start, end
}
