package research

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"mime"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/inspector"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
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
	// Limits bound the title, URLs and text of every page (zero fields:
	// defaults).
	Limits Limits
	// ProxyIdleTimeout closes an egress-proxy tunnel after this long without
	// traffic either way. Default 1 min.
	ProxyIdleTimeout time.Duration
	// RunIdle: a research run's browser context and its open tabs are kept
	// this long after its last batch (FetchRun), for its next batch; then
	// closed. Default 1 min.
	RunIdle time.Duration
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
	runs   map[string]*browserRun // research runs with a context kept between batches
}

// The Chromium flags the issue names, plus the ones a server needs
// (--no-sandbox is added by browserFlags only for root).
var baseBrowserFlags = map[string]any{
	"headless":                               true,
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

// BrowserFlags returns the Chromium command-line flags the fetcher uses in
// this process (without the proxy flags, which depend on the running
// proxy).
func BrowserFlags() map[string]any { return browserFlags(os.Geteuid()) }

// browserFlags returns the flags for a process running as euid. The
// sandbox stays on except for root: Chromium refuses to start as root with
// its sandbox (it cannot drop privileges it should not have), so a root
// worker (a developer's container, CI) must pass --no-sandbox, while the
// Docker image runs as an unprivileged user where the sandbox works and is
// the layer that contains a compromised renderer.
func browserFlags(euid int) map[string]any {
	out := make(map[string]any, len(baseBrowserFlags)+1)
	for k, v := range baseBrowserFlags {
		out[k] = v
	}
	// Set either way: chromedp adds --no-sandbox by itself for a root real
	// uid unless the flag is given.
	out["no-sandbox"] = euid == 0
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
	if cfg.RunIdle <= 0 {
		cfg.RunIdle = time.Minute
	}
	cfg.Limits = cfg.Limits.withDefaults()
	return &Browser{cfg: cfg, policy: cfg.HTTP.Policy(), runs: map[string]*browserRun{}}, nil
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
	for k, r := range b.runs {
		r.close()
		delete(b.runs, k)
	}
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
		px, err := StartEgressProxy(EgressConfig{Policy: b.policy, IdleTimeout: b.cfg.ProxyIdleTimeout})
		if err != nil {
			return nil, fmt.Errorf("%w: egress proxy: %w", ErrBrowserStart, err)
		}
		b.proxy = px
	}
	// The profile is a directory of ours, removed (with the singleton
	// socket directory it links to) when this Chromium is stopped.
	dir, err := os.MkdirTemp("", "lethe-chromium-*")
	if err != nil {
		return nil, fmt.Errorf("%w: profile directory: %w", ErrBrowserStart, err)
	}
	actx, acancel := chromedp.NewExecAllocator(context.Background(), b.allocatorOptions(dir)...)
	bctx, bcancel := chromedp.NewContext(actx, chromedp.WithErrorf(func(string, ...any) {}), chromedp.WithLogf(func(string, ...any) {}))
	// acancel waits for the process to exit, so the directory is unused.
	stop := func() { bcancel(); acancel(); removeProfile(dir) }
	// The first Do binds the browser's life to its context, so it gets
	// bctx itself; a timer bounds the start.
	timer := time.AfterFunc(60*time.Second, bcancel)
	err = chromedp.Do(bctx)
	timer.Stop()
	if err != nil {
		stop()
		return nil, fmt.Errorf("%w: start %s: %w", ErrBrowserStart, b.cfg.ExecPath, err)
	}
	b.bctx = bctx
	b.cancel = stop
	return bctx, nil
}

// chromiumEnv are the variables Chromium needs beyond ChildEnv's: the
// XDG directories where a desktop session sets them, and fontconfig's
// configuration where it is not in the default place.
var chromiumEnv = []string{"XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "FONTCONFIG_FILE", "FONTCONFIG_PATH"}

func (b *Browser) allocatorOptions(dir string) []chromedp.ExecAllocatorOption {
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(b.cfg.ExecPath), chromedp.UserAgent(b.cfg.UserAgent), chromedp.WindowSize(1280, 1024),
		chromedp.UserDataDir(dir),
		// The renderer parses hostile pages: it gets none of the worker's
		// secrets (ChildEnv), only what Chromium needs to start.
		chromedp.NoInheritEnv, chromedp.Env(ChildEnv(chromiumEnv...)...),
	}
	for k, v := range browserFlags(os.Geteuid()) {
		opts = append(opts, chromedp.Flag(k, v))
	}
	if b.proxy != nil {
		opts = append(opts, chromedp.Flag("proxy-server", "http://"+b.proxy.Addr()), chromedp.Flag("proxy-bypass-list", "<-loopback>"))
	}
	return opts
}

// removeProfile removes a stopped Chromium's profile directory and the
// directory of its singleton socket. Chromium creates that one in TMPDIR
// (as org.chromium.Chromium.XXXXXX, linked from the profile's
// SingletonSocket) and leaves it behind when it is killed, which is how
// chromedp stops it. (TMPDIR cannot simply point into the profile: a
// socket path is limited to 108 bytes.) Only the singleton files are
// removed there, and the directory only if that empties it.
func removeProfile(dir string) {
	if target, err := os.Readlink(filepath.Join(dir, "SingletonSocket")); err == nil && filepath.IsAbs(target) {
		sock := filepath.Dir(target)
		for _, name := range []string{"SingletonSocket", "SingletonCookie"} {
			os.Remove(filepath.Join(sock, name))
		}
		os.Remove(sock)
	}
	removeAllRetry(dir)
}

// removeAllRetry removes dir, retrying for a moment: Chromium's helper
// processes can outlive the main process briefly and write into it.
func removeAllRetry(dir string) {
	for i := 0; i < 20; i++ {
		if err := os.RemoveAll(dir); err == nil {
			if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
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

// FetchAll fetches urls in one fresh browser context, closed when it
// returns: FetchRun with a run of its own.
func (b *Browser) FetchAll(ctx context.Context, urls []string, done func(i int, r PageResult)) []PageResult {
	return b.FetchRun(ctx, "", urls, done)
}

// FetchRun fetches urls in the browser context of research run key, with
// up to Tabs tabs in parallel, calling done (if not nil, from the fetching
// goroutines, one call at a time) as each page finishes. A page that
// fails or times out does not stop the others. When ctx ends, open tabs
// are closed and the pages not yet done report ctx's error.
//
// The run's context and its tabs outlive the call: the run's next batch
// reuses them (a tab navigates from page to page instead of being opened
// and closed for each, which costs about 0.8 s a page), until the run has
// been unused for RunIdle. Runs never share a context, so no cookie,
// cache or storage passes from one run to another; key "" is a run of
// its own, closed when the call returns. A tab whose page failed (a
// crashed renderer, a timeout, a refusal) is closed, not reused.
func (b *Browser) FetchRun(ctx context.Context, key string, urls []string, done func(i int, r PageResult)) []PageResult {
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
	var run *browserRun
	var runErr error
	var runOnce sync.Once
	getRun := func() (*browserRun, error) {
		runOnce.Do(func() { run, runErr = b.acquireRun(ctx, key) })
		return run, runErr
	}
	defer func() {
		if run != nil {
			b.releaseRun(key, run)
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

// browserRun is the browser context of one research run and the tabs it
// keeps open between pages.
type browserRun struct {
	ctx    context.Context
	cancel func()
	mu     sync.Mutex
	idle   []*tab
	users  int         // FetchRun calls using the run
	expire *time.Timer // closes an unused run after RunIdle
}

func (r *browserRun) close() {
	r.mu.Lock()
	if r.expire != nil {
		r.expire.Stop()
	}
	for _, t := range r.idle {
		t.cancel()
	}
	r.idle = nil
	r.mu.Unlock()
	r.cancel()
}

// acquireRun returns run key's context (a new one if it has none, or its
// old one died with Chromium). Key "" always gets a new run.
func (b *Browser) acquireRun(ctx context.Context, key string) (*browserRun, error) {
	if key != "" {
		b.mu.Lock()
		r := b.runs[key]
		if r != nil && (r.ctx.Err() != nil || b.bctx == nil || b.bctx.Err() != nil || !b.aliveLocked()) {
			r.close() // its Chromium died: the run starts over in a new one
			r = nil
		}
		if r != nil {
			r.mu.Lock()
			r.users++
			if r.expire != nil {
				r.expire.Stop()
			}
			r.mu.Unlock()
			b.mu.Unlock()
			return r, nil
		}
		delete(b.runs, key)
		b.mu.Unlock()
	}
	r, err := b.newRun(ctx)
	if err != nil {
		return nil, err
	}
	r.users = 1
	if key != "" {
		b.mu.Lock()
		if old := b.runs[key]; old != nil { // a concurrent batch of the same run won
			old.close()
		}
		b.runs[key] = r
		b.mu.Unlock()
	}
	return r, nil
}

// releaseRun ends one FetchRun's use of run: a keyed run is closed after
// RunIdle without a next batch; an unkeyed one at once.
func (b *Browser) releaseRun(key string, run *browserRun) {
	if key == "" {
		run.close()
		return
	}
	run.mu.Lock()
	defer run.mu.Unlock()
	if run.users--; run.users > 0 {
		return
	}
	run.expire = time.AfterFunc(b.cfg.RunIdle, func() {
		b.mu.Lock()
		run.mu.Lock()
		inUse := run.users > 0 // a next batch took it while the timer fired
		run.mu.Unlock()
		if !inUse && b.runs[key] == run {
			delete(b.runs, key)
		}
		b.mu.Unlock()
		if !inUse {
			run.close()
		}
	})
}

// newRun opens a fresh browser context (an incognito-like profile) with
// downloads denied. It is not bound to ctx: a run outlives its batches;
// ctx only bounds the opening.
func (b *Browser) newRun(ctx context.Context) (*browserRun, error) {
	var lastErr error
	for attempt := 0; attempt < 2; attempt++ {
		bctx, err := b.start()
		if err != nil {
			return nil, err
		}
		rctx, cancel := chromedp.NewContext(bctx, chromedp.WithNewBrowserContext())
		stop := context.AfterFunc(ctx, cancel)
		err = chromedp.Do(rctx)
		opened := stop() // ctx ended while opening: cancel ran
		if err != nil || !opened {
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
		return &browserRun{ctx: rctx, cancel: cancel}, nil
	}
	return nil, fmt.Errorf("%w: browser context: %w", ErrBrowserStart, lastErr)
}

// tab is an open tab of a run. Its event listener and request guard
// follow the page it is loading now (cur), so that one tab serves page
// after page.
type tab struct {
	ctx     context.Context
	cancel  func()
	frame   cdp.FrameID
	cur     atomic.Pointer[pageState]
	crashed atomic.Bool // its renderer crashed: never reused
	pages   int         // pages loaded in it
}

func (t *tab) onEvent(ev any) {
	if _, ok := ev.(*inspector.EventTargetCrashed); ok {
		t.crashed.Store(true)
	}
	if st := t.cur.Load(); st != nil {
		st.onEvent(ev)
	}
}

// dead: the tab cannot load another page.
func (t *tab) dead() bool { return t.crashed.Load() || t.ctx.Err() != nil }

// takeTab returns an idle tab of the run, or opens one.
func (b *Browser) takeTab(ctx context.Context, run *browserRun) (*tab, error) {
	run.mu.Lock()
	if n := len(run.idle); n > 0 {
		t := run.idle[n-1]
		run.idle = run.idle[:n-1]
		run.mu.Unlock()
		if !t.dead() {
			return t, nil
		}
		t.cancel()
	} else {
		run.mu.Unlock()
	}
	t := &tab{}
	t.ctx, t.cancel = chromedp.NewContext(run.ctx, chromedp.WithListener(t.onEvent))
	if err := b.openTab(ctx, t); err != nil {
		t.cancel()
		return nil, err
	}
	return t, nil
}

// putTab keeps t for the run's next page (at most Tabs idle tabs).
func (b *Browser) putTab(run *browserRun, t *tab) {
	t.cur.Store(nil)
	run.mu.Lock()
	defer run.mu.Unlock()
	if run.ctx.Err() != nil || t.dead() || len(run.idle) >= b.cfg.Tabs {
		t.cancel()
		return
	}
	run.idle = append(run.idle, t)
}

func (b *Browser) fetchOne(ctx context.Context, raw string, getRun func() (*browserRun, error)) (Document, error) {
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
	return b.page(ctx, run, raw)
}

// pageState follows one tab's events (from the tab's listener: no
// commands, no blocking).
type pageState struct {
	mu        sync.Mutex
	mainFrame cdp.FrameID
	notify    chan struct{}
	maxBytes  int64
	maxURL    int

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

// maxMediaSeen bounds the media responses a page state follows: a script
// can start any number of them.
const maxMediaSeen = 64

func newPageState(maxBytes int64, maxURL int) *pageState {
	return &pageState{
		notify: make(chan struct{}, 1), maxBytes: maxBytes, maxURL: maxURL, lastNet: time.Now(),
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
			s.noteMedia(e.RequestID, r.URL, r.MimeType, responseSize(r))
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
			delete(s.mediaReq, e.RequestID)
		}
		s.poke()
	case *network.EventLoadingFailed:
		delete(s.inflight, e.RequestID)
		delete(s.mediaReq, e.RequestID)
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

// noteMedia records a media response (s.mu held); id is its network
// request, "" when it is not followed further. URLs over the URL cap and
// media past the first maxMediaSeen are not recorded.
func (s *pageState) noteMedia(id network.RequestID, rawURL, mime string, size int64) {
	u := stripFragment(rawURL)
	if len(u) > s.maxURL {
		return
	}
	m := s.media[u]
	if m == nil {
		if len(s.media) >= maxMediaSeen {
			return
		}
		m = &mediaSeen{url: u}
		s.media[u] = m
	}
	m.mime = truncateUTF8(mime, 128)
	m.size = max(m.size, size)
	if id != "" {
		s.mediaReq[id] = u
	}
}

// responseSize is the full size of a (possibly ranged) response from its
// headers: the total of Content-Range, else Content-Length of a 200.
func responseSize(r *network.Response) int64 {
	return headerSize(r.Status, func(name string) string {
		for k, v := range r.Headers {
			if s, ok := v.(string); ok && strings.EqualFold(k, name) {
				return s
			}
		}
		return ""
	})
}

// headerSize is responseSize from a status and a header lookup.
func headerSize(status int64, header func(string) string) int64 {
	if s := header("Content-Range"); s != "" {
		if i := strings.LastIndexByte(s, '/'); i >= 0 {
			if total, _ := strconv.ParseInt(strings.TrimSpace(s[i+1:]), 10, 64); total > 0 {
				return total
			}
		}
	}
	if status == 200 {
		cl, _ := strconv.ParseInt(strings.TrimSpace(header("Content-Length")), 10, 64)
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
func (b *Browser) guard(ctx context.Context, paused iter.Seq2[fetch.EventRequestPaused, error], state func() *pageState) {
	for ev, err := range paused {
		if err != nil {
			return
		}
		st := state()
		if st == nil { // between pages: a late request of the last one
			st = newPageState(b.cfg.MaxPageBytes, b.cfg.Limits.MaxURLBytes)
		}
		go func() {
			if ev.ResponseStatusCode != 0 || ev.ResponseErrorReason != "" { // response stage
				if ev.ResourceType == network.ResourceTypeDocument {
					b.holdDocument(ctx, ev, st)
				} else {
					b.holdMedia(ctx, ev, st)
				}
				return
			}
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

// holdMedia answers a media response paused at the response stage: its
// URL, type and size are noted for capture, and the response is failed,
// so Chromium never plays media. Why: a player fetches whatever the media
// points at (an HLS playlist's segments, a live stream that never ends),
// while capture downloads the file itself anyway, by a policy-checked GET
// under the media size cap.
func (b *Browser) holdMedia(ctx context.Context, ev fetch.EventRequestPaused, st *pageState) {
	if ev.ResponseStatusCode >= 200 && ev.ResponseStatusCode < 300 {
		header := pausedHeader(ev)
		st.mu.Lock()
		st.noteMedia("", ev.Request.URL, header("Content-Type"), headerSize(ev.ResponseStatusCode, header))
		st.mu.Unlock()
	}
	chromedp.Call(ctx, fetch.FailRequest, fetch.FailRequestParams{RequestID: ev.RequestID, ErrorReason: network.ErrorReasonAborted})
}

// holdDocument answers a document response paused at the response stage.
// HTML, text and everything else Chromium shows as a page go on; a PDF,
// audio or video, or a streaming manifest (HLS, DASH) is failed before
// Chromium renders it: its media document would play a playlist and fetch
// the segments it names. The main frame's response is noted so navigate
// reads it by direct HTTP; a sub-frame's media is noted for capture.
func (b *Browser) holdDocument(ctx context.Context, ev fetch.EventRequestPaused, st *pageState) {
	header := pausedHeader(ev)
	ct := header("Content-Type")
	kind := ContentKind(ct, ev.Request.URL)
	if kind != "pdf" && kind != "media" && !isManifestType(ct) {
		chromedp.Call(ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: ev.RequestID})
		return
	}
	st.mu.Lock()
	switch {
	case ev.FrameID == st.mainFrame:
		st.mainURL, st.mainMime, st.status = ev.Request.URL, truncateUTF8(ct, 256), ev.ResponseStatusCode
	case kind == "media" && ev.ResponseStatusCode < 300:
		st.noteMedia("", ev.Request.URL, ct, headerSize(ev.ResponseStatusCode, header))
	}
	st.mu.Unlock()
	chromedp.Call(ctx, fetch.FailRequest, fetch.FailRequestParams{RequestID: ev.RequestID, ErrorReason: network.ErrorReasonAborted})
}

// pausedHeader looks up a response header of a paused request.
func pausedHeader(ev fetch.EventRequestPaused) func(string) string {
	return func(name string) string {
		for _, h := range ev.ResponseHeaders {
			if strings.EqualFold(h.Name, name) {
				return h.Value
			}
		}
		return ""
	}
}

// isManifestType reports a streaming manifest type (HLS, DASH): a player
// given one fetches the segments it lists.
func isManifestType(contentType string) bool {
	mt, _, _ := mime.ParseMediaType(contentType)
	switch strings.ToLower(mt) {
	case "application/vnd.apple.mpegurl", "application/x-mpegurl", "audio/mpegurl", "audio/x-mpegurl",
		"application/dash+xml", "video/vnd.mpeg.dash.mpd":
		return true
	}
	return false
}

// page loads raw in a tab of run: an idle one or a new one. The tab goes
// back to the run only when the page succeeded and the tab is alive; a
// failed page's tab (crashed, timed out, cancelled) is closed. A page
// that failed because its reused tab had died (a renderer crash the
// crash event reported late) is loaded again in a new tab, once.
func (b *Browser) page(ctx context.Context, run *browserRun, raw string) (Document, error) {
	for attempt := 0; ; attempt++ {
		t, err := b.takeTab(ctx, run)
		if err != nil {
			return Document{}, err
		}
		st := newPageState(b.cfg.MaxPageBytes, b.cfg.Limits.MaxURLBytes)
		st.mainFrame = t.frame
		t.cur.Store(st)
		stop := context.AfterFunc(ctx, t.cancel)
		doc, err := b.load(ctx, t.ctx, raw, st)
		live := stop()
		t.pages++
		if live && err == nil && !t.dead() {
			b.putTab(run, t)
			return doc, nil
		}
		t.cancel()
		if err == nil || !live || t.pages == 1 || attempt > 0 || !t.crashed.Load() {
			return doc, err
		}
		b.cfg.Logf("browser: %s: reused tab had crashed; loading again in a new tab", raw)
	}
}

// load navigates the tab to raw, waits for it to settle and extracts it.
func (b *Browser) load(ctx, tabCtx context.Context, raw string, st *pageState) (Document, error) {
	pctx, cancel := context.WithTimeout(tabCtx, b.cfg.PageTimeout)
	defer cancel()
	if doc, done, err := b.navigate(ctx, pctx, raw, st); done {
		return doc, err
	}
	timedOut := b.settle(pctx, st)
	if err := ctx.Err(); err != nil {
		return Document{}, err
	}
	return b.extract(ctx, tabCtx, raw, st, timedOut)
}

// openTab starts the tab and its request interception (every request is
// paused and checked by guard against the tab's current page).
func (b *Browser) openTab(ctx context.Context, t *tab) error {
	if err := chromedp.Do(t.ctx); err != nil {
		return b.ctxErr(ctx, fmt.Errorf("research: open tab: %w", err))
	}
	t.frame = cdp.FrameID(chromedp.FromContext(t.ctx).Target.TargetID)
	go b.guard(t.ctx, chromedp.Events(t.ctx, fetch.RequestPaused), t.cur.Load)
	patterns := []*fetch.RequestPattern{
		{URLPattern: "*"}, // every request, for the policy
		{URLPattern: "*", ResourceType: network.ResourceTypeMedia, RequestStage: fetch.RequestStageResponse},    // holdMedia
		{URLPattern: "*", ResourceType: network.ResourceTypeDocument, RequestStage: fetch.RequestStageResponse}, // holdDocument
	}
	if _, err := chromedp.Call(t.ctx, fetch.Enable, fetch.EnableParams{Patterns: patterns}); err != nil {
		return b.ctxErr(ctx, fmt.Errorf("research: request interception: %w", err))
	}
	return nil
}

// navigate loads raw in the tab. done means the page is finished with:
// refused, failed, or a PDF, media file or download read by direct HTTP.
func (b *Browser) navigate(ctx, pctx context.Context, raw string, st *pageState) (doc Document, done bool, err error) {
	nav, err := chromedp.Call(pctx, page.Navigate, page.NavigateParams{URL: raw})
	if err == nil && nav.ErrorText != "" {
		if rerr := navRefusal(raw, nav.ErrorText, st); rerr != nil {
			return Document{}, true, rerr
		}
		err = fmt.Errorf("navigation failed: %s", nav.ErrorText)
	}
	st.mu.Lock()
	refusedErr, mainMime, mainURL := st.refused, st.mainMime, st.mainURL
	st.mu.Unlock()
	if refusedErr != nil {
		return Document{}, true, refusedErr
	}
	if kind := ContentKind(mainMime, mainURL); kind == "pdf" || kind == "media" || (err == nil && nav.IsDownload) || (err != nil && kind != "" && kind != "html" && kind != "text") {
		// PDFs and media (and other downloads) by direct HTTP, from the
		// URL the browser ended at.
		target := raw
		if mainURL != "" && b.cfg.Limits.URLOK(mainURL) {
			target = mainURL
		}
		doc, err := b.cfg.HTTP.Fetch(ctx, target)
		return doc, true, err
	}
	if err != nil {
		if pctx.Err() != nil && ctx.Err() == nil {
			return Document{}, true, fmt.Errorf("research: %s: timed out after %s before the page answered", raw, b.cfg.PageTimeout)
		}
		return Document{}, true, b.ctxErr(ctx, fmt.Errorf("research: %s: %w", raw, err))
	}
	return Document{}, false, nil
}

// navRefusal turns a navigation error that is a refusal into its error.
func navRefusal(raw, errorText string, st *pageState) error {
	switch {
	case strings.Contains(errorText, "ERR_UNSAFE_REDIRECT"):
		// Chromium refuses redirects to file:, data: and the like itself,
		// before interception sees them.
		return refused(raw, "redirect to a scheme other than http(s)")
	case strings.Contains(errorText, "ERR_BLOCKED_BY_CLIENT"):
		st.mu.Lock()
		r := st.refused
		st.mu.Unlock()
		if r == nil {
			r = refused(raw, "blocked by the URL policy")
		}
		return r
	}
	return nil
}

// settle waits for load + network quiet (or the size cap) within the page
// timeout, and reports whether the timeout hit.
func (b *Browser) settle(pctx context.Context, st *pageState) (timedOut bool) {
	for !st.settled(b.cfg.Idle, b.cfg.MaxSettle) {
		t := time.NewTimer(50 * time.Millisecond)
		select {
		case <-st.notify:
		case <-t.C:
		case <-pctx.Done():
		}
		t.Stop()
		if pctx.Err() != nil {
			return true
		}
	}
	return false
}

// extract reads the rendered page as it stands (bounded, see readDOM) and
// extracts it; then captures its media.
func (b *Browser) extract(ctx, tabCtx context.Context, raw string, st *pageState, timedOut bool) (Document, error) {
	st.mu.Lock()
	dcl, tooBig, status, mainURL, refusedErr, mainBytes, frame := st.dcl, st.tooBig, st.status, st.mainURL, st.refused, st.mainBytes, st.mainFrame
	st.mu.Unlock()
	switch {
	case refusedErr != nil:
		return Document{}, refusedErr
	case status >= 400:
		return Document{}, &HTTPStatusError{URL: raw, Status: int(status)}
	case timedOut && !dcl:
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
	snap, err := b.readDOM(ectx, frame)
	if err != nil {
		return Document{}, b.ctxErr(ctx, fmt.Errorf("research: %s: read DOM: %w", raw, err))
	}
	if snap.URL != "" && snap.URL != "about:blank" {
		mainURL = snap.URL
	}
	if mainURL == "" || !b.cfg.Limits.URLOK(mainURL) {
		mainURL = raw
	}
	doc, err := b.cfg.Limits.ExtractHTML(strings.NewReader(snap.HTML), mainURL)
	if err != nil {
		return Document{}, err
	}
	doc.Bytes = int(max(mainBytes, int64(len(snap.HTML))))
	doc.Truncated = doc.Truncated || snap.Cut || tooBig
	if timedOut || tooBig || snap.Cut {
		b.cfg.Logf("browser: %s: read partially (timed out %v, over size cap %v, DOM cut %v)", raw, timedOut, tooBig, snap.Cut)
	}
	doc.Media = b.captureMedia(ctx, st)
	return b.cfg.Limits.Document(doc, raw), nil
}

// domSnapshot is the rendered page as readDOM returns it.
type domSnapshot struct {
	HTML string // at most MaxPageBytes of UTF-8
	URL  string // the document's URL; "" when over the URL cap
	Cut  bool   // the DOM serialisation was longer than MaxPageBytes
}

// domSnapshotJS serialises the DOM inside the page and cuts it there, so a
// DOM of 50 MB built by script never crosses the DevTools pipe: at most
// maxBytes of UTF-8 (cut at a character boundary), sent as base64 (ASCII:
// no JSON escaping can inflate it; 4/3 of maxBytes on the wire) with the
// document URL if it is within maxURL bytes.
func domSnapshotJS(maxBytes int64, maxURL int) string {
	return fmt.Sprintf(`(() => {
  const max = %d, maxURL = %d;
  const el = document.documentElement;
  let s = el ? el.outerHTML : "";
  const cut0 = s.length > max;
  if (cut0) s = s.slice(0, max); // each UTF-16 unit is at least one UTF-8 byte
  const all = new TextEncoder().encode(s);
  let n = all.length;
  if (n > max) {
    n = max;
    while (n > 0 && (all[n] & 0xc0) === 0x80) n--; // not inside a character
  }
  const b = all.subarray(0, n);
  let bin = "";
  for (let i = 0; i < b.length; i += 0x8000) bin += String.fromCharCode.apply(null, b.subarray(i, i + 0x8000));
  const u = String(location.href);
  return {h: btoa(bin), u: u.length <= maxURL ? u : "", c: cut0 || n < all.length};
})()`, maxBytes, maxURL)
}

// readDOM serialises the page in an isolated world: the page's own
// scripts share the DOM but not the JavaScript globals there, so a page
// that replaces String.prototype.slice, TextEncoder or the outerHTML getter
// cannot defeat the cut.
func (b *Browser) readDOM(ctx context.Context, frame cdp.FrameID) (domSnapshot, error) {
	world, err := chromedp.Call(ctx, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{FrameID: frame, WorldName: "lethe-extract"})
	if err != nil {
		return domSnapshot{}, fmt.Errorf("isolated world: %w", err)
	}
	byValue := true
	r, err := chromedp.Call(ctx, runtime.Evaluate, runtime.EvaluateParams{
		Expression: domSnapshotJS(b.cfg.MaxPageBytes, b.cfg.Limits.MaxURLBytes), ContextID: world.ExecutionContextID, ReturnByValue: &byValue,
	})
	if err != nil {
		return domSnapshot{}, err
	}
	if r.ExceptionDetails != nil {
		return domSnapshot{}, fmt.Errorf("serialise: %s", r.ExceptionDetails.Text)
	}
	var v struct {
		H string `json:"h"`
		U string `json:"u"`
		C bool   `json:"c"`
	}
	if r.Result == nil || json.Unmarshal(r.Result.Value, &v) != nil {
		return domSnapshot{}, errors.New("serialise: unexpected result")
	}
	html, err := base64.StdEncoding.DecodeString(v.H)
	if err != nil {
		return domSnapshot{}, fmt.Errorf("serialise: %w", err)
	}
	snap := domSnapshot{HTML: truncateUTF8(string(html), int(b.cfg.MaxPageBytes)), URL: v.U, Cut: v.C}
	if !b.cfg.Limits.URLOK(snap.URL) {
		snap.URL = ""
	}
	return snap, nil
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
