package research

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// EgressProxy is a forward HTTP proxy on loopback through which the browser
// sends all of its traffic (--proxy-server, with loopback not bypassed). It
// is the browser's network-level guard: every CONNECT tunnel and every
// plain-HTTP request is checked against the URLPolicy and dialed through
// DialControl, so the addresses Chromium reaches are the ones the policy
// allows, whatever the page does — preconnects, workers, service workers,
// redirects, and host names whose DNS answer changes between the check and
// the connection (DNS rebinding) included. The Fetch-domain interception in
// the browser gives clear errors for refused URLs; this proxy makes the
// refusal hold where interception does not reach.
type EgressProxy struct {
	policy   URLPolicy
	resolver *net.Resolver
	idle     time.Duration
	ln       net.Listener
	srv      *http.Server
	tr       *http.Transport
	dialer   *net.Dialer

	mu      sync.Mutex
	tunnels map[net.Conn]struct{}
}

// EgressConfig configures an EgressProxy.
type EgressConfig struct {
	Policy URLPolicy
	// Resolver for the policy's DNS checks; nil = net.DefaultResolver.
	Resolver *net.Resolver
	// IdleTimeout closes a tunnel, a proxied request or a keep-alive
	// connection after this long without traffic either way: a page that
	// opens connections and leaves them silent must not hold them (and
	// their goroutines) for ever. Default 1 min.
	IdleTimeout time.Duration
}

// refusedHeader marks a proxy refusal in a plain-HTTP answer.
const refusedHeader = "X-Lethe-Refused"

// StartEgressProxy listens on 127.0.0.1 (a free port) and serves until
// Close.
func StartEgressProxy(cfg EgressConfig) (*EgressProxy, error) {
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = time.Minute
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("research: egress proxy: %w", err)
	}
	p := cfg.Policy
	d := &net.Dialer{Timeout: 15 * time.Second, KeepAlive: 30 * time.Second, Control: p.DialControl, Resolver: cfg.Resolver}
	e := &EgressProxy{
		policy: p, resolver: cfg.Resolver, idle: cfg.IdleTimeout, ln: ln, dialer: d,
		tr: &http.Transport{
			Proxy: nil, DialContext: d.DialContext, MaxIdleConns: 32, IdleConnTimeout: 30 * time.Second,
			ResponseHeaderTimeout: 60 * time.Second, DisableCompression: true,
		},
		tunnels: map[net.Conn]struct{}{},
	}
	e.srv = &http.Server{Handler: e, ReadHeaderTimeout: 30 * time.Second, IdleTimeout: cfg.IdleTimeout}
	go e.srv.Serve(ln)
	return e, nil
}

// Addr is host:port of the proxy.
func (e *EgressProxy) Addr() string { return e.ln.Addr().String() }

// Close stops the proxy and cuts its open tunnels.
func (e *EgressProxy) Close() error {
	err := e.srv.Close()
	e.mu.Lock()
	for c := range e.tunnels {
		c.Close()
	}
	e.mu.Unlock()
	e.tr.CloseIdleConnections()
	return err
}

func (e *EgressProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		e.connect(w, r)
		return
	}
	if r.URL.Scheme != "http" || r.URL.Host == "" {
		http.Error(w, "lethe egress proxy: only absolute http:// requests and CONNECT", http.StatusBadRequest)
		return
	}
	if err := e.policy.Check(r.Context(), r.URL.String(), e.resolver); err != nil {
		e.refuse(w, err)
		return
	}
	// The exchange is cancelled when it has been idle (no bytes either
	// way) for the idle timeout.
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	watch := newIdleWatch(e.idle, cancel)
	defer watch.stop()
	out := r.Clone(ctx)
	out.RequestURI = ""
	if r.Body != nil && r.ContentLength != 0 {
		out.Body = &touchReader{r.Body, watch}
	}
	removeHopHeaders(out.Header)
	resp, err := e.tr.RoundTrip(out)
	if err != nil {
		if errors.Is(err, ErrRefused) {
			e.refuse(w, err)
			return
		}
		http.Error(w, "lethe egress proxy: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	removeHopHeaders(resp.Header)
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	copyWatched(w, resp.Body, watch)
}

func (e *EgressProxy) refuse(w http.ResponseWriter, err error) {
	w.Header().Set(refusedHeader, "1")
	http.Error(w, "lethe egress proxy: "+err.Error(), http.StatusForbidden)
}

func (e *EgressProxy) connect(w http.ResponseWriter, r *http.Request) {
	host := r.Host
	if err := e.policy.Check(r.Context(), "https://"+host+"/", e.resolver); err != nil {
		e.refuse(w, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 20*time.Second)
	upstream, err := e.dialer.DialContext(ctx, "tcp", host)
	cancel()
	if err != nil {
		if errors.Is(err, ErrRefused) {
			e.refuse(w, err)
			return
		}
		http.Error(w, "lethe egress proxy: "+err.Error(), http.StatusBadGateway)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		upstream.Close()
		http.Error(w, "lethe egress proxy: cannot tunnel", http.StatusInternalServerError)
		return
	}
	client, buf, err := hj.Hijack()
	if err != nil {
		upstream.Close()
		return
	}
	var early []byte // bytes the client sent after its CONNECT header
	if n := buf.Reader.Buffered(); n > 0 {
		early, _ = buf.Reader.Peek(n)
	}
	e.tunnel(client, upstream, early)
}

// tunnel copies bytes both ways until either side ends or nothing has
// moved either way for the idle timeout, then closes both sides. Why not a
// half-close: when the browser closes its end (a tab closed, a context
// disposed), a server that keeps its side open would hold the upstream
// connection, two goroutines and two descriptors for ever.
func (e *EgressProxy) tunnel(client, upstream net.Conn, early []byte) {
	e.track(client, upstream, true)
	defer e.track(client, upstream, false)
	var once sync.Once
	closeBoth := func() {
		once.Do(func() {
			client.Close()
			upstream.Close()
		})
	}
	defer closeBoth()
	watch := newIdleWatch(e.idle, closeBoth)
	defer watch.stop()
	if _, err := client.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n")); err != nil {
		return
	}
	if len(early) > 0 {
		if _, err := upstream.Write(early); err != nil {
			return
		}
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		copyWatched(upstream, client, watch)
		closeBoth()
	}()
	go func() {
		defer wg.Done()
		copyWatched(client, upstream, watch)
		closeBoth()
	}()
	wg.Wait()
}

// copyWatched copies src to dst until either fails, marking the watch
// active on every chunk read.
func copyWatched(dst io.Writer, src io.Reader, w *idleWatch) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			w.touch()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
			if f, ok := dst.(http.Flusher); ok {
				f.Flush() // a streamed answer goes on as it arrives
			}
		}
		if err != nil {
			return
		}
	}
}

// idleWatch calls fire once nothing has touched it for d.
type idleWatch struct {
	d    time.Duration
	fire func()
	last atomic.Int64 // unix nanoseconds of the last touch

	mu      sync.Mutex // guards t and stopped (the timer re-arms itself)
	t       *time.Timer
	stopped bool
}

func newIdleWatch(d time.Duration, fire func()) *idleWatch {
	w := &idleWatch{d: d, fire: fire}
	w.touch()
	w.mu.Lock()
	w.t = time.AfterFunc(d, w.check)
	w.mu.Unlock()
	return w
}

func (w *idleWatch) touch() { w.last.Store(time.Now().UnixNano()) }

func (w *idleWatch) check() {
	left := w.d - time.Since(time.Unix(0, w.last.Load()))
	w.mu.Lock()
	if w.stopped {
		w.mu.Unlock()
		return
	}
	if left > 0 {
		w.t.Reset(left)
		w.mu.Unlock()
		return
	}
	w.mu.Unlock()
	w.fire()
}

func (w *idleWatch) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	w.t.Stop()
}

// touchReader marks a watch active on every read (a request body being
// uploaded through the proxy).
type touchReader struct {
	io.ReadCloser
	w *idleWatch
}

func (r *touchReader) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	if n > 0 {
		r.w.touch()
	}
	return n, err
}

func (e *EgressProxy) track(a, b net.Conn, add bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if add {
		e.tunnels[a], e.tunnels[b] = struct{}{}, struct{}{}
	} else {
		delete(e.tunnels, a)
		delete(e.tunnels, b)
	}
}

var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

func removeHopHeaders(h http.Header) {
	for _, f := range h["Connection"] {
		for _, k := range strings.Split(f, ",") {
			h.Del(strings.TrimSpace(k))
		}
	}
	for _, k := range hopHeaders {
		h.Del(k)
	}
}
