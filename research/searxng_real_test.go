package research

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/internal/lethetest"
)

// The question the compose file's example session asks: the worker sends
// it to SearXNG as is.
const realSearXNGQuery = "How do solid-state batteries fail?"

// TestRealSearXNGDeploySettings runs a real SearXNG (scripts/searxng.sh)
// with exactly deploy/searxng/settings.yml, the file docker-compose.yml
// mounts, and sends it the worker's query through the worker's client: the
// answer is JSON. With SearXNG's own settings (json not in search.formats)
// the same client gets the 403 and says how to fix it, and without
// SEARXNG_SECRET the deploy settings do not start, since the file carries
// no secret of its own.
//
// The worker's SearXNG parameters are the defaults but for the engines:
// currency, an engine that answers only queries of the form "10 usd in
// eur" and sends nothing for any other, so no engine reaches for the web.
// (Categories are left out: SearXNG adds every engine of a named category
// to a named engine.) The server also refuses every non-loopback
// connection (scripts/searxng/loopback.py); the test checks that the query
// made it refuse none.
func TestRealSearXNGDeploySettings(t *testing.T) {
	lethetest.Need(t, lethetest.SearXNG)
	script := filepath.Join(lethetest.Root(), "scripts", "searxng.sh")
	if out, err := exec.Command("bash", script, "python").CombinedOutput(); err != nil {
		lethetest.Missing(t, lethetest.SearXNG, strings.TrimSpace(string(out)))
	}
	t.Run("deploy settings answer JSON", func(t *testing.T) {
		t.Parallel()
		inst := startRealSearXNG(t, script, "", "lethe-test-secret-"+t.Name())
		refusedBefore := inst.refused(t)
		if refusedBefore == 0 {
			// SearXNG's start fetches tracker rules and engine data
			// from the web: a guard that saw none is not in place.
			t.Fatalf("the loopback guard refused nothing during SearXNG's start; log %s", inst.log)
		}
		s := realSearXNGClient(t, inst.url)
		hits, err := s.Search(context.Background(), realSearXNGQuery, 10)
		if err != nil {
			t.Fatalf("search with deploy/searxng/settings.yml: %v", err)
		}
		if len(hits) != 0 {
			t.Errorf("%d hits from an engine that answers only currency queries: %+v", len(hits), hits)
		}
		checkSearXNGJSONShape(t, s)
		if after := inst.refused(t); after != refusedBefore {
			t.Errorf("the query made SearXNG reach for non-loopback hosts (%d refusals, %d before the query); log %s",
				after, refusedBefore, inst.log)
		}
	})
	t.Run("SearXNG defaults answer 403", func(t *testing.T) {
		t.Parallel()
		inst := startRealSearXNG(t, script, "default", "lethe-test-secret-"+t.Name())
		_, err := realSearXNGClient(t, inst.url).Search(context.Background(), realSearXNGQuery, 10)
		var se *SearchError
		if !errors.As(err, &se) || se.Status != http.StatusForbidden || se.Retryable {
			t.Fatalf("search with SearXNG's default settings: %v, want a non-retryable HTTP 403", err)
		}
		if !strings.Contains(err.Error(), "add json to search.formats") {
			t.Errorf("the 403 does not say how to fix it: %v", err)
		}
	})
	t.Run("no secret, no start", func(t *testing.T) {
		t.Parallel()
		out, err := runSearXNGScript(t, script, "", "start", t.TempDir())
		if err == nil {
			t.Fatalf("SearXNG started with deploy/searxng/settings.yml and no SEARXNG_SECRET:\n%s", out)
		}
		if !strings.Contains(out, "secret_key is not changed") {
			t.Errorf("SearXNG did not refuse for its placeholder secret:\n%s", out)
		}
	})
}

// realSearXNGClient is the worker's client (activities.InitResearch) with
// the default research.searxng_* parameters, one engine and no retries.
func realSearXNGClient(t *testing.T, url string) *SearXNG {
	t.Helper()
	r := config.Default().Research
	s, err := NewSearXNG(SearXNGConfig{
		BaseURL: url, Engines: []string{"currency"}, Language: r.SearxngLanguage,
		Pages: r.SearxngPages, Timeout: r.SearxngTimeout,
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// checkSearXNGJSONShape asks the client's first page itself and checks the
// fields the client reads: results and unresponsive_engines are lists.
func checkSearXNGJSONShape(t *testing.T, s *SearXNG) {
	t.Helper()
	res, err := http.Get(s.searchURL(realSearXNGQuery, 1))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body map[string]json.RawMessage
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		t.Fatalf("HTTP %d, %s: not JSON: %v", res.StatusCode, res.Header.Get("Content-Type"), err)
	}
	for _, k := range []string{"results", "unresponsive_engines"} {
		var list []json.RawMessage
		if err := json.Unmarshal(body[k], &list); err != nil || list == nil {
			t.Errorf("%q is %s, want a list", k, body[k])
		}
	}
}

// realSearXNG is a SearXNG started by scripts/searxng.sh.
type realSearXNG struct {
	url, log string
}

// refused counts the non-loopback hosts the server has refused so far.
func (r realSearXNG) refused(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile(r.log)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "searxng-loopback: refused ")
}

// startRealSearXNG starts SearXNG with settings ("" is
// deploy/searxng/settings.yml, "default" SearXNG's own) and the secret, and
// stops it when t ends.
func startRealSearXNG(t *testing.T, script, settings, secret string) realSearXNG {
	t.Helper()
	dir := t.TempDir()
	args, label := []string{"start", dir}, "deploy/searxng/settings.yml"
	if settings != "" {
		args, label = append(args, settings), settings
	}
	t0 := time.Now()
	out, err := runSearXNGScript(t, script, secret, args...)
	if err != nil {
		t.Fatalf("scripts/searxng.sh %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	t.Cleanup(func() {
		if out, err := runSearXNGScript(t, script, "", "stop", dir); err != nil {
			t.Errorf("scripts/searxng.sh stop: %v\n%s", err, out)
		}
	})
	lines := strings.Fields(out)
	if len(lines) == 0 {
		t.Fatalf("scripts/searxng.sh start printed no URL:\n%s", out)
	}
	t.Logf("SearXNG (%s settings) answered in %v", label, time.Since(t0).Round(100*time.Millisecond))
	return realSearXNG{url: lines[len(lines)-1], log: filepath.Join(dir, "searxng.out")}
}

// runSearXNGScript runs scripts/searxng.sh with SEARXNG_SECRET set to
// secret (unset when empty) and no other SEARXNG_* setting of the caller's
// environment; it returns stdout and, on failure, stderr after it.
func runSearXNGScript(t *testing.T, script, secret string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", append([]string{script}, args...)...)
	cmd.Env = []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SEARXNG_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	if secret != "" {
		cmd.Env = append(cmd.Env, "SEARXNG_SECRET="+secret)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out) + stderr.String(), err
	}
	return string(out), nil
}
