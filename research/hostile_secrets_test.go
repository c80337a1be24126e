package research

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// plantSecrets puts secrets in the worker's environment as an operator
// does (the chat server's key, the Neo4j password, a search key) and
// returns them.
func plantSecrets(t *testing.T) []string {
	t.Helper()
	planted := map[string]string{
		"LETHE_LLM_API_KEY":          "planted-llm-key",
		"LETHE_GRAPH_NEO4J_PASSWORD": "planted-neo4j-password",
		"BRAVE_API_KEY":              "planted-brave-key",
	}
	var out []string
	for k, v := range planted {
		t.Setenv(k, v)
		out = append(out, k+"="+v)
	}
	return out
}

// checkChildEnv fails when env (NAME=value lines) holds a planted secret
// or lacks PATH, which every child needs to start its helpers.
func checkChildEnv(t *testing.T, env []string, planted []string) {
	t.Helper()
	for _, p := range planted {
		name, value, _ := strings.Cut(p, "=")
		for _, kv := range env {
			if strings.HasPrefix(kv, name+"=") || strings.Contains(kv, value) {
				t.Errorf("the child sees the worker's %s: %q", name, kv)
			}
		}
	}
	hasPath := false
	for _, kv := range env {
		hasPath = hasPath || strings.HasPrefix(kv, "PATH=")
	}
	if !hasPath {
		t.Errorf("the child has no PATH: %q", env)
	}
}

// A helper program the worker runs on page-controlled input (pdftotext
// and ffmpeg both run through runChild, under the memory-limit wrapper)
// sees none of the worker's secrets: the real env program prints what it
// was given.
func TestHostileChildEnvHasNoSecrets(t *testing.T) {
	planted := plantSecrets(t)
	env := needTool(t, "env")
	for _, mem := range []int64{0, 1 << 30} {
		res, err := runChild(context.Background(), childSpec{Path: env, Timeout: 10 * time.Second, MemoryBytes: mem, MaxStdout: 1 << 20})
		if err != nil {
			t.Fatalf("memory limit %d: %v", mem, err)
		}
		checkChildEnv(t, strings.Split(strings.TrimSpace(string(res.Stdout)), "\n"), planted)
	}
}

// Chromium, started with the project's allocator options, sees none of
// the worker's secrets: its process environment (/proc/PID/environ) is
// read while it runs.
func TestHostileBrowserEnvHasNoSecrets(t *testing.T) {
	planted := plantSecrets(t)
	b := newTestBrowser(t, URLPolicy{AllowLoopback: true}, 1, nil)
	bctx, err := b.start()
	if err != nil {
		t.Fatal(err)
	}
	c := chromedp.FromContext(bctx)
	if c == nil || c.Browser == nil || c.Browser.Process() == nil {
		t.Fatal("no Chromium process")
	}
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(c.Browser.Process().Pid) + "/environ")
	if err != nil {
		t.Fatal(err)
	}
	checkChildEnv(t, strings.Split(string(bytes.TrimRight(raw, "\x00")), "\x00"), planted)
}

// A keyed search API that answers with a redirect to another server (here
// a loopback listener standing for an attacker's host) is not followed:
// the listener sees no request, so neither Brave's X-Subscription-Token
// nor Tavily's bearer key reaches it, and the error says why.
func TestHostileKeyedRedirectNotFollowed(t *testing.T) {
	var seen atomic.Int64
	attacker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.Add(1)
		t.Errorf("the redirect target got %s %s (token %q, authorization %q)", r.Method, r.URL, r.Header.Get("X-Subscription-Token"), r.Header.Get("Authorization"))
	}))
	defer attacker.Close()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, attacker.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer api.Close()
	cfg := WebSearchConfig{BaseURL: api.URL, APIKey: "worker-key", Timeout: 5 * time.Second}
	brave, err := NewBrave(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tavily, err := NewTavily(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []Provider{brave, tavily} {
		_, err := p.Search(context.Background(), "solid-state battery failure", 5)
		var se *SearchError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), "redirect") || se.Retryable {
			t.Errorf("%s: error %v, want a final SearchError that names the redirect", p.Name(), err)
		}
		if err != nil && strings.Contains(err.Error(), "worker-key") {
			t.Errorf("%s: the error shows the key: %v", p.Name(), err)
		}
	}
	if n := seen.Load(); n != 0 {
		t.Fatalf("the redirect target saw %d requests", n)
	}
}
