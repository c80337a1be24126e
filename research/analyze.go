package research

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/index/scorch"
)

// SnippetChars is the target length of a hit's snippet.
const SnippetChars = 300

// englishAnalyzer is bleve's English analyzer (the corpus index's), built
// once: it is immutable and safe for concurrent use.
var englishAnalyzer = sync.OnceValues(func() (analysis.Analyzer, error) {
	a := bleve.NewIndexMapping().AnalyzerNamed(en.AnalyzerName)
	if a == nil {
		return nil, fmt.Errorf("research: bleve analyzer %q is not registered", en.AnalyzerName)
	}
	return a, nil
})

type token struct {
	term       string
	start, end int
}

// analyze returns the index terms of s (as the corpus index sees them) with
// their byte spans.
func analyze(s string) []token {
	a, err := englishAnalyzer()
	if err != nil {
		return nil
	}
	ts := a.Analyze([]byte(s))
	out := make([]token, 0, len(ts))
	for _, t := range ts {
		if t.Start < 0 || t.End > len(s) || t.Start > t.End {
			continue
		}
		out = append(out, token{string(t.Term), t.Start, t.End})
	}
	return out
}

// Snippet returns about SnippetChars characters of text around the window
// that holds the most distinct query terms (then the most occurrences),
// cut at word boundaries, "…" where text was cut.
func Snippet(text, q string) string {
	want := map[string]bool{}
	for _, t := range analyze(q) {
		want[t.term] = true
	}
	var occs []token
	for _, t := range analyze(text) {
		if want[t.term] {
			occs = append(occs, t)
		}
	}
	if len(occs) == 0 {
		return cutSnippet(text, 0, 0)
	}
	// Two pointers over occurrences: windows spanning at most SnippetChars
	// bytes; score = distinct terms + 0.01 per occurrence.
	count := map[string]int{}
	cur := 0.0
	best, bi, bj := -1.0, 0, 0
	i := 0
	for j, o := range occs {
		if count[o.term] == 0 {
			cur++
		}
		count[o.term]++
		for occs[j].end-occs[i].start > SnippetChars && i < j {
			count[occs[i].term]--
			if count[occs[i].term] == 0 {
				cur--
			}
			i++
		}
		if s := cur + 0.01*float64(j-i+1); s > best {
			best, bi, bj = s, i, j
		}
	}
	return cutSnippet(text, occs[bi].start, occs[bj].end)
}

// matchKeys are lowercase substrings that every chunk matching q contains
// at least one of: q's words and their analyzed stems, stems cut by a rune
// when longer than four bytes (Porter turns "happy" into "happi").
func matchKeys(q string) []string {
	var keys []string
	for _, t := range analyze(q) {
		k := t.term
		if len(k) > 4 {
			k = k[:len(k)-1]
		}
		keys = append(keys, k, strings.ToLower(q[t.start:t.end]))
	}
	return keys
}

func containsAny(s string, keys []string) bool {
	for _, k := range keys {
		if k != "" && strings.Contains(s, k) {
			return true
		}
	}
	return false
}

// SelectChunks picks the chunks of one page worth embedding: at most n of
// them, by BM25 against query (the research query and, when known, the
// task it serves), and returns their indices in page order. Why: embedding
// is the expensive step and a 4 MiB page is thousands of chunks, of which
// Ingest keeps a dozen; a chunk that shares no term with the query is
// rarely among them.
//
// The score is bleve's BM25 with the page's chunks as the collection (an
// in-memory index, English analyzer). Ties, chunks without any query term
// included, go to the earlier chunk: the beginning of a page is where its
// subject is usually stated. n <= 0 or n >= len(chunks) keeps all.
func SelectChunks(chunks []string, query string, n int) []int {
	if n <= 0 || n >= len(chunks) {
		all := make([]int, len(chunks))
		for i := range all {
			all[i] = i
		}
		return all
	}
	scores := chunkScores(chunks, query)
	order := make([]int, len(chunks))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return scores[order[a]] > scores[order[b]] })
	keep := order[:n]
	sort.Ints(keep)
	return keep
}

// chunkScores is the BM25 score of every chunk for query (0 where it
// matches nothing or the index fails: the page order decides then). Only
// chunks that contain a query term (matchKeys, a cheap superset test) are
// indexed: analysis is the expensive part (seconds for a 4 MiB page), and
// the collection statistics of BM25 are then those of the matching chunks.
func chunkScores(chunks []string, query string) []float64 {
	scores := make([]float64, len(chunks))
	if strings.TrimSpace(query) == "" {
		return scores
	}
	idx, err := bleve.NewUsing("", passageMapping(), scorch.Name, bleve.Config.DefaultKVStore, nil)
	if err != nil {
		return scores
	}
	defer idx.Close()
	keys := matchKeys(query)
	b := idx.NewBatch()
	for i, ch := range chunks {
		if !containsAny(strings.ToLower(ch), keys) {
			continue // shares no term with the query: score 0
		}
		if err := b.Index(strconv.Itoa(i), map[string]any{"kind": kindPassage, "text": ch}); err != nil {
			return scores
		}
	}
	if err := idx.Batch(b); err != nil {
		return scores
	}
	mq := bleve.NewMatchQuery(query)
	mq.SetField("text")
	res, err := idx.Search(bleve.NewSearchRequestOptions(mq, len(chunks), 0, false))
	if err != nil {
		return scores
	}
	for _, h := range res.Hits {
		if i, err := strconv.Atoi(h.ID); err == nil && i >= 0 && i < len(chunks) {
			scores[i] = h.Score
		}
	}
	return scores
}

// cutSnippet returns about SnippetChars runes of text containing the byte
// span [ws, we), centred on it, cut at word boundaries, whitespace
// collapsed, with "…" where text was cut.
func cutSnippet(text string, ws, we int) string {
	spanRunes := utf8.RuneCountInString(text[ws:we])
	slack := SnippetChars - spanRunes
	if slack < 0 {
		slack = 0
	}
	start := ws
	for n := 0; n < slack/2 && start > 0; n++ {
		_, w := utf8.DecodeLastRuneInString(text[:start])
		start -= w
	}
	end := we
	for n := 0; n < slack-slack/2 && end < len(text); n++ {
		_, w := utf8.DecodeRuneInString(text[end:])
		end += w
	}
	// Use the slack not spent on one side on the other.
	for utf8.RuneCountInString(text[start:end]) < SnippetChars && start > 0 {
		_, w := utf8.DecodeLastRuneInString(text[:start])
		start -= w
	}
	// Snap to word boundaries, never cutting into the span.
	if start > 0 {
		if k := strings.IndexAny(text[start:ws], " \t\n"); k >= 0 && !isSpaceByte(text[start-1]) {
			start += k + 1
		}
	}
	if end < len(text) {
		if k := strings.LastIndexAny(text[we:end], " \t\n"); k >= 0 && !isSpaceByte(text[end]) {
			end = we + k
		}
	}
	s := collapseSpace(text[start:end])
	if start > 0 {
		s = "…" + s
	}
	if end < len(text) {
		s += "…"
	}
	return s
}
