package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/lethe-research/lethe/algebra"
	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/contract"
	"github.com/lethe-research/lethe/eval/questions"
	"github.com/lethe-research/lethe/llm"
	"github.com/lethe-research/lethe/research"
	"github.com/lethe-research/lethe/research/queue"
)

// runPick measures the research run's queue order (-pick): Discover's
// research.discover_limit candidates for the question as the session's
// goal query, in the provider's order, by goal cosine of title and
// snippet as Discover scores them and queue.RankCandidates orders them,
// the two fused by reciprocal rank, and the goal order spread four ways
// (pick_spread.go); and the gold strings held by the pages of the first 1,
// 2, 3 and 5 of each, each page as Fetch reads it (the passage with its
// neighbours).
func runPick(ctx context.Context, w io.Writer, e *engines, qs []questions.Question, p params) error {
	limit := config.Defaults().Research.DiscoverLimit
	picks := []int{1, 2, 3, 5}
	orders := []string{"search", "goal", "fused", "spread-docs", "spread-adjacent", "mmr-0.7", "mmr-0.5"}
	rows := map[string]*row{}
	var names []string
	for _, pk := range picks {
		for _, o := range orders {
			name := fmt.Sprintf("%s top-%d", o, pk)
			rows[name], names = &row{name: name}, append(names, name)
		}
	}
	opened := map[string]string{} // a page is read once: a PDF's is pdftotext's whole run
	for _, q := range qs {
		ranked, err := e.queueOrders(ctx, q.Question, limit, p)
		if err != nil {
			return fmt.Errorf("%s: %w", q.ID, err)
		}
		for _, o := range orders {
			for _, pk := range picks {
				var texts []string
				for _, c := range ranked[o][:min(pk, len(ranked[o]))] {
					t, ok := opened[c.URL]
					if !ok {
						d, err := e.c.Open(c.URL)
						if err != nil {
							return fmt.Errorf("%s: open %s: %w", q.ID, c.URL, err)
						}
						t, opened[c.URL] = d.Text, d.Text
					}
					texts = append(texts, t)
				}
				rows[fmt.Sprintf("%s top-%d", o, pk)].add(q.Kind, questions.Evidence(q, texts), charsOf(texts))
			}
		}
	}
	printTable(w, names, rows, len(qs), p)
	return nil
}

// queueOrders is Discover's candidates for q (the corpus search's hits,
// GoalCos the cosine of "title\nsnippet" cut at 300 characters to the
// goal's query embedding), in each order.
func (e *engines) queueOrders(ctx context.Context, q string, limit int, p params) (map[string][]contract.URLCandidate, error) {
	hits, _, err := e.c.SearchWith(ctx, q, limit, research.SearchOptions{Candidates: p.candidates, RRFK: p.rrfK})
	if err != nil || len(hits) == 0 {
		return map[string][]contract.URLCandidate{}, err
	}
	texts := make([]string, len(hits))
	for i, h := range hits {
		s := []rune(h.Snippet)
		texts[i] = strings.TrimSpace(h.Title + "\n" + string(s[:min(len(s), 300)]))
	}
	vs, err := e.emb.Embed(ctx, llm.Document, texts)
	if err != nil {
		return nil, err
	}
	goal, err := e.emb.Embed(ctx, llm.Query, []string{q})
	if err != nil {
		return nil, err
	}
	cands := make([]contract.URLCandidate, len(hits))
	for i, h := range hits {
		cands[i] = contract.URLCandidate{URL: h.URL, Title: h.Title, Snippet: h.Snippet, Provider: h.Provider,
			GoalCos: algebra.Cosine32(vs[i], goal[0])}
	}
	byGoal := queue.RankCandidates(cands, nil)
	byURL := map[string][]float32{}
	for i, c := range cands {
		byURL[queue.NormalizeURL(c.URL)] = vs[i]
	}
	return map[string][]contract.URLCandidate{"search": cands, "goal": byGoal, "fused": fused(cands, byGoal, pickRRFK),
		"spread-docs": spreadDocs(byGoal), "spread-adjacent": spreadAdjacent(byGoal),
		"mmr-0.7": mmrOrder(byGoal, byURL, 0.7), "mmr-0.5": mmrOrder(byGoal, byURL, 0.5)}, nil
}

// pickRRFK is the fusion constant of the fused order, the corpus search's
// own (research.corpus_rrf_k).
const pickRRFK = 10

// fused orders the candidates by 1/(k + search rank) + 1/(k + goal rank),
// ties in goal order: search holds them in the provider's order, byGoal in
// RankCandidates's (both from 1).
func fused(search, byGoal []contract.URLCandidate, k float64) []contract.URLCandidate {
	rank := map[string]int{}
	for i, c := range search {
		rank[queue.NormalizeURL(c.URL)] = i + 1
	}
	score := map[string]float64{}
	for i, c := range byGoal {
		score[c.URL] = 1/(k+float64(i+1)) + 1/(k+float64(rank[c.URL]))
	}
	out := append([]contract.URLCandidate(nil), byGoal...)
	sort.SliceStable(out, func(a, b int) bool { return score[out[a].URL] > score[out[b].URL] })
	return out
}
