package research

import (
	"hash/fnv"
	"strings"
	"unicode"
)

// Near-duplicate passages (docs/research.md, "Near-duplicate passages"):
// a corpus often holds one text twice, a manual as HTML chapters and as
// its PDF, a page and its printable copy. Their passages are cut at
// different places, so no hash matches, yet a search's top five then
// reads one answer twice and leaves out the next one. Over the question
// set, 129 of the 690 passages of BM25's top ten (19%) had half of their
// word sequences or more in a passage ranked above them.

// DefaultDedupShare is the share of a passage's shingles found in the
// passages ranked above it at which a search leaves it out.
const DefaultDedupShare = 0.5

// shingleWords is the length of the word sequences compared: five words
// rarely repeat by chance in prose, and a PDF's hyphenation or a table
// laid out anew changes only the sequences across it.
const shingleWords = 5

// shingles is the set of hashed shingleWords-word sequences of text, its
// words being runs of letters and digits, case folded: HTML's "/dev/sda1"
// and a PDF's ”/dev/sda1” are the same words.
func shingles(text string) map[uint64]struct{} {
	w := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	out := make(map[uint64]struct{}, max(len(w)-shingleWords+1, 0))
	for i := 0; i+shingleWords <= len(w); i++ {
		h := fnv.New64a()
		for _, x := range w[i : i+shingleWords] {
			h.Write([]byte(x))
			h.Write([]byte{0})
		}
		out[h.Sum64()] = struct{}{}
	}
	return out
}

// dropNearDuplicates walks ps in rank order and keeps up to limit of
// them, leaving out a passage when at least share of its shingles occur
// in the passages kept before it. A passage of fewer than shingleWords
// words is kept (nothing to compare); share <= 0 or > 1 keeps all.
// scores stay aligned with ps.
func dropNearDuplicates(ps []Passage, scores []float64, limit int, share float64) ([]Passage, []float64) {
	if share <= 0 || share > 1 {
		return ps[:min(limit, len(ps))], scores[:min(limit, len(scores))]
	}
	seen := map[uint64]struct{}{}
	var out []Passage
	var outScores []float64
	for i, p := range ps {
		if len(out) == limit {
			break
		}
		s := shingles(p.Text)
		in := 0
		for h := range s {
			if _, ok := seen[h]; ok {
				in++
			}
		}
		if len(s) > 0 && float64(in) >= share*float64(len(s)) {
			continue
		}
		for h := range s {
			seen[h] = struct{}{}
		}
		out, outScores = append(out, p), append(outScores, scores[i])
	}
	return out, outScores
}
