package e2e

import (
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/lethe-research/lethe/internal/lethetest"
	"github.com/lethe-research/lethe/internal/lethetest/sessiontest"
)

// slowLink is a TCP proxy to the Temporal server that holds every byte
// for delay in each direction: the worker's view of a loaded server or a
// distant one, where each RPC's round trip costs twice the delay.
type slowLink struct {
	ln    net.Listener
	to    string
	delay time.Duration
	wg    sync.WaitGroup
}

func newSlowLink(t *testing.T, to string, delay time.Duration) *slowLink {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := &slowLink{ln: ln, to: to, delay: delay}
	l.wg.Add(1)
	go l.accept()
	t.Cleanup(func() { _ = ln.Close(); l.wg.Wait() })
	return l
}

func (l *slowLink) addr() string { return l.ln.Addr().String() }

func (l *slowLink) accept() {
	defer l.wg.Done()
	for {
		c, err := l.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", l.to)
		if err != nil {
			_ = c.Close()
			continue
		}
		l.wg.Add(2)
		go l.pump(s, c)
		go l.pump(c, s)
	}
}

// pump copies src to dst, each chunk written delay after it was read and
// in the order read, so the link adds latency without losing bandwidth.
func (l *slowLink) pump(dst, src net.Conn) {
	defer l.wg.Done()
	type chunk struct {
		due time.Time
		b   []byte
	}
	q := make(chan chunk, 4096)
	go func() {
		defer close(q)
		for {
			b := make([]byte, 32<<10)
			n, err := src.Read(b)
			if n > 0 {
				q <- chunk{time.Now().Add(l.delay), b[:n]}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range q {
		time.Sleep(time.Until(c.due))
		if _, err := dst.Write(c.b); err != nil && !errors.Is(err, io.EOF) {
			break
		}
	}
	_ = dst.Close()
	_ = src.Close()
	for range q { // let the reader finish
	}
}

// Server fault: the worker reaches Temporal over a link with a 3 s round
// trip (a loaded server or a distant one), while the model thinks 60 s
// before its first token. The SDK holds a heartbeat back for up to 80% of
// the heartbeat timeout (8 s of the default 10 s), so a heartbeat would
// reach the server 11 s after the one before it and time a live call out;
// the worker caps that hold at a third of the timeout (service.NewWorkers).
// The session must end as an undisturbed one, with no activity retried.
func TestFaultSlowServerLink(t *testing.T) {
	t.Parallel()
	script := lethetest.Script(t, "battery_root_done")
	base := undisturbed(t, "fault-link-base", script)
	link := newSlowLink(t, hostPort, 1500*time.Millisecond)
	r := newFaultRig(t, "fault-link", script, map[string]string{"temporal.host_port": link.addr()})
	r.chat.OnRequest(func(chat int, req *http.Request) bool {
		if chat == 1 {
			select { // nothing is sent while the model "thinks"
			case <-time.After(60 * time.Second):
			case <-req.Context().Done():
			}
		}
		return false
	})
	r.start(t)
	got := r.finish(t, 10*time.Minute)
	sameAsUndisturbed(t, got, base)
	for a, c := range sessiontest.Retried(got.history) {
		t.Errorf("%s was retried over the slow link: %s", a, c)
	}
}
