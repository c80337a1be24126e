package e2e

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/lethe-research/lethe/activities"
	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/internal/lethetest"
	"github.com/lethe-research/lethe/llm/llmtest"
	"github.com/lethe-research/lethe/workflows"
)

// webSite is the web the research runs of these tests see: a SearXNG
// double (/search?format=json, SearXNG's JSON shape) whose results point at
// pages on the same loopback server. The pages hold the test corpus
// (testdata/corpus), one section per page; one page is written by
// JavaScript. Each page answers after a delay, so a kill lands mid-batch.
type webSite struct {
	*httptest.Server
	pages    map[string]webPage // path → page
	order    []string
	hits     atomic.Int64 // page requests
	searches atomic.Int64
	delay    time.Duration
	params   map[string]string // research parameters of this workload
	audio    []byte            // when set, every page embeds /media/talk.wav
	mu       sync.Mutex
	onHit    func(n int64)
	pathHits map[string]int // page requests by path, when not nil
	// searchURL serves the same site on a second port, the one the worker
	// knows as its SearXNG: the worker refuses to fetch pages from its own
	// service endpoints, so the search API and the pages are two servers.
	searchURL string
}

type webPage struct {
	title string
	paras []string
	js    bool
	raw   string // when set, the whole page as served
}

func newWebSite(t *testing.T, delay time.Duration) *webSite {
	t.Helper()
	s := &webSite{pages: map[string]webPage{}, delay: delay}
	files, err := filepath.Glob(filepath.Join(lethetest.Root(), "testdata", "corpus", "*.md"))
	if err != nil || len(files) == 0 {
		t.Fatalf("test corpus: %v", err)
	}
	sort.Strings(files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var title string
		var paras []string
		for _, p := range strings.Split(string(b), "\n\n") {
			p = strings.TrimSpace(p)
			if strings.HasPrefix(p, "# ") {
				title = strings.TrimPrefix(p, "# ")
				continue
			}
			if p != "" {
				paras = append(paras, strings.Join(strings.Fields(p), " "))
			}
		}
		base := strings.TrimSuffix(filepath.Base(f), ".md")
		// One page per paragraph, so a query has several pages to read.
		for i, p := range paras {
			path := fmt.Sprintf("/notes/%s-%d.html", base, i+1)
			s.pages[path] = webPage{title: fmt.Sprintf("%s (%d)", title, i+1), paras: []string{p}, js: i == 0}
			s.order = append(s.order, path)
		}
	}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	s.serveSearch(t, http.HandlerFunc(s.serve))
	return s
}

// serveSearch serves h on a second port, the site's SearXNG (searchURL).
func (s *webSite) serveSearch(t *testing.T, h http.Handler) {
	t.Helper()
	search := httptest.NewServer(h)
	t.Cleanup(search.Close)
	s.searchURL = search.URL
}

func (s *webSite) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/search" {
		s.searches.Add(1)
		s.search(w, r)
		return
	}
	if r.URL.Path == "/media/talk.wav" && s.audio != nil {
		http.ServeContent(w, r, "talk.wav", time.Time{}, bytes.NewReader(s.audio))
		return
	}
	pg, ok := s.pages[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	n := s.hits.Add(1)
	s.mu.Lock()
	hook := s.onHit
	if s.pathHits != nil {
		s.pathHits[r.URL.Path]++
	}
	s.mu.Unlock()
	if hook != nil {
		hook(n)
	}
	select {
	case <-time.After(s.delay):
	case <-r.Context().Done():
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if pg.raw != "" {
		io.WriteString(w, pg.raw)
		return
	}
	var body strings.Builder
	if pg.js {
		// The text arrives only when the script runs.
		js, _ := json.Marshal(pg.paras)
		fmt.Fprintf(&body, `<main id="m"></main><script>%s.forEach(function(t){var p=document.createElement("p");p.textContent=t;document.getElementById("m").appendChild(p);});</script>`, js)
	} else {
		body.WriteString("<main>")
		for _, p := range pg.paras {
			body.WriteString("<p>" + html.EscapeString(p) + "</p>")
		}
		body.WriteString("</main>")
	}
	if s.audio != nil {
		body.WriteString(`<audio controls preload="auto" src="/media/talk.wav"></audio>`)
	}
	fmt.Fprintf(w, "<!DOCTYPE html><html><head><title>%s</title></head><body><nav><a href=\"/\">home</a></nav><h1>%s</h1>%s</body></html>",
		html.EscapeString(pg.title), html.EscapeString(pg.title), body.String())
}

// search answers like SearXNG's JSON API: every page, in a fixed order,
// with title and a snippet (the first words of the page).
func (s *webSite) search(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("format") != "json" {
		http.Error(w, "Forbidden", http.StatusForbidden)
		return
	}
	type result struct {
		URL       string   `json:"url"`
		Title     string   `json:"title"`
		Content   string   `json:"content"`
		Engine    string   `json:"engine"`
		Engines   []string `json:"engines"`
		ParsedURL []string `json:"parsed_url"`
		Template  string   `json:"template"`
		Positions []int    `json:"positions"`
		Score     float64  `json:"score"`
		Category  string   `json:"category"`
	}
	var results []result
	if q.Get("pageno") == "1" {
		for i, p := range s.order {
			pg := s.pages[p]
			u, _ := url.Parse(s.URL + p)
			snippet := pg.paras[0]
			if len(snippet) > 160 {
				snippet = snippet[:160]
			}
			results = append(results, result{
				URL: u.String(), Title: pg.title, Content: snippet, Engine: "duckduckgo", Engines: []string{"duckduckgo"},
				ParsedURL: []string{u.Scheme, u.Host, u.Path, "", "", ""}, Template: "default.html",
				Positions: []int{i + 1}, Score: 1 / float64(i+1), Category: "general",
			})
		}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"query": q.Get("q"), "number_of_results": 0, "results": results, "answers": []any{},
		"corrections": []any{}, "infoboxes": []any{}, "suggestions": []any{}, "unresponsive_engines": []any{},
	})
}

// needChromium skips the test when LETHE_TEST_SKIP names chromium; a
// missing browser fails it under `make test` and in CI (lethetest.Missing).
func needChromium(t *testing.T) {
	t.Helper()
	lethetest.Tool(t, lethetest.Chromium, "chromium", "chromium-browser", "google-chrome")
}

// webParams send research through SearXNG (the double) and the browser,
// with loopback allowed, no local corpus.
func webParams(site *webSite) map[string]string {
	return map[string]string{
		"research.corpus_dir":     "",
		"research.searxng_url":    site.searchURL,
		"research.allow_loopback": "true",
		"research.allowed_ports":  "*", // the site is on a random loopback port
		"research.batch_size":     "3",
		"research.max_pages":      "6",
		"research.browser_tabs":   "2",
		"research.page_timeout":   "15s",
	}
}

type webOutcome struct {
	outcome
	elapsed time.Duration
	runs    []activities.ResearchResult
}

// runWebSession runs the battery script's session (two web_search calls)
// against the web site; kill, when set, runs while the session does.
func runWebSession(t *testing.T, id string, site *webSite, kill func(w *workerProc) *workerProc) webOutcome {
	t.Helper()
	srv := llmtest.NewServer(lethetest.Script(t, "battery_root_done"))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	queue := "lethe-" + id
	extra := webParams(site)
	for k, v := range site.params {
		extra[k] = v
	}
	extra["temporal.task_queue"] = queue
	extra["research.media_dir"] = filepath.Join(dir, "media")
	params := lethetest.Params(srv.URL(), dir)
	for k, v := range extra {
		params[k] = v
	}
	w := startWorker(t, params)
	c := dial(t)
	cfg := lethetest.Config(t, srv.URL(), dir, extra)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	start := time.Now()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: queue}, workflows.SessionWorkflow,
		workflows.SessionInput{Goal: goal, Config: &cfg})
	if err != nil {
		t.Fatal(err)
	}
	if kill != nil {
		w = kill(w)
	}
	out := webOutcome{outcome: finishSession(t, ctx, c, run, w, embeddedAt(cfg.Graph.Path))}
	out.elapsed = time.Since(start) // includes reading the graph back: milliseconds
	// Every research run replays deterministically from its real history.
	for _, e := range out.history.Events {
		if a := e.GetChildWorkflowExecutionCompletedEventAttributes(); a != nil {
			cid := a.GetWorkflowExecution().GetWorkflowId()
			h := history(t, c, cid, a.GetWorkflowExecution().GetRunId())
			replay(t, cid, h)
			var rr activities.ResearchResult
			if p := a.GetResult().GetPayloads(); len(p) > 0 {
				json.Unmarshal(p[0].GetData(), &rr)
			}
			evs := h.GetEvents()
			d := evs[len(evs)-1].GetEventTime().AsTime().Sub(evs[0].GetEventTime().AsTime())
			out.runs = append(out.runs, rr)
			t.Logf("research run %s: %s, %d pages in %d batches, %d new evidence, psi %.3f, stop %s",
				cid, d.Round(time.Millisecond), rr.Pages, rr.Batches, rr.NewEvidence, rr.Psi, rr.StopReason)
		}
	}
	return out
}

func webEvidence(t *testing.T, o webOutcome, site *webSite) map[string]bool {
	t.Helper()
	set := map[string]bool{}
	for _, e := range o.evidence {
		if e.Kind == graph.KindLLM {
			continue
		}
		if !strings.HasPrefix(e.SourceURL, site.URL+"/notes/") || e.Kind != graph.KindHTML {
			t.Errorf("evidence from %s (%s), want a page of the site", e.SourceURL, e.Kind)
		}
		set[graph.ContentHash(e.Content)] = true
	}
	return set
}

// TestWebResearchSurvivesKilledFetchWorker runs WebResearch (as the
// session's child, on a real dev server) through SearXNG and headless
// Chromium, and SIGKILLs the worker while a Fetch batch is loading pages:
// the Fetch is retried on a new worker, the run completes, and the
// evidence is exactly the evidence of an uninterrupted run — nothing lost,
// nothing twice.
func TestWebResearchSurvivesKilledFetchWorker(t *testing.T) {
	needChromium(t)
	site := newWebSite(t, 600*time.Millisecond)

	base := runWebSession(t, "web-uninterrupted", site, nil)
	checkNoDuplicates(t, base.outcome)
	checkPayloads(t, base.history)
	baseSet := webEvidence(t, base, site)
	baseHits := site.hits.Load()
	t.Logf("uninterrupted: %s, %d iterations, %d evidence (%d from pages), %d page loads, %d searches, stop %s",
		base.elapsed.Round(time.Millisecond), base.res.Iterations, len(base.evidence), len(baseSet), baseHits, site.searches.Load(), base.res.StopReason)
	if len(baseSet) == 0 {
		t.Fatal("the research runs produced no page evidence")
	}

	// Kill when the fifth page request of the run arrives: the first batch
	// (three pages) is done, the second is loading.
	killAt := baseHits + 5
	fired := make(chan struct{})
	var once sync.Once
	site.mu.Lock()
	site.onHit = func(n int64) {
		if n >= killAt {
			once.Do(func() { close(fired) })
		}
	}
	site.mu.Unlock()
	killed := runWebSession(t, "web-killed", site, func(w *workerProc) *workerProc {
		select {
		case <-fired:
		case <-time.After(2 * time.Minute):
			t.Fatal("no Fetch batch ever reached the site")
		}
		w.stop(syscall.SIGKILL)
		return startWorker(t, w.params)
	})
	checkNoDuplicates(t, killed.outcome)
	killedSet := webEvidence(t, killed, site)
	killedHits := site.hits.Load() - baseHits
	t.Logf("killed: %s, %d evidence (%d from pages), %d page loads", killed.elapsed.Round(time.Millisecond), len(killed.evidence), len(killedSet), killedHits)
	if killedHits <= baseHits {
		t.Errorf("the killed run loaded %d pages, the uninterrupted %d: the batch in flight was not fetched again", killedHits, baseHits)
	}
	if len(killed.evidence) != len(base.evidence) || len(killedSet) != len(baseSet) {
		t.Errorf("killed run has %d evidence (%d from pages), uninterrupted %d (%d)", len(killed.evidence), len(killedSet), len(base.evidence), len(baseSet))
	}
	for h := range baseSet {
		if !killedSet[h] {
			t.Errorf("evidence %s of the uninterrupted run is missing after the kill", h)
		}
	}
	if killed.res.Report != base.res.Report {
		t.Errorf("reports differ after the kill")
	}
}

// newMirrorSite is a web of near-copies: n pages that all restate the
// answer to the session's goal. After the first batch every page repeats
// what is held (information gain near 0) and stays on the goal, so the
// research loop's ψ rises past its threshold: the workload for the time to
// ψ.
func newMirrorSite(t *testing.T, n int, delay time.Duration) *webSite {
	t.Helper()
	s := &webSite{pages: map[string]webPage{}, delay: delay, params: map[string]string{"research.max_pages": "30"}}
	answer := []string{
		"Solid-state batteries fail mainly by lithium dendrites that penetrate the solid electrolyte and short the cell.",
		"Solid-state batteries also fail by interface degradation that raises resistance and loses contact between cathode and electrolyte.",
	}
	for i := 0; i < n; i++ {
		path := fmt.Sprintf("/mirror/%d.html", i)
		s.pages[path] = webPage{title: fmt.Sprintf("How do solid-state batteries fail? (mirror %d)", i), paras: answer, js: i%2 == 0}
		s.order = append(s.order, path)
	}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	s.serveSearch(t, http.HandlerFunc(s.serve))
	return s
}

// TestWebResearchTimeToPsi measures a research run's time to ψ: the
// session's first web_search runs over the mirror site (no page delay)
// until its ψ passes research.psi_threshold (0.70). Reported in the log
// (go test -run TimeToPsi -v ./e2e/).
func TestWebResearchTimeToPsi(t *testing.T) {
	needChromium(t)
	site := newMirrorSite(t, 30, 0)
	o := runWebSession(t, "web-psi", site, nil)
	if len(o.runs) == 0 {
		t.Fatal("no research run completed")
	}
	r := o.runs[0]
	if r.StopReason != workflows.ResearchConverged || r.Psi <= 0.70 {
		t.Errorf("first research run stopped by %s at psi %.3f, want converged past 0.70", r.StopReason, r.Psi)
	}
}

// spokenText is what the whisper double "hears".
const spokenText = "In this talk we show that lithium dendrites crossing the garnet separator are the first failure of the solid-state cells we cycled at high current."

// newWhisperDouble answers whisper.cpp's /inference protocol (multipart
// file plus options, {"text": ...}) with spokenText. No whisper model can
// be installed from the registries reachable here, so recognition itself
// is not exercised; the request the worker sends is.
func newWhisperDouble(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		f, _, err := r.FormFile("file")
		if r.URL.Path != "/inference" || err != nil || r.FormValue("response_format") != "json" || r.FormValue("translate") != "true" {
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"error": "bad request"}`)
			return
		}
		head := make([]byte, 44)
		io.ReadFull(f, head)
		if string(head[:4]) != "RIFF" || binary.LittleEndian.Uint16(head[22:24]) != 1 || binary.LittleEndian.Uint32(head[24:28]) != 16000 {
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"error": "want 16 kHz mono WAV"}`)
			return
		}
		calls.Add(1)
		json.NewEncoder(w).Encode(map[string]string{"text": " " + spokenText + "\n"})
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

// TestWebResearchTranscribesMedia: pages carry an audio file over 50 KB;
// the browser sees it on the network, Fetch captures it, Transcribe
// converts it with ffmpeg and sends it to the whisper.cpp protocol double,
// and Ingest stores the transcript as evidence of kind transcript.
func TestWebResearchTranscribesMedia(t *testing.T) {
	needChromium(t)
	lethetest.Tool(t, lethetest.FFmpeg, "ffmpeg")
	site := newWebSite(t, 0)
	site.audio = lethetest.SilentWAV(22050, 22050*3) // 3 s, 132 KB
	whisper, calls := newWhisperDouble(t)
	site.params = map[string]string{"research.whisper_url": whisper.URL}
	o := runWebSession(t, "web-media", site, nil)
	var transcripts int
	for _, e := range o.evidence {
		if e.Kind == graph.KindTranscript {
			transcripts++
			if e.SourceURL != site.URL+"/media/talk.wav" || !strings.Contains(e.Content, "lithium dendrites crossing the garnet separator") {
				t.Errorf("transcript evidence %s: %q", e.SourceURL, e.Content)
			}
		}
	}
	t.Logf("%d whisper calls, %d transcript evidence of %d", calls.Load(), transcripts, len(o.evidence))
	if calls.Load() == 0 || transcripts != 1 {
		t.Fatalf("%d whisper calls, %d transcript evidence; want the audio transcribed and stored once", calls.Load(), transcripts)
	}
}
