package research

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
)

// TestAddrClassIANA is the pure policy decision for every range of IANA's
// IPv4 and IPv6 special-purpose address registries (and the forms that
// embed an IPv4 address): no connection is made.
func TestAddrClassIANA(t *testing.T) {
	tests := []struct {
		addr, class string
	}{
		// IPv4
		{"8.8.8.8", ""},
		{"93.184.216.34", ""},
		{"0.0.0.0", classUnspecified},
		{"0.255.1.2", classUnspecified},
		{"10.1.2.3", classPrivate},
		{"100.64.0.1", classPrivate},
		{"100.127.255.254", classPrivate},
		{"100.128.0.1", ""},
		{"127.0.0.1", classLoopback},
		{"127.255.255.254", classLoopback},
		{"169.254.169.254", classLinkLocal},
		{"172.16.0.1", classPrivate},
		{"172.31.255.255", classPrivate},
		{"172.32.0.1", ""},
		{"192.0.0.1", classReserved},
		{"192.0.0.9", classReserved}, // PCP anycast: refused although global (no pages there)
		{"192.0.0.170", classReserved},
		{"192.0.1.1", ""},
		{"192.0.2.55", classDocumentation},
		{"192.31.196.1", ""}, // AS112-v4 is global
		{"192.88.99.1", classReserved},
		{"192.168.1.1", classPrivate},
		{"198.18.0.1", classBenchmarking},
		{"198.19.255.255", classBenchmarking},
		{"198.20.0.1", ""},
		{"198.51.100.7", classDocumentation},
		{"203.0.113.9", classDocumentation},
		{"224.0.0.1", classMulticast},
		{"239.255.255.250", classMulticast},
		{"240.0.0.1", classReserved},
		{"255.255.255.255", classReserved},
		// IPv6
		{"2606:2800:220:1:248:1893:25c8:1946", ""},
		{"2001:200::1", ""}, // just past 2001::/23
		{"::", classUnspecified},
		{"::1", classLoopback},
		{"::ffff:10.0.0.1", classPrivate},
		{"::ffff:8.8.8.8", ""},
		{"::10.0.0.1", classPrivate},      // IPv4-compatible
		{"::ffff:0:a00:1", classReserved}, // IPv4-translated (SIIT): outside 2000::/3
		{"100::1", classReserved},         // discard-only
		{"100:0:0:1::1", classReserved},   // dummy prefix
		{"2001:1::1", classReserved},      // PCP anycast: refused although global
		{"2001:2::1", classBenchmarking},
		{"2001:3::1", ""},             // AMT
		{"2001:4:112::1", ""},         // AS112-v6
		{"2001:10::1", classReserved}, // ORCHID (deprecated)
		{"2001:20::1", ""},            // ORCHIDv2
		{"2001:30::1", ""},            // DRIP DETs
		{"2001:1ff::1", classReserved},
		{"2001:db8::1", classDocumentation},
		{"3fff::1", classDocumentation},
		{"5f00::1", classReserved}, // SRv6 SIDs
		{"4000::1", classReserved}, // outside 2000::/3
		{"fc00::1", classPrivate},
		{"fd00:ec2::254", classPrivate},
		{"fe80::1", classLinkLocal},
		{"fec0::1", classPrivate},
		{"ff02::1", classMulticast},
		// NAT64 well-known prefix: judged by the IPv4 inside.
		{"64:ff9b::5db8:d822", ""},
		{"64:ff9b::a00:1", classPrivate},
		{"64:ff9b::7f00:1", classLoopback},
		{"64:ff9b::a9fe:a9fe", classLinkLocal},
		{"64:ff9b::c000:201", classDocumentation},
		// NAT64 local-use prefix (RFC 8215, not global): the IPv4 inside at
		// bits 48–63 and 72–95.
		{"64:ff9b:1:a00:0:100::", classPrivate},    // 10.0.0.1
		{"64:ff9b:1:7f00:0:100::", classLoopback},  // 127.0.0.1
		{"64:ff9b:1:5db8:d8:2200::", classPrivate}, // 93.184.216.34, still local-use
		// 6to4
		{"2002:5db8:d822::1", ""},
		{"2002:c0a8:101::1", classPrivate},
		{"2002:7f00:1::", classLoopback},
		{"2002:a9fe:a9fe::1", classLinkLocal},
		{"2002:c633:6401::1", classDocumentation}, // 198.51.100.1
		// Teredo: server 65.54.227.120 in bits 32–63, client XOR 0xffffffff
		// in the last 32.
		{"2001:0:4136:e378:8000:63bf:a247:27dd", ""},                 // client 93.184.216.34
		{"2001:0:4136:e378:8000:63bf:f5ff:fffe", classPrivate},       // client 10.0.0.1
		{"2001:0:4136:e378:8000:63bf:80ff:fffe", classLoopback},      // client 127.0.0.1
		{"2001:0:4136:e378:8000:63bf:5601:5601", classLinkLocal},     // client 169.254.169.254
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", classDocumentation}, // RFC 4380's example, client 192.0.2.45
		{"2001:0:a00:1:8000:63bf:a247:27dd", classPrivate},           // server 10.0.0.1
	}
	for _, tc := range tests {
		a := netip.MustParseAddr(tc.addr)
		if got := addrClass(a); got != tc.class {
			t.Errorf("%s: class %q, want %q", tc.addr, got, tc.class)
		}
		err := URLPolicy{}.CheckAddr(a)
		if (tc.class == "") != (err == nil) {
			t.Errorf("%s: CheckAddr %v", tc.addr, err)
		}
	}
}

// TestAddrClassAllowances: allow_loopback and allow_private keep their
// meaning (also for the embedded forms); nothing else is ever allowed.
func TestAddrClassAllowances(t *testing.T) {
	all := URLPolicy{AllowLoopback: true, AllowPrivate: true}
	for _, s := range []string{"127.0.0.1", "::1", "10.0.0.1", "100.64.0.1", "fd00::1", "64:ff9b::a00:1", "2002:7f00:1::", "64:ff9b:1:5db8:d8:2200::"} {
		if err := all.CheckAddr(netip.MustParseAddr(s)); err != nil {
			t.Errorf("%s refused with everything allowed: %v", s, err)
		}
	}
	for _, s := range []string{"169.254.169.254", "0.0.0.0", "192.0.2.1", "198.18.0.1", "240.0.0.1", "255.255.255.255", "224.0.0.1",
		"2001:db8::1", "100::1", "fe80::1", "ff02::1", "2001:2::1", "2002:a9fe:a9fe::1", "2001:0:4136:e378:8000:63bf:5601:5601"} {
		if err := all.CheckAddr(netip.MustParseAddr(s)); !errors.Is(err, ErrRefused) {
			t.Errorf("%s allowed with loopback and private allowed: %v", s, err)
		}
	}
	if err := (URLPolicy{AllowLoopback: true}).CheckAddr(netip.MustParseAddr("10.0.0.1")); err == nil {
		t.Error("allow_loopback allowed a private address")
	}
	if err := (URLPolicy{AllowPrivate: true}).CheckAddr(netip.MustParseAddr("127.0.0.1")); err == nil {
		t.Error("allow_private allowed loopback")
	}
}

// TestURLPolicyMaxURLBytes: a URL over the cap is refused before anything
// else (no parse, no DNS), and the error does not carry the whole URL.
func TestURLPolicyMaxURLBytes(t *testing.T) {
	p := URLPolicy{MaxURLBytes: 2048}
	ok := "https://93.184.216.34/" + strings.Repeat("a", 2048-len("https://93.184.216.34/"))
	if err := p.Check(context.Background(), ok, nil); err != nil {
		t.Fatalf("URL at the cap: %v", err)
	}
	long := ok + "a"
	err := p.Check(context.Background(), long, nil)
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "2049 bytes exceeds the 2048-byte limit") || len(err.Error()) > 500 {
		t.Fatalf("URL over the cap: %.300v", err)
	}
	if err := (URLPolicy{}).Check(context.Background(), long, nil); err != nil {
		t.Fatalf("no cap configured: %v", err)
	}
}
