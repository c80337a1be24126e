package research

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
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
	ln       net.Listener
	srv      *http.Server
	tr       *http.Transport
	dialer   *net.Dialer

	mu      sync.Mutex
	tunnels map[net.Conn]struct{}
}

// refusedHeader marks a proxy refusal in a plain-HTTP answer.
const refusedHeader = "X-Lethe-Refused"

// StartEgressProxy listens on 127.0.0.1 (a free port) and serves until
// Close.
func StartEgressProxy(p URLPolicy, resolver *net.Resolver) (*EgressProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	d := &net.Dialer{Timeout: 15 * time.Second, KeepAlive: 30 * time.Second, Control: p.DialControl, Resolver: resolver}
	e := &EgressProxy{
		policy: p, resolver: resolver, ln: ln, dialer: d,
		tr: &http.Transport{
			Proxy: nil, DialContext: d.DialContext, MaxIdleConns: 32, IdleConnTimeout: 30 * time.Second,
			ResponseHeaderTimeout: 60 * time.Second, DisableCompression: true,
		},
		tunnels: map[net.Conn]struct{}{},
	}
	e.srv = &http.Server{Handler: e, ReadHeaderTimeout: 30 * time.Second}
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
	out := r.Clone(r.Context())
	out.RequestURI = ""
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
	io.Copy(w, resp.Body)
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
	e.track(client, upstream, true)
	defer e.track(client, upstream, false)
	if _, err := client.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n")); err != nil {
		client.Close()
		upstream.Close()
		return
	}
	done := make(chan struct{}, 2)
	go func() {
		if n := buf.Reader.Buffered(); n > 0 {
			b, _ := buf.Reader.Peek(n)
			upstream.Write(b)
		}
		io.Copy(upstream, client)
		closeWrite(upstream)
		done <- struct{}{}
	}()
	go func() {
		io.Copy(client, upstream)
		closeWrite(client)
		done <- struct{}{}
	}()
	<-done
	<-done
	client.Close()
	upstream.Close()
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

func closeWrite(c net.Conn) {
	if tc, ok := c.(interface{ CloseWrite() error }); ok {
		tc.CloseWrite()
		return
	}
	c.Close()
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
