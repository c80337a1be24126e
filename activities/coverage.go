package activities

import (
	"regexp"
	"strings"
	"unicode"

	"github.com/lethe-research/lethe/contract"
)

// Citation checking by coverage (docs/citations.md, "Coverage"): a
// sentence composed from its source's sentences with connectives changed
// ("such as" → "like", two facts joined by "while") is not contained in
// the source, and the 1.5B local model called every such sentence
// unsupported (0 of 13 in a make run report, 5 of them near-copies). A
// sentence is supported by coverage when a few consecutive sentences of
// the cited source hold nearly all of its content words, every number it
// states, and its negation (or its lack of one); since 2026-12-04 also
// each of its anchors, and each number near the words it stands near in
// the sentence (anchors.go).

const (
	// coverMinWords is the fewest content words a sentence needs to be
	// proved by coverage: a short claim's few words occur in many sources.
	coverMinWords = 6
	// coverShare is the share of the sentence's content words the window
	// must hold: one word in ten may be the composer's own ("second",
	// "leading"), not a new fact's.
	coverShare = 0.9
	// coverWindow is the most consecutive source sentences one composed
	// sentence may draw from: composition joins two or three facts.
	coverWindow = 3
	// anchoredShare is the share for a sentence with an anchor
	// (anchorTerms): the window must hold the anchors as written and its
	// numbers near their words, so a paraphrase may bring more words of
	// its own ("shows which font fontconfig picks"). 0.85 supported 3 more
	// true pairs of bench/verify's set and no more false ones; 0.8 and
	// below supported false ones.
	anchoredShare = 0.85
)

// coverStop are function words: they carry no fact, so neither their
// presence nor their absence decides coverage. Negations are not here:
// they are compared on their own (negated).
var coverStop = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`the and for are was were but with that this these those such like
		from into onto its their them they than then there which while when where who whom whose what
		also can may might will would should could has have had been being not any all each every
		other some more most less many much very both either via per out off over under about after before
		between during through within without upon your our his her him she one two`) {
		m[w] = true
	}
	return m
}()

// coverNumberRe is a number as written, decimals and thousands kept
// whole: "1.5" and "5.1" are different numbers, though their digits are
// the same words.
var coverNumberRe = regexp.MustCompile(`\d+(?:[.,]\d+)*`)

// signedNumbers are the numbers of s as written (coverNumberRe). A minus
// that stands alone before the digits is the number's sign
// ("Pin-Priority: -1" states -1, not the priority 1); digits a minus joins
// to a word are part of a name, not a number ("package-1", "UTF-8": the
// anchors compare those whole), so that a name's digits do not prove a
// number the sentence states.
func signedNumbers(s string) []string {
	var out []string
	for _, at := range coverNumberRe.FindAllStringIndex(s, -1) {
		n, i := s[at[0]:at[1]], at[0]
		if i > 0 && s[i-1] == '-' {
			if i > 1 && isWordByte(s[i-2]) {
				continue
			}
			n = "-" + n
		}
		out = append(out, n)
	}
	return out
}

func isWordByte(b byte) bool {
	return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= 0x80
}

// coverNegations mark a negated statement; a sentence and the window
// that covers it must agree on whether they hold one.
var coverNegations = map[string]bool{"not": true, "no": true, "never": true, "cannot": true, "nor": true,
	"without": true, "neither": true, "none": true, "nothing": true, "isn": true, "aren": true, "doesn": true,
	"don": true, "won": true, "didn": true, "wasn": true, "weren": true, "hasn": true, "haven": true}

// coverHinders are the verbs of "keep … from being pulled in", "stop …
// from starting": with "from" and a verb in -ing after them, within
// hinderReach terms, they deny that verb as "not" does ("wish not to pull
// in"). Without the -ing ("keeps messages from all services") "from"
// names a source and denies nothing.
var coverHinders = map[string]bool{"keep": true, "kept": true, "keeping": true, "prevent": true, "prevented": true,
	"preventing": true, "stop": true, "stopped": true, "stopping": true, "block": true, "blocked": true, "blocking": true}

// hinderReach is how many terms may stand between a hindering verb and
// its "from": the object, "particular packages".
const hinderReach = 4

// coverTerms is a text's words as coverage compares them: citation
// marks removed, case folded, split at every character that is neither
// a letter nor a digit, a plural "s" dropped from words of five letters
// or more ("cathodes" and "cathode" are one term).
func coverTerms(s string) []string {
	s = containMarkRe.ReplaceAllString(s, " ")
	f := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for i, w := range f {
		if len(w) >= 5 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
			f[i] = w[:len(w)-1]
		}
	}
	return f
}

// coverProfile is what coverage compares of one text.
type coverProfile struct {
	content map[string]bool // content words: numbers, and words longer than two letters that are not function words
	derived map[string]bool // the content words' derivational stems (derive)
	numbers map[string]bool // the numbers as written (coverNumberRe)
	negated bool
	// denied are the stems (stem) of the first content word after each
	// negation: what the text says is not so ("wish not to pull in":
	// pull); affirmed, the stems of its other content words.
	denied, affirmed map[string]bool
}

func profile(s string) coverProfile {
	p := coverProfile{content: map[string]bool{}, derived: map[string]bool{}, numbers: map[string]bool{}, denied: map[string]bool{}, affirmed: map[string]bool{}}
	for _, n := range signedNumbers(containMarkRe.ReplaceAllString(s, " ")) {
		p.numbers[n] = true
	}
	deny, hinder := false, 0
	terms := coverTerms(s)
	for i, w := range terms {
		hinder--
		switch {
		case coverNegations[w], w == "from" && hinder > 0 && i+1 < len(terms) && strings.HasSuffix(terms[i+1], "ing"):
			p.negated, deny = true, true
		case coverHinders[w]:
			hinder = hinderReach + 1
			p.content[w] = true
			p.affirmed[stem(w)] = true
		case strings.ContainsAny(w, "0123456789") || len(w) > 2 && !coverStop[w]:
			p.content[w] = true
			p.derived[derive(w)] = true
			if deny {
				p.denied[stem(w)], deny = true, false
			} else {
				p.affirmed[stem(w)] = true
			}
		}
	}
	return p
}

// stem folds the inflections a composer changes ("pulled", "pulls",
// "pulling": pull) for comparing what a negation governs.
func stem(w string) string {
	for _, suf := range []string{"ing", "ed", "es", "s", "e"} {
		if len(w) > len(suf)+2 && strings.HasSuffix(w, suf) {
			return strings.TrimSuffix(w, suf)
		}
	}
	return w
}

// deriveSuffixes are the endings derive takes off, the longest first.
var deriveSuffixes = []string{"ically", "ations", "ation", "ators", "ating", "ator", "ates", "ated", "ally", "ions", "ate", "ion", "ers", "ing", "er", "ed", "es", "ic", "ly", "s", "e"}

// derive folds a word's derivational ending ("automatically",
// "automatic": automat; "generates", "generator", "generation": gener;
// "creates", "creation": creat), keeping a stem of at least four letters.
func derive(w string) string {
	for _, suf := range deriveSuffixes {
		if len(w) >= len(suf)+4 && strings.HasSuffix(w, suf) {
			return strings.TrimSuffix(w, suf)
		}
	}
	return w
}

// covers says whether window p holds the sentence s's numbers, at least
// share of its content words, and agrees with it on negation: a negated
// sentence needs a negated window, and the sentence must not assert what
// the window only denies. Scoping the second rule to the word a
// negation governs lets "If you wish not to pull in packages …, create
// /etc/apt/preferences …" cover "Create /etc/apt/preferences …" (the
// fifteenth evaluation run's dr-010), and still not "… are stable"
// against "… are not stable".
func (p coverProfile) covers(s coverProfile, share float64) bool {
	if s.negated && !p.negated {
		return false
	}
	for w := range s.affirmed {
		if p.denied[w] && !p.affirmed[w] {
			return false
		}
	}
	for n := range s.numbers {
		if !p.numbers[n] {
			return false
		}
	}
	held := 0
	for w := range s.content {
		if p.content[w] || p.derived[derive(w)] {
			held++
		}
	}
	return float64(held) >= share*float64(len(s.content))
}

// merge is the profile of two consecutive windows together.
func (p coverProfile) merge(q coverProfile) coverProfile {
	out := coverProfile{content: map[string]bool{}, derived: map[string]bool{}, numbers: map[string]bool{}, denied: map[string]bool{}, affirmed: map[string]bool{},
		negated: p.negated || q.negated}
	for _, m := range []map[string]bool{p.content, q.content} {
		for w := range m {
			out.content[w] = true
		}
	}
	for _, m := range []map[string]bool{p.derived, q.derived} {
		for w := range m {
			out.derived[w] = true
		}
	}
	for _, m := range []map[string]bool{p.denied, q.denied} {
		for w := range m {
			out.denied[w] = true
		}
	}
	for _, m := range []map[string]bool{p.affirmed, q.affirmed} {
		for w := range m {
			out.affirmed[w] = true
		}
	}
	for _, m := range []map[string]bool{p.numbers, q.numbers} {
		for w := range m {
			out.numbers[w] = true
		}
	}
	return out
}

// CoveredIn says whether the sentence is supported by coverage in one of
// the source's texts, and returns the covering source sentences (the
// shortest window, the earliest of equal ones) as its quote. Windows
// never cross from one stored text into another.
func CoveredIn(sentence string, texts []string) (string, bool) {
	c := newClaim(sentence)
	if len(c.prof.content) < coverMinWords {
		return "", false
	}
	sents := make([][]string, len(texts))
	profs := make([][]coverProfile, len(texts))
	for k, t := range texts { // each text split and profiled once, for every window size
		sents[k] = sourceSentences(t)
		for _, s := range sents[k] {
			profs[k] = append(profs[k], profile(s))
		}
	}
	for size := 1; size <= coverWindow; size++ {
		for k := range texts {
			if i, ok := c.window(sents[k], profs[k], size); ok {
				return strings.Join(sents[k][i:i+size], " "), true
			}
		}
	}
	return "", false
}

// claim is what coverage checks of one sentence.
type claim struct {
	prof    coverProfile
	anchors []string // anchorTerms
	terms   []string // localTerms, in order, for numbersLocal
	share   float64  // of its content words a window must hold
	swap    swapClaim
}

func newClaim(sentence string) claim {
	c := claim{prof: profile(sentence), anchors: anchorTerms(sentence), terms: localTerms(sentence), share: coverShare, swap: newSwapClaim(sentence)}
	if len(c.anchors) > 0 {
		c.share = anchoredShare
	}
	return c
}

// window is the start of the first window of size consecutive source
// sentences that covers the claim, holds each of its anchors as written
// and each of its numbers near the words it stands near in the claim.
func (c claim) window(sents []string, profs []coverProfile, size int) (int, bool) {
	for i := 0; i+size <= len(profs); i++ {
		p := profs[i]
		for j := i + 1; j < i+size; j++ {
			p = p.merge(profs[j])
		}
		if !p.covers(c.prof, c.share) {
			continue
		}
		text := strings.Join(sents[i:i+size], " ")
		if anchorsIn(c.anchors, NormalizeContain(text)) && numbersLocal(c.terms, localTerms(text)) && !c.swap.in(text) {
			return i, true
		}
	}
	return 0, false
}

// sourceSentences are a stored text's sentences, line by line, with
// their whitespace collapsed (splitPassage with no length bound). A code
// block of at most codeUnitLines lines is one sentence, its lines joined,
// and its fence lines are none: a composed sentence that copies an
// instruction and its block (dr-010's preferences stanza, seven lines in
// the HTML passage) drew from nine "sentences" counting the fences, more
// than a window holds, and only the PDF passage, which has the stanza on
// one line, could cover it. A longer block stays a line per sentence, so
// that one window does not hold a whole listing's words.
func sourceSentences(t string) []string {
	var out, block []string
	inBlock := false
	for _, line := range strings.Split(t, "\n") {
		if contract.FenceLine(line) != "" {
			if inBlock {
				out = append(out, codeUnits(block)...)
				block = block[:0]
			}
			inBlock = !inBlock
			continue
		}
		line = strings.Join(strings.Fields(line), " ")
		if inBlock {
			if line != "" {
				block = append(block, line)
			}
			continue
		}
		for _, s := range splitPassage(line, 0) {
			if s != "" {
				out = append(out, s)
			}
		}
	}
	return append(out, codeUnits(block)...) // a block the text cut before its fence
}

// codeUnitLines is the longest code block sourceSentences takes as one
// sentence: a configuration stanza or a short command sequence.
const codeUnitLines = 12

// codeUnits are a code block's sentences for coverage: the block as one,
// or its lines when it is longer than codeUnitLines.
func codeUnits(lines []string) []string {
	if len(lines) == 0 || len(lines) > codeUnitLines {
		return lines
	}
	return []string{strings.Join(lines, " ")}
}

// MoveUnsupported finds, for each unsupported verdict, another source of
// the report (in.Sources, in number order) whose stored text contains or
// covers the sentence, and records it as the verdict's Moved with the
// span as its quote. A composer that copies a fact and then numbers it
// with its neighbour's source wrote a true, sourced sentence: the reader
// is better served by the right number than by "[unverified]". Only the
// text decides a move, never the model. It returns how many moved.
func MoveUnsupported(in VerifyInput, verdicts []VerifyVerdict, sources map[string][]string) int {
	items := make(map[int]VerifyItem, len(in.Items))
	for _, it := range in.Items {
		items[it.I] = it
	}
	norm := map[string][]string{}
	moved := 0
	for k, v := range verdicts {
		it, ok := items[v.I]
		if !ok || v.Status != contract.Unsupported {
			continue
		}
		for _, src := range in.Sources {
			if src.URL == it.URL || src.N == it.N {
				continue
			}
			if span, _, ok := holds(it.Sentence, src.URL, sources, norm); ok {
				verdicts[k].Moved, verdicts[k].Quote = src.N, truncate(span, 300)
				moved++
				break
			}
		}
	}
	return moved
}

// holds is containment, then coverage, of the sentence in one source's
// texts (normalised once per source into norm, for containment): the
// span that proves it and the route (contract.ViaContainment or
// ViaCoverage).
func holds(sentence, url string, sources, norm map[string][]string) (string, string, bool) {
	texts, ok := norm[url]
	if !ok {
		for _, t := range sources[url] {
			texts = append(texts, NormalizeContain(t))
		}
		norm[url] = texts
	}
	return heldBy(sentence, sources[url], texts)
}

// heldBy is containment in the normalised texts, then coverage in the
// raw ones, of one source.
func heldBy(sentence string, raw, normTexts []string) (string, string, bool) {
	if span, ok := ContainedIn(sentence, normTexts); ok {
		return span, contract.ViaContainment, true
	}
	if span, ok := CoveredIn(sentence, raw); ok {
		return span, contract.ViaCoverage, true
	}
	return "", "", false
}
