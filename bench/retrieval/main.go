// Command retrieval measures what the research engine reads for one
// web_search of a question over the Debian Reference, for three engines:
//
//   - old: what the engine before the passage index ingested: BM25 top-5
//     whole documents (bleve, document grain), each chunked, its best 48
//     chunks by BM25 embedded, and Ingest's old selection: the 12 chunks of
//     highest information gain per page;
//   - bm25-5: plain BM25 top-5 passages of the passage index;
//   - new: the corpus provider's hybrid top-5 passages (BM25 candidates
//     reranked by the embedding model, reciprocal rank fusion; with -dense,
//     the dense stage's candidates with them), each
//     fetched with its neighbours, and Ingest's selection (relevance to the
//     query first, novelty second, research.ingest_max_chars);
//   - dense-5 and union-5: two first stages the corpus search does not
//     have, every passage embedded (dense.go).
//
// For each question it records the evidence recall (eval/questions
// Evidence: the share of gold strings present in what was ingested) and
// the characters ingested, and prints a Markdown table. With -facts it
// prints fact recall instead: the share of gold strings held by the facts
// a report section is written from, per fact scoring. It needs the
// embedding server (scripts/models.sh start; -embed).
//
//	go run ./bench/retrieval -corpus /usr/share/doc/debian-reference-en/docs
package main

import (
	"context"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/eval/questions"
	"github.com/lethe-research/lethe/llm"
	"github.com/lethe-research/lethe/llm/llmtest"
	"github.com/lethe-research/lethe/research"
)

// testEmbedder is the deterministic test embedding (hashed words and
// bigrams, llmtest.Embedding): a lexical stand-in when no model server is
// free, so the rerank it gives is not a semantic one.
type testEmbedder struct{}

func (testEmbedder) Embed(_ context.Context, kind llm.EmbedKind, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = llmtest.Embedding(t, 384)
	}
	return out, nil
}

func main() {
	corpus := flag.String("corpus", "/usr/share/doc/debian-reference-en/docs", "Debian Reference HTML directory")
	embedURL := flag.String("embed", "http://127.0.0.1:8081", `embedding server (OpenAI-compatible), or "llmtest" for the deterministic test embedding (lexical: no model)`)
	indexDir := flag.String("index", "", "passage index directory (default: a temporary one)")
	n := flag.Int("n", 0, "questions (stratified subset; 0: all)")
	k := flag.Int("k", 5, "top-k documents/passages")
	maxChars := flag.Int("max-chars", 0, "Ingest character budget (0: research.ingest_max_chars)")
	verbose := flag.Bool("v", false, "one line per question")
	lambda := flag.Float64("lambda", 0, "Ingest MMR λ (0: research.ingest_lambda)")
	cache := flag.String("cache", "", "file keeping the vectors between runs (one per embedder; default: none)")
	def := config.Defaults().Research
	var eo params
	flag.IntVar(&eo.candidates, "candidates", def.CorpusCandidates, "engine: BM25 candidates reranked (research.corpus_candidates)")
	flag.IntVar(&eo.dense, "dense", def.CorpusDense, "search: passages the corpus's dense stage adds to BM25's candidates (research.corpus_dense; 0: none, BM25's candidates reranked)")
	flag.Float64Var(&eo.rrfK, "rrf-k", def.CorpusRRFK, "engine: reciprocal rank fusion constant (research.corpus_rrf_k)")
	flag.BoolVar(&eo.hitsInOrder, "hits-in-order", def.IngestHitsInOrder, "engine: hits first in search order (research.ingest_hits_in_order)")
	flag.IntVar(&eo.minTrim, "min-trim", def.IngestMinTrim, "engine: cut the overflowing chunk to its best window when this many characters are left (research.ingest_min_trim; 0: drop it)")
	sweep := flag.Bool("sweep", false, "engine: print recall and characters per option set over a grid, on the odd and even halves of the questions")
	flag.StringVar(&eo.pdf, "pdf", "", "pdftotext: index the corpus's PDFs too, as a worker with pdftotext does (empty: HTML and text only)")
	flag.Float64Var(&eo.dedup, "dedup", config.Defaults().Research.CorpusDedup, "search: research.corpus_dedup, the share of a passage's word sequences in passages ranked above it that leaves it out (0: keep all)")
	queryPrefix := flag.String("query-prefix", config.Defaults().Embed.QueryPrefix, "embed.query_prefix: scripts/models.sh sets it empty for all-MiniLM-L6-v2, as the evaluation runs it")
	pick := flag.Bool("pick", false, "print what a research run fetches: the gold strings in the first pages of Discover's candidates in the provider's order, by goal cosine, fused, and spread (pick_spread.go)")
	facts := flag.Bool("facts", false, "print fact recall: the gold strings held by the facts a report section is written from (activities.ExtractFacts), per scoring")
	flag.StringVar(&eo.planURL, "plan", "", "print what the seed reads with and without the model's guess at the answer searched too (plan.go): the chat server's URL")
	flag.StringVar(&eo.planCache, "plan-cache", "", "-plan: file keeping the planning answers between runs (default: none)")
	flag.Parse()
	if err := run(*corpus, *embedURL, *indexDir, *cache, *n, *k, *maxChars, *lambda, *verbose, eo, *sweep, *facts, *pick, *queryPrefix); err != nil {
		fmt.Fprintln(os.Stderr, "retrieval:", err)
		os.Exit(1)
	}
}

func run(corpus, embedURL, indexDir, cache string, n, k, maxChars int, lambda float64, verbose bool, eo params, sweep, facts, pick bool, queryPrefix string) error {
	ctx := context.Background()
	qs, err := questions.DebianReference()
	if err != nil {
		return err
	}
	if n > 0 {
		qs = questions.Stratified(qs, n)
	}
	def := config.Defaults()
	ecfg := def.Embed
	var base research.Embedder = llm.NewEmbedClient(llm.EmbedConfig{BaseURL: embedURL, Model: ecfg.Model, Timeout: 30 * time.Minute,
		BatchSize: ecfg.BatchSize, QueryPrefix: queryPrefix, DocPrefix: ecfg.DocPrefix}, nil)
	if embedURL == "llmtest" {
		base = testEmbedder{}
	}
	emb, err := newCachedEmbedder(base, cache)
	if err != nil {
		return err
	}
	defer func() {
		if err := emb.save(cache); err != nil {
			fmt.Fprintln(os.Stderr, "retrieval: save vector cache:", err)
		}
	}()
	p := params{chunkChars: def.Research.ChunkChars, perPage: def.Research.MaxChunksPerPage, embedded: def.Research.MaxChunksEmbedded,
		lambda: def.Research.IngestLambda, maxChars: def.Research.IngestMaxChars, k: k,
		candidates: eo.candidates, dense: eo.dense, rrfK: eo.rrfK, hitsInOrder: eo.hitsInOrder, minTrim: eo.minTrim,
		pdf: eo.pdf, dedup: eo.dedup}
	if maxChars > 0 {
		p.maxChars = maxChars
	}
	if lambda > 0 {
		p.lambda = lambda
	}
	if indexDir == "" {
		d, err := os.MkdirTemp("", "lethe-retrieval-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		indexDir = d
	}
	eng, err := newEngines(ctx, corpus, indexDir, emb, p)
	if err != nil {
		return err
	}
	defer eng.close()
	fmt.Fprintf(os.Stderr, "corpus: %d documents, %d passages (%d in the dense stage); %d questions\n", eng.stats.Docs, eng.stats.Passages, len(eng.dense.texts), len(qs))
	if sweep {
		return runSweep(ctx, eng, qs, p, func() error { return emb.save(cache) })
	}
	if pick {
		return runPick(ctx, os.Stdout, eng, qs, p)
	}
	if facts {
		return runFacts(ctx, os.Stdout, eng, qs, p, verbose)
	}
	if eo.planURL != "" {
		chat := llm.NewChatClient(llm.ChatConfig{BaseURL: eo.planURL, Timeout: 10 * time.Minute, JSONSchema: true, Seed: def.LLM.Seed}, nil)
		return runPlan(ctx, os.Stdout, eng, qs, p, chat, eo.planCache, def.Research.SeedQueries, verbose)
	}
	rows := map[string]*row{}
	names := []string{"old", "bm25-5", "hybrid-5", "dense-5", "union-5", "new-unmarked", "new", "engine"}
	for _, name := range names {
		rows[name] = &row{name: name}
	}
	for i, q := range qs {
		got, err := eng.all(ctx, q.Question)
		if err != nil {
			return fmt.Errorf("%s: %w", q.ID, err)
		}
		var line []string
		for _, name := range names {
			texts := got[name]
			r := rows[name]
			ev := questions.Evidence(q, texts)
			r.add(q.Kind, ev, charsOf(texts))
			line = append(line, fmt.Sprintf("%s %.2f %5d", name, ev, charsOf(texts)))
		}
		if i%10 == 9 {
			if err := emb.save(cache); err != nil {
				return fmt.Errorf("save vector cache: %w", err)
			}
		}
		if verbose {
			fmt.Fprintf(os.Stderr, "%3d %s %-10s %s\n", i+1, q.ID, q.Kind, strings.Join(line, " | "))
		}
	}
	printTable(os.Stdout, names, rows, len(qs), p)
	return nil
}

func charsOf(texts []string) int {
	n := 0
	for _, t := range texts {
		n += len([]rune(t))
	}
	return n
}

// htmlFiles lists the corpus's HTML files, relative and slash-separated.
func htmlFiles(root string) ([]string, error) {
	root, err := filepath.EvalSymlinks(root) // the package's docs is a symlink
	if err != nil {
		return nil, err
	}
	var out []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(strings.ToLower(p), ".html") {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	sort.Strings(out)
	return out, err
}
