package activities_test

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/lethe-research/lethe/activities"
	"github.com/lethe-research/lethe/config/load"
	"github.com/lethe-research/lethe/internal/lethetest"
	"github.com/lethe-research/lethe/llm/llmtest"
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

// The bootstrap probe of a hosted API (the key wanted on every path, no
// /health) sends each server its key: with both keys the session starts;
// with the embedding key missing it fails at once, and the error says
// which setting to fix.
func TestHealthCheckSendsKeys(t *testing.T) {
	script := lethetest.Script(t, "battery_root_done")
	script.Hosted = &llmtest.Hosted{Key: "sk-hosted"}
	model := llmtest.NewServer(script)
	defer model.Close()
	both := []string{"LETHE_LLM_API_KEY=sk-hosted", "LETHE_EMBED_API_KEY=sk-hosted"}
	if _, err := hostedEnv(t, model.URL(), both).ExecuteActivity(acts.HealthCheck, activities.HealthInput{SessionID: "hosted"}); err != nil {
		t.Fatalf("probe with both keys: %v", err)
	}
	_, err := hostedEnv(t, model.URL(), both[:1]).ExecuteActivity(acts.HealthCheck, activities.HealthInput{SessionID: "hosted"})
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || !app.NonRetryable() || !strings.Contains(err.Error(), "no API key was sent: set embed.api_key (LETHE_EMBED_API_KEY)") ||
		strings.Contains(err.Error(), "chat model server") {
		t.Errorf("probe without the embedding key: %v; want a non-retryable failure of the embedding server naming embed.api_key", err)
	}
}

// hostedEnv is an activity environment whose worker reads its keys from
// env, as a worker must (a key is never a session parameter).
func hostedEnv(t *testing.T, url string, env []string) *testsuite.TestActivityEnvironment {
	t.Helper()
	p := lethetest.Params(url, t.TempDir())
	p["research.browser_path"] = "off"
	cfg, err := load.Load(load.Sources{Env: env, Overrides: p})
	if err != nil {
		t.Fatal(err)
	}
	ae, _, _ := envFor(t, cfg)
	return ae
}

// TestHealthCheckWaitsOutRateLimit: a hosted API that rate-limits its
// model list at a session's start (429 with a short Retry-After) is asked
// again after that wait, with the key, and the probe passes; a long
// Retry-After fails the probe as before.
func TestHealthCheckWaitsOutRateLimit(t *testing.T) {
	script := lethetest.Script(t, "battery_root_done")
	script.Hosted = &llmtest.Hosted{Key: "sk-hosted"}
	model := llmtest.NewServer(script)
	defer model.Close()
	for _, tc := range []struct {
		retryAfter string
		pass       bool
	}{{"1", true}, {"3600", false}} {
		var mu sync.Mutex
		limited := map[string]time.Time{}
		var again time.Duration
		front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			first, seen := limited[r.URL.Path]
			if r.URL.Path == "/v1/models" && !seen {
				limited[r.URL.Path] = time.Now()
				mu.Unlock()
				w.Header().Set("Retry-After", tc.retryAfter)
				w.WriteHeader(http.StatusTooManyRequests)
				return
			}
			if r.URL.Path == "/v1/models" {
				again = time.Since(first)
			}
			mu.Unlock()
			model.Handler().ServeHTTP(w, r)
		}))
		both := []string{"LETHE_LLM_API_KEY=sk-hosted", "LETHE_EMBED_API_KEY=sk-hosted"}
		_, err := hostedEnv(t, front.URL, both).ExecuteActivity(acts.HealthCheck, activities.HealthInput{SessionID: "limited"})
		front.Close()
		switch {
		case tc.pass && err != nil:
			t.Errorf("Retry-After %s: %v; want the probe to pass after the wait", tc.retryAfter, err)
		case tc.pass && again < time.Second:
			t.Errorf("Retry-After %s: asked again after %s", tc.retryAfter, again)
		case !tc.pass && (err == nil || !strings.Contains(err.Error(), "429")):
			t.Errorf("Retry-After %s: %v; want the probe to fail with the 429", tc.retryAfter, err)
		}
	}
}
