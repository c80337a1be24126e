package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/lethe-research/lethe/llm"
	"github.com/lethe-research/lethe/llm/llmtest"
)

// shuffler is an embeddings server that encodes each input's text in its
// vector (component 0 = len(text), component 1 = 1) and returns the data
// entries in reverse order with their correct indexes.
type shuffler struct {
	mu       sync.Mutex
	batches  [][]string
	bodies   []map[string]any
	shuffled bool // some answer was not in input order
}

func (s *shuffler) start(t *testing.T) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		_ = json.NewDecoder(r.Body).Decode(&req)
		var in []string
		for _, x := range req["input"].([]any) {
			in = append(in, x.(string))
		}
		s.mu.Lock()
		s.batches = append(s.batches, in)
		s.bodies = append(s.bodies, req)
		perm := make([]int, len(in)) // reversed: a shuffle that always moves
		for i := range perm {
			perm[i] = len(in) - 1 - i
		}
		for pos, idx := range perm {
			s.shuffled = s.shuffled || pos != idx
		}
		s.mu.Unlock()
		data := make([]map[string]any, len(in))
		for pos, idx := range perm {
			data[pos] = map[string]any{"index": idx, "embedding": []float64{float64(len(in[idx])), 1, 0}}
		}
		json.NewEncoder(w).Encode(map[string]any{"data": data})
	}))
	t.Cleanup(ts.Close)
	return ts
}

func TestEmbedBatchingOrderPrefixes(t *testing.T) {
	var sh shuffler
	ts := sh.start(t)
	c := llm.NewEmbedClient(llm.EmbedConfig{BaseURL: ts.URL, Model: "e5", BatchSize: 2, QueryPrefix: "q: ", DocPrefix: "passage: "}, nil)
	texts := []string{"a", "bb", "ccc", "dddd", "eeeee"}
	vecs, err := c.Embed(context.Background(), Document, texts)
	if err != nil {
		t.Fatal(err)
	}
	if !sh.shuffled {
		t.Fatal("the server never shuffled; the order check proves nothing")
	}
	if len(sh.batches) != 3 || len(sh.batches[0]) != 2 || len(sh.batches[2]) != 1 {
		t.Fatalf("batches %v, want 3 of sizes 2,2,1", sh.batches)
	}
	for i, v := range vecs {
		// component 0 ∝ len("passage: "+text), component 1 ∝ 1: their ratio
		// identifies the text, so the order is checked.
		want := float64(len("passage: ") + len(texts[i]))
		if got := float64(v[0]) / float64(v[1]); math.Abs(got-want) > 1e-4 {
			t.Errorf("vector %d encodes length %v, want %v (order lost)", i, got, want)
		}
		if n := norm(v); math.Abs(n-1) > 1e-6 {
			t.Errorf("vector %d norm %v", i, n)
		}
	}
	for _, b := range sh.batches {
		for _, in := range b {
			if !strings.HasPrefix(in, "passage: ") {
				t.Errorf("document input %q lacks the document prefix", in)
			}
		}
	}
	if sh.bodies[0]["model"] != "e5" {
		t.Errorf("model %v", sh.bodies[0]["model"])
	}
	if _, ok := sh.bodies[0]["dimensions"]; ok {
		t.Errorf("dimensions sent with Dimensions 0")
	}

	n := len(sh.batches)
	if _, err := c.Embed(context.Background(), Query, []string{"x", "y", "z"}); err != nil {
		t.Fatal(err)
	}
	for _, b := range sh.batches[n:] {
		for _, in := range b {
			if !strings.HasPrefix(in, "q: ") || strings.Contains(in, "passage: ") {
				t.Errorf("query batch %v mixes prefixes", b)
			}
		}
	}
	if v, err := c.Embed(context.Background(), Query, nil); v != nil || err != nil || len(sh.batches) != n+2 {
		t.Errorf("empty input: %v %v, %d requests", v, err, len(sh.batches)-n)
	}
	if _, err := c.Embed(context.Background(), llm.EmbedKind(7), texts); !errors.Is(err, llm.ErrInvalidRequest) {
		t.Errorf("bad kind: %v", err)
	}
}

// Short aliases keep the table readable.
const (
	Query    = llm.Query
	Document = llm.Document
)

func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

func embedServer(t *testing.T, body string) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, body)
	}))
	t.Cleanup(ts.Close)
	return ts
}

func TestEmbedBadAnswers(t *testing.T) {
	cases := map[string]string{
		"count":        `{"data":[{"index":0,"embedding":[1,0]}]}`,
		"dims differ":  `{"data":[{"index":0,"embedding":[1,0]},{"index":1,"embedding":[1,0,0]}]}`,
		"dup index":    `{"data":[{"index":0,"embedding":[1,0]},{"index":0,"embedding":[0,1]}]}`,
		"index range":  `{"data":[{"index":0,"embedding":[1,0]},{"index":2,"embedding":[0,1]}]}`,
		"zero vector":  `{"data":[{"index":0,"embedding":[0,0]},{"index":1,"embedding":[0,1]}]}`,
		"empty vector": `{"data":[{"index":0,"embedding":[]},{"index":1,"embedding":[0,1]}]}`,
		"not json":     `<html>`,
	}
	for name, body := range cases {
		ts := embedServer(t, body)
		_, err := llm.NewEmbedClient(llm.EmbedConfig{BaseURL: ts.URL}, nil).Embed(context.Background(), Document, []string{"a", "b"})
		if !errors.Is(err, llm.ErrBadResponse) || llm.IsRetryable(err) || !strings.Contains(err.Error(), ts.URL) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// Without index fields the order of the answer is used.
	ts := embedServer(t, `{"data":[{"embedding":[3,4]},{"embedding":[0,2]}]}`)
	v, err := llm.NewEmbedClient(llm.EmbedConfig{BaseURL: ts.URL}, nil).Embed(context.Background(), Document, []string{"a", "b"})
	if err != nil || math.Abs(float64(v[0][0])-0.6) > 1e-6 || v[1][1] != 1 {
		t.Errorf("no index: %v %v", v, err)
	}
	// Dimensions across batches must agree.
	var calls int
	var mu sync.Mutex
	ts2 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		if n == 1 {
			fmt.Fprint(w, `{"data":[{"index":0,"embedding":[1,0]}]}`)
		} else {
			fmt.Fprint(w, `{"data":[{"index":0,"embedding":[1,0,0]}]}`)
		}
	}))
	defer ts2.Close()
	_, err = llm.NewEmbedClient(llm.EmbedConfig{BaseURL: ts2.URL, BatchSize: 1}, nil).Embed(context.Background(), Document, []string{"a", "b"})
	if !errors.Is(err, llm.ErrBadResponse) {
		t.Errorf("dims across batches: %v", err)
	}
	// HTTP errors carry the status.
	ts3 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "overloaded", 503) }))
	defer ts3.Close()
	_, err = llm.NewEmbedClient(llm.EmbedConfig{BaseURL: ts3.URL}, nil).Embed(context.Background(), Query, []string{"a"})
	var he *llm.HTTPError
	if !errors.As(err, &he) || he.Status != 503 || !llm.IsRetryable(err) {
		t.Errorf("503: %v", err)
	}
}

func TestEmbedAgainstScriptedServer(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Script{EmbeddingDim: 64})
	defer srv.Close()
	c := llm.NewEmbedClient(llm.EmbedConfig{BaseURL: srv.URL(), BatchSize: 2, QueryPrefix: "query: ", DocPrefix: "passage: "}, nil)
	dim, err := c.Probe(context.Background())
	if err != nil || dim != 64 {
		t.Fatalf("Probe = %d, %v; want 64", dim, err)
	}
	texts := []string{"solid state battery dendrites", "lithium dendrite growth in solid electrolytes", "medieval poetry", "battery dendrites solid state"}
	vecs, err := c.Embed(context.Background(), Document, texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range texts {
		if want := llmtest.Embedding("passage: "+text, 64); llmtest.Cosine(vecs[i], want) < 0.999999 {
			t.Errorf("vector %d is not the embedding of its prefixed text", i)
		}
	}
	if a, b := llmtest.Cosine(vecs[0], vecs[3]), llmtest.Cosine(vecs[0], vecs[2]); a <= b {
		t.Errorf("cos(shared words) %v <= cos(unrelated) %v", a, b)
	}
	if srv.EmbedCount() != 1+2 {
		t.Errorf("EmbedCount %d, want 3 (probe + 2 batches)", srv.EmbedCount())
	}
	for _, r := range srv.Requests() {
		if len(r.Inputs) > 2 {
			t.Errorf("batch of %d", len(r.Inputs))
		}
	}

	// Dimensions honoured by the server.
	c32 := llm.NewEmbedClient(llm.EmbedConfig{BaseURL: srv.URL(), Dimensions: 32}, nil)
	if dim, err := c32.Probe(context.Background()); err != nil || dim != 32 {
		t.Errorf("Probe with Dimensions 32 = %d, %v", dim, err)
	}
}

func TestEmbedDimensionsIgnoredByServer(t *testing.T) {
	var sh shuffler
	ts := sh.start(t) // always 3 dimensions
	_, err := llm.NewEmbedClient(llm.EmbedConfig{BaseURL: ts.URL, Dimensions: 8}, nil).Probe(context.Background())
	if !errors.Is(err, llm.ErrBadResponse) || !strings.Contains(err.Error(), "8 were requested") {
		t.Errorf("err %v", err)
	}
	if sh.bodies[0]["dimensions"] != 8.0 {
		t.Errorf("dimensions not sent: %v", sh.bodies[0])
	}
}
