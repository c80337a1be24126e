package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	commonpb "go.temporal.io/api/common/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/lethe-research/lethe/activities"
	"github.com/lethe-research/lethe/internal/lethetest"
	"github.com/lethe-research/lethe/llm/llmtest"
	"github.com/lethe-research/lethe/workflows"
)

// Bounds the hostile suite holds the worker to.
const (
	payloadBound   = 256 << 10 // DESIGN.md §9: every payload < 256 KiB
	hostileTextCap = 256 << 10 // research.max_text_bytes of the suite
	titleCap       = 300       // research.max_title_chars (default)
	fdSlack        = 8         // open files a settled worker may hold beyond its baseline
	goroutineSlack = 25        // goroutines likewise (pooled connections, timers)
	settleWithin   = 20 * time.Second
)

// hostileWeb is a SearXNG double whose results are hostile pages: a 1 MB
// <title>, a 50 MB DOM built by script, a PDF whose text expands past the
// text cap, an HLS playlist whose segments point at a watched loopback
// server, a redirect loop and a page that drips a byte a second forever;
// plus two pages of the test corpus, so the session has something to cite.
// Until armed is set its search answers with the benign corpus site (the
// warm-up).
type hostileWeb struct {
	*webSite          // the hostile results and the corpus pages among them
	warm     *webSite // the warm-up's results
	armed    atomic.Bool
	watched  *httptest.Server
	watchLog []string // requests that reached the watched server
	mu       sync.Mutex
	redirs   atomic.Int64 // redirect-loop hops served
	drips    atomic.Int64 // slow-drip responses still being written
	quit     chan struct{}
	pdf      []byte
}

// hostilePaths are the hostile pages with the snippet the search shows.
var hostilePaths = []struct{ path, title string }{
	{"/hostile/title.html", "Dendrites in garnet electrolytes: a long title"},
	{"/hostile/dom.html", "Interface degradation, generated"},
	{"/hostile/expand.pdf", "Solid electrolyte failure data (PDF)"},
	{"/hostile/live.m3u8", "Solid-state battery failure talk (stream)"},
	{"/hostile/loop", "Solid-state battery failure, moved"},
	{"/hostile/drip.html", "Solid-state battery failure, slowly"},
}

func newHostileWeb(t *testing.T) *hostileWeb {
	t.Helper()
	h := &hostileWeb{warm: newWebSite(t, 0), quit: make(chan struct{}), pdf: expandingPDF(200, 120)}
	h.warm.audio = lethetest.SilentWAV(22050, 22050*3) // warms capture, ffmpeg and STT too
	h.watched = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.watchLog = append(h.watchLog, fmt.Sprintf("%s %s (User-Agent %q)", r.Method, r.URL, r.UserAgent()))
		h.mu.Unlock()
		http.NotFound(w, r)
	}))
	t.Cleanup(h.watched.Close)
	h.webSite = &webSite{pages: map[string]webPage{}}
	for _, p := range h.warm.order[:2] {
		h.pages[p], h.order = h.warm.pages[p], append(h.order, p)
	}
	for _, p := range hostilePaths {
		h.pages[p.path] = webPage{title: p.title, paras: []string{p.title + ": how solid-state batteries fail by lithium dendrites and interface degradation."}}
		h.order = append(h.order, p.path)
	}
	h.Server = httptest.NewServer(http.HandlerFunc(h.serve))
	t.Cleanup(h.Close)
	h.serveSearch(t, http.HandlerFunc(h.serve))
	t.Cleanup(func() { close(h.quit) }) // runs first: drips end, Close can return
	return h
}

func (h *hostileWeb) serve(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/search" && !h.armed.Load():
		h.warm.search(w, r)
	case r.URL.Path == "/hostile/title.html":
		h.title(w)
	case r.URL.Path == "/hostile/dom.html":
		io.WriteString(w, bigDOMPage)
	case r.URL.Path == "/hostile/expand.pdf":
		w.Header().Set("Content-Type", "application/pdf")
		w.Write(h.pdf)
	case r.URL.Path == "/hostile/live.m3u8":
		w.Header().Set("Content-Type", "audio/mpegurl") // a media type: captured and sent to ffmpeg
		io.WriteString(w, hlsPlaylist(h.watched.URL))
	case strings.HasPrefix(r.URL.Path, "/hostile/loop"):
		// Every hop is a new URL, so no client sees a cycle: only a hop
		// limit ends it.
		n := h.redirs.Add(1)
		http.Redirect(w, r, fmt.Sprintf("/hostile/loop/%d", n), http.StatusFound)
	case r.URL.Path == "/hostile/drip.html":
		h.drip(w, r)
	default:
		h.webSite.serve(w, r)
	}
}

// title serves a page with a 1 MB <title> and a paragraph worth keeping,
// so the title reaches evidence unless it is cut.
func (h *hostileWeb) title(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	var b strings.Builder
	b.WriteString("<!DOCTYPE html><html><head><title>")
	for b.Len() < 1<<20 {
		b.WriteString("Lithium dendrites in garnet electrolytes ")
	}
	fmt.Fprintf(&b, "</title></head><body><main><p>%s</p></main></body></html>", html.EscapeString(h.warm.pages[h.warm.order[2]].paras[0]))
	io.WriteString(w, b.String())
}

// drip sends an HTML head, then one byte a second until the client goes
// away (or the test ends): a page that never finishes loading.
func (h *hostileWeb) drip(w http.ResponseWriter, r *http.Request) {
	h.drips.Add(1)
	defer h.drips.Add(-1)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	rc := http.NewResponseController(w)
	io.WriteString(w, "<!DOCTYPE html><html><head><title>Slowly</title></head><body><p>Solid-state batteries fail ")
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		if rc.Flush() != nil {
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-h.quit:
			return
		case <-tick.C:
			if _, err := io.WriteString(w, "."); err != nil {
				return
			}
		}
	}
}

// bigDOMPage builds about 50 MB of DOM in script (51,200 paragraphs of
// about 1 KB) once the document has loaded: the HTML on the wire is small,
// the document the fetcher reads is not. (Built by an inline script
// instead, it holds back DOMContentLoaded, and a loaded machine times the
// page out before the DOM is ever read.)
const bigDOMPage = `<!DOCTYPE html><html><head><title>Interface degradation, generated</title></head><body><main id="m"><p>Interface degradation raises resistance.</p></main><script>
document.addEventListener("DOMContentLoaded", () => {
	const p = "<p>" + "Interface degradation raises resistance between cathode and solid electrolyte. ".repeat(13) + "</p>";
	const parts = [];
	for (let i = 0; i < 51200; i++) parts.push(p);
	document.getElementById("m").innerHTML = parts.join("");
});
</script></body></html>`

// hlsPlaylist is an HLS media playlist whose segments live on the watched
// server: a fetcher or converter that follows it makes requests the page
// chose, to an address the page chose.
func hlsPlaylist(watched string) string {
	var b strings.Builder
	b.WriteString("#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:10\n#EXT-X-MEDIA-SEQUENCE:0\n")
	for i := 0; i < 6; i++ {
		fmt.Fprintf(&b, "#EXTINF:10.0,\n%s/segments/%d.ts\n", watched, i)
	}
	b.WriteString("#EXT-X-ENDLIST\n")
	return b.String()
}

// expandingPDF is a PDF of pages pages that all show one compressed content
// stream of lines lines of text: a few KB on the wire, pages×lines×~90
// bytes of text (200×120: about 2 MB, eight times the suite's text cap).
func expandingPDF(pages, lines int) []byte {
	text := make([]string, lines)
	for i := range text {
		text[i] = fmt.Sprintf("Line %03d: lithium dendrites cross the garnet separator at high current density.", i)
	}
	return lethetest.ExpandingPDF(text, pages)
}

// hostileRig is one worker process with its own TMPDIR, media directory and
// metrics port, and the model and whisper doubles it talks to.
type hostileRig struct {
	web      *hostileWeb
	w        *workerProc
	c        client.Client
	dir      string
	tmp      string
	media    string
	metrics  string
	extra    map[string]string
	modelURL string
}

func newHostileRig(t *testing.T) *hostileRig {
	t.Helper()
	r := &hostileRig{web: newHostileWeb(t), dir: t.TempDir()}
	srv := llmtest.NewServer(lethetest.Script(t, "battery_root_done"))
	t.Cleanup(srv.Close)
	whisper, _ := newWhisperDouble(t)
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	r.modelURL, r.metrics = srv.URL(), fmt.Sprintf("127.0.0.1:%d", port)
	// A short TMPDIR: Chromium puts a Unix socket under it, and a socket
	// path over 107 bytes (t.TempDir is deep) keeps Chromium from starting.
	if r.tmp, err = os.MkdirTemp("", "lethe-h"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(r.tmp) })
	r.media = filepath.Join(r.dir, "media")
	if err := os.MkdirAll(r.media, 0o755); err != nil {
		t.Fatal(err)
	}
	r.extra = webParams(r.web.webSite)
	for k, v := range map[string]string{
		// One batch holds every result, so every hostile page is loaded.
		"research.batch_size": "8", "research.max_pages": "8", "research.browser_tabs": "3",
		"research.page_timeout": "15s", "research.max_text_bytes": strconv.Itoa(hostileTextCap),
		"research.media_dir": r.media, "research.whisper_url": whisper.URL,
		"temporal.task_queue": "lethe-hostile",
	} {
		r.extra[k] = v
	}
	params := lethetest.Params(r.modelURL, r.dir)
	for k, v := range r.extra {
		params[k] = v
	}
	params["telemetry.metrics_addr"] = r.metrics
	r.w = startWorkerEnv(t, params, []string{"TMPDIR=" + r.tmp})
	r.c = dial(t)
	return r
}

// session runs one session to its end, checks the bound of every payload
// in its history and its research runs' histories, and returns the pages
// its Fetch activities reported.
func (r *hostileRig) session(t *testing.T, id string) (workflows.SessionResult, []activities.PageRef) {
	t.Helper()
	cfg := lethetest.Config(t, r.modelURL, r.dir, r.extra)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	run, err := r.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: r.extra["temporal.task_queue"]},
		workflows.SessionWorkflow, workflows.SessionInput{Goal: goal, Config: &cfg})
	if err != nil {
		t.Fatal(err)
	}
	var res workflows.SessionResult
	if err := run.Get(ctx, &res); err != nil {
		r.w.dumpLog(t)
		t.Fatalf("session %s did not complete: %v", id, err)
	}
	h := history(t, r.c, id, run.GetRunID())
	checkHistoryBounds(t, id, h)
	var pages []activities.PageRef
	for _, e := range h.Events {
		if a := e.GetChildWorkflowExecutionCompletedEventAttributes(); a != nil {
			ex := a.GetWorkflowExecution()
			ch := history(t, r.c, ex.GetWorkflowId(), ex.GetRunId())
			checkHistoryBounds(t, ex.GetWorkflowId(), ch)
			pages = append(pages, fetchedPages(t, ch)...)
		}
	}
	return res, pages
}

// fetchedPages decodes the results of the Fetch activities in h.
func fetchedPages(t *testing.T, h *historypb.History) []activities.PageRef {
	t.Helper()
	types := map[int64]string{}
	var out []activities.PageRef
	for _, e := range h.GetEvents() {
		if a := e.GetActivityTaskScheduledEventAttributes(); a != nil {
			types[e.GetEventId()] = a.GetActivityType().GetName()
		}
		a := e.GetActivityTaskCompletedEventAttributes()
		if a == nil || len(a.GetResult().GetPayloads()) == 0 {
			continue
		}
		if types[a.GetScheduledEventId()] == "Transcribe" {
			// Which media reached ffmpeg and whisper, and what came of it.
			t.Logf("transcribe: %s", a.GetResult().GetPayloads()[0].GetData())
		}
		if types[a.GetScheduledEventId()] != "Fetch" {
			continue
		}
		var fr activities.FetchResult
		if err := json.Unmarshal(a.GetResult().GetPayloads()[0].GetData(), &fr); err != nil {
			t.Errorf("Fetch result of event %d: %v", e.GetEventId(), err)
		}
		out = append(out, fr.Pages...)
	}
	return out
}

// usage is what a worker holds: open files, goroutines, files in its
// TMPDIR (by name family: the random suffix cut) and in its media directory.
type usage struct {
	fds, goroutines int
	tmp             map[string]int
	media           []string
}

func (r *hostileRig) usage(t *testing.T) usage {
	t.Helper()
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", r.w.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	u := usage{fds: len(fds), goroutines: scrapeGoroutines(t, r.metrics), tmp: map[string]int{}}
	tmp, _ := os.ReadDir(r.tmp)
	for _, e := range tmp {
		u.tmp[strings.TrimRight(e.Name(), "0123456789")]++
	}
	filepath.WalkDir(r.media, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			u.media = append(u.media, strings.TrimPrefix(p, r.media+"/"))
		}
		return nil
	})
	return u
}

// scrapeGoroutines reads go_goroutines from the worker's /metrics, on a
// connection that is closed afterwards (an idle one would be counted).
func scrapeGoroutines(t *testing.T, addr string) int {
	t.Helper()
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := hc.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatalf("worker metrics: %v", err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "go_goroutines "); ok {
			n, err := strconv.ParseFloat(v, 64)
			if err == nil {
				return int(n)
			}
		}
	}
	t.Fatalf("worker metrics at %s have no go_goroutines", addr)
	return 0
}

// leaks compares u with the baseline b and describes what u holds beyond
// the slack.
func (u usage) leaks(b usage) []string {
	var out []string
	if u.fds > b.fds+fdSlack {
		out = append(out, fmt.Sprintf("%d open files, baseline %d", u.fds, b.fds))
	}
	if u.goroutines > b.goroutines+goroutineSlack {
		out = append(out, fmt.Sprintf("%d goroutines, baseline %d", u.goroutines, b.goroutines))
	}
	for fam, n := range u.tmp {
		if n > b.tmp[fam] {
			out = append(out, fmt.Sprintf("TMPDIR holds %d× %s*, baseline %d", n, fam, b.tmp[fam]))
		}
	}
	if len(u.media) > len(b.media) {
		out = append(out, fmt.Sprintf("media dir holds %q, baseline %q", u.media, b.media))
	}
	sort.Strings(out)
	return out
}

// baseline is the worker's usage once the warm-up's connections are closed
// and its timers have wound down.
func (r *hostileRig) baseline(t *testing.T) usage {
	t.Helper()
	r.web.CloseClientConnections()
	r.web.warm.CloseClientConnections()
	time.Sleep(3 * time.Second)
	return r.usage(t)
}

// checkPages logs what Fetch made of every hostile page and holds the
// page-controlled fields to their caps: title, text.
func checkPages(t *testing.T, base string, pages []activities.PageRef) {
	t.Helper()
	seen := map[string]bool{}
	for _, p := range pages {
		path := strings.TrimPrefix(p.URL, base)
		seen[path] = true
		t.Logf("fetched %s: kind %q, %d chars, title %d chars, media %q, error %q", path, p.Kind, p.Chars, utf8.RuneCountInString(p.Title), p.Media, p.Error)
		if n := utf8.RuneCountInString(p.Title); n > titleCap+1 {
			t.Errorf("Fetch kept a title of %d characters from %s, over %d", n, path, titleCap)
		}
		if p.Chars > hostileTextCap {
			t.Errorf("Fetch kept %d chars of text from %s, over research.max_text_bytes %d", p.Chars, path, hostileTextCap)
		}
	}
	for _, h := range hostilePaths {
		if !seen[h.path] {
			t.Errorf("no research run fetched %s", h.path)
		}
	}
}

// settle closes the connections the test servers hold open (pooled
// keep-alives are not leaks) and polls until the worker is back at the
// baseline or settleWithin passes; it returns what is still above it.
func (r *hostileRig) settle(t *testing.T, base usage) (usage, []string) {
	t.Helper()
	deadline := time.Now().Add(settleWithin)
	for {
		r.web.CloseClientConnections()
		r.web.warm.CloseClientConnections()
		u := r.usage(t)
		l := u.leaks(base)
		if len(l) == 0 || time.Now().After(deadline) {
			return u, l
		}
		time.Sleep(time.Second)
	}
}

// TestHostilePages runs a warm-up session over the benign corpus site, takes
// the worker's baseline, then one session whose research meets every
// hostile page at once (one Fetch batch). The session must complete; no
// payload or event in its histories may reach 256 KiB; the watched server
// must see no request; the slow drip must be hung up on; no title over the
// cap may reach evidence; and the worker's files, goroutines and temporary
// files must return to the baseline.
func TestHostilePages(t *testing.T) {
	needChromium(t)
	r := newHostileRig(t)
	start := time.Now()
	warm, _ := r.session(t, "hostile-warmup")
	base := r.baseline(t)
	t.Logf("warm-up: %s, stop %s, %d evidence; baseline %d files, %d goroutines, TMPDIR %v, media %q",
		time.Since(start).Round(time.Millisecond), warm.StopReason, warm.Evidence, base.fds, base.goroutines, base.tmp, base.media)

	r.web.armed.Store(true)
	start = time.Now()
	res, pages := r.session(t, "hostile-pages")
	t.Logf("hostile session: %s, stop %s, %d iterations, %d evidence", time.Since(start).Round(time.Millisecond), res.StopReason, res.Iterations, res.Evidence)
	checkPages(t, r.web.URL, pages)
	r.checkSite(t)
	after, leaks := r.settle(t, base)
	t.Logf("after: %d files, %d goroutines, TMPDIR %v, media %q", after.fds, after.goroutines, after.tmp, after.media)
	for _, l := range leaks {
		t.Errorf("not back to baseline %s after the session: %s", settleWithin, l)
	}
	r.w.stop(syscall.SIGTERM)
	r.checkEvidence(t, "hostile-pages")
}

// checkSite asserts what the hostile server saw: nothing reached the
// watched server, the redirect loop was cut, and no drip is still being
// read (the fetcher hung up; a tunnel left open keeps it going).
func (r *hostileRig) checkSite(t *testing.T) {
	t.Helper()
	r.web.mu.Lock()
	watched := append([]string(nil), r.web.watchLog...)
	r.web.mu.Unlock()
	for _, w := range watched {
		t.Errorf("the HLS playlist's segment server was requested: %s", w)
	}
	t.Logf("redirect loop: %d hops served", r.web.redirs.Load())
	if n := r.web.redirs.Load(); n == 0 || n > 100 {
		t.Errorf("redirect loop: %d hops served, want some and at most 100", n)
	}
	deadline := time.Now().Add(settleWithin)
	for r.web.drips.Load() > 0 && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	if n := r.web.drips.Load(); n > 0 {
		t.Errorf("%d slow-drip responses still being read %s after the session ended", n, settleWithin)
	}
}

// checkEvidence reads the session's evidence from the stopped worker's
// graph: no title over the cap, no URL over research.max_url_bytes.
func (r *hostileRig) checkEvidence(t *testing.T, id string) {
	t.Helper()
	store, err := embeddedAt(filepath.Join(r.dir, "graph.db"))()
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ev, err := store.Evidence(context.Background(), id, "")
	if err != nil {
		t.Fatal(err)
	}
	bySource := map[string]int{}
	for _, e := range ev {
		bySource[e.SourceURL]++
		// Transcripts add " (transcript)" to the page's title.
		if n := utf8.RuneCountInString(strings.TrimSuffix(e.Title, " (transcript)")); n > titleCap+1 {
			t.Errorf("evidence from %s has a title of %d characters, over %d", e.SourceURL, n, titleCap)
		}
		if len(e.SourceURL) > 2048 {
			t.Errorf("evidence source URL of %d bytes", len(e.SourceURL))
		}
	}
	t.Logf("hostile session evidence by source: %v", bySource)
}

// checkHistoryBounds walks every event of h: the event itself and every
// Payloads and Payload in it must stay under payloadBound.
func checkHistoryBounds(t *testing.T, id string, h *historypb.History) {
	t.Helper()
	largestEvent, largestPayload := 0, 0
	for _, e := range h.GetEvents() {
		n := proto.Size(e)
		largestEvent = max(largestEvent, n)
		if n >= payloadBound {
			t.Errorf("%s: event %d (%s) is %d bytes, over %d", id, e.GetEventId(), e.GetEventType(), n, payloadBound)
		}
		walkPayloads(e.ProtoReflect(), e.GetEventType().String(), func(path string, size int) {
			largestPayload = max(largestPayload, size)
			if size >= payloadBound {
				t.Errorf("%s: event %d %s is %d bytes, over %d", id, e.GetEventId(), path, size, payloadBound)
			}
		})
	}
	t.Logf("%s: %d events, largest event %d bytes, largest payload %d bytes", id, len(h.GetEvents()), largestEvent, largestPayload)
}

// walkPayloads calls fn with the size of every Payloads and Payload message
// inside m, however deeply nested (results, inputs, failure details,
// headers, memos).
func walkPayloads(m protoreflect.Message, path string, fn func(path string, size int)) {
	switch v := m.Interface().(type) {
	case *commonpb.Payloads:
		fn(path, proto.Size(v))
		return
	case *commonpb.Payload:
		fn(path, proto.Size(v))
		return
	}
	m.Range(func(fd protoreflect.FieldDescriptor, val protoreflect.Value) bool {
		if fd.Kind() != protoreflect.MessageKind && fd.Kind() != protoreflect.GroupKind {
			return true
		}
		p := path + "." + string(fd.Name())
		switch {
		case fd.IsList():
			for i := 0; i < val.List().Len(); i++ {
				walkPayloads(val.List().Get(i).Message(), fmt.Sprintf("%s[%d]", p, i), fn)
			}
		case fd.IsMap():
			val.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				if fd.MapValue().Kind() == protoreflect.MessageKind {
					walkPayloads(mv.Message(), p+"["+k.String()+"]", fn)
				}
				return true
			})
		default:
			walkPayloads(val.Message(), p, fn)
		}
		return true
	})
}
