package activities

import (
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/lethe-research/lethe/contract"
)

// Citations placed by the text (docs/citations.md, "Placing citations"):
// a 1.5B composer asked to end each sentence with its source number
// often writes the facts it was given and numbers none of them, or puts
// every number in one heap after the last sentence ("… penetration. [1]
// , [2], [3], [4]", make run, 2026-12-02). The facts it copied say where
// each sentence comes from: the numbered evidence that contains or
// covers it (holds, the verification's own rules). The model's numbers
// stay wherever they are on a sentence of their own.

// placeCitations numbers the sentences of a one-paragraph draft by the
// evidence that holds them. A draft whose numbers are heaped on its last
// sentence is rebuilt: every sentence gets the number of its holder, or
// none. Otherwise each sentence without a number gets its holder's, and
// the others are left as written. A rebuilt draft that would cite nothing
// is returned as it was. It returns the text and how many sentences it
// numbered.
func placeCitations(para string, evidence map[int]string) (string, int) {
	sents := contract.SplitSentences(para)
	if len(evidence) == 0 || len(sents) == 0 || strings.Contains(para, "\n") {
		return para, 0
	}
	h := newHolders(evidence)
	if heaped(sents) {
		return h.rebuild(para, sents)
	}
	placed := 0
	for i := len(sents) - 1; i >= 0; i-- { // from the end: offsets stay valid
		s := sents[i]
		if len(s.Marks) > 0 || !hasLetter(s.Text) {
			continue
		}
		if n := h.of(s); n > 0 {
			at := s.End
			if at > s.Start && strings.ContainsRune(".!?", rune(para[at-1])) {
				at--
			}
			para = para[:at] + " [" + strconv.Itoa(n) + "]" + para[at:]
			placed++
		}
	}
	return para, placed
}

// heaped says whether the draft's numbers all sit on its last sentence
// (and on mark-only debris after it), at least two of them, with at
// least one other sentence before it.
func heaped(sents []contract.Sentence) bool {
	last := -1
	for i, s := range sents {
		if hasLetter(s.Text) {
			last = i
		}
	}
	if last < 1 {
		return false
	}
	var nums []int
	for i, s := range sents {
		if i < last && len(s.Marks) > 0 && hasLetter(s.Text) {
			return false
		}
		if i >= last {
			nums = append(nums, s.Cited()...)
		}
	}
	slices.Sort(nums)
	return len(slices.Compact(nums)) >= 2
}

// rebuild writes the draft's sentences again, each with its holder's
// number or none; mark-only debris is dropped.
func (h holders) rebuild(para string, sents []contract.Sentence) (string, int) {
	var b strings.Builder
	placed := 0
	for _, s := range sents {
		if !hasLetter(s.Text) {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		t := strings.TrimRight(s.Text, " ,;")
		n := h.of(s)
		if n == 0 {
			b.WriteString(t)
			continue
		}
		placed++
		mark := " [" + strconv.Itoa(n) + "]"
		if k := len(t) - 1; k >= 0 && strings.ContainsRune(".!?", rune(t[k])) {
			b.WriteString(t[:k] + mark + t[k:])
		} else {
			b.WriteString(t + mark)
		}
	}
	if placed == 0 {
		return para, 0
	}
	return b.String(), placed
}

// holders finds the evidence that holds a sentence.
type holders struct {
	raw  map[int]string
	norm map[int][]string
	nums []int // ascending
}

func newHolders(evidence map[int]string) holders {
	h := holders{raw: evidence, norm: map[int][]string{}}
	for n, t := range evidence {
		h.norm[n] = []string{NormalizeContain(t)}
		h.nums = append(h.nums, n)
	}
	slices.Sort(h.nums)
	return h
}

// of is the number whose evidence contains or covers the sentence: one
// of its own numbers first, then the lowest; 0 when none does.
func (h holders) of(s contract.Sentence) int {
	for _, n := range append(s.Cited(), h.nums...) {
		t, ok := h.raw[n]
		if !ok {
			continue
		}
		if _, _, in := heldBy(s.Text, []string{t}, h.norm[n]); in {
			return n
		}
	}
	return 0
}

func hasLetter(s string) bool {
	return strings.IndexFunc(s, unicode.IsLetter) >= 0
}
