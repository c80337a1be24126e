package research

import (
	"strings"
	"unicode/utf8"
)

// BestWindow returns the part of text, at most maxChars characters, that
// holds the most distinct query terms (then the most occurrences; ties: the
// earliest), as the corpus index analyses them. Windows start at the
// beginning of a line or of a sentence and end at a word boundary, so the
// part reads as whole lines or sentences where it can. Why: a search hit
// that does not fit what Ingest may still keep is cut to the words the
// query asked about, not dropped and not cut at its end. Text that fits is
// returned whole; maxChars <= 0 returns "". The result is trimmed of
// surrounding space.
func BestWindow(text, query string, maxChars int) string {
	text = strings.TrimSpace(text)
	if maxChars <= 0 {
		return ""
	}
	if utf8.RuneCountInString(text) <= maxChars {
		return text
	}
	want := map[string]bool{}
	for _, t := range analyze(query) {
		want[t.term] = true
	}
	var occs []token
	for _, t := range analyze(text) {
		if want[t.term] {
			occs = append(occs, t)
		}
	}
	best, bestScore := 0, -1.0
	for _, s := range windowStarts(text) {
		end := runeEnd(text, s, maxChars)
		seen := map[string]bool{}
		score := 0.0
		for _, o := range occs {
			if o.start < s || o.end > end {
				continue
			}
			if !seen[o.term] {
				seen[o.term] = true
				score++
			}
			score += 0.01
		}
		if score > bestScore {
			best, bestScore = s, score
		}
	}
	end := runeEnd(text, best, maxChars)
	if end < len(text) && !isSpaceByte(text[end]) {
		if k := strings.LastIndexAny(text[best:end], " \t\n"); k > 0 {
			end = best + k
		}
	}
	return strings.TrimSpace(text[best:end])
}

// windowStarts are the byte offsets where a window may start: the text's
// start, every line's and every sentence's (after ". ", "? ", "! ").
func windowStarts(text string) []int {
	out := []int{0}
	for i := 1; i < len(text); i++ {
		prev := text[i-1]
		switch {
		case prev == '\n' && text[i] != '\n':
			out = append(out, i)
		case prev == ' ' && i >= 2 && strings.IndexByte(".?!", text[i-2]) >= 0 && text[i] != ' ':
			out = append(out, i)
		}
	}
	return out
}

// runeEnd is the byte offset n characters after start (or len(text)).
func runeEnd(text string, start, n int) int {
	end := start
	for k := 0; k < n && end < len(text); k++ {
		_, w := utf8.DecodeRuneInString(text[end:])
		end += w
	}
	return end
}
