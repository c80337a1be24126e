package research

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

const testKey = "tvly-SECRET-test-key-0123456789"

// providerFixture serves one recorded answer of testdata/providers/<name>
// and remembers the requests it saw.
type providerFixture struct {
	mu     sync.Mutex
	reqs   []*http.Request
	bodies []string
}

func serveFixture(t *testing.T, name string, status int, file string, header http.Header, wantPath string) (*providerFixture, *httptest.Server) {
	t.Helper()
	f := &providerFixture{}
	var body []byte
	if file != "" {
		var err error
		if body, err = os.ReadFile(filepath.Join("testdata", "providers", name, file)); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.reqs, f.bodies = append(f.reqs, r.Clone(context.Background())), append(f.bodies, string(b))
		f.mu.Unlock()
		if r.URL.Path != wantPath {
			http.NotFound(w, r)
			return
		}
		for k, v := range header {
			w.Header()[k] = v
		}
		switch filepath.Ext(file) {
		case ".json":
			w.Header().Set("Content-Type", "application/json")
		case ".xml":
			w.Header().Set("Content-Type", "application/atom+xml; charset=utf-8")
		default:
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
		}
		w.WriteHeader(status)
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return f, srv
}

// newProvider builds the named provider aimed at base.
func newProvider(t *testing.T, name, base string) Provider {
	t.Helper()
	cfg := WebSearchConfig{BaseURL: base + "/", APIKey: testKey, Timeout: 5 * time.Second}
	var p Provider
	var err error
	switch name {
	case WikipediaProviderName:
		p, err = NewWikipedia(cfg)
	case ArxivProviderName:
		p, err = NewArxiv(cfg)
	case TavilyProviderName:
		p, err = NewTavily(cfg)
	case BraveProviderName:
		p, err = NewBrave(cfg)
	}
	if err != nil {
		t.Fatal(err)
	}
	return p
}

var apiPath = map[string]string{
	WikipediaProviderName: "/w/api.php", ArxivProviderName: "/api/query",
	TavilyProviderName: "/search", BraveProviderName: "/res/v1/web/search",
}

func TestWebProvidersFixtures(t *testing.T) {
	retry := func(v string) http.Header { return http.Header{"Retry-After": {v}} }
	type want struct {
		urls       []string
		titles     []string // first titles, markup removed
		status     int      // SearchError.Status; 0 = no error
		retryable  bool
		retryAfter time.Duration
		msg        string // in the error message
	}
	cases := []struct {
		provider, name string
		status         int
		file           string
		header         http.Header
		want           want
	}{
		{"wikipedia", "results", 200, "results.json", nil, want{
			urls:   []string{"/wiki/Solid-state_battery", "/wiki/Lithium_dendrite", "/wiki/AC/DC_%28electricity%29"},
			titles: []string{"Solid-state battery", "Lithium dendrite"}}},
		{"wikipedia", "empty", 200, "empty.json", nil, want{}},
		{"wikipedia", "api error in a 200", 200, "error.json", nil, want{status: 200, msg: "badvalue: Unrecognized value"}},
		{"wikipedia", "maxlag asks to slow down", 200, "ratelimited.json", retry("5"), want{status: 429, retryable: true, msg: "maxlag"}},
		{"wikipedia", "429 with Retry-After", 429, "toomany.html", retry("7"), want{status: 429, retryable: true, retryAfter: 7 * time.Second, msg: "Too many requests"}},
		{"wikipedia", "503", 503, "", nil, want{status: 503, retryable: true, msg: "Service Unavailable"}},
		{"wikipedia", "malformed", 200, "malformed.json", nil, want{status: 200, msg: "not MediaWiki JSON"}},

		{"arxiv", "results", 200, "results.xml", nil, want{
			urls:   []string{"https://arxiv.org/pdf/2101.00001v2", "https://arxiv.org/pdf/2203.04567v1"},
			titles: []string{"Dendrite Growth in Solid-State Lithium Batteries", "Interface Degradation of Sulfide Electrolytes"}}},
		{"arxiv", "empty", 200, "empty.xml", nil, want{}},
		{"arxiv", "error feed", 200, "error.xml", nil, want{status: 200, msg: "max_results must be non-negative"}},
		{"arxiv", "error feed in a 400", 400, "error.xml", nil, want{status: 400, msg: "max_results must be non-negative"}},
		{"arxiv", "429 with Retry-After", 429, "toomany.txt", retry("3"), want{status: 429, retryable: true, retryAfter: 3 * time.Second, msg: "Rate exceeded"}},
		{"arxiv", "malformed", 200, "malformed.xml", nil, want{status: 200, msg: "not an Atom feed"}},

		{"tavily", "results", 200, "results.json", nil, want{
			urls:   []string{"https://www.example-energy.org/solid-state-failure", "https://journal.example.com/articles/interphase"},
			titles: []string{"Why solid-state batteries fail", "Interphase growth in sulfide electrolytes"}}},
		{"tavily", "empty", 200, "empty.json", nil, want{}},
		{"tavily", "bad key", 401, "error.json", nil, want{status: 401, msg: "Unauthorized: missing or invalid API key"}},
		{"tavily", "429 with Retry-After", 429, "toomany.json", retry("2"), want{status: 429, retryable: true, retryAfter: 2 * time.Second, msg: "excessive requests"}},
		{"tavily", "malformed", 200, "malformed.json", nil, want{status: 200, msg: "not Tavily JSON"}},

		{"brave", "results", 200, "results.json", nil, want{
			urls:   []string{"https://batteries.example.org/failure-modes", "https://materials.example.net/contact-loss?ref=brave"},
			titles: []string{"How Solid-State Batteries Fail", "Contact loss in solid electrolytes"}}},
		{"brave", "empty", 200, "empty.json", nil, want{}},
		{"brave", "bad token", 422, "error.json", nil, want{status: 422, msg: "SUBSCRIPTION_TOKEN_INVALID"}},
		{"brave", "429 with reset header", 429, "toomany.json", http.Header{"X-Ratelimit-Reset": {"1, 1419704"}}, want{status: 429, retryable: true, retryAfter: time.Second, msg: "RATE_LIMITED"}},
		{"brave", "malformed", 200, "malformed.json", nil, want{status: 200, msg: "not Brave JSON"}},
	}
	for _, c := range cases {
		t.Run(c.provider+"/"+c.name, func(t *testing.T) {
			f, srv := serveFixture(t, c.provider, c.status, c.file, c.header, apiPath[c.provider])
			p := newProvider(t, c.provider, srv.URL)
			hits, err := p.Search(context.Background(), "How do solid-state batteries fail?", 10)
			checkRequest(t, c.provider, f)
			if c.want.status != 0 {
				var se *SearchError
				if !errors.As(err, &se) {
					t.Fatalf("error %v (%T), want a *SearchError", err, err)
				}
				if se.Status != c.want.status || se.Retryable != c.want.retryable || se.RetryAfter != c.want.retryAfter || se.Provider != c.provider {
					t.Errorf("error %+v, want status %d retryable %v retry-after %s", se, c.want.status, c.want.retryable, c.want.retryAfter)
				}
				if !strings.Contains(err.Error(), c.want.msg) || !strings.Contains(err.Error(), c.provider) {
					t.Errorf("error %q does not name %q and %q", err, c.provider, c.want.msg)
				}
				if strings.Contains(err.Error(), testKey) {
					t.Errorf("error %q shows the API key", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var urls, titles []string
			for _, h := range hits {
				urls = append(urls, strings.TrimPrefix(h.URL, srv.URL))
				titles = append(titles, h.Title)
				if h.Provider != c.provider || h.Score <= 0 || strings.ContainsAny(h.Snippet, "<>") || h.Snippet == "" {
					t.Errorf("hit %+v: want provider %s, a positive score, a plain non-empty snippet", h, c.provider)
				}
			}
			if !reflect.DeepEqual(urls, c.want.urls) {
				t.Errorf("urls %q, want %q", urls, c.want.urls)
			}
			if len(c.want.titles) > 0 && !reflect.DeepEqual(titles[:len(c.want.titles)], c.want.titles) {
				t.Errorf("titles %q, want %q", titles, c.want.titles)
			}
		})
	}
}

// checkRequest checks the documented request shape of each API: path,
// parameters, and the key in a header, never in the URL.
func checkRequest(t *testing.T, provider string, f *providerFixture) {
	t.Helper()
	if len(f.reqs) != 1 {
		t.Fatalf("%d requests, want 1 (providers do not retry; the activity does)", len(f.reqs))
	}
	r, body := f.reqs[0], f.bodies[0]
	q := r.URL.Query()
	if strings.Contains(r.URL.String(), testKey) {
		t.Errorf("the API key is in the URL %s", r.URL)
	}
	switch provider {
	case WikipediaProviderName:
		if q.Get("action") != "query" || q.Get("list") != "search" || q.Get("format") != "json" || q.Get("srsearch") == "" || q.Get("srlimit") != "10" {
			t.Errorf("wikipedia query %s", r.URL.RawQuery)
		}
	case ArxivProviderName:
		if q.Get("search_query") != "all:solid-state OR all:batteries OR all:fail" || q.Get("max_results") != "10" {
			t.Errorf("arxiv query %s", r.URL.RawQuery)
		}
	case TavilyProviderName:
		var req tavilyRequest
		if r.Method != http.MethodPost || r.Header.Get("Authorization") != "Bearer "+testKey || json.Unmarshal([]byte(body), &req) != nil ||
			req.Query != "How do solid-state batteries fail?" || req.MaxResults != 10 || strings.Contains(body, testKey) {
			t.Errorf("tavily request %s %v %s", r.Method, r.Header, body)
		}
	case BraveProviderName:
		if r.Header.Get("X-Subscription-Token") != testKey || q.Get("q") == "" || q.Get("count") != "10" {
			t.Errorf("brave request %s %v", r.URL, r.Header)
		}
	}
}

func TestSearchErrorIsBounded(t *testing.T) {
	huge := `{"detail":{"error":"` + strings.Repeat("x", 1<<20) + `"}}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, huge)
	}))
	t.Cleanup(srv.Close)
	p := newProvider(t, TavilyProviderName, srv.URL)
	_, err := p.Search(context.Background(), "q", 5)
	if err == nil || len(err.Error()) > 400 {
		t.Fatalf("error of %d bytes, want a bounded one", len(fmt.Sprint(err)))
	}
}

func TestKeyedProvidersNeedKeys(t *testing.T) {
	if _, err := NewTavily(WebSearchConfig{}); err == nil || !strings.Contains(err.Error(), "research.tavily_api_key") {
		t.Errorf("tavily without key: %v", err)
	}
	if _, err := NewBrave(WebSearchConfig{APIKey: "  "}); err == nil || !strings.Contains(err.Error(), "research.brave_api_key") {
		t.Errorf("brave without key: %v", err)
	}
	if _, err := NewWikipedia(WebSearchConfig{BaseURL: "ftp://x"}); err == nil {
		t.Error("wikipedia accepted an ftp base URL")
	}
}

func TestWebProviderTimeoutAndCancel(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(release); srv.Close() })
	p, err := NewWikipedia(WebSearchConfig{BaseURL: srv.URL, Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = p.Search(context.Background(), "slow", 5)
	var se *SearchError
	if !errors.As(err, &se) || !se.Retryable || time.Since(start) > 3*time.Second {
		t.Errorf("slow server: %v after %s, want a retryable timeout", err, time.Since(start))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Search(ctx, "slow", 5); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled search: %v, want context.Canceled", err)
	}
}

func TestArxivQuery(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"How do solid-state batteries fail?", "all:solid-state OR all:batteries OR all:fail"},
		{`"quoted" (group) AND title:x`, "all:quoted OR all:group OR all:title OR all:x"},
		{"the of a", ""},
		{"Ionenleitfähigkeit von Festelektrolyten", "all:ionenleitfähigkeit OR all:von OR all:festelektrolyten"},
	} {
		if got := arxivQuery(c.in); got != c.want {
			t.Errorf("arxivQuery(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestPlainText(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`A <span class="searchmatch">solid</span> cell &amp; more`, "A solid cell & more"},
		{"two\n  lines", "two lines"},
		{"a < b", "a"}, // an unclosed tag runs to the end: never markup in a snippet
		{"", ""},
	} {
		if got := plainText(c.in); got != c.want {
			t.Errorf("plainText(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
