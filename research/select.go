package research

import (
	"math"
	"sort"
)

// SelectChunks picks the chunks of one page worth embedding: at most n of
// them, by a lexical score against query (the research query and, when
// known, the task it serves), and returns their indices in page order.
// Why: embedding is the expensive step and a 4 MiB page is thousands of
// chunks, of which Ingest keeps a dozen; a chunk that shares no term with
// the query is rarely among them.
//
// The score is BM25 (k1 = 1.2, b = 0.75) with the page's chunks as the
// collection and the query's index terms (tokenize: lowercased, stopwords
// dropped, plural s stemmed) as the query. Ties, chunks without any query
// term included, go to the earlier chunk: the beginning of a page is where
// its subject is usually stated. n <= 0 or n >= len(chunks) keeps all.
func SelectChunks(chunks []string, query string, n int) []int {
	if n <= 0 || n >= len(chunks) {
		all := make([]int, len(chunks))
		for i := range all {
			all[i] = i
		}
		return all
	}
	scores := chunkScores(chunks, queryTerms(query))
	order := make([]int, len(chunks))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return scores[order[a]] > scores[order[b]] })
	keep := order[:n]
	sort.Ints(keep)
	return keep
}

// chunkScores is the BM25 score of every chunk for terms. Only the query
// terms are counted, so memory stays proportional to the query, not to
// the page's vocabulary.
func chunkScores(chunks []string, terms []string) []float64 {
	scores := make([]float64, len(chunks))
	if len(terms) == 0 {
		return scores
	}
	want := make(map[string]int, len(terms))
	for i, t := range terms {
		want[t] = i
	}
	tf := make([][]int, len(chunks)) // tf[chunk][term]
	lens := make([]int, len(chunks))
	df := make([]int, len(terms))
	total := 0
	for c, text := range chunks {
		tf[c] = make([]int, len(terms))
		tokenize(text, func(t string, _, _ int) {
			lens[c]++
			if i, ok := want[t]; ok {
				tf[c][i]++
			}
		})
		total += lens[c]
		for i, f := range tf[c] {
			if f > 0 {
				df[i]++
			}
		}
	}
	avg := math.Max(float64(total)/float64(len(chunks)), 1)
	N := float64(len(chunks))
	for c := range chunks {
		norm := BM25K1 * (1 - BM25B + BM25B*float64(lens[c])/avg)
		for i, f := range tf[c] {
			if f == 0 {
				continue
			}
			idf := math.Log(1 + (N-float64(df[i])+0.5)/(float64(df[i])+0.5))
			scores[c] += idf * float64(f) * (BM25K1 + 1) / (float64(f) + norm)
		}
	}
	return scores
}
