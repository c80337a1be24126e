package research

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/llm"
)

// Provider names of the web search APIs (research.providers). The corpus
// is CorpusProviderName, SearXNG SearXNGProviderName.
const (
	WikipediaProviderName = "wikipedia"
	ArxivProviderName     = "arxiv"
	TavilyProviderName    = "tavily"
	BraveProviderName     = "brave"
)

// WebSearchConfig configures one of the HTTP search API providers
// (Wikipedia, arXiv, Tavily, Brave).
type WebSearchConfig struct {
	// BaseURL of the API; empty means the public service (tests aim it at
	// a loopback server).
	BaseURL string
	// APIKey authenticates Tavily and Brave; it is sent in a header, never
	// in the URL, and never appears in an error or a log.
	APIKey string
	// Language: Wikipedia's language edition (en → en.wikipedia.org) and
	// Brave's search_lang. Default en.
	Language string
	// Timeout of one HTTP request. Default 20 s.
	Timeout time.Duration
	// Client sends the requests; nil means a plain client. The APIs are
	// operator-configured services, not page-controlled URLs, so this
	// client is not subject to the fetchers' URLPolicy.
	Client    *http.Client
	UserAgent string
	// MaxResponseBytes caps one answer. Default 4 MiB.
	MaxResponseBytes int64
	// Limits: results whose URL is over MaxURLBytes are dropped, titles
	// cut to MaxTitleChars, snippets to SnippetChars.
	Limits Limits
}

// webAPI is what the HTTP search providers share: the base URL, the
// client, bounded reads and the mapping of HTTP failures to SearchError.
// The providers do not retry: a 429 or a 5xx goes back to the Discover
// activity, whose retry policy (honouring Retry-After) or the next
// provider in research.providers handles it.
type webAPI struct {
	name string
	cfg  WebSearchConfig
	base *url.URL
	hc   *http.Client
}

func newWebAPI(name, defaultBase string, cfg WebSearchConfig) (*webAPI, error) {
	raw := strings.TrimSpace(cfg.BaseURL)
	if raw == "" {
		raw = defaultBase
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("research: %s URL %q is not an http(s) URL", name, config.RedactURL(raw))
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawQuery, u.Fragment = "", ""
	if cfg.Language == "" {
		cfg.Language = "en"
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 20 * time.Second
	}
	if cfg.MaxResponseBytes <= 0 {
		cfg.MaxResponseBytes = 4 << 20
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = "lethe-research/1 (https://github.com/lethe-research/lethe)"
	}
	cfg.Limits = cfg.Limits.withDefaults()
	hc := cfg.Client
	if hc == nil {
		hc = &http.Client{}
	}
	if cfg.APIKey != "" {
		hc = llm.NoRedirects(hc) // Go keeps X-Subscription-Token on every redirect
	}
	return &webAPI{name: name, cfg: cfg, base: u, hc: hc}, nil
}

// endpoint is base + path with query q.
func (w *webAPI) endpoint(path string, q url.Values) string {
	u := *w.base
	u.Path += path
	u.RawQuery = q.Encode()
	return u.String()
}

// do sends req and returns the body of a 200 answer. Any other status is a
// *SearchError: 429 and 5xx retryable (with Retry-After, or the
// provider's own reset header via resetHeader), the rest not; errMsg
// turns an error body into the provider's message.
func (w *webAPI) do(ctx context.Context, req *http.Request, errMsg func([]byte) string, resetHeader string) ([]byte, error) {
	rctx, cancel := context.WithTimeout(ctx, w.cfg.Timeout)
	defer cancel()
	req = req.WithContext(rctx)
	req.Header.Set("User-Agent", w.cfg.UserAgent)
	res, err := w.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// The URL carries no key (keys go in headers); the error names it.
		return nil, &SearchError{Provider: w.name, Retryable: !errors.Is(err, llm.ErrKeyedRedirect), Msg: err.Error()}
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, w.cfg.MaxResponseBytes+1))
	if err != nil {
		return nil, &SearchError{Provider: w.name, Status: res.StatusCode, Retryable: true, Msg: "reading the answer: " + err.Error()}
	}
	if int64(len(body)) > w.cfg.MaxResponseBytes {
		return nil, &SearchError{Provider: w.name, Status: res.StatusCode, Msg: fmt.Sprintf("answer exceeds %d bytes", w.cfg.MaxResponseBytes)}
	}
	if res.StatusCode == http.StatusOK {
		return body, nil
	}
	se := &SearchError{Provider: w.name, Status: res.StatusCode, Msg: errMsg(body)}
	if se.Msg == "" {
		se.Msg = shortBody(body, res.StatusCode)
	}
	se.Retryable = res.StatusCode == http.StatusTooManyRequests || res.StatusCode >= 500
	se.RetryAfter = llm.RetryAfter(res.Header.Get("Retry-After"), time.Now())
	if se.RetryAfter == 0 && resetHeader != "" {
		se.RetryAfter = firstSeconds(res.Header.Get(resetHeader))
	}
	return body, se
}

// malformed is the error of a 200 answer that is not what the API
// documents: retrying the same request will not help.
func (w *webAPI) malformed(what string, err error) error {
	return &SearchError{Provider: w.name, Status: http.StatusOK, Msg: fmt.Sprintf("answer is not %s: %v", what, err)}
}

// hits turns raw results into bounded, deduplicated http(s) hits in the
// provider's order, with a rank score (1, 1/2, 1/3, …) when the API gives
// none.
func (w *webAPI) hits(raw []Hit, limit int) []Hit {
	var out []Hit
	seen := map[string]bool{}
	for i, h := range raw {
		if len(out) >= limit {
			break
		}
		if !w.cfg.Limits.URLOK(h.URL) {
			continue
		}
		u := NormalizeURL(h.URL)
		if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") || seen[u] || !w.cfg.Limits.URLOK(u) {
			continue
		}
		seen[u] = true
		h.URL, h.Provider = u, w.name
		h.Title, h.Snippet = plainText(h.Title), plainText(h.Snippet)
		if h.Score == 0 {
			h.Score = 1 / float64(i+1)
		}
		out = append(out, w.cfg.Limits.Hits([]Hit{h})...)
	}
	return out
}

// plainText removes the markup APIs put in titles and snippets (Wikipedia's
// <span class="searchmatch">, Brave's <strong>), decodes entities and
// collapses white space.
func plainText(s string) string {
	if strings.ContainsAny(s, "<&") {
		var b strings.Builder
		in := false
		for _, r := range s {
			switch {
			case r == '<':
				in = true
			case r == '>' && in:
				in = false
			case !in:
				b.WriteRune(r)
			}
		}
		s = html.UnescapeString(b.String())
	}
	return strings.Join(strings.Fields(s), " ")
}

// shortBody is the first 200 characters of an error body, or the status
// text.
func shortBody(body []byte, status int) string {
	msg := strings.Join(strings.Fields(string(body)), " ")
	if r := []rune(msg); len(r) > 200 {
		msg = string(r[:200]) + "…"
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	return msg
}

// firstSeconds parses the first number of a header like Brave's
// X-RateLimit-Reset ("1, 1419704": seconds until each window resets).
func firstSeconds(v string) time.Duration {
	f, _, _ := strings.Cut(v, ",")
	n, err := strconv.Atoi(strings.TrimSpace(f))
	if err != nil || n < 0 {
		return 0
	}
	return time.Duration(n) * time.Second
}

// limitOr is limit, or the default when limit <= 0, capped at most.
func limitOr(limit, most int) int {
	if limit <= 0 {
		limit = defaultSearchLimit
	}
	return min(limit, most)
}
