package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/internal/lethetest"
	"github.com/lethe-research/lethe/llm/llmtest"
	"github.com/lethe-research/lethe/workflows"
)

// wikiSite is a MediaWiki double on loopback: /w/api.php answers a search
// in the API's formatversion=2 shape with one article per query, and
// /wiki/<title> serves the article. It records when each search arrived.
type wikiSite struct {
	*httptest.Server
	mu       sync.Mutex
	searches []time.Time
}

func newWikiSite(t *testing.T) *wikiSite {
	t.Helper()
	s := &wikiSite{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/w/api.php":
			s.mu.Lock()
			s.searches = append(s.searches, time.Now())
			s.mu.Unlock()
			q := r.URL.Query().Get("srsearch")
			title := "Article about " + q
			res := map[string]any{"batchcomplete": true, "query": map[string]any{
				"searchinfo": map[string]any{"totalhits": 1},
				"search": []map[string]any{{"ns": 0, "title": title, "pageid": len(q),
					"snippet": `<span class="searchmatch">` + html.EscapeString(q) + `</span> in solid-state batteries`}},
			}}
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(res)
		case strings.HasPrefix(r.URL.Path, "/wiki/"):
			title := strings.ReplaceAll(strings.TrimPrefix(r.URL.Path, "/wiki/"), "_", " ")
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, "<html><head><title>%s</title></head><body><main><h1>%s</h1><p>%s: solid-state batteries fail when lithium dendrites grow through the electrolyte and when the cathode interface degrades. This article explains the %s mechanism in detail, with measurements of critical current density.</p></main></body></html>",
				html.EscapeString(title), html.EscapeString(title), html.EscapeString(title), html.EscapeString(title))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

// fanOutTopics are 20 queries without a word in common, so that the
// session's query dedup (cosine 0.92) lets every one through.
var fanOutTopics = []string{
	"garnet grain boundaries", "sulfide interphase chemistry", "cathode contact loss", "stack pressure creep",
	"critical current density", "void formation stripping", "oxide electrolyte cracking", "polymer electrolyte oxidation",
	"anode-free plating", "thermal runaway onset", "moisture degradation argyrodite", "coating niobate buffer",
	"calendar aging storage", "fast charging limits", "manufacturing defects pores", "lithium metal creep",
	"impedance spectroscopy diagnosis", "chemomechanical fracture", "electronic leakage conduction", "temperature dependence kinetics",
}

// fanOutScript: the first answer calls web_search 20 times at once; the
// next (evidence in the prompt) completes the root.
func fanOutScript() llmtest.Script {
	var ops []string
	for _, q := range fanOutTopics {
		ops = append(ops, fmt.Sprintf(`{"op":"call","task":"root","tool":"web_search","args":{"query":%q}}`, q))
	}
	ops = append(ops, `{"op":"continue","task":"root"}`)
	done := `{"ops":[{"op":"complete","task":"root","result":"Solid-state batteries fail by dendrites and interface degradation.","embed_text":"solid-state batteries fail by dendrites and interface degradation"}]}`
	return llmtest.Script{Rules: []llmtest.Rule{
		{Name: "done", Match: []string{`^=GOAL`, `(?m)^E e\d+ `}, Reply: done},
		{Name: "fan-out", Match: []string{`^=GOAL`}, Reply: `{"ops":[` + strings.Join(ops, ",") + `]}`},
	}}
}

// TestWebSearchFanOutRespectsProviderRate runs a session whose first
// answer makes 20 web_search calls at once, with Wikipedia (a loopback
// MediaWiki double) as the only provider and research.rate.wikipedia = 5:
// the 20 Discover calls run on the provider's own task queue, whose
// dispatch rate the worker sets (TaskQueueActivitiesPerSecond). The rate
// is measured from the ActivityTaskStarted event times in the research
// runs' histories, and from the arrival times at the site.
func TestWebSearchFanOutRespectsProviderRate(t *testing.T) {
	const rate = 5.0
	site := newWikiSite(t)
	srv := llmtest.NewServer(fanOutScript())
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	id := fmt.Sprintf("rate-%d", time.Now().UnixNano())
	extra := map[string]string{
		"temporal.task_queue":     id,
		"research.providers":      "wikipedia",
		"research.wikipedia_url":  site.URL,
		"research.rate.wikipedia": fmt.Sprint(rate),
		"research.allow_loopback": "true",
		"research.allowed_ports":  "*", // the site is on a random loopback port
		"research.browser_path":   "off",
		"research.max_pages":      "1",
		// The fan-out is the point here, not the search budget.
		"research.max_searches_per_iteration": "20",
		"research.batch_size":                 "1",
		"budget.max_iterations":               "3",
	}
	params := lethetest.Params(srv.URL(), dir)
	for k, v := range extra {
		params[k] = v
	}
	// The first worker polls the workflow queue only: the 20 Discover calls
	// pile up on the wikipedia queue, the worst case a fan-out can make.
	// Then it stops (releasing the embedded graph file) and a worker that
	// polls every queue, the search queue with its rate, takes over.
	w := startWorker(t, params, "-queues", id)
	cfg := lethetest.Config(t, srv.URL(), dir, extra)
	c := dial(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: id}, workflows.SessionWorkflow,
		workflows.SessionInput{Goal: goal, Config: &cfg})
	if err != nil {
		t.Fatal(err)
	}
	waitPendingDiscovers(t, c, id, len(fanOutTopics))
	w.stop(syscall.SIGTERM)
	released := time.Now()
	w = startWorker(t, params)
	var res workflows.SessionResult
	if err := run.Get(ctx, &res); err != nil {
		w.dumpLog(t)
		t.Fatal(err)
	}
	if res.Stats.WebSearches != len(fanOutTopics) {
		t.Fatalf("%d web searches ran, want %d (stats %+v)", res.Stats.WebSearches, len(fanOutTopics), res.Stats)
	}
	starts, lastScheduled := discoverStarts(t, c, id, cfg.Temporal.QueueSearch(config.ProviderWikipedia))
	if !lastScheduled.Before(released) || !starts[0].After(released) {
		t.Fatalf("the calls were not a backlog: last scheduled %s, first started %s, search worker from %s", lastScheduled, starts[0], released)
	}
	if len(starts) != len(fanOutTopics) {
		w.dumpLog(t)
		t.Fatalf("%d Discover starts on the wikipedia queue, want %d", len(starts), len(fanOutTopics))
	}
	site.mu.Lock()
	arrivals := append([]time.Time(nil), site.searches...)
	site.mu.Unlock()
	// A start is when the server handed the task to the worker's poller;
	// the worker holds one task at its dispatcher (waiting on its limiter)
	// and one in its poller, so the first three start at once and each
	// start leads its call by up to two places: two over the rate, plus
	// one for timing jitter. The calls themselves, as the provider sees
	// them, get one for timing jitter.
	checkRate(t, "ActivityTaskStarted", starts, rate, 3)
	checkRate(t, "search arrivals at the site", arrivals, rate, 1)
	if res.Evidence == 0 {
		t.Errorf("the research runs found no evidence: %+v", res)
	}
}

// waitPendingDiscovers waits until n research runs of session id each
// have a pending Discover activity.
func waitPendingDiscovers(t *testing.T, c client.Client, id string, n int) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	pending := 0
	for time.Now().Before(deadline) {
		pending = 0
		for _, e := range history(t, c, id, "").Events {
			a := e.GetStartChildWorkflowExecutionInitiatedEventAttributes()
			if a == nil {
				continue
			}
			d, err := c.DescribeWorkflowExecution(context.Background(), a.GetWorkflowId(), "")
			if err != nil {
				continue // initiated, not started yet
			}
			for _, pa := range d.GetPendingActivities() {
				if pa.GetActivityType().GetName() == "Discover" {
					pending++
				}
			}
		}
		if pending >= n {
			return
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("%d Discover calls pending after 90 s, want %d", pending, n)
}

// discoverStarts returns the start times of the Discover activities the
// session's research runs scheduled on queue, sorted, and the time the
// last of them was scheduled.
func discoverStarts(t *testing.T, c client.Client, id, queue string) (out []time.Time, lastScheduled time.Time) {
	t.Helper()
	for _, e := range history(t, c, id, "").Events {
		a := e.GetStartChildWorkflowExecutionInitiatedEventAttributes()
		if a == nil {
			continue
		}
		onQueue := map[int64]bool{}
		for _, ce := range history(t, c, a.GetWorkflowId(), "").Events {
			switch ce.GetEventType() {
			case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
				sa := ce.GetActivityTaskScheduledEventAttributes()
				if sa.GetActivityType().GetName() == "Discover" && sa.GetTaskQueue().GetName() == queue {
					onQueue[ce.GetEventId()] = true
					if et := ce.GetEventTime().AsTime(); et.After(lastScheduled) {
						lastScheduled = et
					}
				}
			case enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED:
				if onQueue[ce.GetActivityTaskStartedEventAttributes().GetScheduledEventId()] {
					out = append(out, ce.GetEventTime().AsTime())
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Before(out[j]) })
	return out, lastScheduled
}

// checkRate checks n sorted start times against rate per second: the span
// from first to last must be at least what the rate allows for all but
// tol of them, and no one-second window may hold more than rate + tol.
func checkRate(t *testing.T, what string, ts []time.Time, rate float64, tol int) {
	t.Helper()
	if len(ts) < 2 {
		t.Fatalf("%s: %d times", what, len(ts))
	}
	span := ts[len(ts)-1].Sub(ts[0])
	most := maxInWindow(ts, time.Second)
	var gaps []string
	for i := 1; i < len(ts); i++ {
		gaps = append(gaps, ts[i].Sub(ts[i-1]).Round(time.Millisecond).String())
	}
	t.Logf("%s: %d starts over %s (%.2f/s), at most %d in any 1 s window; gaps %s",
		what, len(ts), span.Round(time.Millisecond), float64(len(ts)-1)/span.Seconds(), most, strings.Join(gaps, " "))
	minSpan := time.Duration(float64(len(ts)-1-tol) / rate * float64(time.Second))
	if span < minSpan {
		t.Errorf("%s: %d calls took %s, want at least %s at %g/s", what, len(ts), span, minSpan, rate)
	}
	if most > int(rate)+tol {
		t.Errorf("%s: %d starts in one second, want at most %d (rate %g + %d)", what, most, int(rate)+tol, rate, tol)
	}
}

// maxInWindow is the largest number of sorted times within any window of
// length d (closed at its start, open at its end).
func maxInWindow(ts []time.Time, d time.Duration) int {
	most, j := 0, 0
	for i := range ts {
		for ts[i].Sub(ts[j]) >= d {
			j++
		}
		most = max(most, i-j+1)
	}
	return most
}
