package research

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lethe-research/lethe/llm"
	"github.com/lethe-research/lethe/llm/llmtest"
)

// conceptEmbedder embeds by meaning the way a real model does where words
// differ: a text holding any word of a concept gets that concept's axis,
// on top of the lexical test embedding. "typeface" and "font" are one
// concept, so a question about typefaces is near a passage about fonts
// that shares no word with it. Document calls can be failed (an outage)
// or held until their context ends (a slow server).
type conceptEmbedder struct {
	mu       sync.Mutex
	docCalls int
	failDocs int  // the next failDocs document calls fail
	hold     bool // document calls wait for their context
}

var concepts = [][]string{{"typeface", "typefaces", "font", "fonts", "glyph"}, {"boot", "startup", "starts"}}

func (e *conceptEmbedder) Embed(ctx context.Context, kind llm.EmbedKind, texts []string) ([][]float32, error) {
	e.mu.Lock()
	hold := e.hold && kind == llm.Document
	fail := kind == llm.Document && e.failDocs > 0
	if kind == llm.Document {
		e.docCalls++
		if fail {
			e.failDocs--
		}
	}
	e.mu.Unlock()
	if hold {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if fail {
		return nil, errors.New("embedding server unavailable")
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := llmtest.Embedding(t, 64)
		for j := range v {
			v[j] *= 0.2
		}
		words := strings.Fields(strings.ToLower(t))
		for c, ws := range concepts {
			for _, w := range words {
				if slices.Contains(ws, strings.Trim(w, ".,?()")) {
					v[60+c] += 1
					break
				}
			}
		}
		out[i] = v
	}
	return out, nil
}

func (e *conceptEmbedder) documentCalls() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.docCalls
}

// fontCorpus is smallCorpus with a page on fonts that shares no word with
// the question denseQuestion.
func fontCorpus(t *testing.T) string {
	root := smallCorpus(t)
	writeFile(t, root, "desktop/fonts.txt", "Font configuration\n\nfc-match(1) shows the fontconfig font default; fc-list(1) lists the available fonts.")
	return root
}

const denseQuestion = "Which typeface would be picked?"

func denseCorpus(t *testing.T, root, dir string, emb Embedder, dense, max int) *Corpus {
	t.Helper()
	return refreshedCorpus(t, CorpusConfig{Root: root, IndexDir: dir, Embedder: emb, EmbedModel: "test", Dense: dense, DenseMax: max})
}

func awaitDense(t *testing.T, c *Corpus) DenseStatus {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if err := c.AwaitDense(ctx); err != nil {
		t.Fatal(err)
	}
	return c.DenseStatus()
}

// TestDenseStageFindsParaphrase: the question shares no word with the
// fonts page, so BM25 never makes it a candidate and the rerank cannot
// reach it; the dense stage, once built over every passage, ranks it first.
func TestDenseStageFindsParaphrase(t *testing.T) {
	root := fontCorpus(t)
	off := denseCorpus(t, root, "", &conceptEmbedder{}, 0, 0)
	hits, err := off.Search(t.Context(), denseQuestion, 3)
	if err != nil {
		t.Fatal(err)
	}
	if u := hitURLs(hits); slices.Contains(u, "corpus:///desktop/fonts.txt") {
		t.Fatalf("without the dense stage BM25 found the fonts page: %v", u)
	}
	if st := off.DenseStatus(); st.Off == "" {
		t.Fatalf("dense 0: status %+v, want off", st)
	}
	c := denseCorpus(t, root, "", &conceptEmbedder{}, 5, 0)
	st := awaitDense(t, c)
	if !st.Ready || st.Passages != c.Stats().Passages || st.Passages == 0 {
		t.Fatalf("status %+v, want ready over the index's %d passages", st, c.Stats().Passages)
	}
	hits, err = c.Search(t.Context(), denseQuestion, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) == 0 || docURL(hits[0].URL) != "corpus:///desktop/fonts.txt" {
		t.Fatalf("hits %v, want the fonts page first", hitURLs(hits))
	}
	// A question BM25 answers keeps its answer first.
	hits, err = c.Search(t.Context(), "sourdough starter yeast", 3)
	if err != nil || len(hits) == 0 || docURL(hits[0].URL) != "corpus:///cooking/bread.txt" {
		t.Fatalf("lexical question: %v %v", hitURLs(hits), err)
	}
}

// TestDenseStageOutage: the embedding server is down when the build
// starts; searches go on (BM25 reranked) and the build completes when the
// server answers again.
func TestDenseStageOutage(t *testing.T) {
	emb := &conceptEmbedder{failDocs: 1}
	c := denseCorpus(t, fontCorpus(t), "", emb, 5, 0)
	for deadline := time.Now().Add(10 * time.Second); c.DenseStatus().LastErr == ""; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("status %+v: the build never met the outage", c.DenseStatus())
		}
	}
	if st := c.DenseStatus(); st.Ready {
		t.Fatalf("status %+v: ready through an outage", st)
	}
	if _, err := c.Search(t.Context(), "tomato sauce", 3); err != nil {
		t.Fatalf("search during the build: %v", err)
	}
	st := awaitDense(t, c)
	if !st.Ready {
		t.Fatalf("status %+v, want ready after the outage", st)
	}
	if emb.documentCalls() < 2 {
		t.Fatalf("%d document calls, want the failed one retried", emb.documentCalls())
	}
}

// TestDenseStageFollowsChanges: a file added after the build is found by
// meaning once the stage is rebuilt for the new index; vectors already
// cached on disk are not embedded again, by this or another process.
func TestDenseStageFollowsChanges(t *testing.T) {
	root, dir := smallCorpus(t), t.TempDir()
	emb := &conceptEmbedder{}
	c := denseCorpus(t, root, dir, emb, 5, 0)
	before := awaitDense(t, c).Passages
	writeFile(t, root, "desktop/fonts.txt", "Font configuration\n\nfc-match(1) shows the fontconfig font default.")
	if _, err := c.Search(t.Context(), "tomato", 1); err != nil { // notices the change
		t.Fatal(err)
	}
	st := awaitDense(t, c)
	if !st.Ready || st.Passages != before+1 {
		t.Fatalf("status %+v, want ready with %d passages", st, before+1)
	}
	hits, err := c.Search(t.Context(), denseQuestion, 3)
	if err != nil || len(hits) == 0 || docURL(hits[0].URL) != "corpus:///desktop/fonts.txt" {
		t.Fatalf("after the change: %v %v", hitURLs(hits), err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	calls := emb.documentCalls()
	again := denseCorpus(t, root, dir, emb, 5, 0)
	if st := awaitDense(t, again); !st.Ready || emb.documentCalls() != calls {
		t.Fatalf("reopened: status %+v, %d document calls after %d: want every vector from the cache", st, emb.documentCalls(), calls)
	}
}

// TestDenseStageBounds: a corpus over DenseMax passages has no dense stage
// and is searched as before; Close does not wait for a build held by a
// slow server.
func TestDenseStageBounds(t *testing.T) {
	root := fontCorpus(t)
	c := denseCorpus(t, root, "", &conceptEmbedder{}, 5, 2)
	if st := c.DenseStatus(); !strings.Contains(st.Off, "corpus_dense_max") {
		t.Fatalf("status %+v, want off over the bound", st)
	}
	if hits, err := c.Search(t.Context(), "tomato sauce", 3); err != nil || len(hits) == 0 {
		t.Fatalf("search without the stage: %v %v", hits, err)
	}
	held := denseCorpus(t, root, "", &conceptEmbedder{hold: true}, 5, 0)
	done := make(chan error, 1)
	go func() { done <- held.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close waits for a held build")
	}
}

// TestNearest: by cosine, best first, ties in index order, n bounded.
func TestNearest(t *testing.T) {
	vecs := [][]float32{{0, 1}, {1, 0}, {2, 0}, {1, 1}, {-1, 0}}
	cases := []struct {
		q    []float32
		n    int
		want []int
	}{
		{[]float32{1, 0}, 3, []int{1, 2, 3}}, // 1 and 2 tie at cosine 1
		{[]float32{0, 1}, 2, []int{0, 3}},
		{[]float32{1, 0}, 9, []int{1, 2, 3, 0, 4}},
		{[]float32{1, 0}, 0, []int{}},
	}
	for _, c := range cases {
		if got := Nearest(c.q, vecs, c.n); !slices.Equal(got, c.want) {
			t.Errorf("Nearest(%v, %d) = %v, want %v", c.q, c.n, got, c.want)
		}
	}
}
