package score

import (
	"math"
	"sort"
	"strings"
	"unicode"
)

var stop = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`the and for are but not you all any can had her was one our out has have
		this that with from they will would there their what which when where who how why into than then them
		these those does did its about also been being more most other some such only over under does using used use`) {
		stop[w] = true
	}
}

// Terms are the lowercased words of s of at least three letters or
// digits, stopwords removed (punctuation inside a word such as "/etc/shadow"
// or "pam_unix" splits it).
func Terms(s string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len([]rune(f)) >= 3 && !stop[f] {
			out = append(out, f)
		}
	}
	return out
}

// Rank orders chunks by BM25 (k1 = 1.2, b = 0.75, idf over the chunks
// given) against query and returns the indices of the best k with a
// positive score, best first, ties by index.
func Rank(query string, chunks []string, k int) []int {
	q := Terms(query)
	docs := make([]map[string]int, len(chunks))
	df := map[string]int{}
	total := 0
	lens := make([]int, len(chunks))
	for i, c := range chunks {
		docs[i] = map[string]int{}
		ts := Terms(c)
		lens[i], total = len(ts), total+len(ts)
		for _, t := range ts {
			if docs[i][t] == 0 {
				df[t]++
			}
			docs[i][t]++
		}
	}
	if len(chunks) == 0 || total == 0 {
		return nil
	}
	avg := float64(total) / float64(len(chunks))
	type scored struct {
		i int
		s float64
	}
	var ss []scored
	for i := range chunks {
		s := 0.0
		for _, t := range uniq(q) {
			tf := float64(docs[i][t])
			if tf == 0 {
				continue
			}
			idf := math.Log(1 + (float64(len(chunks))-float64(df[t])+0.5)/(float64(df[t])+0.5))
			s += idf * tf * 2.2 / (tf + 1.2*(0.25+0.75*float64(lens[i])/avg))
		}
		if s > 0 {
			ss = append(ss, scored{i, s})
		}
	}
	sort.SliceStable(ss, func(a, b int) bool { return ss[a].s > ss[b].s })
	out := make([]int, 0, k)
	for _, x := range ss {
		if len(out) == k {
			break
		}
		out = append(out, x.i)
	}
	return out
}

func uniq(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// Window is the part of text, at most maxChars long and cut at word
// boundaries, that shares the most terms with sentence: what the judge
// reads of a long source. Text within maxChars is returned whole.
func Window(text, sentence string, maxChars int) string {
	rs := []rune(text)
	if maxChars <= 0 || len(rs) <= maxChars {
		return text
	}
	want := map[string]bool{}
	for _, t := range Terms(sentence) {
		want[t] = true
	}
	best, bestScore := 0, -1
	step := max(1, maxChars/4)
	for start := 0; start < len(rs); start += step {
		end := min(len(rs), start+maxChars)
		n := 0
		for _, t := range uniq(Terms(string(rs[start:end]))) {
			if want[t] {
				n++
			}
		}
		if n > bestScore {
			best, bestScore = start, n
		}
		if end == len(rs) {
			break
		}
	}
	end := min(len(rs), best+maxChars)
	w := string(rs[best:end])
	if best > 0 { // drop the cut word at the start
		if i := strings.IndexFunc(w, unicode.IsSpace); i >= 0 && i < 40 {
			w = w[i+1:]
		}
	}
	if end < len(rs) {
		if i := strings.LastIndexFunc(w, unicode.IsSpace); i > len(w)-40 && i > 0 {
			w = w[:i]
		}
	}
	return strings.TrimSpace(w)
}
