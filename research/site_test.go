package research

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lethe-research/lethe/internal/lethetest"
)

// needTool returns the path of an executable the test needs. The test
// skips when LETHE_TEST_SKIP names the tool's component; a missing tool
// fails it under `make test` (which installs them all) and in CI, and skips
// it under -short or in a plain `go test` (lethetest.Missing).
func needTool(t testing.TB, names ...string) string {
	t.Helper()
	return lethetest.Tool(t, toolComponent(names[0]), names...)
}

// toolComponent is the LETHE_TEST_SKIP component that provides a tool;
// anything else (coreutils) belongs to the system.
func toolComponent(name string) string {
	switch name {
	case lethetest.Chromium, lethetest.FFmpeg, lethetest.PDFToText, lethetest.EspeakNG:
		return name
	}
	return lethetest.System
}

func needChromium(t testing.TB) string {
	t.Helper()
	lethetest.Need(t, lethetest.Chromium)
	if p, err := FindChromium(os.Getenv("LETHE_TEST_CHROMIUM")); err == nil {
		return p
	}
	return needTool(t, "chromium")
}

// makePDF writes a minimal valid PDF 1.4 by hand: one Helvetica text page
// per element of pages, a document information dictionary with title, and
// a correct cross-reference table.
func makePDF(title string, pages [][]string) []byte {
	esc := func(s string) string {
		return strings.NewReplacer(`\`, `\\`, "(", `\(`, ")", `\)`).Replace(s)
	}
	var objs []string
	objs = append(objs, "<< /Type /Catalog /Pages 2 0 R >>")
	var kids []string
	for i := range pages {
		kids = append(kids, fmt.Sprintf("%d 0 R", 4+2*i))
	}
	objs = append(objs, fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(pages)))
	objs = append(objs, "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
	for i, lines := range pages {
		objs = append(objs, fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>", 5+2*i))
		var s strings.Builder
		s.WriteString("BT /F1 11 Tf 72 720 Td 14 TL\n")
		for _, l := range lines {
			if l == "" {
				s.WriteString("T* T*\n")
				continue
			}
			fmt.Fprintf(&s, "(%s) Tj T*\n", esc(l))
		}
		s.WriteString("ET")
		objs = append(objs, fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", s.Len(), s.String()))
	}
	objs = append(objs, fmt.Sprintf("<< /Title (%s) /Producer (lethe research test) >>", esc(title)))
	return lethetest.PDF(objs, len(objs))
}

// The spoken sentence of the test audio.
const speechText = "Lithium dendrites grow through the ceramic electrolyte and short the battery cell. The critical current density limits fast charging."

var (
	speechOnce sync.Once
	speechWAV  []byte
	speechErr  error
)

// espeakWAV is speechText spoken by espeak-ng (22.05 kHz mono WAV, about
// 8 s, well over 50 KB).
func espeakWAV(t testing.TB) []byte {
	t.Helper()
	bin := needTool(t, "espeak-ng")
	speechOnce.Do(func() {
		dir, err := os.MkdirTemp("", "lethe-espeak-")
		if err != nil {
			speechErr = err
			return
		}
		defer os.RemoveAll(dir)
		out := filepath.Join(dir, "speech.wav")
		if b, err := exec.Command(bin, "-s", "150", "-w", out, speechText).CombinedOutput(); err != nil {
			speechErr = fmt.Errorf("espeak-ng: %v: %s", err, b)
			return
		}
		speechWAV, speechErr = os.ReadFile(out)
	})
	if speechErr != nil {
		t.Fatal(speechErr)
	}
	return speechWAV
}

// Texts that only appear in one place of the site.
const (
	jsOnlyText  = "Garnet electrolytes fail when lithium fills their grain boundaries under fast charging."
	pdfText1    = "Sulfide electrolytes oxidise against layered oxide cathodes above four volts."
	pdfText2    = "The resulting interphase of sulfur and phosphate raises the cell resistance."
	pageAText   = "Void formation at the lithium anode during stripping raises the local current density."
	pageBText   = "Cathode particles lose contact with the solid electrolyte as they swell and shrink."
	hangingText = "This page renders but one of its images never finishes loading."
	bigMarker   = "Beginning of a very large page about electrolyte impedance spectra."
)

// testSite is a small web site on loopback with the cases a research
// fetcher meets: linked pages, a page rendered by JavaScript, a PDF (with
// and without a .pdf URL), a page with speech audio, a page that never
// finishes, one whose image never finishes, a 404, a very large page, and
// redirects to refused targets.
type testSite struct {
	*httptest.Server
	hits      sync.Map // path → *atomic.Int64
	pdf       []byte
	speech    []byte
	cookieMu  sync.Mutex
	cookieLog []string
	// release unblocks the handlers that never finish, so Close returns.
	release chan struct{}
}

func (s *testSite) cookies() []string {
	s.cookieMu.Lock()
	defer s.cookieMu.Unlock()
	return append([]string(nil), s.cookieLog...)
}

func (s *testSite) count(path string) int64 {
	v, ok := s.hits.Load(path)
	if !ok {
		return 0
	}
	return v.(*atomic.Int64).Load()
}

func newTestSite(t testing.TB, speech []byte) *testSite {
	t.Helper()
	s := &testSite{
		pdf:     makePDF("Interphase Report", [][]string{{"Interphase Report", "", pdfText1, "", pdfText2}, {"Appendix: impedance spectra of the cells."}}),
		speech:  speech,
		release: make(chan struct{}),
	}
	mux := http.NewServeMux()
	page := func(title, body string) string {
		return "<!DOCTYPE html><html><head><meta charset=utf-8><title>" + title + "</title></head><body><nav><a href=\"/\">Home</a></nav><main>" + body + "</main></body></html>"
	}
	html := func(w http.ResponseWriter, s string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, s)
	}
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		html(w, page("Solid-state battery failure", `<h1>Solid-state battery failure</h1>
<p>An index of notes on how solid-state cells fail.</p>
<ul><li><a href="/a.html">Voids at the anode</a></li><li><a href="/b.html">Cathode contact loss</a></li>
<li><a href="/js.html">Garnet notes (rendered by script)</a></li><li><a href="/report.pdf">Interphase report (PDF)</a></li>
<li><a href="/talk.html">Recorded talk</a></li></ul>`))
	})
	mux.HandleFunc("/a.html", func(w http.ResponseWriter, r *http.Request) {
		html(w, page("Voids at the anode", "<h1>Voids at the anode</h1><p>"+pageAText+"</p><p>See also <a href=\"/b.html\">cathode contact loss</a>.</p>"))
	})
	mux.HandleFunc("/b.html", func(w http.ResponseWriter, r *http.Request) {
		html(w, page("Cathode contact loss", "<h1>Cathode contact loss</h1><p>"+pageBText+"</p><p>Back to <a href=\"/a.html\">voids</a>.</p>"))
	})
	mux.HandleFunc("/js.html", func(w http.ResponseWriter, r *http.Request) {
		html(w, `<!DOCTYPE html><html><head><meta charset=utf-8><title>Garnet notes</title></head><body>
<main id="app"><p>Loading…</p></main>
<script>
setTimeout(function () {
  fetch("/api/facts.json").then(function (r) { return r.json(); }).then(function (d) {
    var app = document.getElementById("app");
    app.innerHTML = "";
    var h = document.createElement("h1"); h.textContent = d.title; app.appendChild(h);
    d.paragraphs.forEach(function (t) { var p = document.createElement("p"); p.textContent = t; app.appendChild(p); });
  });
}, 150);
</script></body></html>`)
	})
	mux.HandleFunc("/api/facts.json", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(100 * time.Millisecond)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"title": "Garnet notes", "paragraphs": []string{jsOnlyText, "Dopants such as tantalum stabilise the cubic phase."}})
	})
	mux.HandleFunc("/report.pdf", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		w.Write(s.pdf)
	})
	mux.HandleFunc("/download", func(w http.ResponseWriter, r *http.Request) { // a PDF without .pdf in the URL
		w.Header().Set("Content-Type", "application/pdf")
		w.Write(s.pdf)
	})
	mux.HandleFunc("/talk.html", func(w http.ResponseWriter, r *http.Request) {
		html(w, page("Recorded talk", `<h1>Recorded talk</h1><p>A short talk on dendrites.</p>
<audio controls preload="auto" src="/media/talk.wav"></audio><audio preload="auto" src="/media/click.wav"></audio>`))
	})
	mux.HandleFunc("/media/talk.wav", func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "talk.wav", time.Time{}, bytes.NewReader(s.speech))
	})
	mux.HandleFunc("/media/click.wav", func(w http.ResponseWriter, r *http.Request) { // under 50 KB: ignored
		http.ServeContent(w, r, "click.wav", time.Time{}, bytes.NewReader(lethetest.SilentWAV(8000, 2000)))
	})
	mux.HandleFunc("/slow.html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<!DOCTYPE html><html><head><title>Never finishes</title></head><body><p>Start of a page that never ends")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-s.release:
		}
	})
	mux.HandleFunc("/hanging-image.html", func(w http.ResponseWriter, r *http.Request) {
		html(w, page("Hanging image", "<h1>Hanging image</h1><p>"+hangingText+"</p><img src=\"/never.png\" alt=\"\">"))
	})
	mux.HandleFunc("/never.png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-s.release:
		}
	})
	mux.HandleFunc("/big.html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<!DOCTYPE html><html><head><title>Huge page</title></head><body><main><p>"+bigMarker+"</p>")
		para := "<p>" + strings.Repeat("Impedance spectra of symmetric lithium cells show a growing interfacial semicircle. ", 20) + "</p>\n"
		for i := 0; i < (8<<20)/len(para); i++ {
			if _, err := io.WriteString(w, para); err != nil {
				return
			}
		}
		io.WriteString(w, "</main></body></html>")
	})
	mux.HandleFunc("/cookie.html", func(w http.ResponseWriter, r *http.Request) {
		s.cookieMu.Lock()
		s.cookieLog = append(s.cookieLog, r.Header.Get("Cookie"))
		s.cookieMu.Unlock()
		w.Header().Set("Set-Cookie", "session=run-secret; Path=/")
		html(w, page("Cookie", "<p>cookie page</p>"))
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	})
	mux.HandleFunc("/subresources.html", func(w http.ResponseWriter, r *http.Request) {
		html(w, page("Hostile subresources", `<h1>Hostile subresources</h1><p>A page that asks for internal addresses.</p>
<img src="http://192.0.2.1/pixel.png" alt=""><img src="http://198.18.0.1/latest/meta-data/" alt="">
<script src="http://192.0.2.1/x.js"></script>`))
	})
	mux.HandleFunc("/page/{n}", func(w http.ResponseWriter, r *http.Request) { // benchmark pages
		n := r.PathValue("n")
		html(w, page("Note "+n, "<h1>Note "+n+"</h1><p>"+strings.Repeat("Solid electrolytes conduct lithium ions through a ceramic lattice. ", 30)+
			"</p><p id=\"js\"></p><script>document.getElementById('js').textContent='Rendered note "+n+"';</script>"))
	})
	counted := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, _ := s.hits.LoadOrStore(r.URL.Path, new(atomic.Int64))
		v.(*atomic.Int64).Add(1)
		mux.ServeHTTP(w, r)
	})
	s.Server = httptest.NewServer(counted)
	t.Cleanup(func() {
		close(s.release)
		s.Server.CloseClientConnections()
		s.Server.Close()
	})
	return s
}

// wavInfo reads the format of a PCM WAV file.
type wavInfo struct {
	Channels, Rate, Bits int
	Seconds              float64
}

func parseWAV(b []byte) (wavInfo, error) {
	if len(b) < 12 || string(b[:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		return wavInfo{}, fmt.Errorf("not a RIFF/WAVE file")
	}
	var w wavInfo
	for off := 12; off+8 <= len(b); {
		id := string(b[off : off+4])
		size := int(binary.LittleEndian.Uint32(b[off+4 : off+8]))
		body := b[off+8:]
		switch id {
		case "fmt ":
			if len(body) < 16 {
				return w, fmt.Errorf("short fmt chunk")
			}
			w.Channels = int(binary.LittleEndian.Uint16(body[2:4]))
			w.Rate = int(binary.LittleEndian.Uint32(body[4:8]))
			w.Bits = int(binary.LittleEndian.Uint16(body[14:16]))
		case "data":
			if w.Rate > 0 && w.Channels > 0 && w.Bits > 0 {
				n := min(size, len(body))
				w.Seconds = float64(n) / float64(w.Rate*w.Channels*w.Bits/8)
			}
			return w, nil
		}
		off += 8 + size + size%2
	}
	return w, fmt.Errorf("no data chunk")
}

// whisperDouble speaks whisper.cpp's /inference protocol on loopback: it
// checks the multipart request the way the real server reads it (file,
// response_format, temperature, translate) and that the audio is 16 kHz
// mono 16-bit WAV, records what it got, and answers {"text": reply}. It
// does not recognise speech: no registry reachable here ships a whisper
// model, so the real recogniser cannot run in tests.
type whisperDouble struct {
	*httptest.Server
	reply string
	mu    sync.Mutex
	got   []whisperRequest
	fail  atomic.Int32 // answer this many requests with HTTP 500
}

type whisperRequest struct {
	Fields map[string]string
	WAV    wavInfo
	Bytes  int
}

func newWhisperDouble(t testing.TB, reply string) *whisperDouble {
	d := &whisperDouble{reply: reply}
	d.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method != http.MethodPost || r.URL.Path != "/inference" {
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"error": "not found"}`)
			return
		}
		if d.fail.Load() > 0 {
			d.fail.Add(-1)
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, `{"error": "failed to process audio"}`)
			return
		}
		mr, err := r.MultipartReader()
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"error": "no 'file' field in the request"}`)
			return
		}
		req := whisperRequest{Fields: map[string]string{}}
		var audio []byte
		for {
			p, err := mr.NextPart()
			if err != nil {
				break
			}
			b, _ := io.ReadAll(p)
			if p.FormName() == "file" {
				audio = b
				continue
			}
			req.Fields[p.FormName()] = string(b)
		}
		if audio == nil {
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"error": "no 'file' field in the request"}`)
			return
		}
		req.Bytes = len(audio)
		req.WAV, err = parseWAV(audio)
		d.mu.Lock()
		d.got = append(d.got, req)
		d.mu.Unlock()
		if err != nil || req.WAV.Rate != 16000 || req.WAV.Channels != 1 || req.WAV.Bits != 16 {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"error": "failed to read WAV file: %v %+v"}`, err, req.WAV)
			return
		}
		json.NewEncoder(w).Encode(map[string]string{"text": " " + d.reply + "\n [BLANK_AUDIO]\n"})
	}))
	t.Cleanup(d.Close)
	return d
}

func (d *whisperDouble) requests() []whisperRequest {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]whisperRequest(nil), d.got...)
}
