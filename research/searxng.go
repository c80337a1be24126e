package research

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/llm"
)

// SearXNGProviderName is the Provider name of the SearXNG client.
const SearXNGProviderName = "searxng"

// SearXNGConfig configures the SearXNG provider.
type SearXNGConfig struct {
	// BaseURL of the instance, e.g. http://127.0.0.1:8888 (the JSON API is
	// BaseURL/search?format=json; the instance must list json in
	// search.formats of its settings.yml).
	BaseURL string
	// Engines, Categories and Language are sent as SearXNG's engines,
	// categories and language parameters; empty leaves the instance's
	// defaults.
	Engines    []string
	Categories []string
	Language   string
	// Pages is how many result pages one Search may ask for until it has
	// limit hits. Default 1.
	Pages int
	// Timeout of one HTTP request. Default 20 s.
	Timeout time.Duration
	// Retries after a 429 or a 5xx answer or a transport error. Default 0;
	// negative means none.
	Retries int
	// Backoff before the first retry; it doubles per retry up to MaxBackoff.
	// A Retry-After header wins when it asks for longer (capped at
	// MaxBackoff too). Defaults 1 s and 30 s.
	Backoff    time.Duration
	MaxBackoff time.Duration
	// Client sends the requests; nil means a client with Timeout. SearXNG is
	// an operator-configured service (often on loopback), so this client is
	// not subject to the fetchers' URLPolicy.
	Client    *http.Client
	UserAgent string
	// MaxResponseBytes caps one JSON answer. Default 4 MiB.
	MaxResponseBytes int64
	// Limits: results whose URL is over MaxURLBytes are dropped, titles
	// cut to MaxTitleChars, snippets to SnippetChars.
	Limits Limits
}

// SearXNG is the web search Provider: the JSON API of a SearXNG instance.
// It is safe for concurrent use.
type SearXNG struct {
	cfg  SearXNGConfig
	base *url.URL
	hc   *http.Client
}

// NewSearXNG validates cfg and returns the provider.
func NewSearXNG(cfg SearXNGConfig) (*SearXNG, error) {
	u, err := url.Parse(strings.TrimSpace(cfg.BaseURL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("research: searxng URL %q is not an http(s) URL", config.RedactURL(cfg.BaseURL))
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawQuery, u.Fragment = "", ""
	if cfg.Pages <= 0 {
		cfg.Pages = 1
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 20 * time.Second
	}
	if cfg.Retries < 0 {
		cfg.Retries = 0
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = time.Second
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = 30 * time.Second
	}
	if cfg.MaxResponseBytes <= 0 {
		cfg.MaxResponseBytes = 4 << 20
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = "lethe-research/1"
	}
	cfg.Limits = cfg.Limits.withDefaults()
	hc := cfg.Client
	if hc == nil {
		hc = &http.Client{}
	}
	return &SearXNG{cfg: cfg, base: u, hc: hc}, nil
}

// Name implements Provider.
func (s *SearXNG) Name() string { return SearXNGProviderName }

// searxResponse is the part of SearXNG's JSON answer the provider reads
// (searx/webapp.py, format=json).
// (number_of_results, which older instances send, is gone upstream since
// May 2026 and never read.)
type searxResponse struct {
	Query       string        `json:"query"`
	Results     []searxResult `json:"results"`
	Suggestions []string      `json:"suggestions"`
	// Unresponsive engines are [name, reason] pairs.
	UnresponsiveEngines [][]string `json:"unresponsive_engines"`
}

// unanswered is the error of a first page with no results on which engines
// failed: the instance's engines, not the query, came up empty (a CAPTCHA,
// a suspension, a timeout, no network), and the worker log and the
// provider chain's fallback should say which. Not retryable: an engine
// suspended or asking for a CAPTCHA stays so for minutes to hours.
func (r *searxResponse) unanswered() error {
	if len(r.Results) > 0 || len(r.UnresponsiveEngines) == 0 {
		return nil
	}
	var failed []string
	for _, e := range r.UnresponsiveEngines {
		failed = append(failed, strings.Join(e, ": "))
	}
	return &SearchError{Provider: SearXNGProviderName, Status: http.StatusOK,
		Msg: "no results, and engines failed: " + strings.Join(failed, "; ")}
}

type searxResult struct {
	URL      string   `json:"url"`
	Title    string   `json:"title"`
	Content  string   `json:"content"`
	Engine   string   `json:"engine"`
	Engines  []string `json:"engines"`
	Score    float64  `json:"score"`
	Category string   `json:"category"`
}

// SearchError is a failed search request of any provider: the HTTP
// status (0 for a transport or decoding error), whether retrying later may
// help, and how long the provider asked us to wait (Retry-After) when it
// rate-limited us.
type SearchError struct {
	Provider   string // Provider.Name(); empty means searxng (the first provider)
	Status     int
	Retryable  bool
	RetryAfter time.Duration
	Msg        string
}

func (e *SearchError) Error() string {
	name := e.Provider
	if name == "" {
		name = SearXNGProviderName
	}
	// Msg may come from the provider's answer: bounded before it reaches
	// logs and the activity failure in history.
	msg := config.RedactText(e.Msg) // a transport error names the request URL
	if r := []rune(msg); len(r) > maxSearchErrorChars {
		msg = string(r[:maxSearchErrorChars]) + "…"
	}
	if e.Status != 0 {
		return fmt.Sprintf("research: %s: HTTP %d: %s", name, e.Status, msg)
	}
	return fmt.Sprintf("research: %s: %s", name, msg)
}

// maxSearchErrorChars bounds the provider-controlled part of an error.
const maxSearchErrorChars = 300

// RateLimited reports whether the provider refused the request for its
// rate limit (HTTP 429 or the provider's own rate-limit answer).
func (e *SearchError) RateLimited() bool { return e.Status == http.StatusTooManyRequests }

// Search implements Provider: it asks result pages 1, 2, … (at most
// Config.Pages) until it has limit hits, dropping non-http(s) URLs and
// duplicates (by NormalizeURL) and keeping SearXNG's order. limit <= 0
// means 10. A query without results is no error unless engines failed on
// it (unanswered). If a later page fails, the hits of the earlier pages
// are returned.
func (s *SearXNG) Search(ctx context.Context, query string, limit int) ([]Hit, error) {
	if strings.TrimSpace(query) == "" {
		return nil, nil
	}
	if limit <= 0 {
		limit = defaultSearchLimit
	}
	var hits []Hit
	seen := map[string]bool{}
	for page := 1; page <= s.cfg.Pages && len(hits) < limit; page++ {
		resp, err := s.page(ctx, query, page)
		if err == nil {
			err = resp.unanswered()
		}
		if err != nil {
			if len(hits) > 0 && ctx.Err() == nil {
				return hits, nil
			}
			return nil, err
		}
		added := 0
		for _, r := range resp.Results {
			if len(hits) >= limit {
				break
			}
			if !s.cfg.Limits.URLOK(r.URL) {
				continue
			}
			u := NormalizeURL(r.URL)
			if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") || seen[u] || !s.cfg.Limits.URLOK(u) {
				continue
			}
			seen[u] = true
			added++
			hits = append(hits, s.cfg.Limits.Hits([]Hit{{
				URL:      u,
				Title:    r.Title,
				Snippet:  r.Content,
				Score:    r.Score,
				Provider: SearXNGProviderName,
			}})...)
		}
		if added == 0 {
			break // an empty or all-duplicate page: later pages will not help
		}
	}
	return hits, nil
}

func (s *SearXNG) searchURL(query string, page int) string {
	q := url.Values{}
	q.Set("q", query)
	q.Set("format", "json")
	q.Set("pageno", strconv.Itoa(page))
	if len(s.cfg.Engines) > 0 {
		q.Set("engines", strings.Join(s.cfg.Engines, ","))
	}
	if len(s.cfg.Categories) > 0 {
		q.Set("categories", strings.Join(s.cfg.Categories, ","))
	}
	if s.cfg.Language != "" {
		q.Set("language", s.cfg.Language)
	}
	u := *s.base
	u.Path += "/search"
	u.RawQuery = q.Encode()
	return u.String()
}

// page fetches one result page, retrying 429, 5xx and transport errors
// with exponential backoff.
func (s *SearXNG) page(ctx context.Context, query string, page int) (*searxResponse, error) {
	delay := s.cfg.Backoff
	for attempt := 0; ; attempt++ {
		resp, retryAfter, err := s.once(ctx, query, page)
		if err == nil {
			return resp, nil
		}
		var se *SearchError
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if !errors.As(err, &se) || !se.Retryable || attempt >= s.cfg.Retries {
			if attempt > 0 {
				return nil, fmt.Errorf("%w (after %d attempts)", err, attempt+1)
			}
			return nil, err
		}
		wait := max(delay, retryAfter)
		wait = min(wait, s.cfg.MaxBackoff)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
		delay = min(2*delay, s.cfg.MaxBackoff)
	}
}

func (s *SearXNG) once(ctx context.Context, query string, page int) (*searxResponse, time.Duration, error) {
	rctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, s.searchURL(query, page), nil)
	if err != nil {
		return nil, 0, &SearchError{Msg: err.Error()}
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", s.cfg.UserAgent)
	res, err := s.hc.Do(req)
	if err != nil {
		return nil, 0, &SearchError{Retryable: true, Msg: err.Error()}
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, s.cfg.MaxResponseBytes+1))
	if err != nil {
		return nil, 0, &SearchError{Status: res.StatusCode, Retryable: true, Msg: "reading the answer: " + err.Error()}
	}
	if res.StatusCode != http.StatusOK {
		se := &SearchError{Status: res.StatusCode, Msg: statusMessage(res.StatusCode, body)}
		se.Retryable = res.StatusCode == http.StatusTooManyRequests || res.StatusCode >= 500
		se.RetryAfter = llm.RetryAfter(res.Header.Get("Retry-After"), time.Now())
		return nil, se.RetryAfter, se
	}
	if int64(len(body)) > s.cfg.MaxResponseBytes {
		return nil, 0, &SearchError{Status: res.StatusCode, Msg: fmt.Sprintf("answer exceeds %d bytes", s.cfg.MaxResponseBytes)}
	}
	var out searxResponse
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, 0, &SearchError{Status: res.StatusCode, Msg: "answer is not SearXNG JSON (is json in search.formats?): " + err.Error()}
	}
	return &out, 0, nil
}

func statusMessage(status int, body []byte) string {
	switch status {
	case http.StatusForbidden:
		return "forbidden (the instance must allow format=json: add json to search.formats in settings.yml)"
	case http.StatusTooManyRequests:
		// SearXNG's limiter answers 429 both for its rate windows (four
		// API calls an hour per address by default) and for its bot
		// detection, which refuses an API client on its first request
		// (it wants text/html in Accept): recorded from a real instance.
		return "too many requests (the instance's limiter: on your own instance set server.limiter: false, or list the worker's address under botdetection pass_ip in limiter.toml)"
	}
	msg := collapseSpace(string(body))
	if len(msg) > 200 {
		msg = msg[:200] + "…"
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	return msg
}
