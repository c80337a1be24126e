package research

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"
)

func TestURLPolicyCheck(t *testing.T) {
	ctx := context.Background()
	deflt := URLPolicy{}
	loop := URLPolicy{AllowLoopback: true}
	priv := URLPolicy{AllowPrivate: true}
	withCorpus := URLPolicy{CorpusRoot: "/srv/corpus"}
	tests := []struct {
		name   string
		policy URLPolicy
		url    string
		reason string // "" = allowed
	}{
		{"public IPv4 literal (example.com)", deflt, "http://93.184.216.34/", ""},
		{"public https with port and path", deflt, "https://93.184.216.34:8443/a?b=c#d", ""},
		{"public IPv6 literal", deflt, "http://[2606:2800:220:1:248:1893:25c8:1946]/", ""},
		{"cloud metadata", deflt, "http://169.254.169.254/latest/meta-data/", "cloud metadata"},
		{"metadata even with everything allowed", URLPolicy{AllowLoopback: true, AllowPrivate: true}, "http://169.254.169.254/", "cloud metadata"},
		{"private 10/8", deflt, "http://10.0.0.1/admin", "private"},
		{"private 172.16/12", deflt, "https://172.16.5.4/", "private"},
		{"172.32 is public", deflt, "https://172.32.0.1/", ""},
		{"private 192.168/16", deflt, "http://192.168.1.1/", "private"},
		{"CGNAT 100.64/10", deflt, "http://100.64.0.1/", "private"},
		{"private allowed", priv, "http://10.0.0.1/", ""},
		{"private allowed does not allow loopback", priv, "http://127.0.0.1/", "loopback"},
		{"ULA fc00::/7", deflt, "http://[fd12:3456::1]/", "private"},
		{"link-local IPv6", deflt, "http://[fe80::1%25eth0]/", "link-local"},
		{"loopback", deflt, "http://127.0.0.1:8080/", "loopback"},
		{"loopback 127/8", deflt, "http://127.1.2.3/", "loopback"},
		{"loopback IPv6", deflt, "http://[::1]/", "loopback"},
		{"loopback allowed", loop, "http://127.0.0.1:8080/", ""},
		{"loopback IPv6 allowed", loop, "http://[::1]:9/", ""},
		{"localhost", deflt, "http://localhost:8080/", "loopback"},
		{"localhost trailing dot, case", deflt, "http://LocalHost./", "loopback"},
		{"sub.localhost", deflt, "http://app.localhost/", "loopback"},
		{"localhost allowed", loop, "http://localhost:8080/", ""},
		{"loopback allowed does not allow private", loop, "http://10.0.0.1/", "private"},
		{"IPv4-mapped IPv6 loopback", deflt, "http://[::ffff:127.0.0.1]/", "loopback"},
		{"IPv4-mapped IPv6 metadata", deflt, "http://[::ffff:169.254.169.254]/", "cloud metadata"},
		{"NAT64 private", deflt, "http://[64:ff9b::a00:1]/", "private"},
		{"6to4 loopback", deflt, "http://[2002:7f00:1::]/", "loopback"},
		{"decimal IPv4", deflt, "http://2130706433/", "loopback"},
		{"hex IPv4", deflt, "http://0x7f.1/", "loopback"},
		{"octal IPv4", deflt, "http://0177.0.0.1/", "loopback"},
		{"short metadata", deflt, "http://169.254.43518/", "cloud metadata"},
		{"malformed numeric host", deflt, "http://1.2.3.4.5/", "malformed numeric host"},
		{"numeric out of range", deflt, "http://256.1.1.1/", "malformed numeric host"},
		{"unspecified", deflt, "http://0.0.0.0:8080/", "unspecified"},
		{"unspecified 0/8", deflt, "http://0.1.2.3/", "unspecified"},
		{"unspecified IPv6", deflt, "http://[::]/", "unspecified"},
		{"multicast", deflt, "http://224.0.0.1/", "multicast"},
		{"multicast IPv6", deflt, "http://[ff02::1]/", "multicast"},
		{"broadcast", deflt, "http://255.255.255.255/", "reserved"},
		{"file", deflt, "file:///etc/passwd", `scheme "file" is not allowed`},
		{"ftp", deflt, "ftp://93.184.216.34/pub", `scheme "ftp" is not allowed`},
		{"data", deflt, "data:text/html,<script>alert(1)</script>", `scheme "data"`},
		{"javascript", deflt, "javascript:alert(1)", `scheme "javascript"`},
		{"gopher", deflt, "gopher://93.184.216.34/", `scheme "gopher"`},
		{"no scheme", deflt, "//93.184.216.34/x", "no scheme"},
		{"relative", deflt, "/etc/passwd", "no scheme"},
		{"no host", deflt, "http:///path", "no host"},
		{"credentials", deflt, "http://user:pw@93.184.216.34/", "credentials"},
		{"credentials hiding loopback", deflt, "http://93.184.216.34@127.0.0.1/", "credentials"},
		{"corpus without root", deflt, "corpus:///a.html", "no corpus root"},
		{"corpus with root", withCorpus, "corpus:///dir/a.html", ""},
		{"corpus traversal", withCorpus, "corpus:///../etc/passwd", "escapes"},
		{"corpus host", withCorpus, "corpus://evil/a.html", "no host"},
		{"file with corpus root", withCorpus, "file:///etc/passwd", "only http, https and corpus"},
		{"garbage", deflt, "http://[::1", "not a valid URL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.policy.Check(ctx, tc.url, nil)
			if tc.reason == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("allowed, want refusal (%s)", tc.reason)
			}
			if !errors.Is(err, ErrRefused) {
				t.Fatalf("error does not wrap ErrRefused: %v", err)
			}
			if !strings.Contains(err.Error(), tc.reason) || !strings.Contains(err.Error(), tc.url) {
				t.Fatalf("error %q should name the URL and contain %q", err, tc.reason)
			}
		})
	}
}

func TestURLPolicyResolve(t *testing.T) {
	addrs, err := URLPolicy{AllowLoopback: true}.Resolve(context.Background(), "http://localhost/", nil)
	if err != nil || len(addrs) != 2 || !addrs[0].IsLoopback() {
		t.Fatalf("%v %v", addrs, err)
	}
	addrs, err = URLPolicy{}.Resolve(context.Background(), "http://2130706433/", nil)
	if err == nil {
		t.Fatalf("numeric loopback allowed: %v", addrs)
	}
	addrs, err = URLPolicy{}.Resolve(context.Background(), "https://93.184.216.34/", nil)
	if err != nil || len(addrs) != 1 || addrs[0] != netip.MustParseAddr("93.184.216.34") {
		t.Fatalf("%v %v", addrs, err)
	}
	if err := (URLPolicy{}).CheckAddr(netip.MustParseAddr("10.1.2.3")); !errors.Is(err, ErrRefused) {
		t.Fatal(err)
	}
}

// DialControl refuses at connect time, whatever name or redirect led there.
func TestURLPolicyDialControl(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	d := net.Dialer{Timeout: 2 * time.Second, Control: URLPolicy{}.DialControl}
	if _, err := d.Dial("tcp", ln.Addr().String()); !errors.Is(err, ErrRefused) {
		t.Fatalf("dial loopback: %v", err)
	}
	d.Control = URLPolicy{AllowLoopback: true}.DialControl
	c, err := d.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatalf("dial loopback allowed: %v", err)
	}
	c.Close()
}
