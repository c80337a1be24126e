package workflows_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"

	"github.com/lethe-research/lethe/activities"
	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/internal/lethetest"
	"github.com/lethe-research/lethe/llm/llmtest"
	"github.com/lethe-research/lethe/workflows"
)

// TestProviderChainFallsBack runs a session whose research runs walk the
// chain brave → wikipedia → arxiv → corpus: Brave has no key on this worker
// (refused at once), Wikipedia answers 429 with Retry-After (retried, then
// skipped), arXiv finds nothing, and the corpus answers.
func TestProviderChainFallsBack(t *testing.T) {
	var mu sync.Mutex
	hits := map[string]int{}
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path]++
		mu.Unlock()
		switch r.URL.Path {
		case "/w/api.php":
			w.Header().Set("Retry-After", "1")
			http.Error(w, "Too many requests", http.StatusTooManyRequests)
		case "/api/query":
			w.Header().Set("Content-Type", "application/atom+xml")
			w.Write([]byte(`<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><opensearch:totalResults xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">0</opensearch:totalResults></feed>`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(site.Close)
	srv := llmtest.NewServer(lethetest.Script(t, "battery_root_done"))
	t.Cleanup(srv.Close)
	extra := map[string]string{
		"research.providers": "brave,wikipedia,arxiv,corpus", "research.search_attempts": "2",
		"research.wikipedia_url": site.URL, "research.arxiv_url": site.URL,
	}
	var calls []activities.DiscoverInput
	r := runAt(t, srv, srv.URL(), extra, func(cfg *config.Config) workflows.SessionInput {
		return workflows.SessionInput{Goal: goal, Config: cfg}
	}, func(env *testsuite.TestWorkflowEnvironment) {
		env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, args converter.EncodedValues) {
			if info.ActivityType.Name != "Discover" {
				return
			}
			var in activities.DiscoverInput
			if err := args.Get(&in); err != nil {
				t.Error(err)
			}
			mu.Lock()
			calls = append(calls, in)
			mu.Unlock()
		})
	})
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.res.Evidence == 0 || r.res.Stats.WebSearches == 0 {
		t.Fatalf("no research: %+v", r.res)
	}
	tries := map[string]int{}
	for _, c := range calls {
		tries[c.Provider]++
	}
	n := r.res.Stats.WebSearches
	want := map[string]int{"brave": n, "wikipedia": 2 * n, "arxiv": n, "corpus": n}
	for p, w := range want {
		if tries[p] != w {
			t.Errorf("Discover on %s ran %d times, want %d (%d searches; all: %v)", p, tries[p], w, n, tries)
		}
	}
	if hits["/w/api.php"] != 2*n || hits["/api/query"] != n {
		t.Errorf("site saw %v, want %d Wikipedia and %d arXiv requests", hits, 2*n, n)
	}
}
