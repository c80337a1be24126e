package activities

import (
	"strings"
)

// Swapped names (docs/citations.md, "What the text must hold"): a sentence
// that gives each of two names the other's words holds every word and
// every name of its source, so coverage, the anchors and number locality
// all pass it. "journald keeps persistent binary log data below
// /run/log/journal/ and volatile data below /var/log/journal" against a
// source that has them the other way round; "ISO-8859-1 is the old
// standard for eastern European languages, and ISO-8859-2 … western"
// (bench/verify's v21, v46 and v48, labelled false, which containment
// alone supports).

// clauseWords are the words between the clause breaks of a text
// (",", ";", ":", a sentence's end, and the words "and", "or", "but",
// "while", "whereas"), each clause with the anchors of a claim it names.
type clauseWords struct {
	anchors map[string]bool // NormalizeContain forms, of the claim's anchors only
	words   map[string]bool // content words, lower case, hyphenated words whole
}

// clauseBreakWords end a clause and belong to none.
var clauseBreakWords = map[string]bool{"and": true, "or": true, "but": true, "while": true, "whereas": true}

// clausesOf splits text into clauses and notes in each which of anchors
// (NormalizeContain forms) it names, token by token.
func clausesOf(text string, anchors map[string]bool) []clauseWords {
	var out []clauseWords
	cur := clauseWords{anchors: map[string]bool{}, words: map[string]bool{}}
	flush := func() {
		if len(cur.anchors) > 0 || len(cur.words) > 0 {
			out = append(out, cur)
		}
		cur = clauseWords{anchors: map[string]bool{}, words: map[string]bool{}}
	}
	for _, raw := range strings.Fields(containMarkRe.ReplaceAllString(text, " ")) {
		tok := strings.Trim(raw, "\"'“”‘’`()[]!?")
		end := strings.TrimRight(tok, ".,;:")
		if clauseBreakWords[strings.ToLower(end)] {
			flush()
			continue
		}
		switch n := NormalizeContain(end); {
		case anchors[n]:
			cur.anchors[n] = true
		case len(end) > 2 && !coverStop[strings.ToLower(end)] && !isNumber(end):
			cur.words[strings.ToLower(end)] = true
		}
		if end != tok {
			flush()
		}
	}
	flush()
	return out
}

// swapClaim is what swapped reads of a sentence, read once for all the
// windows coverage tries.
type swapClaim struct {
	names   map[string]bool // the sentence's anchors that are not bare numbers
	clauses []clauseWords
}

func newSwapClaim(sentence string) swapClaim {
	names := map[string]bool{}
	for _, a := range anchorTerms(sentence) {
		if !isNumber(strings.TrimSpace(a)) { // numbers have their own rule (numbersLocal)
			names[a] = true
		}
	}
	if len(names) < 2 {
		return swapClaim{}
	}
	return swapClaim{names: names, clauses: clausesOf(sentence, names)}
}

// swapped says whether the window gives a word of the claim to another
// of the claim's names: a word that stands in a clause of the claim with
// one name (and in no other named clause of the claim) stands, in the
// window, only in clauses that name another of its names alone, and in
// none that names its own. A name the window does not hold as one token
// leaves its words unjudged, so a name written apart never refuses.
func swapped(claim, window string) bool {
	return newSwapClaim(claim).in(window)
}

// in is swapped for this claim and the window.
func (sc swapClaim) in(window string) bool {
	if len(sc.names) < 2 {
		return false
	}
	cl, src := sc.clauses, clausesOf(window, sc.names)
	for i, c := range cl {
		a, ok := soleAnchor(c)
		if !ok || !named(src, a) {
			continue
		}
		for w := range c.words {
			if ownWord(cl, i, w) && !nearName(src, a, w) && nearOther(src, a, w) {
				return true
			}
		}
	}
	return false
}

func soleAnchor(c clauseWords) (string, bool) {
	if len(c.anchors) != 1 {
		return "", false
	}
	for a := range c.anchors {
		return a, true
	}
	return "", false
}

// named says whether some clause of the window names a as one token.
func named(src []clauseWords, a string) bool {
	for _, c := range src {
		if c.anchors[a] {
			return true
		}
	}
	return false
}

// ownWord: w stands in no other clause of the claim that names something.
func ownWord(cl []clauseWords, i int, w string) bool {
	for j, c := range cl {
		if j != i && len(c.anchors) > 0 && c.words[w] {
			return false
		}
	}
	return true
}

// nearName: some clause of the window names a and holds w.
func nearName(src []clauseWords, a, w string) bool {
	for _, c := range src {
		if c.anchors[a] && c.words[w] {
			return true
		}
	}
	return false
}

// nearOther: some clause of the window names one other name alone and
// holds w.
func nearOther(src []clauseWords, a, w string) bool {
	for _, c := range src {
		if b, ok := soleAnchor(c); ok && b != a && c.words[w] {
			return true
		}
	}
	return false
}
