// Command index benchmarks the corpus passage index (bleve) at scale: it
// writes N generated documents (a Zipf-distributed vocabulary, so term
// frequencies look like text), builds the index through the corpus
// provider (the path a worker takes), and prints build time, size on disk,
// reopen time, and median and p99 query times for BM25 and for the hybrid
// rerank (with the deterministic test embedder, so the number is the
// index's cost, not a model's). Sized for 2 cores by default.
//
//	go run ./bench/index -docs 100000
package main

import (
	"context"
	"flag"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"time"

	"github.com/lethe-research/lethe/llm"
	"github.com/lethe-research/lethe/llm/llmtest"
	"github.com/lethe-research/lethe/research"
)

func main() {
	docs := flag.Int("docs", 100000, "documents")
	queries := flag.Int("queries", 300, "queries timed")
	cores := flag.Int("cores", 2, "GOMAXPROCS and extraction workers")
	dir := flag.String("dir", "", "work directory (default: a temporary one, removed)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the build to this file")
	flag.Parse()
	runtime.GOMAXPROCS(*cores)
	if *cpuprofile != "" {
		stop, err := startProfile(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "index:", err)
			os.Exit(1)
		}
		defer stop()
	}
	if err := run(*docs, *queries, *cores, *dir); err != nil {
		fmt.Fprintln(os.Stderr, "index:", err)
		os.Exit(1)
	}
}

// startProfile writes a CPU profile until the returned stop is called.
func startProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

func run(nDocs, nQueries, cores int, dir string) error {
	if dir == "" {
		d, err := os.MkdirTemp("", "lethe-index-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	root, idx := filepath.Join(dir, "corpus"), filepath.Join(dir, "index")
	gen := newGenerator(1)
	start := time.Now()
	chars, err := gen.write(root, nDocs)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "generated %d documents (%d MB of text) in %s\n", nDocs, chars>>20, time.Since(start).Round(time.Second))

	ctx := context.Background()
	cfg := research.CorpusConfig{Root: root, IndexDir: idx, Workers: cores}
	c, err := research.NewCorpus(cfg)
	if err != nil {
		return err
	}
	start = time.Now()
	st, err := c.Refresh(ctx)
	if err != nil {
		return err
	}
	build := time.Since(start)
	c.Close()
	size, err := du(idx)
	if err != nil {
		return err
	}
	// A restart: reopen and check (no file changed).
	start = time.Now()
	emb := embedder{}
	cfg.Embedder, cfg.EmbedModel = emb, "llmtest"
	c, err = research.NewCorpus(cfg)
	if err != nil {
		return err
	}
	defer c.Close()
	st2, err := c.Refresh(ctx)
	if err != nil {
		return err
	}
	reopen := time.Since(start)
	qs := gen.queries(nQueries)
	bm, err := timeQueries(qs, func(q string) error { _, err := c.BM25Passages(q, 5); return err })
	if err != nil {
		return err
	}
	cold, err := timeQueries(qs, func(q string) error { _, _, err := c.SearchPassages(ctx, q, 5); return err })
	if err != nil {
		return err
	}
	warm, err := timeQueries(qs, func(q string) error { _, _, err := c.SearchPassages(ctx, q, 5); return err })
	if err != nil {
		return err
	}
	fmt.Printf("| documents | passages | text | build | index on disk | reopen (restart) | re-extracted on reopen |\n|---|---|---|---|---|---|---|\n")
	fmt.Printf("| %d | %d | %d MB | %s | %d MB | %s | %d |\n\n", st.Docs, st.Passages, chars>>20, build.Round(time.Second), size>>20, reopen.Round(time.Millisecond), st2.Extracted)
	fmt.Printf("| query (top 5, %d queries, %d cores) | median | p99 |\n|---|---|---|\n", len(qs), cores)
	for _, r := range []struct {
		name string
		d    []time.Duration
	}{{"BM25 passages", bm}, {"hybrid, cold (embeds 40 candidates)", cold}, {"hybrid, cached vectors", warm}} {
		fmt.Printf("| %s | %s | %s |\n", r.name, pctl(r.d, 50), pctl(r.d, 99))
	}
	return nil
}

// embedder is the deterministic test embedding (no model server): the
// rerank's cost without a model's.
type embedder struct{}

func (embedder) Embed(_ context.Context, _ llm.EmbedKind, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = llmtest.Embedding(t, 384)
	}
	return out, nil
}

func timeQueries(qs []string, f func(string) error) ([]time.Duration, error) {
	out := make([]time.Duration, 0, len(qs))
	for _, q := range qs {
		s := time.Now()
		if err := f(q); err != nil {
			return nil, err
		}
		out = append(out, time.Since(s))
	}
	return out, nil
}

func pctl(d []time.Duration, p int) string {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := min(len(s)-1, (len(s)*p)/100)
	return s[i].Round(10 * time.Microsecond).String()
}

func du(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err == nil {
			n += fi.Size()
		}
		return err
	})
	return n, err
}

// generator writes documents over a Zipf-distributed vocabulary of
// pronounceable made-up words (s = 1.07, the exponent of English word
// frequencies).
type generator struct {
	r     *rand.Rand
	vocab []string
	zipf  *rand.Zipf
}

func newGenerator(seed uint64) *generator {
	r := rand.New(rand.NewPCG(seed, seed+1))
	g := &generator{r: r}
	seen := map[string]bool{}
	syl := []string{"ka", "lo", "mi", "ne", "ru", "ta", "shi", "ven", "dor", "pal", "qui", "zen", "bra", "fel", "gor", "hin", "jo", "ul", "ex", "im"}
	for len(g.vocab) < 50000 {
		var b strings.Builder
		for n := 1 + r.IntN(4); n > 0; n-- {
			b.WriteString(syl[r.IntN(len(syl))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			g.vocab = append(g.vocab, w)
		}
	}
	g.zipf = rand.NewZipf(r, 1.07, 1, uint64(len(g.vocab)-1))
	return g
}

func (g *generator) word() string { return g.vocab[g.zipf.Uint64()] }

func (g *generator) sentence() string {
	n := 8 + g.r.IntN(14)
	w := make([]string, n)
	for i := range w {
		w[i] = g.word()
	}
	return strings.ToUpper(w[0][:1]) + strings.Join(w, " ")[1:] + "."
}

// write writes n documents of 2–5 paragraphs of 3–6 sentences (about 2,000
// characters, 1–3 passages each) in 100 directories; it returns the
// characters written.
func (g *generator) write(root string, n int) (int, error) {
	total := 0
	for i := 0; i < n; i++ {
		var b strings.Builder
		fmt.Fprintf(&b, "# %s %s %s\n\n", g.word(), g.word(), g.word())
		for p := 2 + g.r.IntN(4); p > 0; p-- {
			for s := 3 + g.r.IntN(4); s > 0; s-- {
				b.WriteString(g.sentence())
				b.WriteByte(' ')
			}
			b.WriteString("\n\n")
		}
		d := filepath.Join(root, fmt.Sprintf("d%02d", i%100))
		if i < 100 {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return 0, err
			}
		}
		if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("doc%06d.md", i)), []byte(b.String()), 0o644); err != nil {
			return 0, err
		}
		total += b.Len()
	}
	return total, nil
}

// queries are 2–5 words drawn from ranks 50–20,000: past the stop-word-like
// head, where real queries live.
func (g *generator) queries(n int) []string {
	out := make([]string, n)
	for i := range out {
		w := make([]string, 2+g.r.IntN(4))
		for j := range w {
			w[j] = g.vocab[50+g.r.IntN(20000)]
		}
		out[i] = strings.Join(w, " ")
	}
	return out
}
