package main

import (
	"net/url"
	"strconv"

	"github.com/lethe-research/lethe/algebra"
	"github.com/lethe-research/lethe/contract"
)

// Orders that spread a run's few pages over the corpus, measured against
// the goal-cosine order and not taken (docs/research.md, "Spreading a
// run's pages"): a second page from the same document, a page that
// overlaps one before it (a corpus page is a passage with its
// neighbours), or a page near one before it in meaning.

// docKey is a corpus URL's document and passage number (-1 without one).
func docKey(raw string) (string, int) {
	u, err := url.Parse(raw)
	if err != nil {
		return raw, -1
	}
	n, err := strconv.Atoi(u.Query().Get("passage"))
	if err != nil {
		n = -1
	}
	u.RawQuery, u.Fragment = "", ""
	return u.String(), n
}

// spreadDocs takes the candidates round robin over their documents, each
// document's in the input order.
func spreadDocs(c []contract.URLCandidate) []contract.URLCandidate {
	var out, rest []contract.URLCandidate
	left := c
	for len(left) > 0 {
		seen := map[string]bool{}
		rest = nil
		for _, cand := range left {
			k, _ := docKey(cand.URL)
			if seen[k] {
				rest = append(rest, cand)
				continue
			}
			seen[k] = true
			out = append(out, cand)
		}
		left = rest
	}
	return out
}

// spreadAdjacent moves a candidate whose page overlaps a page kept before
// it (the same document, passages within 2 of each other) after the
// others.
func spreadAdjacent(c []contract.URLCandidate) []contract.URLCandidate {
	var out, later []contract.URLCandidate
	for _, cand := range c {
		k, n := docKey(cand.URL)
		overlap := false
		for _, o := range out {
			ko, no := docKey(o.URL)
			if ko == k && n >= 0 && no >= 0 && abs(n-no) <= 2 {
				overlap = true
				break
			}
		}
		if overlap {
			later = append(later, cand)
			continue
		}
		out = append(out, cand)
	}
	return append(out, later...)
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// mmrOrder is maximal marginal relevance over the candidates' title and
// snippet vectors: greedily, the candidate with the largest
// λ·GoalCos − (1−λ)·max cos(candidate, picked).
func mmrOrder(c []contract.URLCandidate, vs map[string][]float32, lambda float64) []contract.URLCandidate {
	left := append([]contract.URLCandidate(nil), c...)
	var out []contract.URLCandidate
	for len(left) > 0 {
		best, bestS := 0, -1e9
		for i, cand := range left {
			red := 0.0
			for _, o := range out {
				red = max(red, algebra.Cosine32(vs[cand.URL], vs[o.URL]))
			}
			s := lambda*cand.GoalCos - (1-lambda)*red
			if s > bestS {
				best, bestS = i, s
			}
		}
		out = append(out, left[best])
		left = append(left[:best], left[best+1:]...)
	}
	return out
}
