package research

import "net/netip"

// Address classes of addrClass. "" is a globally reachable unicast
// address; loopback and private are what AllowLoopback and AllowPrivate
// permit; the others are always refused.
const (
	classLoopback      = "loopback"
	classPrivate       = "private"
	classLinkLocal     = "link-local"
	classUnspecified   = "unspecified"
	classMulticast     = "multicast"
	classDocumentation = "documentation"
	classBenchmarking  = "benchmarking"
	classReserved      = "reserved"
	classInvalid       = "invalid"
)

type addrRange struct {
	prefix netip.Prefix
	class  string // "" = globally reachable (an exception inside a wider range)
}

func ranges(class string, prefixes ...string) []addrRange {
	out := make([]addrRange, len(prefixes))
	for i, p := range prefixes {
		out[i] = addrRange{netip.MustParsePrefix(p), class}
	}
	return out
}

// special4 is IANA's IPv4 Special-Purpose Address Registry (2025) as far
// as it is not globally reachable, plus multicast; the first matching
// range wins, so exceptions come first. Stricter than the registry in one
// place: all of 192.0.0.0/24 is refused, the PCP and TURN anycast
// addresses 192.0.0.9 and .10 (globally reachable, but protocol endpoints
// that serve no pages) included.
var special4 = concat(
	ranges(classUnspecified, "0.0.0.0/8"), // "this network"
	ranges(classPrivate, "10.0.0.0/8", "100.64.0.0/10", "172.16.0.0/12", "192.168.0.0/16"),
	ranges(classLoopback, "127.0.0.0/8"),
	ranges(classLinkLocal, "169.254.0.0/16"),
	ranges(classReserved, "192.0.0.0/24", "192.88.99.0/24", "240.0.0.0/4"), // IETF protocol assignments, 6to4 relay anycast (deprecated), reserved + broadcast
	ranges(classDocumentation, "192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24"),
	ranges(classBenchmarking, "198.18.0.0/15"),
	ranges(classMulticast, "224.0.0.0/4"),
)

// special6 is the IPv6 registry likewise. The ranges that embed an IPv4
// address (mapped, compatible, NAT64, 6to4, Teredo) are handled by
// embeddedIPv4 before this table; what is outside 2000::/3 and not listed
// here (other IETF-reserved space, 5f00::/16 SRv6 SIDs, …) is reserved.
var special6 = concat(
	ranges(classUnspecified, "::/128"),
	ranges(classLoopback, "::1/128"),
	ranges(classReserved, "100::/64", "100:0:0:1::/64"), // discard-only, dummy prefix
	// 2001::/23 IETF protocol assignments: not globally reachable except the
	// AMT, AS112, ORCHIDv2 and DRIP blocks (Teredo 2001::/32 is judged by
	// its embedded address first).
	ranges("", "2001:3::/32", "2001:4:112::/48", "2001:20::/28", "2001:30::/28"),
	ranges(classBenchmarking, "2001:2::/48"),
	ranges(classReserved, "2001::/23"),
	ranges(classDocumentation, "2001:db8::/32", "3fff::/20"),
	ranges(classPrivate, "fc00::/7", "fec0::/10"), // unique local; site-local (deprecated)
	ranges(classLinkLocal, "fe80::/10"),
	ranges(classMulticast, "ff00::/8"),
)

var globalUnicast6 = netip.MustParsePrefix("2000::/3")

func concat(parts ...[]addrRange) []addrRange {
	var out []addrRange
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// addrClass returns "" for a globally reachable unicast address, else the
// class that makes it special (see the class constants).
func addrClass(a netip.Addr) string {
	a = a.WithZone("").Unmap()
	switch {
	case !a.IsValid():
		return classInvalid
	case a.Is4():
		return lookupClass(a, special4)
	}
	if v4, outer, ok := embeddedIPv4(a); ok {
		if c := addrClass(v4); c != "" {
			return c
		}
		return outer
	}
	if c := lookupClass(a, special6); c != "" || inRanges(a, special6) {
		return c
	}
	if !globalUnicast6.Contains(a) {
		return classReserved
	}
	return ""
}

func lookupClass(a netip.Addr, table []addrRange) string {
	for _, r := range table {
		if r.prefix.Contains(a) {
			return r.class
		}
	}
	return ""
}

func inRanges(a netip.Addr, table []addrRange) bool {
	for _, r := range table {
		if r.prefix.Contains(a) {
			return true
		}
	}
	return false
}

var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")   // RFC 6052 well-known prefix
	nat64L    = netip.MustParsePrefix("64:ff9b:1::/48") // RFC 8215 local-use prefix
	sixToFour = netip.MustParsePrefix("2002::/16")
	teredo    = netip.MustParsePrefix("2001::/32")
	compat4   = netip.MustParsePrefix("::/96") // IPv4-compatible (deprecated)
)

// embeddedIPv4 returns the IPv4 address an IPv6 address carries and the
// class of the IPv6 address itself when that IPv4 address is global ("" or
// private for the local-use NAT64 prefix, which is not globally
// reachable). Such addresses reach, or are routed by, the IPv4 address
// inside, so a NAT64, 6to4 or Teredo form of 10.0.0.1 or 127.0.0.1 is as
// internal as the address itself. A Teredo address also names its server;
// both must be global.
func embeddedIPv4(a netip.Addr) (v4 netip.Addr, outer string, ok bool) {
	b := a.As16()
	switch {
	case nat64.Contains(a):
		return netip.AddrFrom4([4]byte(b[12:16])), "", true
	case nat64L.Contains(a):
		// RFC 6052 /48 layout: bits 48–63 and 72–95 (bits 64–71 are zero).
		return netip.AddrFrom4([4]byte{b[6], b[7], b[9], b[10]}), classPrivate, true
	case sixToFour.Contains(a):
		return netip.AddrFrom4([4]byte(b[2:6])), "", true
	case teredo.Contains(a):
		client := netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]}) // stored XOR 0xffffffff
		server := netip.AddrFrom4([4]byte(b[4:8]))
		if addrClass(server) != "" {
			return server, "", true
		}
		return client, "", true
	case compat4.Contains(a) && !a.IsUnspecified() && !a.IsLoopback():
		return netip.AddrFrom4([4]byte(b[12:16])), "", true
	}
	return netip.Addr{}, "", false
}
