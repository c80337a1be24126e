package research

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestRecordedProviderAnswers feeds each provider answers recorded from
// the live service (testdata/providers/recorded, README.md there says
// where each comes from), with the status it came with: the written
// fixtures of TestWebProvidersFixtures follow the documentation, these
// show what the services send, extra fields, older formats and all. They
// answered other queries than ours; checkRequest still checks ours.
func TestRecordedProviderAnswers(t *testing.T) {
	cases := []struct {
		provider, file string
		status         int
		hits           int
		first          []string // title, then URL (relative to the test server for Wikipedia)
		errMsg         string   // a SearchError with this status and message
	}{
		// MediaWiki's default format 1 (batchcomplete "", continue, size,
		// wordcount, timestamp), not the formatversion=2 we ask for.
		{"wikipedia", "wikipedia-search-america.json", 200, 2,
			[]string{"North America", "/wiki/North_America"}, ""},
		// The newer arXiv server: https links, opaque feed ids, arxiv:
		// comment, journal_ref, doi and affiliation elements.
		{"arxiv", "arxiv-query-testing.xml", 200, 10,
			[]string{"Testing Deep Learning Models: A First Comparative Study of Multiple Testing Techniques", "https://arxiv.org/pdf/2202.12139v1"}, ""},
		{"arxiv", "arxiv-empty.xml", 200, 0, nil, ""},
		// An error feed comes with HTTP 400.
		{"arxiv", "arxiv-error-400.xml", 400, 0, nil, "incorrect id format for abc"},
		// Descriptions with <strong> and HTML entities; results beside
		// videos and a mixed ranking.
		{"brave", "brave-web-hello-world.json", 200, 10,
			[]string{`"Hello, World!" program - Wikipedia`, "https://en.wikipedia.org/wiki/%22Hello,_World!%22_program"}, ""},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			f, srv := serveFixture(t, "recorded", c.status, c.file, nil, apiPath[c.provider])
			p := newProvider(t, c.provider, srv.URL)
			hits, err := p.Search(context.Background(), "How do solid-state batteries fail?", 10)
			checkRequest(t, c.provider, f)
			if c.errMsg != "" {
				var se *SearchError
				if !errors.As(err, &se) || se.Status != c.status || se.Retryable || !strings.Contains(err.Error(), c.errMsg) {
					t.Fatalf("error %v, want a SearchError %d naming %q", err, c.status, c.errMsg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(hits) != c.hits {
				t.Fatalf("%d hits, want %d: %+v", len(hits), c.hits, hits)
			}
			for _, h := range hits {
				if h.Provider != c.provider || h.Score <= 0 || h.Snippet == "" || strings.ContainsAny(h.Snippet, "<>") || strings.Contains(h.Snippet, "&#x27;") || strings.Contains(h.Snippet, "&quot;") {
					t.Errorf("hit %+v: want provider %s, a positive score, a plain non-empty snippet", h, c.provider)
				}
			}
			if c.hits > 0 {
				if got := []string{hits[0].Title, strings.TrimPrefix(hits[0].URL, srv.URL)}; got[0] != c.first[0] || got[1] != c.first[1] {
					t.Errorf("first hit %q, want %q", got, c.first)
				}
			}
		})
	}
}

// TestRecordedSearXNGAnswers does the same for SearXNG, with answers of a
// real instance (2026.8.13, upstream ef9a188cc) run on loopback: a json
// engine reading a local file for results, that engine's server stopped
// for unresponsive engines, json left out of search.formats for the 403,
// and its limiter for the 429.
func TestRecordedSearXNGAnswers(t *testing.T) {
	cases := []struct {
		file   string
		status int
		hits   int
		errMsg string // a SearchError with this status and message
	}{
		{"searxng-results.json", 200, 5, ""},
		{"searxng-empty.json", 200, 0, ""},
		{"searxng-unresponsive-partial.json", 200, 5, ""},
		{"searxng-unresponsive.json", 200, 0, "engines failed: local corpus: HTTP connection error"},
		{"searxng-forbidden-403.html", 403, 0, "add json to search.formats"},
		{"searxng-limiter-429.txt", 429, 0, "server.limiter: false"},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			_, srv := serveFixture(t, "recorded", c.status, c.file, nil, "/search")
			s := newTestSearX(t, srv.URL, func(cfg *SearXNGConfig) { cfg.Retries = 0 })
			hits, err := s.Search(context.Background(), "solid state battery failure", 10)
			if c.errMsg != "" {
				var se *SearchError
				if !errors.As(err, &se) || se.Status != c.status || !strings.Contains(err.Error(), "searxng: ") || !strings.Contains(err.Error(), c.errMsg) {
					t.Fatalf("error %v, want a SearchError %d naming %q", err, c.status, c.errMsg)
				}
				return
			}
			if err != nil || len(hits) != c.hits {
				t.Fatalf("%d hits, error %v; want %d and none", len(hits), err, c.hits)
			}
			if c.hits > 0 && (hits[0].URL != "https://example.org/batteries/solid-state-dendrite-failure" || hits[0].Snippet == "" || hits[0].Score <= 0) {
				t.Errorf("first hit %+v", hits[0])
			}
		})
	}
}
