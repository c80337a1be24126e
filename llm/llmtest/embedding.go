package llmtest

import (
	"hash/fnv"
	"math"
	"strings"
	"unicode"
)

// Embedding is the scripted server's deterministic embedding of text in dim
// dimensions (DefaultEmbeddingDim when dim <= 0), a feature-hashing vector:
//
//   - tokens are the maximal runs of letters and digits, lowercased;
//   - each token adds weight 1 and each pair of adjacent tokens (a bigram,
//     "w1 w2") weight 0.5 to the bucket FNV-1a-64(feature) mod dim, with
//     sign + when the hash's top bit is 0 and - when it is 1;
//   - the result is L2-normalised; a text without tokens gets the unit
//     vector e0 (1 in component 0).
//
// Texts that share words therefore have a higher cosine than unrelated
// texts, identical token sequences have cosine 1, and word order matters
// only through bigrams. Query/document prefixes added by a client are
// ordinary words here.
func Embedding(text string, dim int) []float32 {
	if dim <= 0 {
		dim = DefaultEmbeddingDim
	}
	acc := make([]float64, dim)
	add := func(feature string, w float64) {
		h := fnv.New64a()
		h.Write([]byte(feature))
		x := h.Sum64()
		if x>>63 == 1 {
			w = -w
		}
		acc[x%uint64(dim)] += w
	}
	toks := Tokens(text)
	for i, t := range toks {
		add(t, 1)
		if i > 0 {
			add(toks[i-1]+" "+t, 0.5)
		}
	}
	var ss float64
	for _, x := range acc {
		ss += x * x
	}
	out := make([]float32, dim)
	if ss == 0 { // no tokens, or (unlikely) every feature cancelled out
		out[0] = 1
		return out
	}
	n := math.Sqrt(ss)
	for i, x := range acc {
		out[i] = float32(x / n)
	}
	return out
}

// Tokens splits text into the lowercased letter/digit runs Embedding hashes.
func Tokens(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// Cosine is the cosine similarity of two vectors of equal length (0 when
// either is zero).
func Cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

// estimateTokens mirrors llm.EstimateTokens (bytes/4 rounded up) without
// importing it.
func estimateTokens(s string) int { return (len(s) + 3) / 4 }
