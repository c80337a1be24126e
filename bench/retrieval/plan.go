package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/lethe-research/lethe/din"
	"github.com/lethe-research/lethe/eval/questions"
	"github.com/lethe-research/lethe/llm"
)

// -plan: what a session's seed reads (the goal's search and the searches
// of its planned queries) against the same with the model's guess at the
// answer searched too, in the manner of HyDE (Gao et al. 2022,
// "Precise Zero-Shot Dense Retrieval without Relevance Labels"): a
// paraphrased question shares no key term with its passage, and a guess
// written as a manual would state the answer may name the command or
// file the passage holds, right or wrong about the rest. Measured on the
// 69 questions with the 1.5B local model, it was not taken
// (docs/seed-search.md, "A guess at the answer, searched too").

// guessSystem is din.PlanSystem with the model's guess at the answer.
const guessSystem = `You plan research. Answer with one JSON object only: {"queries": ["...", "...", "..."], "guess": "..."}: short search queries whose results together answer the question, and your best guess at the answer in one sentence, worded as the text that answers it would state it, naming the exact command, file, package, value or term.`

// guessSchema is din.PlanSchema's loose form with a required "guess".
func guessSchema(n int) []byte {
	b, err := json.Marshal(map[string]any{
		"type": "object",
		"properties": map[string]any{
			"queries": map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "minItems": 1, "maxItems": n},
			"guess":   map[string]any{"type": "string"},
		},
		"required":             []string{"queries", "guess"},
		"additionalProperties": false,
	})
	if err != nil {
		panic(err) // static shape: cannot fail
	}
	return b
}

// parseGuess reads the guess of an answer to guessSystem, spaces
// collapsed, cut at 300 runes (one sentence; a model that runs on writes
// no better query); "" when there is none.
func parseGuess(content string) string {
	var g struct {
		Guess string `json:"guess"`
	}
	obj, err := din.Extract(content)
	if err != nil || json.Unmarshal([]byte(obj), &g) != nil {
		return ""
	}
	r := []rune(strings.Join(strings.Fields(g.Guess), " "))
	return string(r[:min(len(r), 300)])
}

// plans are one question's two planning answers, as cached.
type plans struct {
	Plain   []string `json:"plain"`
	Queries []string `json:"queries"`
	Guess   string   `json:"guess"`
	Seconds float64  `json:"seconds"` // the guess call's time
}

// planFor asks the model for the two plans of a question, or reads them
// from the cache (one JSON object per question id).
func planFor(ctx context.Context, chat *llm.ChatClient, cache map[string]plans, q questions.Question, n int) (plans, error) {
	if p, ok := cache[q.ID]; ok {
		return p, nil
	}
	var p plans
	req := llm.ChatRequest{System: din.PlanSystem, User: din.PlanPrompt(q.Question, n), MaxTokens: 256, NoThink: true,
		Schema: din.PlanSchema(n, false), SchemaName: "plan"}
	res, err := chat.Complete(ctx, req, nil)
	if err != nil {
		return p, fmt.Errorf("plan %s: %w", q.ID, err)
	}
	p.Plain, _ = din.ParsePlan(res.Content, n)
	req.System, req.Schema = guessSystem, guessSchema(n)
	start := time.Now()
	res, err = chat.Complete(ctx, req, nil)
	if err != nil {
		return p, fmt.Errorf("plan with guess %s: %w", q.ID, err)
	}
	p.Seconds = time.Since(start).Seconds()
	p.Queries, _ = din.ParsePlan(res.Content, n)
	p.Guess = parseGuess(res.Content)
	cache[q.ID] = p
	return p, nil
}

// runPlan prints evidence recall per question kind for the seed's
// searches with and without the guess.
func runPlan(ctx context.Context, w io.Writer, eng *engines, qs []questions.Question, p params, chat *llm.ChatClient, cachePath string, n int, verbose bool) error {
	cache, err := readPlans(cachePath)
	if err != nil {
		return err
	}
	names := []string{"goal", "seed", "seed, guess prompt", "seed, guess prompt + guess", "goal + guess", "guess alone"}
	rows := map[string]*row{}
	for _, name := range names {
		rows[name] = &row{name: name}
	}
	searched := map[string][]string{}
	search := func(q string) ([]string, error) {
		if got, ok := searched[q]; ok {
			return got, nil
		}
		got, err := eng.engine(ctx, q, p)
		searched[q] = got
		return got, err
	}
	union := func(queries ...string) ([]string, error) {
		var out []string
		seen := map[string]bool{}
		for _, q := range queries {
			if q == "" {
				continue
			}
			got, err := search(q)
			if err != nil {
				return nil, err
			}
			for _, t := range got {
				if !seen[t] {
					seen[t] = true
					out = append(out, t)
				}
			}
		}
		return out, nil
	}
	for i, q := range qs {
		pl, err := planFor(ctx, chat, cache, q, n)
		if err != nil {
			return err
		}
		if err := writePlans(cachePath, cache); err != nil {
			return err
		}
		sets := map[string][]string{
			"goal":                       {q.Question},
			"seed":                       append([]string{q.Question}, pl.Plain...),
			"seed, guess prompt":         append([]string{q.Question}, pl.Queries...),
			"seed, guess prompt + guess": append(append([]string{q.Question}, pl.Queries...), pl.Guess),
			"goal + guess":               {q.Question, pl.Guess},
			"guess alone":                {pl.Guess},
		}
		var line []string
		for _, name := range names {
			texts, err := union(sets[name]...)
			if err != nil {
				return fmt.Errorf("%s: %w", q.ID, err)
			}
			ev := questions.Evidence(q, texts)
			rows[name].add(q.Kind, ev, charsOf(texts))
			line = append(line, fmt.Sprintf("%.2f", ev))
		}
		if verbose {
			fmt.Fprintf(os.Stderr, "%3d %s %-10s %s | guess %q (%.1fs)\n", i+1, q.ID, q.Kind, strings.Join(line, " "), pl.Guess, pl.Seconds)
		}
		clear(searched)
	}
	printTable(w, names, rows, len(qs), p)
	return nil
}

func readPlans(path string) (map[string]plans, error) {
	out := map[string]plans{}
	if path == "" {
		return out, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read plan cache: %w", err)
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("plan cache %s: %w", path, err)
	}
	return out, nil
}

func writePlans(path string, m map[string]plans) error {
	if path == "" {
		return nil
	}
	b, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}
