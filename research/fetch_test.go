package research

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/internal/lethetest"
)

func TestPDFConverter(t *testing.T) {
	needTool(t, "pdftotext")
	pdf := makePDF("Garnet (LLZO) Report", [][]string{
		{"Garnet electrolytes crack under lithium", "plating at high current den-", "sity and short the cell.", "", "A second paragraph about voids."},
		{"Page two text here."},
	})
	doc, err := PDFConverter{}.Extract(context.Background(), bytes.NewReader(pdf), "http://example.org/r.pdf")
	if err != nil {
		t.Fatal(err)
	}
	want := "Garnet electrolytes crack under lithium plating at high current density and short the cell."
	if doc.Title != "Garnet (LLZO) Report" || doc.Kind != graph.KindPDF || doc.Bytes != len(pdf) || !strings.Contains(doc.Text, want) ||
		!strings.Contains(doc.Text, "\n\nPage two text here.") {
		t.Fatalf("doc %+v", doc)
	}
	if _, err := (PDFConverter{}).Extract(context.Background(), strings.NewReader("%PDF-1.4 garbage"), "x.pdf"); err == nil {
		t.Error("a broken PDF converted without error")
	}
	if _, err := (PDFConverter{Path: "/nonexistent/pdftotext"}).Extract(context.Background(), bytes.NewReader(pdf), "x.pdf"); err == nil {
		t.Error("a missing pdftotext went unnoticed")
	}
}

// TestParsePdftotextHTML: the page text is pdftotext's, raw: a "<" in
// it opens no tag (pdftotext does not escape it), and output cut at the
// text cap keeps what came.
func TestParsePdftotextHTML(t *testing.T) {
	head := "<!DOCTYPE html><html>\n<head>\n<title>Shell &amp; tools</title>\n</head>\n<body>\n<pre>\n"
	for _, tc := range []struct{ name, in, title, text string }{
		{"raw text", head + "cd </etc/motd pager\n#include <stdio.h>\nmake && make install\n\fpage two\n</pre>\n</body>\n</html>\n",
			"Shell & tools", "cd </etc/motd pager\n#include <stdio.h>\nmake && make install\n\fpage two\n"},
		{"cut at the cap", head + "first page\n\fsecond pa", "Shell & tools", "first page\n\fsecond pa"},
		{"escaped text", head + "a &lt;b&gt; &amp;&amp; c\n</pre></body></html>", "Shell & tools", "a <b> && c\n"},
		{"a </pre> in the text", head + "x </pre> y\n</pre></body></html>", "Shell & tools", "x </pre> y\n"},
		{"no pre", "<html><head><title>T</title></head><body></body></html>", "T", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			title, text := parsePdftotextHTML([]byte(tc.in))
			if title != tc.title || text != tc.text {
				t.Errorf("got %q, %q; want %q, %q", title, text, tc.title, tc.text)
			}
		})
	}
}

func TestReflowPDFText(t *testing.T) {
	in := "Title line\n\nfirst line of a\nparagraph with electro-\nlyte and Li-\nIon\n\f second page\n"
	want := "Title line\n\nfirst line of a paragraph with electrolyte and Li- Ion\n\nsecond page"
	if got := reflowPDFText(in); got != want {
		t.Fatalf("reflow:\n%q\nwant\n%q", got, want)
	}
}

func TestHTTPFetcherKinds(t *testing.T) {
	needTool(t, "pdftotext")
	site := newTestSite(t, lethetest.SilentWAV(16000, 40000)) // 80 KB of audio
	hf := NewHTTPFetcher(HTTPFetcherConfig{Policy: URLPolicy{AllowLoopback: true}, PDF: &PDFConverter{}, MediaDir: t.TempDir(), MaxPageBytes: 1 << 20})
	ctx := context.Background()
	d, err := hf.Fetch(ctx, site.URL+"/a.html")
	if err != nil || !strings.Contains(d.Text, pageAText) || d.Kind != graph.KindHTML {
		t.Fatalf("html: %v %+v", err, d)
	}
	// Plain HTTP does not run scripts.
	if d, err := hf.Fetch(ctx, site.URL+"/js.html"); err != nil || strings.Contains(d.Text, jsOnlyText) {
		t.Fatalf("js page over plain HTTP: %v %q", err, d.Text)
	}
	for _, p := range []string{"/report.pdf", "/download?id=1", "/redirect?to=" + url.QueryEscape("/report.pdf")} {
		d, err := hf.Fetch(ctx, site.URL+p)
		if err != nil || d.Kind != graph.KindPDF || !strings.Contains(d.Text, pdfText2) {
			t.Fatalf("pdf %s: %v %+v", p, err, d)
		}
	}
	d, err = hf.Fetch(ctx, site.URL+"/media/talk.wav")
	if err != nil || len(d.Media) != 1 || d.Kind != graph.KindTranscript {
		t.Fatalf("media: %v %+v", err, d)
	}
	if fi, err := os.Stat(d.Media[0].Path); err != nil || fi.Size() != 80044 {
		t.Fatalf("media file: %v", err)
	}
	// Under the minimum: refused; not media: refused.
	if _, err := hf.DownloadMedia(ctx, site.URL+"/media/click.wav", 50<<10); err == nil {
		t.Error("a 4 KB click was downloaded as media")
	}
	if _, err := hf.DownloadMedia(ctx, site.URL+"/a.html", 0); err == nil {
		t.Error("an HTML page was downloaded as media")
	}
	var se *HTTPStatusError
	if _, err := hf.Fetch(ctx, site.URL+"/missing.html"); !errors.As(err, &se) || se.Status != 404 {
		t.Errorf("404: %v", err)
	}
	// The large page is cut at the cap.
	d, err = hf.Fetch(ctx, site.URL+"/big.html")
	if err != nil || !strings.HasPrefix(d.Text, bigMarker) || d.Bytes > 1<<20 {
		t.Errorf("big page: %v, %d bytes", err, d.Bytes)
	}
	// Media over the cap is refused, and no file is left behind.
	small := NewHTTPFetcher(HTTPFetcherConfig{Policy: URLPolicy{AllowLoopback: true}, MediaDir: t.TempDir(), MaxMediaBytes: 10 << 10})
	if _, err := small.DownloadMedia(ctx, site.URL+"/media/talk.wav", 0); !errors.Is(err, ErrRefused) {
		t.Errorf("oversize media: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(small.cfg.MediaDir, "*")); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}

func TestHTTPFetcherRedirectLimitAndTimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/loop" {
			http.Redirect(w, r, "/loop", http.StatusFound)
			return
		}
		time.Sleep(2 * time.Second)
	}))
	defer srv.Close()
	hf := NewHTTPFetcher(HTTPFetcherConfig{Policy: URLPolicy{AllowLoopback: true}, Timeout: 300 * time.Millisecond, MaxRedirects: 3})
	if _, err := hf.Fetch(context.Background(), srv.URL+"/loop"); err == nil || !strings.Contains(err.Error(), "redirects") {
		t.Errorf("redirect loop: %v", err)
	}
	start := time.Now()
	if _, err := hf.Fetch(context.Background(), srv.URL+"/slow"); err == nil || time.Since(start) > time.Second {
		t.Errorf("slow answer: %v after %s", err, time.Since(start))
	}
}

func TestEgressProxyRefuses(t *testing.T) {
	site := newTestSite(t, nil)
	px, err := StartEgressProxy(EgressConfig{Policy: URLPolicy{AllowLoopback: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()
	pu, _ := url.Parse("http://" + px.Addr())
	c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu)}, Timeout: 5 * time.Second}
	resp, err := c.Get(site.URL + "/a.html")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("allowed page through the proxy: %v", err)
	}
	resp.Body.Close()
	for _, u := range []string{"http://10.0.0.1/", "http://169.254.169.254/latest/meta-data/", "https://10.0.0.1/"} {
		resp, err := c.Get(u)
		if err == nil {
			if resp.StatusCode != http.StatusForbidden || resp.Header.Get(refusedHeader) == "" {
				t.Errorf("%s through the proxy: HTTP %d", u, resp.StatusCode)
			}
			resp.Body.Close()
		} else if !strings.Contains(err.Error(), "Forbidden") {
			t.Errorf("%s through the proxy: %v", u, err)
		}
	}
	strict, err := StartEgressProxy(EgressConfig{Policy: URLPolicy{}})
	if err != nil {
		t.Fatal(err)
	}
	defer strict.Close()
	su, _ := url.Parse("http://" + strict.Addr())
	sc := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(su)}, Timeout: 5 * time.Second}
	if resp, err := sc.Get(site.URL + "/a.html"); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("loopback through a strict proxy: %v", err)
	} else {
		resp.Body.Close()
	}
}

func TestWhisperClient(t *testing.T) {
	d := newWhisperDouble(t, "hello world")
	dir := t.TempDir()
	wav := filepath.Join(dir, "a.wav")
	os.WriteFile(wav, lethetest.SilentWAV(16000, 16000), 0o644)
	w := &WhisperClient{BaseURL: d.URL + "/", Translate: true, Language: "de"}
	text, err := w.Inference(context.Background(), wav)
	if err != nil || text != "hello world" {
		t.Fatalf("text %q err %v", text, err)
	}
	r := d.requests()[0]
	for k, v := range map[string]string{"translate": "true", "response_format": "json", "language": "de", "temperature": "0.0"} {
		if r.Fields[k] != v {
			t.Errorf("field %s = %q, want %q", k, r.Fields[k], v)
		}
	}
	if r.WAV.Seconds < 0.99 || r.WAV.Seconds > 1.01 {
		t.Errorf("audio %+v", r.WAV)
	}
	// Errors: the server's {"error"} answer, a wrong format, no server.
	d.fail.Store(1)
	if _, err := w.Inference(context.Background(), wav); err == nil || !strings.Contains(err.Error(), "failed to process audio") {
		t.Errorf("server error: %v", err)
	}
	os.WriteFile(wav, lethetest.SilentWAV(8000, 8000), 0o644)
	if _, err := w.Inference(context.Background(), wav); err == nil || !strings.Contains(err.Error(), "HTTP 400") {
		t.Errorf("8 kHz audio accepted: %v", err)
	}
	dead := &WhisperClient{BaseURL: "http://127.0.0.1:1"}
	if _, err := dead.Inference(context.Background(), wav); err == nil {
		t.Error("no server, no error")
	}
	if _, err := (&WhisperClient{BaseURL: "ftp://x"}).Inference(context.Background(), wav); err == nil {
		t.Error("bad URL accepted")
	}
}

func TestTranscriberConvertsAndFailsSoftly(t *testing.T) {
	ffmpeg := needTool(t, "ffmpeg")
	d := newWhisperDouble(t, "converted speech")
	dir := t.TempDir()
	in := filepath.Join(dir, "in.wav")
	os.WriteFile(in, lethetest.SilentWAV(44100, 44100*3), 0o644) // 3 s at 44.1 kHz
	tr := &Transcriber{Whisper: &WhisperClient{BaseURL: d.URL}, FFmpeg: ffmpeg, MaxDuration: 2 * time.Second}
	text, err := tr.Transcribe(context.Background(), in)
	if err != nil || text != "converted speech" {
		t.Fatalf("%q %v", text, err)
	}
	if w := d.requests()[0].WAV; w.Rate != 16000 || w.Channels != 1 || w.Seconds < 1.9 || w.Seconds > 2.1 {
		t.Errorf("converted audio %+v, want 16 kHz mono cut at 2 s", w)
	}
	bad := filepath.Join(dir, "bad.mp3")
	os.WriteFile(bad, []byte("not audio at all"), 0o644)
	if _, err := tr.Transcribe(context.Background(), bad); err == nil || !strings.Contains(err.Error(), "ffmpeg") {
		t.Errorf("garbage media: %v", err)
	}
	if err := (&Transcriber{FFmpeg: "/nonexistent/ffmpeg"}).Check(); err == nil {
		t.Error("missing ffmpeg went unnoticed")
	}
}

func TestCorpusMediaAndLocalPath(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "dendrite_talk.wav"), lethetest.SilentWAV(16000, 30000), 0o644)
	os.WriteFile(filepath.Join(dir, "notes.md"), []byte("# Notes\n\nCathode interfaces degrade.\n"), 0o644)
	ext := append(DefaultCorpusExtensions(), MediaExtensions()...)
	c, err := NewCorpus(CorpusConfig{Root: dir, Extensions: ext, Extractors: MediaExtractors()})
	if err != nil {
		t.Fatal(err)
	}
	hits, err := c.Search(context.Background(), "dendrite talk", 5)
	if err != nil || len(hits) != 1 || docURL(hits[0].URL) != "corpus:///dendrite_talk.wav" {
		t.Fatalf("hits %+v err %v", hits, err)
	}
	doc, err := c.Open(hits[0].URL)
	if err != nil || len(doc.Media) != 1 || doc.Kind != graph.KindTranscript || doc.Media[0].MIMEType != "audio/wav" {
		t.Fatalf("doc %+v err %v", doc, err)
	}
	p, err := c.LocalPath(doc.Media[0].URL)
	if err != nil || filepath.Base(p) != "dendrite_talk.wav" {
		t.Fatalf("local path %q %v", p, err)
	}
	for _, bad := range []string{"corpus:///../etc/passwd", "corpus:///missing.wav", "file:///etc/passwd", "corpus:///notes.exe"} {
		if _, err := c.LocalPath(bad); err == nil {
			t.Errorf("LocalPath(%q) allowed", bad)
		}
	}
}
