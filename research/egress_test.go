package research

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lethe-research/lethe/internal/lethetest"
)

// silentUpstream accepts connections, reads until the proxy closes or
// half-closes its side, and then holds its end open without a word until
// release (a server that ignores a half-close: the case that left tunnels
// behind). eof receives one value per connection that saw EOF.
type silentUpstream struct {
	ln      net.Listener
	eof     chan struct{}
	release chan struct{}
	wg      sync.WaitGroup
}

func newSilentUpstream(t *testing.T) *silentUpstream {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := &silentUpstream{ln: ln, eof: make(chan struct{}, 64), release: make(chan struct{})}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u.wg.Add(1)
			go func() {
				defer u.wg.Done()
				defer c.Close()
				io.Copy(io.Discard, c)
				u.eof <- struct{}{}
				<-u.release
			}()
		}
	}()
	return u
}

func (u *silentUpstream) close() {
	close(u.release)
	u.ln.Close()
	u.wg.Wait()
}

func openFDs(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		lethetest.Missing(t, lethetest.System, fmt.Sprintf("no /proc/self/fd: %v", err))
	}
	return len(ents)
}

// connectTunnel opens a CONNECT tunnel through the proxy to target.
func connectTunnel(t *testing.T, proxy, target string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", proxy)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || !strings.Contains(line, " 200 ") {
		t.Fatalf("CONNECT: %q %v", line, err)
	}
	return c
}

// waitFor polls cond for up to d.
func waitFor(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

func (e *EgressProxy) openTunnels() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.tunnels) / 2
}

// TestEgressTunnelAbandoned: when the browser closes its side of a CONNECT
// tunnel, the proxy closes the upstream side too; goroutines and file
// descriptors return to their baseline.
func TestEgressTunnelAbandoned(t *testing.T) {
	up := newSilentUpstream(t)
	px, err := StartEgressProxy(EgressConfig{Policy: URLPolicy{AllowLoopback: true}, IdleTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()
	// Warm up (first-use goroutines of the net package), then measure.
	c := connectTunnel(t, px.Addr(), up.ln.Addr().String())
	c.Close()
	<-up.eof
	waitFor(2*time.Second, func() bool { return px.openTunnels() == 0 })
	baseG, baseFD := runtime.NumGoroutine(), openFDs(t)

	const n = 8
	for i := 0; i < n; i++ {
		c := connectTunnel(t, px.Addr(), up.ln.Addr().String())
		io.WriteString(c, "hello")
		c.Close() // the browser abandons the tunnel
	}
	for i := 0; i < n; i++ {
		select {
		case <-up.eof:
		case <-time.After(5 * time.Second):
			t.Fatalf("upstream %d never saw the tunnel end", i)
		}
	}
	// The upstream handlers (n goroutines, n sockets) still hold their ends;
	// the proxy must hold nothing.
	if !waitFor(5*time.Second, func() bool {
		return px.openTunnels() == 0 && runtime.NumGoroutine() <= baseG+n && openFDs(t) <= baseFD+n
	}) {
		t.Fatalf("after %d abandoned tunnels: %d open, goroutines %d (baseline %d + %d upstream), fds %d (baseline %d + %d upstream)",
			n, px.openTunnels(), runtime.NumGoroutine(), baseG, n, openFDs(t), baseFD, n)
	}
	up.close()
	if !waitFor(5*time.Second, func() bool { return runtime.NumGoroutine() <= baseG && openFDs(t) <= baseFD }) {
		t.Fatalf("goroutines %d (baseline %d), fds %d (baseline %d)", runtime.NumGoroutine(), baseG, openFDs(t), baseFD)
	}
}

// TestEgressTunnelIdle: a tunnel with no traffic either way is closed after
// the idle timeout; one with traffic is not.
func TestEgressTunnelIdle(t *testing.T) {
	up := newSilentUpstream(t)
	defer up.close()
	const idle = 400 * time.Millisecond
	px, err := StartEgressProxy(EgressConfig{Policy: URLPolicy{AllowLoopback: true}, IdleTimeout: idle})
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()

	busy := connectTunnel(t, px.Addr(), up.ln.Addr().String())
	defer busy.Close()
	silent := connectTunnel(t, px.Addr(), up.ln.Addr().String())
	defer silent.Close()
	start := time.Now()
	ended := make(chan time.Duration, 1)
	go func() {
		io.Copy(io.Discard, silent) // returns when the proxy closes the tunnel
		ended <- time.Since(start)
	}()
	// The busy tunnel sends a byte every idle/4 for three idle periods.
	for time.Since(start) < 3*idle {
		if _, err := io.WriteString(busy, "."); err != nil {
			t.Fatalf("busy tunnel cut after %s: %v", time.Since(start), err)
		}
		time.Sleep(idle / 4)
	}
	select {
	case d := <-ended:
		if d < idle || d > idle+time.Second {
			t.Errorf("silent tunnel closed after %s, idle timeout %s", d, idle)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("silent tunnel never closed")
	}
	if px.openTunnels() != 1 {
		t.Errorf("%d tunnels open, want the busy one", px.openTunnels())
	}
}
