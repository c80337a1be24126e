package llm

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"time"
)

// DefaultBatchSize is the number of texts per /v1/embeddings request when
// EmbedConfig.BatchSize is 0.
const DefaultBatchSize = 32

// EmbedConfig configures an EmbedClient.
type EmbedConfig struct {
	// BaseURL of the server, without "/v1" (tolerated).
	BaseURL string
	// Model sent as "model"; omitted when empty.
	Model string
	// APIKey sent as a bearer token on every request, the health probe's
	// included, when non-empty.
	APIKey string
	// KeySetting names where APIKey is configured, for the error of a
	// refused key (see ChatConfig.KeySetting).
	KeySetting string
	// Timeout bounds each batch request; 0 = only ctx.
	Timeout time.Duration
	// BatchSize is the maximum number of texts per request (DefaultBatchSize
	// when 0).
	BatchSize int
	// QueryPrefix and DocPrefix are prepended to query and document texts
	// ("query: ", "passage: ", "search_query: ", ...). Empty = none.
	QueryPrefix, DocPrefix string
	// Dimensions: 0 = the model's native dimension; > 0 is sent as
	// "dimensions" (Matryoshka models, OpenAI text-embedding-3) and every
	// returned vector must have it.
	Dimensions int
}

// EmbedKind says which prefix texts get: queries and documents live in
// different halves of asymmetric embedding models and are never mixed in
// one request.
type EmbedKind int

const (
	// Query texts get EmbedConfig.QueryPrefix.
	Query EmbedKind = iota
	// Document texts get EmbedConfig.DocPrefix.
	Document
)

func (k EmbedKind) String() string {
	switch k {
	case Query:
		return "query"
	case Document:
		return "document"
	}
	return fmt.Sprintf("EmbedKind(%d)", int(k))
}

// EmbedClient calls /v1/embeddings. It is stateless and safe for concurrent
// use.
type EmbedClient struct {
	cfg EmbedConfig
	hc  *http.Client
}

// NewEmbedClient returns a client for cfg over hc (a fresh http.Client when
// nil).
func NewEmbedClient(cfg EmbedConfig, hc *http.Client) *EmbedClient {
	return &EmbedClient{cfg: cfg, hc: httpClient(hc)}
}

// Config returns the client's configuration.
func (c *EmbedClient) Config() EmbedConfig { return c.cfg }

// Health probes the client's server as ChatClient.Health does.
func (c *EmbedClient) Health(ctx context.Context) error {
	return keyHint(health(ctx, c.hc, c.cfg.BaseURL, c.cfg.APIKey), c.cfg.KeySetting, c.cfg.APIKey)
}

// Prefix returns the prefix texts of kind k get.
func (c *EmbedClient) Prefix(k EmbedKind) string {
	if k == Query {
		return c.cfg.QueryPrefix
	}
	return c.cfg.DocPrefix
}

type embedAnswer struct {
	Data []struct {
		Index     *int      `json:"index"`
		Embedding []float64 `json:"embedding"`
	} `json:"data"`
	Error *apiError `json:"error"`
}

// Embed returns one L2-normalised vector per text, in the order of texts.
// Every text gets the prefix of kind; texts are sent in batches of at most
// BatchSize, one batch after the other; each answer is ordered by its
// "index" fields. It fails when the server returns the wrong number of
// vectors, duplicate or out-of-range indexes, vectors of unequal dimension
// (also across batches), a dimension other than Dimensions when that is set,
// or a zero / non-finite vector. No texts → nil, no request.
func (c *EmbedClient) Embed(ctx context.Context, kind EmbedKind, texts []string) ([][]float32, error) {
	vecs, err := c.embed(ctx, kind, texts)
	return vecs, serviceError(ServiceEmbed, c.cfg.BaseURL, keyHint(err, c.cfg.KeySetting, c.cfg.APIKey))
}

func (c *EmbedClient) embed(ctx context.Context, kind EmbedKind, texts []string) ([][]float32, error) {
	if kind != Query && kind != Document {
		return nil, fmt.Errorf("llm embed: %w: unknown kind %d", ErrInvalidRequest, int(kind))
	}
	if len(texts) == 0 {
		return nil, nil
	}
	base, err := normalizeBaseURL(c.cfg.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("llm embed: %w", err)
	}
	u := base + "/v1/embeddings"
	if c.cfg.Dimensions < 0 {
		return nil, fmt.Errorf("llm embed %s: %w: negative dimensions %d", u, ErrInvalidRequest, c.cfg.Dimensions)
	}
	size := c.cfg.BatchSize
	if size <= 0 {
		size = DefaultBatchSize
	}
	prefix := c.Prefix(kind)
	out := make([][]float32, 0, len(texts))
	dim := c.cfg.Dimensions
	for lo := 0; lo < len(texts); lo += size {
		hi := min(lo+size, len(texts))
		input := make([]string, hi-lo)
		for i, t := range texts[lo:hi] {
			input[i] = prefix + t
		}
		vecs, err := c.batch(ctx, u, input)
		if err != nil {
			return nil, fmt.Errorf("llm embed %s (%s texts %d-%d of %d): %w", u, kind, lo, hi-1, len(texts), err)
		}
		for i, v := range vecs {
			if dim == 0 {
				dim = len(v)
			}
			if c.cfg.Dimensions > 0 && len(v) != c.cfg.Dimensions {
				return nil, fmt.Errorf("llm embed %s: %w: server returned %d dimensions, %d were requested (does model %q honour \"dimensions\"?)", u, ErrBadResponse, len(v), c.cfg.Dimensions, c.cfg.Model)
			}
			if len(v) != dim {
				return nil, fmt.Errorf("llm embed %s: %w: text %d has dimension %d, want %d", u, ErrBadResponse, lo+i, len(v), dim)
			}
			out = append(out, v)
		}
	}
	return out, nil
}

// batch embeds one batch and returns its vectors in input order, normalised.
func (c *EmbedClient) batch(ctx context.Context, u string, input []string) ([][]float32, error) {
	if c.cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.cfg.Timeout)
		defer cancel()
	}
	body := map[string]any{"input": input}
	if c.cfg.Model != "" {
		body["model"] = c.cfg.Model
	}
	if c.cfg.Dimensions > 0 {
		body["dimensions"] = c.cfg.Dimensions
	}
	resp, err := postJSON(ctx, c.hc, u, c.cfg.APIKey, body, "application/json")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var a embedAnswer
	if err := decodeBody(resp.Body, &a); err != nil {
		return nil, err
	}
	if a.Error != nil {
		return nil, fmt.Errorf("%w: server error: %s", ErrBadResponse, a.Error)
	}
	if len(a.Data) != len(input) {
		return nil, fmt.Errorf("%w: %d embeddings for %d inputs", ErrBadResponse, len(a.Data), len(input))
	}
	vecs := make([][]float32, len(input))
	for pos, d := range a.Data {
		idx := pos
		if d.Index != nil {
			idx = *d.Index
		}
		if idx < 0 || idx >= len(input) || vecs[idx] != nil {
			return nil, fmt.Errorf("%w: embedding index %d out of range or duplicated (batch of %d)", ErrBadResponse, idx, len(input))
		}
		v, err := normalize(d.Embedding)
		if err != nil {
			return nil, fmt.Errorf("%w: embedding %d: %v", ErrBadResponse, idx, err)
		}
		vecs[idx] = v
	}
	return vecs, nil
}

// normalize returns v / ‖v‖ as float32, computed in float64.
func normalize(v []float64) ([]float32, error) {
	if len(v) == 0 {
		return nil, fmt.Errorf("empty vector")
	}
	var scale float64 // max |x|, so that squares cannot overflow
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("non-finite component")
		}
		scale = max(scale, math.Abs(x))
	}
	if scale == 0 {
		return nil, fmt.Errorf("zero vector")
	}
	var ss float64
	for _, x := range v {
		ss += (x / scale) * (x / scale)
	}
	n := math.Sqrt(ss)
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x / scale / n)
	}
	return out, nil
}

// Probe embeds a short query and returns the model's dimension (the
// configured Dimensions when set and honoured by the server).
func (c *EmbedClient) Probe(ctx context.Context) (int, error) {
	vecs, err := c.Embed(ctx, Query, []string{"dimension probe"})
	if err != nil {
		return 0, fmt.Errorf("llm embed probe: %w", err)
	}
	return len(vecs[0]), nil
}
