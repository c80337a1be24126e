package research

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/lethe-research/lethe/internal/lethetest"
)

// Hostile pages (issue #10): everything a page controls is bounded before
// it enters memory. These tests load each case with real Chromium (and
// pdftotext, ffmpeg) from a loopback site and check the bound, that the
// batch is not held up, and that no temporary file is left behind.

const (
	hostileStart  = "Hostile page start marker about electrolyte interphases."
	hostileEnd    = "HOSTILE-END-MARKER"
	pdfBombStart  = "EXPANSION START lithium plating report"
	hostileTitleN = 1 << 20 // bytes of the 1 MB title
	hostilePage   = 2 << 20 // MaxPageBytes of the hostile tests
	hostileText   = 256 << 10
	hlsPadding    = 60 << 10 // a playlist over MediaMinBytes, so it is captured
)

// hostileSite serves the hostile cases. watched counts requests for the HLS
// segments, which nothing may fetch.
type hostileSite struct {
	*httptest.Server
	watched  atomic.Int64
	mu       sync.Mutex
	watchLog []string // the requests for the watched segments
	longHits atomic.Int64
	pdf      []byte
	release  chan struct{}
}

func newHostileSite(t *testing.T) *hostileSite {
	t.Helper()
	s := &hostileSite{release: make(chan struct{}), pdf: makeExpandingPDF(pdfBombStart, 200, 700)}
	mux := http.NewServeMux()
	html := func(w http.ResponseWriter, body string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, body)
	}
	mux.HandleFunc("/title.html", func(w http.ResponseWriter, r *http.Request) {
		html(w, "<!DOCTYPE html><html><head><title>"+strings.Repeat("Endless title ", hostileTitleN/14+1)[:hostileTitleN]+
			"</title></head><body><main><p>"+hostileStart+"</p></main></body></html>")
	})
	mux.HandleFunc("/dom.html", func(w http.ResponseWriter, r *http.Request) { html(w, hostileDOMPage) })
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop?n="+r.URL.Query().Get("n")+"x", http.StatusFound)
	})
	long := "/long/" + strings.Repeat("a", 4096)
	mux.HandleFunc("/to-long", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, long, http.StatusFound) })
	mux.HandleFunc("/long/", func(w http.ResponseWriter, r *http.Request) {
		s.longHits.Add(1)
		html(w, "<p>never</p>")
	})
	mux.HandleFunc("/drip.html", s.drip)
	mux.HandleFunc("/ok.html", func(w http.ResponseWriter, r *http.Request) {
		html(w, "<!DOCTYPE html><html><head><title>Fine</title></head><body><main><p>"+pageAText+"</p></main></body></html>")
	})
	mux.HandleFunc("/bomb.pdf", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		w.Write(s.pdf)
	})
	mux.HandleFunc("/hls.html", func(w http.ResponseWriter, r *http.Request) {
		html(w, `<!DOCTYPE html><html><head><title>Live talk</title></head><body><main><p>`+hostileStart+`</p>
<video src="/hls/live.m3u8" autoplay muted preload="auto"></video><audio src="/hls/live.m3u8" preload="auto"></audio></main></body></html>`)
	})
	mux.HandleFunc("/hls/live.m3u8", s.playlist)
	mux.HandleFunc("/hls/watched/", func(w http.ResponseWriter, r *http.Request) {
		s.watched.Add(1) // the tests fail on any
		s.mu.Lock()
		s.watchLog = append(s.watchLog, fmt.Sprintf("%s %s (User-Agent %q, Sec-Fetch-Dest %q, Referer %q)", r.Method, r.URL, r.UserAgent(), r.Header.Get("Sec-Fetch-Dest"), r.Referer()))
		s.mu.Unlock()
		http.NotFound(w, r)
	})
	s.Server = httptest.NewServer(mux)
	t.Cleanup(func() {
		close(s.release)
		s.CloseClientConnections()
		s.Close()
	})
	return s
}

// hostileDOMPage builds a DOM of 50 MB by script (500 paragraphs of
// 100 KB, hidden: Chromium takes 20 s to lay out 50 MB of visible text,
// and the test is about what reaches the worker), then the end marker, and
// replaces the JavaScript built-ins a serialiser would use
// (String.prototype.slice, TextEncoder, the outerHTML getter): the
// isolated world the browser reads the DOM in does not see them.
const hostileDOMPage = `<!DOCTYPE html><html><head><title>Big DOM</title></head><body><main>
<p>` + hostileStart + `</p><div id="x" hidden></div></main><script>
const x = document.getElementById("x");
const text = "Filler sentence about nothing in particular. ".repeat(2200);
for (let i = 0; i < 500; i++) {
  const p = document.createElement("p");
  p.textContent = text;
  x.appendChild(p);
}
const end = document.createElement("p");
end.textContent = "` + hostileEnd + `";
x.parentNode.appendChild(end);
String.prototype.slice = function () { return String(this); };
window.TextEncoder = function () { this.encode = function () { return new Uint8Array(60e6); }; };
Object.defineProperty(Element.prototype, "outerHTML", { get() { return "x".repeat(60e6); } });
</script></body></html>`

// drip sends one byte a second and never finishes.
func (s *hostileSite) drip(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	io.WriteString(w, "<!DOCTYPE html><html><head><title>Drip</title></head><body><p>")
	for {
		if _, err := io.WriteString(w, "."); err != nil {
			return
		}
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			return
		case <-s.release:
			return
		case <-time.After(time.Second):
		}
	}
}

// playlist is an HLS playlist served as audio (a hostile server lies about
// the type), padded past MediaMinBytes, whose segments are the watched
// URLs on the same loopback site.
func (s *hostileSite) playlist(w http.ResponseWriter, r *http.Request) {
	var b strings.Builder
	b.WriteString("#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:10\n#EXT-X-MEDIA-SEQUENCE:0\n")
	for b.Len() < hlsPadding {
		b.WriteString("#EXT-X-LETHE-PADDING:" + strings.Repeat("p", 100) + "\n")
	}
	for i := 0; i < 3; i++ {
		fmt.Fprintf(&b, "#EXTINF:10.0,\n%s/hls/watched/seg%d.ts\n", s.URL, i)
	}
	b.WriteString("#EXT-X-ENDLIST\n")
	w.Header().Set("Content-Type", "audio/mpeg")
	if t := r.URL.Query().Get("type"); t != "" { // the playlist's own type
		w.Header().Set("Content-Type", t)
	}
	http.ServeContent(w, r, "live.mp3", time.Time{}, strings.NewReader(b.String()))
}

// makeExpandingPDF writes a small PDF whose text runs to megabytes: one
// Flate-compressed content stream of lines lines (1 pt type), shared by
// every page (200 pages of 700 lines: 34 KB of PDF, 10 MB of text).
func makeExpandingPDF(first string, pages, lines int) []byte {
	text := []string{first}
	line := strings.Repeat("impedance rises with cycling ", 10)
	for i := 0; i < lines; i++ {
		text = append(text, fmt.Sprintf("%s %d", line, i))
	}
	return lethetest.ExpandingPDF(text, pages)
}

// tempListing lists every file and directory under dir, relative.
func tempListing(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && p != dir {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	sort.Strings(out)
	return out
}

// hostileEnv is a browser, HTTP fetcher, PDF converter and transcriber
// whose temporary files all go to one directory (TMPDIR too, so
// Chromium's profile is counted).
type hostileEnv struct {
	tmp     string
	media   string
	browser *Browser
	http    *HTTPFetcher
	stt     *Transcriber
}

func newHostileEnv(t *testing.T, tabs int, pageTimeout time.Duration) *hostileEnv {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: real Chromium, pdftotext and ffmpeg against a loopback site")
	}
	exe := needChromium(t)
	needTool(t, "pdftotext")
	ffmpeg := needTool(t, "ffmpeg")
	e := &hostileEnv{tmp: t.TempDir()}
	t.Setenv("TMPDIR", e.tmp)
	e.media = filepath.Join(e.tmp, "media")
	lim := Limits{MaxTitleChars: 300, MaxURLBytes: 2048, MaxTextBytes: hostileText}
	e.http = NewHTTPFetcher(HTTPFetcherConfig{
		Policy: URLPolicy{AllowLoopback: true}, MaxPageBytes: hostilePage, MaxMediaBytes: 8 << 20, Timeout: 10 * time.Second,
		PDF: &PDFConverter{MaxPages: 200, Timeout: 30 * time.Second, MemoryBytes: 512 << 20}, MediaDir: e.media, Limits: lim,
	})
	b, err := NewBrowser(BrowserConfig{
		ExecPath: exe, Tabs: tabs, PageTimeout: pageTimeout, MaxPageBytes: hostilePage, HTTP: e.http, Limits: lim,
		Logf: func(f string, a ...any) { t.Logf("browser: "+f, a...) },
	})
	if err != nil {
		t.Fatal(err)
	}
	e.browser = b
	t.Cleanup(b.Close)
	e.stt = &Transcriber{FFmpeg: ffmpeg, MaxDuration: 30 * time.Second, ConvertTimeout: 30 * time.Second, MemoryBytes: 512 << 20, Limits: lim}
	return e
}

// leftovers closes the browser (its profile directory goes with it) and
// returns what is left in the temporary directory besides keep.
func (e *hostileEnv) leftovers(t *testing.T, keep ...string) []string {
	t.Helper()
	e.browser.Close()
	skip := map[string]bool{"media": true}
	for _, k := range keep {
		rel, _ := filepath.Rel(e.tmp, k)
		skip[rel] = true
	}
	var left []string
	for _, p := range tempListing(t, e.tmp) {
		if !skip[p] {
			left = append(left, p)
		}
	}
	return left
}

// TestHostilePages loads the hostile cases in one batch with two tabs: a
// 1 MB title, a 50 MB DOM built by script (with the serialiser's built-ins
// replaced), a PDF whose text expands far past the cap, a redirect loop, a
// redirect to a URL over the cap, and a page that drips a byte a second
// for ever, next to an ordinary page.
func TestHostilePages(t *testing.T) {
	const pageTimeout = 6 * time.Second
	e := newHostileEnv(t, 2, pageTimeout)
	site := newHostileSite(t)
	before := tempListing(t, e.tmp)
	// Chromium starts on the first batch: start it first, so the batch
	// below measures the pages.
	if r := e.browser.FetchAll(context.Background(), []string{site.URL + "/ok.html"}, nil)[0]; r.Err != nil {
		t.Fatal(r.Err)
	}
	paths := []string{"/drip.html", "/title.html", "/dom.html", "/bomb.pdf", "/loop", "/to-long", "/ok.html"}
	urls := make([]string, len(paths))
	for i, p := range paths {
		urls[i] = site.URL + p
	}
	start := time.Now()
	res := e.browser.FetchAll(context.Background(), urls, nil)
	total := time.Since(start)
	by := map[string]PageResult{}
	for i, r := range res {
		by[paths[i]] = r
		t.Logf("%-12s %6dms err=%.120v title=%d runes text=%d bytes=%d truncated=%v", paths[i], r.Duration.Milliseconds(), r.Err,
			utf8.RuneCountInString(r.Doc.Title), len(r.Doc.Text), r.Doc.Bytes, r.Doc.Truncated)
	}
	t.Logf("batch of %d hostile pages with 2 tabs: %s", len(urls), total)

	checkTitlePage(t, by["/title.html"])
	checkDOMPage(t, by["/dom.html"])
	checkPDFBomb(t, by["/bomb.pdf"])
	if r := by["/loop"]; r.Err == nil || !strings.Contains(r.Err.Error(), "REDIRECT") {
		t.Errorf("redirect loop: %v", r.Err)
	}
	if r := by["/to-long"]; !errors.Is(r.Err, ErrRefused) || site.longHits.Load() != 0 {
		t.Errorf("redirect to a URL over the cap: %v, %d requests reached it", r.Err, site.longHits.Load())
	}
	drip := by["/drip.html"]
	if drip.Err == nil || !strings.Contains(drip.Err.Error(), "timed out") || drip.Duration > pageTimeout+4*time.Second {
		t.Errorf("drip page: %v after %s (page timeout %s)", drip.Err, drip.Duration, pageTimeout)
	}
	if r := by["/ok.html"]; r.Err != nil || !strings.Contains(r.Doc.Text, pageAText) {
		t.Errorf("ordinary page next to the hostile ones: %v", r.Err)
	}
	// The drip page holds one tab for the page timeout; the other tab
	// works through the rest meanwhile.
	if total > 3*pageTimeout {
		t.Errorf("batch took %s: the drip page stalled it", total)
	}
	// The plain-HTTP fetcher: the same loop and long redirect, and the drip
	// page under its own timeout.
	if _, err := e.http.Fetch(context.Background(), site.URL+"/loop"); err == nil || !strings.Contains(err.Error(), "redirects") {
		t.Errorf("http redirect loop: %v", err)
	}
	if _, err := e.http.Fetch(context.Background(), site.URL+"/to-long"); !errors.Is(err, ErrRefused) || site.longHits.Load() != 0 {
		t.Errorf("http redirect to a URL over the cap: %v", err)
	}
	if left := e.leftovers(t); fmt.Sprint(left) != fmt.Sprint(before) {
		t.Errorf("temporary files left behind: %v (before: %v)", left, before)
	}
}

func checkTitlePage(t *testing.T, r PageResult) {
	t.Helper()
	if r.Err != nil {
		t.Fatalf("1 MB title: %v", r.Err)
	}
	if n := utf8.RuneCountInString(r.Doc.Title); n > 300 || !strings.HasPrefix(r.Doc.Title, "Endless title") || !strings.Contains(r.Doc.Text, hostileStart) {
		t.Errorf("1 MB title: title of %d runes, text %.100q", n, r.Doc.Text)
	}
}

func checkDOMPage(t *testing.T, r PageResult) {
	t.Helper()
	if r.Err != nil {
		t.Fatalf("50 MB DOM: %v", r.Err)
	}
	d := r.Doc
	// Bytes is what reached the worker from the DOM (the main document
	// itself is 1 KB): at most the cap, and the page's replaced built-ins
	// did not get 60 MB through.
	if d.Bytes > hostilePage || !d.Truncated || !strings.Contains(d.Text, hostileStart) || strings.Contains(d.Text, hostileEnd) || len(d.Text) > hostileText {
		t.Errorf("50 MB DOM: %d bytes read (cap %d), truncated %v, start %v, end %v, text %d bytes",
			d.Bytes, hostilePage, d.Truncated, strings.Contains(d.Text, hostileStart), strings.Contains(d.Text, hostileEnd), len(d.Text))
	}
}

func checkPDFBomb(t *testing.T, r PageResult) {
	t.Helper()
	if r.Err != nil {
		t.Fatalf("expanding PDF: %v", r.Err)
	}
	d := r.Doc
	// Every page of the bomb is the same content stream, so its first
	// line, pdfBombStart, heads each of the five pages the cap lets
	// through: a running header, dropped (pdf_running.go). The text
	// begins with the body that follows it on the first page.
	if !d.Truncated || len(d.Text) > hostileText || len(d.Text) < hostileText/2 || !strings.HasPrefix(d.Text, "impedance rises with cycling") {
		t.Errorf("expanding PDF: truncated %v, %d bytes of text (cap %d), starts %.60q", d.Truncated, len(d.Text), hostileText, d.Text)
	}
}

// TestHostilePDFConverter: pdftotext is killed at the text cap (run to
// the end it writes 10 MB of text from this 34 KB PDF, in about 7 s) and
// the beginning is kept, quickly; the temporary copy of the PDF is gone.
func TestHostilePDFConverter(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs pdftotext")
	}
	needTool(t, "pdftotext")
	dir := t.TempDir()
	pdf := makeExpandingPDF(pdfBombStart, 200, 700)
	conv := PDFConverter{MaxPages: 200, Timeout: time.Minute, TmpDir: dir, Limits: Limits{MaxTextBytes: 64 << 10}, MemoryBytes: 512 << 20}
	start := time.Now()
	doc, err := conv.Extract(context.Background(), bytes.NewReader(pdf), "https://example.org/bomb.pdf")
	took := time.Since(start)
	t.Logf("a %d-byte PDF: %d bytes of text kept in %s", len(pdf), len(doc.Text), took)
	if err != nil || !doc.Truncated || len(doc.Text) > 64<<10 || !strings.HasPrefix(doc.Text, pdfBombStart) {
		t.Fatalf("err %v truncated %v, %d bytes, %.60q", err, doc.Truncated, len(doc.Text), doc.Text)
	}
	if left := tempListing(t, dir); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}

// TestHostileHLS: a page whose <video> and <audio> point at an HLS
// playlist served as audio/mpeg, the playlist opened as a page (as
// audio/mpegurl and as application/vnd.apple.mpegurl: Chromium would play
// either in a media document), and the playlist fetched directly as media. The playlist is
// captured (it claims to be audio), Chromium never plays it, and ffmpeg
// refuses it (playlists are not among its input formats, and it may only
// read local files): nothing, ffmpeg in particular, requests the
// segments. No temporary file is left once the captured files are
// handled.
func TestHostileHLS(t *testing.T) {
	e := newHostileEnv(t, 1, 8*time.Second)
	site := newHostileSite(t)
	wd := newWhisperDouble(t, "never")
	e.stt.Whisper = &WhisperClient{BaseURL: wd.URL}
	before := tempListing(t, e.tmp)

	res := e.browser.FetchAll(context.Background(), []string{site.URL + "/hls.html", site.URL + "/hls/live.m3u8?type=audio/mpegurl",
		site.URL + "/hls/live.m3u8?type=application/vnd.apple.mpegurl"}, nil)
	var media []MediaRef
	for _, r := range res[:2] {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
		media = append(media, r.Doc.Media...)
	}
	// With its own type the playlist is neither media nor a page.
	if res[2].Err == nil {
		t.Errorf("an HLS playlist opened as a page: %+v", res[2].Doc)
	}
	direct, err := e.http.Fetch(context.Background(), site.URL+"/hls/live.m3u8")
	if err != nil || len(direct.Media) != 1 || len(res[0].Doc.Media) != 1 || len(res[1].Doc.Media) != 1 {
		t.Fatalf("the playlist captured from the page %+v, opened %+v, fetched directly %+v (%v)", res[0].Doc.Media, res[1].Doc.Media, direct.Media, err)
	}
	media = append(media, direct.Media...)
	var captured []string
	for _, m := range media {
		t.Logf("captured %s → %s", m.URL, m.Path)
		captured = append(captured, m.Path)
		_, err := e.stt.Transcribe(context.Background(), m.Path)
		if err == nil || !strings.Contains(err.Error(), "whitelist") {
			t.Errorf("ffmpeg on a playlist: %v", err)
		} else {
			t.Logf("refused: %.200v", err)
		}
	}
	if n := site.watched.Load(); n != 0 {
		site.mu.Lock()
		t.Errorf("%d requests for the HLS segments: %q", n, site.watchLog)
		site.mu.Unlock()
	}
	if len(wd.requests()) != 0 {
		t.Errorf("a playlist reached whisper")
	}
	// The captured files are the Transcribe activity's to delete; nothing
	// else may be left.
	if left := e.leftovers(t, captured...); fmt.Sprint(left) != fmt.Sprint(before) {
		t.Errorf("temporary files left behind: %v (before: %v, captured %v)", left, before, captured)
	}
}
