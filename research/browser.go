package research

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/url"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// BrowserConfig configures the headless Chromium fetcher.
type BrowserConfig struct {
	// ExecPath of Chromium; "" searches PATH (FindChromium).
	ExecPath string
	// Tabs fetching in parallel within one batch. Default 2.
	Tabs int
	// PageTimeout bounds one page: navigation, load and settle. Default 20 s.
	PageTimeout time.Duration
	// Idle is how long the network must be quiet after the load event for
	// the page to count as rendered (scripts that fetch their content after
	// load finish in that time). Default 500 ms.
	Idle time.Duration
	// MaxSettle bounds the wait for quiet after the load event (pages that
	// poll or stream never go quiet). Default 3 s.
	MaxSettle time.Duration
	// MaxPageBytes caps the main document's bytes and the rendered HTML
	// taken from the DOM; a larger page is stopped and its beginning
	// extracted. Default 4 MiB.
	MaxPageBytes int64
	// MediaMinBytes: media responses smaller than this are ignored. Default
	// 50 KiB.
	MediaMinBytes int64
	// MaxMediaPerPage media files are captured per page, largest first.
	// Default 4; negative means none.
	MaxMediaPerPage int
	// HTTP fetches PDFs and downloads media; its Policy is the browser's
	// policy. Required.
	HTTP *HTTPFetcher
	// NoProxy turns off the egress proxy (DESIGN: keep it on; the Fetch-
	// domain check alone does not cover workers, preconnects or DNS
	// rebinding).
	NoProxy bool
	// UserAgent of the tabs; "" = DefaultUserAgent.
	UserAgent string
	// Logf receives warnings (nil: discarded).
	Logf func(format string, args ...any)
	// OnRefused, if set, is called for every request of a page that the
	// policy refused (page, redirect hop or subresource).
	OnRefused func(url string, err error)
}

// Browser fetches pages with headless Chromium through chromedp. One
// Chromium process serves the worker (started on first use, restarted if
// it dies); each FetchAll call runs in its own browser context (an
// incognito-like profile: cookies, cache and storage are its own and are
// disposed when the call returns), so nothing is shared between research
// runs or batches. Within a call, up to Tabs pages load in parallel, each
// in a fresh tab under PageTimeout.
//
// Safety: every request of every tab is paused by the Fetch domain and
// checked against the URLPolicy (redirect hops included) before it is
// sent; all traffic goes through an EgressProxy that checks again at
// connect time. Downloads are denied. PDFs and media are fetched by the
// HTTP fetcher, which enforces the same policy.
type Browser struct {
	cfg    BrowserConfig
	policy URLPolicy

	mu     sync.Mutex
	proxy  *EgressProxy
	bctx   context.Context
	cancel func()
	closed bool
}

// The Chromium flags the issue names, plus the ones a server needs.
var browserFlags = map[string]any{
	"headless":                               true,
	"no-sandbox":                             true,
	"disable-gpu":                            true,
	"disable-background-networking":          true,
	"disable-component-update":               true,
	"disable-sync":                           true,
	"no-first-run":                           true,
	"no-default-browser-check":               true,
	"disable-dev-shm-usage":                  true,
	"disable-extensions":                     true,
	"disable-default-apps":                   true,
	"disable-breakpad":                       true,
	"disable-client-side-phishing-detection": true,
	"disable-hang-monitor":                   true,
	"disable-popup-blocking":                 true,
	"disable-prompt-on-repost":               true,
	"metrics-recording-only":                 true,
	"safebrowsing-disable-auto-update":       true,
	"password-store":                         "basic",
	"use-mock-keychain":                      true,
	"mute-audio":                             true,
	"hide-scrollbars":                        true,
	"disable-features":                       "Translate,OptimizationHints,MediaRouter,DialMediaRouteProvider,AutofillServerCommunication,CertificateTransparencyComponentUpdater",
	"force-webrtc-ip-handling-policy":        "disable_non_proxied_udp",
	"autoplay-policy":                        "no-user-gesture-required",
}

// BrowserFlags returns the Chromium command-line flags the fetcher uses
// (without the proxy flags, which depend on the running proxy).
func BrowserFlags() map[string]any {
	out := make(map[string]any, len(browserFlags))
	for k, v := range browserFlags {
		out[k] = v
	}
	return out
}

// FindChromium returns path if it is set and executable, else the first of
// chromium, chromium-browser, google-chrome-stable, google-chrome,
// headless-shell on PATH.
func FindChromium(path string) (string, error) {
	if path != "" {
		p, err := exec.LookPath(path)
		if err != nil {
			return "", fmt.Errorf("research: browser %q: %w", path, err)
		}
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome-stable", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("research: no Chromium found on PATH (apt-get install chromium)")
}

// NewBrowser validates cfg and finds Chromium; the process starts on the
// first FetchAll.
func NewBrowser(cfg BrowserConfig) (*Browser, error) {
	if cfg.HTTP == nil {
		return nil, errors.New("research: browser needs an HTTP fetcher for PDFs and media")
	}
	p, err := FindChromium(cfg.ExecPath)
	if err != nil {
		return nil, err
	}
	cfg.ExecPath = p
	if cfg.Tabs <= 0 {
		cfg.Tabs = 2
	}
	if cfg.PageTimeout <= 0 {
		cfg.PageTimeout = 20 * time.Second
	}
	if cfg.Idle <= 0 {
		cfg.Idle = 500 * time.Millisecond
	}
	if cfg.MaxSettle <= 0 {
		cfg.MaxSettle = 3 * time.Second
	}
	if cfg.MaxPageBytes <= 0 {
		cfg.MaxPageBytes = 4 << 20
	}
	if cfg.MediaMinBytes <= 0 {
		cfg.MediaMinBytes = 50 << 10
	}
	if cfg.MaxMediaPerPage == 0 {
		cfg.MaxMediaPerPage = 4
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = DefaultUserAgent
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	return &Browser{cfg: cfg, policy: cfg.HTTP.Policy()}, nil
}

// Close stops Chromium and the proxy. A closed Browser refuses to fetch.
func (b *Browser) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	b.stopLocked()
	if b.proxy != nil {
		b.proxy.Close()
		b.proxy = nil
	}
}

func (b *Browser) stopLocked() {
	if b.cancel != nil {
		b.cancel()
	}
	b.bctx, b.cancel = nil, nil
}

// ErrBrowserClosed is returned by a closed Browser.
var ErrBrowserClosed = errors.New("research: browser closed")

// ErrBrowserStart is wrapped by the page errors of a batch for which
// Chromium (or the batch's browser context) could not be started: the
// batch failed as a whole, not its pages, and is worth retrying.
var ErrBrowserStart = errors.New("research: browser unavailable")

// start returns the browser's root context, launching Chromium if it is
// not running (or died).
func (b *Browser) start() (context.Context, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, ErrBrowserClosed
	}
	if b.bctx != nil && b.bctx.Err() == nil && b.aliveLocked() {
		return b.bctx, nil
	}
	b.stopLocked()
	if b.proxy == nil && !b.cfg.NoProxy {
		px, err := StartEgressProxy(b.policy, nil)
		if err != nil {
			return nil, fmt.Errorf("%w: egress proxy: %w", ErrBrowserStart, err)
		}
		b.proxy = px
	}
	opts := []chromedp.ExecAllocatorOption{chromedp.ExecPath(b.cfg.ExecPath), chromedp.UserAgent(b.cfg.UserAgent), chromedp.WindowSize(1280, 1024)}
	for k, v := range browserFlags {
		opts = append(opts, chromedp.Flag(k, v))
	}
	if b.proxy != nil {
		opts = append(opts, chromedp.Flag("proxy-server", "http://"+b.proxy.Addr()), chromedp.Flag("proxy-bypass-list", "<-loopback>"))
	}
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, bcancel := chromedp.NewContext(actx, chromedp.WithErrorf(func(string, ...any) {}), chromedp.WithLogf(func(string, ...any) {}))
	// The first Do binds the browser's life to its context, so it gets
	// bctx itself; a timer bounds the start.
	timer := time.AfterFunc(60*time.Second, bcancel)
	err := chromedp.Do(bctx)
	timer.Stop()
	if err != nil {
		bcancel()
		acancel()
		return nil, fmt.Errorf("%w: start %s: %w", ErrBrowserStart, b.cfg.ExecPath, err)
	}
	b.bctx = bctx
	b.cancel = func() { bcancel(); acancel() }
	return bctx, nil
}

func (b *Browser) aliveLocked() bool {
	c := chromedp.FromContext(b.bctx)
	if c == nil || c.Browser == nil {
		return false
	}
	p := c.Browser.Process()
	return p == nil || p.Signal(syscall.Signal(0)) == nil
}

// PageResult is the outcome of one URL of a batch.
type PageResult struct {
	Doc      Document
	Err      error
	Duration time.Duration
}

// Fetch implements Fetcher: a batch of one.
func (b *Browser) Fetch(ctx context.Context, raw string) (Document, error) {
	r := b.FetchAll(ctx, []string{raw}, nil)
	return r[0].Doc, r[0].Err
}

// FetchAll fetches urls in one fresh browser context with up to Tabs tabs
// in parallel, calling done (if not nil, from the fetching goroutines, one
// call at a time) as each page finishes. A page that fails or times out
// does not stop the others. When ctx ends, open tabs are closed and the
// pages not yet done report ctx's error.
func (b *Browser) FetchAll(ctx context.Context, urls []string, done func(i int, r PageResult)) []PageResult {
	results := make([]PageResult, len(urls))
	var doneMu sync.Mutex
	report := func(i int, r PageResult) {
		results[i] = r
		if done != nil {
			doneMu.Lock()
			done(i, r)
			doneMu.Unlock()
		}
	}
	if len(urls) == 0 {
		return results
	}
	var run *runContext
	var runErr error
	var runOnce sync.Once
	getRun := func() (*runContext, error) {
		runOnce.Do(func() { run, runErr = b.newRun(ctx) })
		return run, runErr
	}
	defer func() {
		if run != nil {
			run.close()
		}
	}()

	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(b.cfg.Tabs, len(urls)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				start := time.Now()
				doc, err := b.fetchOne(ctx, urls[i], getRun)
				report(i, PageResult{Doc: doc, Err: err, Duration: time.Since(start)})
			}
		}()
	}
	for i := range urls {
		if ctx.Err() != nil {
			report(i, PageResult{Err: ctx.Err()})
			continue
		}
		next <- i
	}
	close(next)
	wg.Wait()
	return results
}

// runContext is the browser context of one FetchAll call.
type runContext struct {
	ctx    context.Context
	cancel func()
	stop   func() bool
}

func (r *runContext) close() {
	r.stop()
	r.cancel()
}

func (b *Browser) newRun(ctx context.Context) (*runContext, error) {
	var lastErr error
	for attempt := 0; attempt < 2; attempt++ {
		bctx, err := b.start()
		if err != nil {
			return nil, err
		}
		rctx, cancel := chromedp.NewContext(bctx, chromedp.WithNewBrowserContext())
		stop := context.AfterFunc(ctx, cancel)
		if err := chromedp.Do(rctx); err != nil {
			stop()
			cancel()
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			lastErr = err
			b.mu.Lock()
			b.stopLocked() // the browser may have died: start a new one
			b.mu.Unlock()
			continue
		}
		if c := chromedp.FromContext(rctx); c != nil {
			_, err := chromedp.CallBrowser(rctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
				Behavior: browser.SetDownloadBehaviorBehaviorDeny, BrowserContextID: c.BrowserContextID,
			})
			if err != nil {
				b.cfg.Logf("browser: deny downloads: %v", err)
			}
		}
		return &runContext{ctx: rctx, cancel: cancel, stop: stop}, nil
	}
	return nil, fmt.Errorf("%w: browser context: %w", ErrBrowserStart, lastErr)
}

func (b *Browser) fetchOne(ctx context.Context, raw string, getRun func() (*runContext, error)) (Document, error) {
	if err := ctx.Err(); err != nil {
		return Document{}, err
	}
	if err := b.policy.Check(ctx, raw, nil); err != nil {
		return Document{}, err
	}
	if LooksLikePDF(raw) || LooksLikeMedia(raw) {
		return b.cfg.HTTP.Fetch(ctx, raw)
	}
	run, err := getRun()
	if err != nil {
		return Document{}, err
	}
	return b.page(ctx, run.ctx, raw)
}

// pageState follows one tab's events (from the tab's listener: no
// commands, no blocking).
type pageState struct {
	mu        sync.Mutex
	mainFrame cdp.FrameID
	notify    chan struct{}
	maxBytes  int64

	inflight  map[network.RequestID]bool
	lastNet   time.Time
	dcl       bool
	loaded    bool
	loadedAt  time.Time
	mainReq   network.RequestID
	mainURL   string
	mainMime  string
	status    int64
	mainBytes int64
	tooBig    bool
	refused   error // the policy refused the main document (or a redirect of it)
	media     map[string]*mediaSeen
	mediaReq  map[network.RequestID]string
}

type mediaSeen struct {
	url  string
	mime string
	size int64
}

func newPageState(maxBytes int64) *pageState {
	return &pageState{
		notify: make(chan struct{}, 1), maxBytes: maxBytes, lastNet: time.Now(),
		inflight: map[network.RequestID]bool{}, media: map[string]*mediaSeen{}, mediaReq: map[network.RequestID]string{},
	}
}

func (s *pageState) poke() {
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

func (s *pageState) onEvent(ev any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	switch e := ev.(type) {
	case *network.EventRequestWillBeSent:
		s.inflight[e.RequestID] = true
		s.lastNet = now
		if e.Type == network.ResourceTypeDocument && s.mainFrame != "" && e.FrameID == s.mainFrame {
			s.mainReq = e.RequestID
			s.mainBytes = 0
		}
	case *network.EventResponseReceived:
		s.lastNet = now
		r := e.Response
		if r == nil {
			break
		}
		if e.RequestID == s.mainReq && e.Type == network.ResourceTypeDocument {
			s.mainURL, s.mainMime, s.status = r.URL, r.MimeType, r.Status
		}
		if e.Type == network.ResourceTypeMedia || strings.HasPrefix(r.MimeType, "audio/") || strings.HasPrefix(r.MimeType, "video/") {
			u := stripFragment(r.URL)
			m := s.media[u]
			if m == nil {
				m = &mediaSeen{url: u}
				s.media[u] = m
			}
			m.mime = r.MimeType
			m.size = max(m.size, responseSize(r))
			s.mediaReq[e.RequestID] = u
		}
	case *network.EventDataReceived:
		s.lastNet = now
		if e.RequestID == s.mainReq {
			s.mainBytes += max(e.DataLength, e.EncodedDataLength)
			if s.mainBytes > s.maxBytes && !s.tooBig {
				s.tooBig = true
				s.poke()
			}
		}
	case *network.EventLoadingFinished:
		delete(s.inflight, e.RequestID)
		s.lastNet = now
		if u, ok := s.mediaReq[e.RequestID]; ok {
			s.media[u].size = max(s.media[u].size, int64(e.EncodedBodyLength), int64(e.EncodedDataLength))
		}
		s.poke()
	case *network.EventLoadingFailed:
		delete(s.inflight, e.RequestID)
		s.lastNet = now
		s.poke()
	case *page.EventDomContentEventFired:
		s.dcl = true
		s.poke()
	case *page.EventLoadEventFired:
		s.loaded = true
		s.loadedAt = now
		s.poke()
	}
}

// responseSize is the full size of a (possibly ranged) response from its
// headers: the total of Content-Range, else Content-Length of a 200.
func responseSize(r *network.Response) int64 {
	var cl, total int64
	for k, v := range r.Headers {
		s, _ := v.(string)
		switch strings.ToLower(k) {
		case "content-range":
			if i := strings.LastIndexByte(s, '/'); i >= 0 {
				total, _ = strconv.ParseInt(strings.TrimSpace(s[i+1:]), 10, 64)
			}
		case "content-length":
			cl, _ = strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		}
	}
	if total > 0 {
		return total
	}
	if r.Status == 200 {
		return cl
	}
	return 0
}

// settled reports whether the page is done: loaded and the network quiet
// for idle, or loaded for maxSettle, or over the size cap.
func (s *pageState) settled(idle, maxSettle time.Duration) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tooBig {
		return true
	}
	if !s.loaded {
		return false
	}
	now := time.Now()
	return (len(s.inflight) == 0 && now.Sub(s.lastNet) >= idle) || now.Sub(s.loadedAt) >= maxSettle
}

// guard answers the tab's paused requests: allowed by the policy →
// continue; refused → fail as blocked by client.
func (b *Browser) guard(ctx context.Context, paused iter.Seq2[fetch.EventRequestPaused, error], st *pageState) {
	for ev, err := range paused {
		if err != nil {
			return
		}
		go func() {
			u := ev.Request.URL + ev.Request.URLFragment
			err := b.policy.Check(ctx, u, nil)
			if err != nil && (strings.HasPrefix(u, "data:") || strings.HasPrefix(u, "blob:")) {
				err = nil
			}
			if err != nil {
				if b.cfg.OnRefused != nil {
					b.cfg.OnRefused(u, err)
				}
				if ev.ResourceType == network.ResourceTypeDocument && ev.FrameID == st.mainFrame {
					st.mu.Lock()
					st.refused = err
					st.mu.Unlock()
				}
				chromedp.Call(ctx, fetch.FailRequest, fetch.FailRequestParams{RequestID: ev.RequestID, ErrorReason: network.ErrorReasonBlockedByClient})
				return
			}
			chromedp.Call(ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: ev.RequestID})
		}()
	}
}

func (b *Browser) page(ctx context.Context, runCtx context.Context, raw string) (Document, error) {
	st := newPageState(b.cfg.MaxPageBytes)
	tabCtx, cancelTab := chromedp.NewContext(runCtx, chromedp.WithListener(st.onEvent))
	defer cancelTab()
	stop := context.AfterFunc(ctx, cancelTab)
	defer stop()
	if err := chromedp.Do(tabCtx); err != nil {
		return Document{}, b.ctxErr(ctx, fmt.Errorf("research: open tab: %w", err))
	}
	st.mu.Lock()
	st.mainFrame = cdp.FrameID(chromedp.FromContext(tabCtx).Target.TargetID)
	st.mu.Unlock()

	go b.guard(tabCtx, chromedp.Events(tabCtx, fetch.RequestPaused), st)
	if _, err := chromedp.Call(tabCtx, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*"}}}); err != nil {
		return Document{}, b.ctxErr(ctx, fmt.Errorf("research: request interception: %w", err))
	}

	pctx, cancel := context.WithTimeout(tabCtx, b.cfg.PageTimeout)
	defer cancel()
	nav, err := chromedp.Call(pctx, page.Navigate, page.NavigateParams{URL: raw})
	if err == nil && nav.ErrorText != "" {
		switch {
		case strings.Contains(nav.ErrorText, "ERR_UNSAFE_REDIRECT"):
			// Chromium refuses redirects to file:, data: and the like
			// itself, before interception sees them.
			return Document{}, refused(raw, "redirect to a scheme other than http(s)")
		case strings.Contains(nav.ErrorText, "ERR_BLOCKED_BY_CLIENT"):
			st.mu.Lock()
			r := st.refused
			st.mu.Unlock()
			if r == nil {
				r = refused(raw, "blocked by the URL policy")
			}
			return Document{}, r
		}
		err = fmt.Errorf("navigation failed: %s", nav.ErrorText)
	}
	st.mu.Lock()
	refusedErr, mainMime, mainURL := st.refused, st.mainMime, st.mainURL
	st.mu.Unlock()
	if refusedErr != nil {
		return Document{}, refusedErr
	}
	if kind := ContentKind(mainMime, mainURL); kind == "pdf" || kind == "media" || (err == nil && nav.IsDownload) || (err != nil && kind != "" && kind != "html" && kind != "text") {
		// PDFs and media (and other downloads) by direct HTTP, from the
		// URL the browser ended at.
		target := raw
		if mainURL != "" {
			target = mainURL
		}
		return b.cfg.HTTP.Fetch(ctx, target)
	}
	if err != nil {
		if pctx.Err() != nil && ctx.Err() == nil {
			return Document{}, fmt.Errorf("research: %s: timed out after %s before the page answered", raw, b.cfg.PageTimeout)
		}
		return Document{}, b.ctxErr(ctx, fmt.Errorf("research: %s: %w", raw, err))
	}

	// Wait for load + network quiet (or the size cap), within the page
	// timeout.
	timedOut := false
	for !st.settled(b.cfg.Idle, b.cfg.MaxSettle) {
		t := time.NewTimer(50 * time.Millisecond)
		select {
		case <-st.notify:
		case <-t.C:
		case <-pctx.Done():
		}
		t.Stop()
		if pctx.Err() != nil {
			timedOut = true
			break
		}
	}
	if err := ctx.Err(); err != nil {
		return Document{}, err
	}
	st.mu.Lock()
	dcl, tooBig, status, mainURL, refusedErr := st.dcl, st.tooBig, st.status, st.mainURL, st.refused
	mainBytes := st.mainBytes
	st.mu.Unlock()
	if refusedErr != nil {
		return Document{}, refusedErr
	}
	if status >= 400 {
		return Document{}, &HTTPStatusError{URL: raw, Status: int(status)}
	}
	if timedOut && !dcl {
		return Document{}, fmt.Errorf("research: %s: timed out after %s while loading", raw, b.cfg.PageTimeout)
	}
	// Extract from a short context of its own: the page context may have
	// expired (a page that renders but never finishes loading is read as
	// it stands).
	ectx, ecancel := context.WithTimeout(tabCtx, 5*time.Second)
	defer ecancel()
	if timedOut || tooBig {
		chromedp.Call(ectx, page.StopLoading, cdp.Empty{})
	}
	html, err := chromedp.Run(ectx, chromedp.Evaluate[string](`document.documentElement ? document.documentElement.outerHTML : ""`))
	if err != nil {
		return Document{}, b.ctxErr(ctx, fmt.Errorf("research: %s: read DOM: %w", raw, err))
	}
	if loc, err := chromedp.Run(ectx, chromedp.Location()); err == nil && loc != "" && loc != "about:blank" {
		mainURL = loc
	}
	if mainURL == "" {
		mainURL = raw
	}
	if int64(len(html)) > b.cfg.MaxPageBytes {
		html = truncateUTF8(html, int(b.cfg.MaxPageBytes))
	}
	doc, err := ExtractHTML(strings.NewReader(html), mainURL)
	if err != nil {
		return Document{}, err
	}
	doc.Bytes = int(max(mainBytes, int64(len(html))))
	if timedOut || tooBig {
		b.cfg.Logf("browser: %s: read partially (timed out %v, over size cap %v)", raw, timedOut, tooBig)
	}
	doc.Media = b.captureMedia(ctx, st)
	return doc, nil
}

// captureMedia downloads the media responses the page made that are over
// MediaMinBytes, largest first.
func (b *Browser) captureMedia(ctx context.Context, st *pageState) []MediaRef {
	if b.cfg.MaxMediaPerPage < 0 {
		return nil
	}
	st.mu.Lock()
	var seen []mediaSeen
	for _, m := range st.media {
		if m.size == 0 || m.size >= b.cfg.MediaMinBytes {
			seen = append(seen, *m)
		}
	}
	st.mu.Unlock()
	sort.Slice(seen, func(i, j int) bool {
		if seen[i].size != seen[j].size {
			return seen[i].size > seen[j].size
		}
		return seen[i].url < seen[j].url
	})
	var refs []MediaRef
	for _, m := range seen {
		if len(refs) >= b.cfg.MaxMediaPerPage {
			break
		}
		if u, err := url.Parse(m.url); err != nil || (u.Scheme != "http" && u.Scheme != "https") {
			continue
		}
		ref, err := b.cfg.HTTP.DownloadMedia(ctx, m.url, b.cfg.MediaMinBytes)
		if err != nil {
			b.cfg.Logf("browser: media %s: %v", m.url, err)
			continue
		}
		refs = append(refs, ref)
	}
	return refs
}

func (b *Browser) ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
