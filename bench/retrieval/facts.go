package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/lethe-research/lethe/activities"
	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/eval/questions"
)

// factVariant is one way of picking a section's facts.
type factVariant struct {
	name string
	o    activities.FactOptions
}

// factVariants are the scorings compared by -facts: word overlap (the
// selection before BM25), BM25 alone, and BM25 with one to three following
// sentences, each picking assembly.section_facts facts of at most 400
// characters, as a session's section does; the default without a list
// item's lead (leadOf); and, for the prompt's size, ten facts.
func factVariants() []factVariant {
	k := config.Defaults().Assembly.SectionFacts
	return []factVariant{
		{"overlap", activities.FactOptions{K: k, MaxChars: 400, Overlap: true}},
		{"bm25", activities.FactOptions{K: k, MaxChars: 400}},
		{"bm25+1", activities.FactOptions{K: k, MaxChars: 400, Follow: 1}},
		{"bm25+2", activities.FactOptions{K: k, MaxChars: 400, Follow: 2}},
		{"bm25+3", activities.FactOptions{K: k, MaxChars: 400, Follow: 3}},
		{"bm25+3 no lead", activities.FactOptions{K: k, MaxChars: 400, Follow: 3, NoLead: true}},
		{"bm25+1 k10", activities.FactOptions{K: 10, MaxChars: 400, Follow: 1}},
		{"bm25+2 k10", activities.FactOptions{K: 10, MaxChars: 400, Follow: 2}},
		{"overlap k10", activities.FactOptions{K: 10, MaxChars: 400, Overlap: true}},
	}
}

// runFacts measures fact recall: for each question, the engine's evidence
// (what one web_search ingests, numbered by page as a session numbers its
// sources) is cut to the facts a section's paragraph is written from, and
// the share of gold strings those facts hold is counted, against the
// evidence's own recall, its upper bound.
func runFacts(ctx context.Context, w io.Writer, e *engines, qs []questions.Question, p params, verbose bool) error {
	vs := factVariants()
	rows := map[string]*row{"evidence": {name: "evidence"}}
	names := []string{"evidence"}
	for _, v := range vs {
		rows[v.name] = &row{name: v.name}
		names = append(names, v.name)
	}
	for _, q := range qs {
		chunks, pages, err := e.engineChunks(ctx, q.Question, p)
		if err != nil {
			return fmt.Errorf("%s: %w", q.ID, err)
		}
		ev := map[int]string{}
		for i, c := range chunks {
			ev[pages[i]+1] += c + "\n"
		}
		line := []string{fmt.Sprintf("evidence %.2f", questions.Evidence(q, chunks))}
		rows["evidence"].add(q.Kind, questions.Evidence(q, chunks), charsOf(chunks))
		for _, v := range vs {
			var texts []string
			for _, f := range activities.ExtractFacts(q.Question, ev, v.o) {
				texts = append(texts, f.Text)
			}
			r := questions.Evidence(q, texts)
			rows[v.name].add(q.Kind, r, charsOf(texts))
			line = append(line, fmt.Sprintf("%s %.2f", v.name, r))
		}
		if verbose {
			fmt.Fprintf(w, "%s %-10s %s\n", q.ID, q.Kind, strings.Join(line, " | "))
		}
	}
	printTable(w, names, rows, len(qs), p)
	return nil
}
