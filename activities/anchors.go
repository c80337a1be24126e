package activities

import (
	"strings"
	"unicode"
)

// Anchors and number locality (docs/citations.md, "What the text must
// hold"): coverage counts words, so a sentence that swaps in a
// neighbouring name or number of its source ("shellcheck(1)" where the
// source says checkbashisms, "imaps uses port 995" from a table row
// "imaps 993 pop3 110 pop3s 995") held 90% of the window's words and
// was supported. Measured by bench/verify.

// anchorTerms are the sentence's identifier-like tokens, normalised as
// containment compares them: paths, commands with a manual section,
// options, names joined by "-", "_", "=" or ".", and words with a digit
// or an inner capital ("fc-match(1)", "/etc/apt/preferences",
// "Alt-SysRq", "IPv6", "993"). A source that holds the fact holds each
// of them as written; a plain word may be the composer's own.
func anchorTerms(sentence string) []string {
	var out []string
	for _, tok := range strings.Fields(containMarkRe.ReplaceAllString(sentence, " ")) {
		tok = strings.TrimRight(strings.Trim(tok, "\"'“”‘’`,;!?[]"), ".:,;")
		tok = strings.TrimSuffix(strings.TrimPrefix(tok, "("), ")") // "(UPG)"; "fc-match(1)" keeps its ")" match below
		if isAnchor(tok) {
			if n := NormalizeContain(tok); n != "" {
				out = append(out, n)
			}
		}
	}
	return out
}

func isAnchor(tok string) bool {
	if englishCompound(tok) || strings.EqualFold(tok, "and/or") {
		return false
	}
	if isOption(tok) {
		return true
	}
	letters, digits := 0, 0
	prev := rune(0)
	for i, r := range tok {
		switch {
		case unicode.IsDigit(r):
			digits++
		case unicode.IsLetter(r):
			letters++
			if unicode.IsUpper(r) && unicode.IsLower(prev) {
				return true // an inner capital after a lower-case letter: "SysRq", "IPv6"
			}
		case strings.ContainsRune("/_=~$", r):
			return len(tok) > 1
		case strings.ContainsRune("-.:(", r) && i > 0 && i < len(tok)-1 && letters+digits > 0:
			return !initials(tok)
		}
		prev = r
	}
	return digits > 0
}

// isOption is a command-line option: "-p", "-o", "--config",
// "--no-pager". The twentieth evaluation run's dr-067 summary said "The
// `-p` option prints collated copies [2]" of a source that says "-o
// Collate=True", and the model's verdict kept it: an option is a name
// like a path. A lone dash (a list item, an en dash typed as "-") is not.
func isOption(tok string) bool {
	name := strings.TrimPrefix(strings.TrimPrefix(tok, "-"), "-")
	if len(name) == len(tok) || name == "" || !unicode.IsLetter(rune(name[0])) {
		return false
	}
	for _, r := range name {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune("-_=", r) {
			return false
		}
	}
	return true
}

// englishPrefixes open hyphenated English words ("pre-compiled",
// "non-interactive"), which a paraphrase may write joined or apart;
// other hyphenated lower-case words are taken for names ("fc-match",
// "cups-bsd", "ssh-keygen").
var englishPrefixes = map[string]bool{"non": true, "pre": true, "post": true, "re": true, "co": true, "self": true,
	"well": true, "multi": true, "cross": true, "bi": true, "sub": true, "semi": true, "anti": true, "de": true,
	"un": true, "inter": true, "over": true, "under": true, "auto": true, "out": true, "high": true, "low": true,
	"full": true, "half": true, "so": true, "up": true, "end": true, "built": true, "third": true, "first": true}

func englishCompound(tok string) bool {
	head, rest, ok := strings.Cut(tok, "-")
	if !ok || !englishPrefixes[strings.ToLower(head)] {
		return false
	}
	for _, r := range rest {
		if !unicode.IsLower(r) && r != '-' {
			return false
		}
	}
	return true
}

// initials are abbreviations of single letters ("e.g", "i.e"): no name.
func initials(tok string) bool {
	for _, w := range strings.Fields(NormalizeContain(tok)) {
		if len(w) > 1 || unicode.IsDigit(rune(w[0])) {
			return false
		}
	}
	return true
}

// NamesIn says whether one of texts (raw, as stored) holds every anchor
// of the sentence: a model's "supported" needs it (ParseVerdicts), as a
// covering window does. The 1.5B model supported "The `-p` option prints
// collated copies [2]" from a print-server table that names no such
// option (the twentieth evaluation run's dr-067). A sentence without
// anchors passes.
func NamesIn(sentence string, texts []string) bool {
	anchors := anchorTerms(sentence)
	if len(anchors) == 0 {
		return true
	}
	for _, t := range texts {
		if anchorsIn(anchors, NormalizeContain(t)) {
			return true
		}
	}
	return false
}

// anchorsIn says whether every anchor occurs in the normalised text.
func anchorsIn(anchors []string, normText string) bool {
	for _, a := range anchors {
		if !strings.Contains(normText, a) {
			return false
		}
	}
	return true
}

// localReach is how many terms on either side of a number count as its
// neighbours: a table row flattened by extraction puts a value one or
// two terms from its name, and the next row's name further off.
const localReach = 3

// numbersLocal says whether each number of the claim stands, somewhere
// in the window, near a content word that stands near it in the claim:
// "imaps … port 993" is local in "imap2 143 imaps 993 pop3 110", and
// "imaps … port 995" is not, though the window holds 995. A number with
// no content word near it in the claim is local anywhere.
func numbersLocal(claim, window []string) bool {
	for i, t := range claim {
		if !isNumber(t) {
			continue
		}
		near := neighbours(claim, i)
		if len(near) == 0 {
			continue
		}
		found := false
		for j, w := range window {
			if w == t && sharesAny(near, neighbours(window, j)) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// neighbours are the content words within localReach terms of terms[i],
// numbers left out (a number beside a number says nothing of what it
// counts).
func neighbours(terms []string, i int) map[string]bool {
	out := map[string]bool{}
	for j := max(0, i-localReach); j <= min(len(terms)-1, i+localReach); j++ {
		if w := terms[j]; j != i && !isNumber(w) && len(w) > 2 && !coverStop[w] && !coverNegations[w] {
			out[w] = true
		}
	}
	return out
}

func sharesAny(a, b map[string]bool) bool {
	for w := range a {
		if b[w] {
			return true
		}
	}
	return false
}

func isNumber(w string) bool {
	return w != "" && strings.Trim(w, "0123456789.,") == "" && unicode.IsDigit(rune(w[0]))
}

// localTerms are coverTerms with each number kept whole ("127.0.1.1",
// "5.10"): a dotted number is one value, and split into four terms it
// would push its own words out of reach.
func localTerms(s string) []string {
	s = containMarkRe.ReplaceAllString(s, " ")
	var out []string
	var cur []rune
	rs := []rune(strings.ToLower(s))
	for i, r := range rs {
		inNumber := (r == '.' || r == ',') && i > 0 && i+1 < len(rs) && unicode.IsDigit(rs[i-1]) && unicode.IsDigit(rs[i+1])
		if unicode.IsLetter(r) || unicode.IsDigit(r) || inNumber {
			cur = append(cur, r)
			continue
		}
		if len(cur) > 0 {
			out = append(out, string(cur))
			cur = cur[:0]
		}
	}
	if len(cur) > 0 {
		out = append(out, string(cur))
	}
	for i, w := range out { // the plural rule of coverTerms
		if len(w) >= 5 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
			out[i] = w[:len(w)-1]
		}
	}
	return out
}
