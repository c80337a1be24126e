package research

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// cookieSite sets a cookie on /set and shows the cookies it receives on
// /show, so a test sees which browser context a page was loaded in.
func cookieSite(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	body := func(w http.ResponseWriter, title, text string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!DOCTYPE html><html><head><title>%s</title></head><body><main><p>%s</p></main></body></html>", title, text)
	}
	mux.HandleFunc("/set", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "run", Value: r.URL.Query().Get("v"), Path: "/"})
		body(w, "Set", "cookie set")
	})
	mux.HandleFunc("/show", func(w http.ResponseWriter, r *http.Request) {
		c, err := r.Cookie("run")
		v := "none"
		if err == nil {
			v = c.Value
		}
		body(w, "Show", "cookie="+v)
	})
	mux.HandleFunc("/page/", func(w http.ResponseWriter, r *http.Request) {
		body(w, "Page", "page "+strings.TrimPrefix(r.URL.Path, "/page/"))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func fetchOK(t *testing.T, b *Browser, run string, urls ...string) []Document {
	t.Helper()
	var docs []Document
	for i, r := range b.FetchRun(context.Background(), run, urls, nil) {
		if r.Err != nil {
			t.Fatalf("%s: %v", urls[i], r.Err)
		}
		docs = append(docs, r.Doc)
	}
	return docs
}

func idleTabs(b *Browser, run string) []*tab {
	b.mu.Lock()
	r := b.runs[run]
	b.mu.Unlock()
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*tab(nil), r.idle...)
}

// TestBrowserRunReusesTabs: a research run's second batch loads its pages
// in the tabs of the first, in the same browser context (its cookie is
// there); another run has its own context (no cookie); a crashed tab is
// not reused and the run goes on; an unused run is closed after RunIdle.
func TestBrowserRunReusesTabs(t *testing.T) {
	site := cookieSite(t)
	b := newTestBrowser(t, URLPolicy{AllowLoopback: true}, 1, nil)
	fetchOK(t, b, "run-a", site.URL+"/set?v=a")
	first := idleTabs(b, "run-a")
	if len(first) != 1 {
		t.Fatalf("idle tabs after the first batch: %d", len(first))
	}
	docs := fetchOK(t, b, "run-a", site.URL+"/show", site.URL+"/page/2")
	if !strings.Contains(docs[0].Text, "cookie=a") {
		t.Errorf("second batch of the run: %q, want the run's cookie", docs[0].Text)
	}
	if again := idleTabs(b, "run-a"); len(again) != 1 || again[0] != first[0] || again[0].pages != 3 {
		t.Errorf("the run's tab was not reused: %v (first %p)", again, first[0])
	}
	if docs := fetchOK(t, b, "run-b", site.URL+"/show"); !strings.Contains(docs[0].Text, "cookie=none") {
		t.Errorf("another run: %q, want no cookie", docs[0].Text)
	}
	if docs := fetchOK(t, b, "", site.URL+"/show"); !strings.Contains(docs[0].Text, "cookie=none") {
		t.Errorf("an unkeyed batch: %q, want no cookie", docs[0].Text)
	}

	// Crash the run's idle tab: the next batch still loads, in a new tab.
	crashed := idleTabs(b, "run-a")[0]
	cctx, cancel := context.WithTimeout(crashed.ctx, 5*time.Second)
	chromedp.Call(cctx, page.Crash, cdp.Empty{}) // answers nothing: the renderer is gone
	cancel()
	docs = fetchOK(t, b, "run-a", site.URL+"/show")
	if !strings.Contains(docs[0].Text, "cookie=a") {
		t.Errorf("after a crash: %q, want the run's cookie (same context)", docs[0].Text)
	}
	if now := idleTabs(b, "run-a"); len(now) != 1 || now[0] == crashed {
		t.Errorf("after a crash the idle tab is %v, want a new one (crashed %p)", now, crashed)
	}

	// Unused for RunIdle, the run is closed: its context (and cookie) go.
	b.cfg.RunIdle = time.Second // read when a batch ends
	fetchOK(t, b, "run-a", site.URL+"/page/3")
	time.Sleep(2 * time.Second)
	if n := len(idleTabs(b, "run-a")); n != 0 {
		t.Errorf("%d tabs still open after RunIdle", n)
	}
	if docs := fetchOK(t, b, "run-a", site.URL+"/show"); !strings.Contains(docs[0].Text, "cookie=none") {
		t.Errorf("after RunIdle: %q, want a fresh context", docs[0].Text)
	}
}
