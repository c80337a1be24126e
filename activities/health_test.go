package activities_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lethe-research/lethe/activities"
)

// The bootstrap probe asks the session's search providers too: one that
// answers (a loopback MediaWiki stand-in, any status) passes; one that
// does not answer (a closed loopback port, as a keyless provider is on a
// machine without internet) or that this worker cannot serve (Tavily
// without a key) is a warning naming it and its URL, never a failure of
// the session; a corpus in the chain of a worker without one is a warning
// too; when none answers, the result says web_search will find nothing.
// No query or key is sent.
func TestHealthCheckProbesProviders(t *testing.T) {
	var asked atomic.Int64
	wiki := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		if r.URL.RawQuery != "" || r.Header.Get("Authorization") != "" {
			t.Errorf("probe sent a query or a key: %s %v", r.URL, r.Header)
		}
		http.NotFound(w, r) // an answer: the service is there
	}))
	defer wiki.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there now: connection refused
	env, _, _, _ := newResearchEnv(t, t.TempDir(), map[string]string{
		"research.browser_path": "off", "research.wikipedia_url": wiki.URL, "research.arxiv_url": dead,
	})
	for _, tc := range []struct {
		name      string
		providers []string
		want      []string // substrings, one per warning, in order
	}{
		{"no chain", nil, nil},
		{"answering provider", []string{"wikipedia"}, nil},
		{"one down, one unconfigured, one up", []string{"arxiv", "tavily", "wikipedia"},
			[]string{"arxiv (" + dead + ") does not answer", "tavily: not configured on this worker"}},
		{"none answers", []string{"arxiv", "brave"},
			[]string{"arxiv (" + dead + ")", "brave: not configured on this worker", "web_search finds nothing"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			v, err := env.ExecuteActivity(acts.HealthCheck, activities.HealthInput{SessionID: "probe", Providers: tc.providers})
			if err != nil {
				t.Fatalf("the probe failed the session: %v", err)
			}
			var res activities.HealthResult
			if err := v.Get(&res); err != nil {
				t.Fatal(err)
			}
			if len(res.Warnings) != len(tc.want) {
				t.Fatalf("warnings %q, want %d matching %q", res.Warnings, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(res.Warnings[i], w) {
					t.Errorf("warning %d %q, want it to contain %q", i, res.Warnings[i], w)
				}
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("probe took %s", d)
			}
		})
	}
	if asked.Load() == 0 {
		t.Error("the Wikipedia stand-in was never asked")
	}
	// A chain that names the corpus, on a worker without one.
	bare, _, _, _ := newResearchEnv(t, t.TempDir(), map[string]string{"research.browser_path": "off", "research.corpus_dir": "", "research.wikipedia_url": wiki.URL})
	v, err := bare.ExecuteActivity(acts.HealthCheck, activities.HealthInput{SessionID: "probe", Providers: []string{"corpus", "wikipedia"}})
	var res activities.HealthResult
	if err == nil {
		err = v.Get(&res)
	}
	if err != nil {
		t.Fatalf("the probe failed the session: %v", err)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "corpus: research.corpus_dir is not set on this worker") {
		t.Errorf("corpus missing: warnings %q", res.Warnings)
	}
}
