package research

import (
	"math"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// BM25 parameters of the corpus index and of chunk pre-selection
// (SelectChunks): the standard Robertson–Spärck Jones values, fixed rather
// than session parameters (docs/parameters.md).
const (
	BM25K1 = 1.2
	BM25B  = 0.75
	// titleWeight: title terms count this many times in a document's term
	// frequencies (a cheap field boost: the title is part of the text twice).
	titleWeight = 2
	// SnippetChars is the target length of a hit's snippet.
	SnippetChars = 300
)

// stopwords are dropped from documents and queries alike.
var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an and are as at be but by for from has have
		he her his i if in into is it its me my no not of on or our she so such than
		that the their them then there these they this to was we were what when
		where which while who whom why will with would you your can could do does
		did should how all any each also been being over under about`) {
		m[w] = true
	}
	return m
}()

// tokenize calls emit for every index term of s with its byte span: runs of
// letters and digits, lowercased and lightly stemmed (plural "s" removal);
// words joined by '-' or '_' (apt-get, x86_64) are also emitted as one
// compound term. Stopwords and single letters are skipped.
func tokenize(s string, emit func(term string, start, end int)) {
	i := 0
	for i < len(s) {
		r, w := utf8.DecodeRuneInString(s[i:])
		if !isWordRune(r) {
			i += w
			continue
		}
		// A compound: word ([-_] word)*
		cstart := i
		parts := 0
		for {
			ws := i
			for i < len(s) {
				r, w = utf8.DecodeRuneInString(s[i:])
				if !isWordRune(r) {
					break
				}
				i += w
			}
			emitTerm(s[ws:i], ws, i, true, emit)
			parts++
			if i+1 < len(s) && (s[i] == '-' || s[i] == '_') {
				r2, _ := utf8.DecodeRuneInString(s[i+1:])
				if isWordRune(r2) {
					i++
					continue
				}
			}
			break
		}
		if parts > 1 {
			emitTerm(s[cstart:i], cstart, i, false, emit)
		}
	}
}

func emitTerm(word string, start, end int, stem bool, emit func(string, int, int)) {
	t := strings.ToLower(word)
	if utf8.RuneCountInString(t) == 1 {
		r, _ := utf8.DecodeRuneInString(t)
		if !unicode.IsDigit(r) {
			return
		}
	}
	if stopwords[t] {
		return
	}
	if stem {
		t = stemS(t)
	}
	emit(t, start, end)
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// stemS is Harman's "S" stemmer: ies→y, es→e, s→"" with the usual
// exceptions; only for words longer than three letters.
func stemS(t string) string {
	if len(t) <= 3 {
		return t
	}
	switch {
	case strings.HasSuffix(t, "ies") && !strings.HasSuffix(t, "eies") && !strings.HasSuffix(t, "aies"):
		return t[:len(t)-3] + "y"
	case strings.HasSuffix(t, "es") && !strings.HasSuffix(t, "aes") && !strings.HasSuffix(t, "ees") && !strings.HasSuffix(t, "oes"):
		return t[:len(t)-1]
	case strings.HasSuffix(t, "s") && !strings.HasSuffix(t, "us") && !strings.HasSuffix(t, "ss"):
		return t[:len(t)-1]
	}
	return t
}

// queryTerms returns the distinct terms of q in order of first occurrence.
func queryTerms(q string) []string {
	seen := map[string]bool{}
	var out []string
	tokenize(q, func(t string, _, _ int) {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	})
	return out
}

// indexedDoc is one document of the BM25 index. Immutable once built.
type indexedDoc struct {
	rel    string
	url    string
	title  string
	text   string
	length int
	tf     map[string]int32
}

func newIndexedDoc(rel, url, title, text string) *indexedDoc {
	d := &indexedDoc{rel: rel, url: url, title: title, text: text, tf: map[string]int32{}}
	tokenize(title, func(t string, _, _ int) { d.tf[t] += titleWeight; d.length += titleWeight })
	tokenize(text, func(t string, _, _ int) { d.tf[t]++; d.length++ })
	return d
}

type posting struct {
	doc int32
	tf  int32
}

// bm25Index is an immutable inverted index over docs (sorted by rel).
type bm25Index struct {
	docs     []*indexedDoc
	postings map[string][]posting
	avgdl    float64
}

func buildBM25(docs []*indexedDoc) *bm25Index {
	ix := &bm25Index{docs: docs, postings: map[string][]posting{}}
	total := 0
	for i, d := range docs {
		total += d.length
		for t, n := range d.tf {
			ix.postings[t] = append(ix.postings[t], posting{doc: int32(i), tf: n})
		}
	}
	if len(docs) > 0 {
		ix.avgdl = float64(total) / float64(len(docs))
	}
	return ix
}

func (ix *bm25Index) idf(term string) float64 {
	n := float64(len(ix.docs))
	df := float64(len(ix.postings[term]))
	return math.Log(1 + (n-df+0.5)/(df+0.5))
}

type scored struct {
	doc   int
	score float64
}

// search returns the documents with a positive BM25 score for terms, best
// first, ties by URL; at most limit.
func (ix *bm25Index) search(terms []string, limit int) []scored {
	if len(ix.docs) == 0 || len(terms) == 0 {
		return nil
	}
	scores := make([]float64, len(ix.docs))
	avgdl := ix.avgdl
	if avgdl == 0 {
		avgdl = 1
	}
	for _, t := range terms {
		ps := ix.postings[t]
		if len(ps) == 0 {
			continue
		}
		idf := ix.idf(t)
		for _, p := range ps {
			tf := float64(p.tf)
			dl := float64(ix.docs[p.doc].length)
			scores[p.doc] += idf * tf * (BM25K1 + 1) / (tf + BM25K1*(1-BM25B+BM25B*dl/avgdl))
		}
	}
	var out []scored
	for i, s := range scores {
		if s > 0 {
			out = append(out, scored{i, s})
		}
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].score != out[b].score {
			return out[a].score > out[b].score
		}
		return ix.docs[out[a].doc].url < ix.docs[out[b].doc].url
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out
}

// snippet returns about SnippetChars characters of text around the window
// that holds the most (idf-weighted, distinct) query terms.
func (ix *bm25Index) snippet(text string, terms []string) string {
	weight := map[string]float64{}
	for _, t := range terms {
		weight[t] = ix.idf(t)
	}
	type occ struct {
		term       string
		start, end int
	}
	var occs []occ
	tokenize(text, func(t string, s, e int) {
		if _, ok := weight[t]; ok {
			occs = append(occs, occ{t, s, e})
		}
	})
	if len(occs) == 0 {
		return cutSnippet(text, 0, 0)
	}
	// Two pointers over occurrences: windows spanning at most SnippetChars
	// bytes; score = sum of idf of the distinct terms + 0.01 per occurrence.
	count := map[string]int{}
	cur := 0.0
	best, bi, bj := -1.0, 0, 0
	i := 0
	for j, o := range occs {
		if count[o.term] == 0 {
			cur += weight[o.term]
		}
		count[o.term]++
		for occs[j].end-occs[i].start > SnippetChars && i < j {
			count[occs[i].term]--
			if count[occs[i].term] == 0 {
				cur -= weight[occs[i].term]
			}
			i++
		}
		s := cur + 0.01*float64(j-i+1)
		if s > best {
			best, bi, bj = s, i, j
		}
	}
	return cutSnippet(text, occs[bi].start, occs[bj].end)
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
