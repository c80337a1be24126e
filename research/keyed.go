package research

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// errNoKey: a keyed provider was configured without its key.
var errNoKey = errors.New("no API key configured")

// Tavily is the Tavily search API (POST /search, Bearer key): web results
// with a relevance score and an extracted content snippet. It is safe for
// concurrent use.
type Tavily struct{ api *webAPI }

// NewTavily returns the provider; cfg.APIKey is required and an empty
// BaseURL means https://api.tavily.com.
func NewTavily(cfg WebSearchConfig) (*Tavily, error) {
	if strings.TrimSpace(cfg.APIKey) == "" {
		return nil, &SearchError{Provider: TavilyProviderName, Msg: errNoKey.Error() + " (research.tavily_api_key)"}
	}
	api, err := newWebAPI(TavilyProviderName, "https://api.tavily.com", cfg)
	if err != nil {
		return nil, err
	}
	return &Tavily{api: api}, nil
}

// Name implements Provider.
func (t *Tavily) Name() string { return TavilyProviderName }

type tavilyRequest struct {
	Query             string `json:"query"`
	MaxResults        int    `json:"max_results"`
	SearchDepth       string `json:"search_depth"`
	Topic             string `json:"topic"`
	IncludeAnswer     bool   `json:"include_answer"`
	IncludeRawContent bool   `json:"include_raw_content"`
	IncludeImages     bool   `json:"include_images"`
}

type tavilyResponse struct {
	Query   string `json:"query"`
	Results []struct {
		Title   string  `json:"title"`
		URL     string  `json:"url"`
		Content string  `json:"content"`
		Score   float64 `json:"score"`
	} `json:"results"`
}

// Search implements Provider: at most limit results (20, the API's cap)
// of a basic-depth general search, in Tavily's order.
func (t *Tavily) Search(ctx context.Context, query string, limit int) ([]Hit, error) {
	if strings.TrimSpace(query) == "" {
		return nil, nil
	}
	limit = limitOr(limit, 20)
	b, err := json.Marshal(tavilyRequest{Query: query, MaxResults: limit, SearchDepth: "basic", Topic: "general"})
	if err != nil {
		return nil, &SearchError{Provider: t.Name(), Msg: err.Error()}
	}
	req, err := http.NewRequest(http.MethodPost, t.api.endpoint("/search", nil), bytes.NewReader(b))
	if err != nil {
		return nil, &SearchError{Provider: t.Name(), Msg: err.Error()}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", "Bearer "+t.api.cfg.APIKey)
	body, err := t.api.do(ctx, req, tavilyErrMsg, "")
	if err != nil {
		return nil, err
	}
	var res tavilyResponse
	if err := json.Unmarshal(body, &res); err != nil {
		return nil, t.api.malformed("Tavily JSON", err)
	}
	if res.Results == nil && res.Query == "" {
		return nil, t.api.malformed("a Tavily search answer", errMissing("results"))
	}
	raw := make([]Hit, 0, len(res.Results))
	for _, r := range res.Results {
		raw = append(raw, Hit{URL: r.URL, Title: r.Title, Snippet: r.Content, Score: r.Score})
	}
	return t.api.hits(raw, limit), nil
}

// tavilyErrMsg reads Tavily's error body {"detail": {"error": "..."}}
// (some answers carry detail as a plain string).
func tavilyErrMsg(body []byte) string {
	var e struct {
		Detail json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &e) != nil || len(e.Detail) == 0 {
		return ""
	}
	var inner struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(e.Detail, &inner) == nil && inner.Error != "" {
		return inner.Error
	}
	var s string
	if json.Unmarshal(e.Detail, &s) == nil {
		return s
	}
	return ""
}

// Brave is the Brave Search web API (GET /res/v1/web/search with the
// X-Subscription-Token header). It is safe for concurrent use.
type Brave struct{ api *webAPI }

// NewBrave returns the provider; cfg.APIKey is required and an empty
// BaseURL means https://api.search.brave.com.
func NewBrave(cfg WebSearchConfig) (*Brave, error) {
	if strings.TrimSpace(cfg.APIKey) == "" {
		return nil, &SearchError{Provider: BraveProviderName, Msg: errNoKey.Error() + " (research.brave_api_key)"}
	}
	api, err := newWebAPI(BraveProviderName, "https://api.search.brave.com", cfg)
	if err != nil {
		return nil, err
	}
	return &Brave{api: api}, nil
}

// Name implements Provider.
func (b *Brave) Name() string { return BraveProviderName }

type braveResponse struct {
	Type string `json:"type"`
	Web  *struct {
		Results []struct {
			Title       string `json:"title"`
			URL         string `json:"url"`
			Description string `json:"description"`
		} `json:"results"`
	} `json:"web"`
	Error *braveError `json:"error"`
}

type braveError struct {
	Status int    `json:"status"`
	Code   string `json:"code"`
	Detail string `json:"detail"`
}

// Search implements Provider: at most limit web results (20, the API's
// cap per request), in Brave's order. An answer without a web section
// (Brave found nothing) is an empty result.
func (b *Brave) Search(ctx context.Context, query string, limit int) ([]Hit, error) {
	if strings.TrimSpace(query) == "" {
		return nil, nil
	}
	limit = limitOr(limit, 20)
	q := url.Values{"q": {query}, "count": {strconv.Itoa(limit)}, "search_lang": {b.api.cfg.Language}, "result_filter": {"web"}}
	req, err := http.NewRequest(http.MethodGet, b.api.endpoint("/res/v1/web/search", q), nil)
	if err != nil {
		return nil, &SearchError{Provider: b.Name(), Msg: err.Error()}
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("X-Subscription-Token", b.api.cfg.APIKey)
	body, err := b.api.do(ctx, req, braveErrMsg, "X-RateLimit-Reset")
	if err != nil {
		return nil, err
	}
	var res braveResponse
	if err := json.Unmarshal(body, &res); err != nil {
		return nil, b.api.malformed("Brave JSON", err)
	}
	if res.Error != nil {
		return nil, &SearchError{Provider: b.Name(), Status: res.Error.Status, Msg: res.Error.Code + ": " + res.Error.Detail}
	}
	if res.Type == "" {
		return nil, b.api.malformed("a Brave search answer", errMissing("type"))
	}
	if res.Web == nil {
		return nil, nil
	}
	raw := make([]Hit, 0, len(res.Web.Results))
	for _, r := range res.Web.Results {
		raw = append(raw, Hit{URL: r.URL, Title: r.Title, Snippet: r.Description})
	}
	return b.api.hits(raw, limit), nil
}

// braveErrMsg reads Brave's error body {"type": "ErrorResponse",
// "error": {"status", "code", "detail"}}.
func braveErrMsg(body []byte) string {
	var res braveResponse
	if json.Unmarshal(body, &res) == nil && res.Error != nil {
		return res.Error.Code + ": " + res.Error.Detail
	}
	return ""
}
