package llmtest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// Faulty serves a handler (a Server's, usually) on a fixed loopback port
// that a test can take down and bring back. While it is down the port
// refuses connections and every open connection is cut, as when a model
// server crashes: the client sees a transport error, not an HTTP status.
// A hook sees every request first and may take the server down from
// inside it, so an outage can start inside a given model call.
type Faulty struct {
	handler http.Handler
	addr    string

	mu    sync.Mutex
	hs    *http.Server
	down  bool
	chats int
	hook  func(chat int, r *http.Request) (cut bool)
}

// NewFaulty starts serving h on a free loopback port.
func NewFaulty(h http.Handler) (*Faulty, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("faulty listen: %w", err)
	}
	f := &Faulty{handler: h, addr: ln.Addr().String()}
	f.serve(ln)
	return f, nil
}

// URL is the base URL, stable across Down and Up.
func (f *Faulty) URL() string { return "http://" + f.addr }

// OnRequest sets a hook called for every request with the number of chat
// completion requests so far (this one included; 0 for other requests),
// before the request is answered. The hook may call Down, or return true
// to cut this one request's connection (a blip, the server stays up).
func (f *Faulty) OnRequest(hook func(chat int, r *http.Request) (cut bool)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hook = hook
}

// Chats is the number of chat requests that reached the server.
func (f *Faulty) Chats() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.chats
}

func (f *Faulty) serve(ln net.Listener) {
	hs := &http.Server{Handler: http.HandlerFunc(f.serveHTTP), ReadHeaderTimeout: 10 * time.Second}
	f.hs = hs
	go hs.Serve(ln) //nolint:errcheck // ends with ErrServerClosed when taken down
}

func (f *Faulty) serveHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	n := 0
	if r.Method == http.MethodPost && r.URL.Path == "/v1/chat/completions" {
		f.chats++
		n = f.chats
	}
	hook := f.hook
	f.mu.Unlock()
	cut := hook != nil && hook(n, r)
	f.mu.Lock()
	cut = cut || f.down
	f.mu.Unlock()
	if cut { // cut by the hook, or the server went down under it
		panic(http.ErrAbortHandler)
	}
	f.handler.ServeHTTP(w, r)
}

// Down closes the port and cuts every open connection.
func (f *Faulty) Down() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return
	}
	f.down = true
	_ = f.hs.Close()
}

// Up listens on the same port again.
func (f *Faulty) Up() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.down {
		return nil
	}
	var ln net.Listener
	var err error
	for i := 0; i < 50; i++ { // the port may linger for a moment after Close
		if ln, err = net.Listen("tcp", f.addr); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("faulty relisten %s: %w", f.addr, err)
	}
	f.down = false
	f.serve(ln)
	return nil
}

// DownFor takes the server down now and brings it back after d (or when
// ctx ends, whichever comes first); errors of Up go to onErr.
func (f *Faulty) DownFor(ctx context.Context, d time.Duration, onErr func(error)) {
	f.Down()
	go func() {
		select {
		case <-time.After(d):
		case <-ctx.Done():
		}
		if err := f.Up(); err != nil && onErr != nil {
			onErr(err)
		}
	}()
}

// IsDown reports whether the server is down.
func (f *Faulty) IsDown() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.down
}

// Close stops the server for good.
func (f *Faulty) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.down = true
	_ = f.hs.Close()
}
