package research

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// noDNS is a resolver that never sends a query: a test that reached it
// would have asked DNS about a metadata name.
func noDNS(t *testing.T) *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		t.Error("the policy asked DNS")
		return nil, errors.New("no DNS in this test")
	}}
}

// TestAllowPrivateNeverOpensMetadata plays a page that links the cloud
// metadata services on a worker with every allowance on. The policy's
// decision is read, before any connection: nothing is sent to these
// addresses.
func TestAllowPrivateNeverOpensMetadata(t *testing.T) {
	open := URLPolicy{AllowLoopback: true, AllowPrivate: true}
	for _, u := range []string{
		"http://169.254.169.254/latest/meta-data/iam/security-credentials/",
		"http://[fd00:ec2::254]/latest/api/token",          // AWS IMDS over IPv6 (unique-local)
		"http://100.100.100.200/latest/meta-data/",         // Alibaba (CGNAT)
		"http://168.63.129.16/machine?comp=goalstate",      // Azure wire server
		"http://[fd20:ce::254]/computeMetadata/v1/",        // GCP over IPv6
		"http://169.254.170.2/v2/credentials",              // ECS task credentials
		"http://[::ffff:100.100.100.200]/",                 // mapped
		"http://[64:ff9b::6464:64c8]/",                     // NAT64 form of 100.100.100.200
		"http://metadata.google.internal/computeMetadata/", // by name, before DNS
		"http://Metadata.Google.Internal./",
		"http://instance-data/latest/",
	} {
		err := open.Check(context.Background(), u, noDNS(t))
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "metadata") {
			t.Errorf("%s: %v, want a metadata refusal", u, err)
		}
	}
	for _, a := range []string{"[fd00:ec2::254]:80", "100.100.100.200:80", "169.254.169.254:80", "168.63.129.16:80"} {
		if err := open.DialControl("tcp", a, nil); !errors.Is(err, ErrRefused) {
			t.Errorf("dial %s: %v, want refused", a, err)
		}
	}
	// Still an intranet allowance: a private address that is not a
	// metadata service is allowed.
	if err := open.Check(context.Background(), "http://10.1.2.3/wiki/", noDNS(t)); err != nil {
		t.Errorf("intranet page: %v", err)
	}
}

// TestAllowedPortsApplyAtDialTime: with research.allowed_ports 80,443 a URL
// that names another port is refused by Check, and a connection to another
// port (a redirect, a DNS answer, a browser preconnect all end in a dial)
// is refused by DialControl before it is made: the listener sees nothing.
func TestAllowedPortsApplyAtDialTime(t *testing.T) {
	ln, accepted := countingListener(t)
	p := URLPolicy{AllowLoopback: true, AllowedPorts: []uint16{80, 443}}
	if err := p.Check(context.Background(), "http://"+ln.Addr().String()+"/", nil); !errors.Is(err, ErrRefused) {
		t.Fatalf("Check of port %s: %v, want refused", ln.Addr(), err)
	}
	if err := p.Check(context.Background(), "http://93.184.216.34:22/", nil); !errors.Is(err, ErrRefused) {
		t.Fatalf("Check of port 22: %v", err)
	}
	if err := p.Check(context.Background(), "https://93.184.216.34/", nil); err != nil {
		t.Fatalf("Check of port 443: %v", err)
	}
	d := net.Dialer{Timeout: 2 * time.Second, Control: p.DialControl}
	if c, err := d.Dial("tcp", ln.Addr().String()); !errors.Is(err, ErrRefused) {
		if c != nil {
			c.Close()
		}
		t.Fatalf("dial %s: %v, want refused", ln.Addr(), err)
	}
	time.Sleep(50 * time.Millisecond)
	if n := accepted.Load(); n != 0 {
		t.Fatalf("the listener accepted %d connections", n)
	}
}

// TestServiceEndpointsRefusedWithEverythingAllowed plays a page that links
// the worker's own model server on a worker that allows loopback and
// private addresses: the fetcher refuses it, by name, by another loopback
// address and at dial time, and the server never sees a request. Another
// loopback server stays reachable.
func TestServiceEndpointsRefusedWithEverythingAllowed(t *testing.T) {
	var served atomic.Int64
	model := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { served.Add(1) })}
	mln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go model.Serve(mln)
	t.Cleanup(func() { model.Close() })
	port := strconv.Itoa(mln.Addr().(*net.TCPAddr).Port)

	denied, skipped := ServiceEndpoints(context.Background(), nil, []string{"http://127.0.0.1:" + port, "bolt://localhost:7687", ":9464", ""})
	if len(skipped) != 0 {
		t.Fatalf("skipped %v", skipped)
	}
	p := URLPolicy{AllowLoopback: true, AllowPrivate: true, Denied: denied}
	for _, u := range []string{"http://127.0.0.1:" + port + "/v1/models", "http://localhost:" + port + "/", "http://127.0.0.2:" + port + "/",
		"http://[::1]:" + port + "/", "http://127.0.0.1:7687/", "http://127.0.0.1:9464/metrics"} {
		if err := p.Check(context.Background(), u, nil); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "service endpoint") {
			t.Errorf("%s: %v, want a service-endpoint refusal", u, err)
		}
	}
	if err := p.DialControl("tcp", mln.Addr().String(), nil); !errors.Is(err, ErrRefused) {
		t.Errorf("dial the model server: %v", err)
	}
	f := NewHTTPFetcher(HTTPFetcherConfig{Policy: p})
	if _, err := f.Fetch(context.Background(), "http://127.0.0.1:"+port+"/v1/chat/completions"); !errors.Is(err, ErrRefused) {
		t.Errorf("fetch of the model server: %v, want refused", err)
	}
	other, _ := countingListener(t)
	if err := p.Check(context.Background(), "http://"+other.Addr().String()+"/", nil); err != nil {
		t.Errorf("another loopback server: %v", err)
	}
	if n := served.Load(); n != 0 {
		t.Fatalf("the model server answered %d requests", n)
	}
}

func countingListener(t *testing.T) (net.Listener, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var n atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Close()
		}
	}()
	return ln, &n
}
