package research

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// URLPolicy decides which URLs fetchers may touch (DESIGN.md §7 Safety).
// Only http and https are allowed, and corpus:/// when CorpusRoot is set.
// The host's addresses must all be globally reachable (addrClass: every
// range of IANA's IPv4 and IPv6 special-purpose address registries that is
// not, and IPv6 outside 2000::/3): loopback is refused unless
// AllowLoopback, private (10/8, 172.16/12, 192.168/16, 100.64/10,
// fc00::/7, fec0::/10, 64:ff9b:1::/48) unless AllowPrivate; link-local
// (169.254/16 — cloud metadata — and fe80::/10), unspecified,
// documentation, benchmarking, multicast and reserved addresses are always
// refused. IPv4-mapped, IPv4-compatible, NAT64, 6to4 and Teredo addresses
// are judged by the IPv4 address inside. Numeric hosts are parsed the way
// a browser does (2130706433, 0x7f.1, 0177.0.0.1 are 127.0.0.1);
// "localhost" and *.localhost are loopback without asking DNS. URLs with
// credentials, and URLs longer than MaxURLBytes, are refused. Cloud
// metadata services (metadata.go) are refused whatever the allowances,
// and so are the worker's own service endpoints (Denied) and ports not in
// AllowedPorts.
//
// Check covers the URL before the request; a fetcher must also apply the
// policy to every redirect target (Check again) and, for plain HTTP
// clients, at connect time (DialControl) so that DNS rebinding cannot
// bypass it.
type URLPolicy struct {
	AllowLoopback bool
	AllowPrivate  bool
	// CorpusRoot, when set, also allows corpus:/// URLs (validated
	// lexically here; Corpus.Open does the filesystem checks).
	CorpusRoot string
	// MaxURLBytes refuses longer URLs (0: no cap): a page-controlled URL
	// of megabytes is noise that would travel through history and logs.
	MaxURLBytes int
	// AllowedPorts, when not nil, are the only TCP ports a URL may name and
	// a connection may reach: a page must not aim the worker at SSH, a
	// database or an admin port.
	AllowedPorts []uint16
	// Denied are the worker's own service endpoints (model, embedding,
	// judge, Temporal, Neo4j, SearXNG, whisper, metrics; ServiceEndpoints):
	// AllowLoopback and AllowPrivate open ranges, never these. A loopback
	// or unspecified (listening on every interface) entry stands for its
	// port on every loopback address.
	Denied []netip.AddrPort
}

// Check returns nil when raw may be fetched, else an error naming the URL
// and the reason (refusals wrap ErrRefused; a failed DNS lookup does not).
// resolver nil means net.DefaultResolver.
func (p URLPolicy) Check(ctx context.Context, raw string, resolver *net.Resolver) error {
	_, err := p.Resolve(ctx, raw, resolver)
	return err
}

// Resolve is Check that also returns the checked addresses of the host (nil
// for corpus URLs), so a fetcher can dial exactly what was checked.
func (p URLPolicy) Resolve(ctx context.Context, raw string, resolver *net.Resolver) ([]netip.Addr, error) {
	if p.MaxURLBytes > 0 && len(raw) > p.MaxURLBytes {
		return nil, refused(truncateUTF8(raw, 200)+"…", fmt.Sprintf("URL of %d bytes exceeds the %d-byte limit", len(raw), p.MaxURLBytes))
	}
	u, corpus, err := p.checkScheme(raw)
	if err != nil || corpus {
		return nil, err
	}
	if u.User != nil {
		return nil, refused(raw, "URLs with credentials are not allowed")
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if host == "" {
		return nil, refused(raw, "no host")
	}
	port, err := urlPort(u)
	if err != nil {
		return nil, refused(raw, err.Error())
	}
	if err := p.checkPort(raw, port); err != nil {
		return nil, err
	}
	if metadataHosts[host] {
		return nil, refused(raw, fmt.Sprintf("host %q is a cloud metadata service", host))
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return p.checkAll(raw, []netip.Addr{a}, port, "")
	}
	if a, numeric, err := parseNumericIPv4(host); numeric {
		if err != nil {
			return nil, refused(raw, fmt.Sprintf("malformed numeric host %q: %v", host, err))
		}
		return p.checkAll(raw, []netip.Addr{a}, port, "")
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		if !p.AllowLoopback {
			return nil, refused(raw, fmt.Sprintf("host %q is loopback", host))
		}
		return p.checkAll(raw, []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.IPv6Loopback()}, port, "")
	}

	if resolver == nil {
		resolver = net.DefaultResolver
	}
	addrs, err := resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, fmt.Errorf("research: checking %q: cannot resolve host %q: %w", raw, host, err)
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("research: checking %q: host %q has no addresses", raw, host)
	}
	return p.checkAll(raw, addrs, port, host)
}

// checkAll applies the address, port and endpoint rules to every address
// of a host and returns them without zones.
func (p URLPolicy) checkAll(raw string, addrs []netip.Addr, port uint16, host string) ([]netip.Addr, error) {
	out := make([]netip.Addr, 0, len(addrs))
	for _, a := range addrs {
		if err := p.checkAddr(raw, a, host); err != nil {
			return nil, err
		}
		if err := p.checkEndpoint(raw, netip.AddrPortFrom(a, port), host); err != nil {
			return nil, err
		}
		out = append(out, a.WithZone(""))
	}
	return out, nil
}

// urlPort is the TCP port an http(s) URL connects to.
func urlPort(u *url.URL) (uint16, error) {
	if s := u.Port(); s != "" {
		n, err := strconv.ParseUint(s, 10, 16)
		if err != nil || n == 0 {
			return 0, fmt.Errorf("port %q is not a TCP port", s)
		}
		return uint16(n), nil
	}
	if strings.EqualFold(u.Scheme, "https") {
		return 443, nil
	}
	return 80, nil
}

func (p URLPolicy) checkPort(raw string, port uint16) error {
	if p.AllowedPorts == nil || slices.Contains(p.AllowedPorts, port) {
		return nil
	}
	return refused(raw, fmt.Sprintf("port %d is not in research.allowed_ports %v", port, p.AllowedPorts))
}

// checkEndpoint refuses the worker's own service endpoints (Denied).
func (p URLPolicy) checkEndpoint(raw string, ap netip.AddrPort, host string) error {
	a := ap.Addr().WithZone("").Unmap()
	for _, d := range p.Denied {
		if d.Port() != ap.Port() {
			continue
		}
		if d.Addr() == a || ((d.Addr().IsLoopback() || d.Addr().IsUnspecified()) && a.IsLoopback()) {
			what := a.String()
			if host != "" {
				what = fmt.Sprintf("host %q (%s)", host, a)
			}
			return refused(raw, fmt.Sprintf("%s port %d is one of the worker's own service endpoints", what, ap.Port()))
		}
	}
	return nil
}

// checkScheme parses raw and checks its scheme; corpus reports an allowed
// corpus URL (nothing more to check).
func (p URLPolicy) checkScheme(raw string) (u *url.URL, corpus bool, err error) {
	trimmed := strings.TrimSpace(raw)
	u, err = url.Parse(trimmed)
	if err != nil {
		return nil, false, refused(raw, "not a valid URL: "+err.Error())
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		return u, false, nil
	case CorpusScheme:
		if p.CorpusRoot == "" {
			return nil, false, refused(raw, "corpus URLs are not allowed (no corpus root configured)")
		}
		if _, err := corpusRel(trimmed); err != nil {
			return nil, false, err
		}
		return u, true, nil
	case "":
		return nil, false, refused(raw, "no scheme (only http and https are allowed)")
	}
	allowed := "only http and https are allowed"
	if p.CorpusRoot != "" {
		allowed = "only http, https and corpus are allowed"
	}
	return nil, false, refused(raw, fmt.Sprintf("scheme %q is not allowed (%s)", u.Scheme, allowed))
}

// CheckAddr applies the address rules to one IP address.
func (p URLPolicy) CheckAddr(a netip.Addr) error {
	return p.checkAddr(a.String(), a, "")
}

// DialControl can be set as net.Dialer.Control of an HTTP client's
// transport: it refuses connections to addresses the policy forbids, at
// connect time, after every redirect and DNS answer.
func (p URLPolicy) DialControl(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return refused(address, "dialing something other than an IP address and port")
	}
	if err := p.checkAddr(address, ap.Addr(), ""); err != nil {
		return err
	}
	if err := p.checkPort(address, ap.Port()); err != nil {
		return err
	}
	return p.checkEndpoint(address, ap, "")
}

func (p URLPolicy) checkAddr(raw string, a netip.Addr, host string) error {
	if isMetadata(a) {
		if host != "" {
			return refused(raw, fmt.Sprintf("host %q resolves to %s, a cloud metadata address", host, a))
		}
		return refused(raw, fmt.Sprintf("%s is a cloud metadata address", a))
	}
	class := addrClass(a)
	switch class {
	case "":
		return nil
	case "loopback":
		if p.AllowLoopback {
			return nil
		}
	case "private":
		if p.AllowPrivate {
			return nil
		}
	}
	if host != "" {
		return refused(raw, fmt.Sprintf("host %q resolves to %s, a %s address", host, a, class))
	}
	return refused(raw, fmt.Sprintf("%s is a %s address", a, class))
}

// parseNumericIPv4 implements the WHATWG URL host parser's IPv4 rule: a host
// whose last dot-separated label is a number (decimal, 0x hex or 0-prefixed
// octal) is an IPv4 address with 1 to 4 parts (so "2130706433", "0x7f.1"
// and "0177.0.0.1" are all 127.0.0.1) — and is invalid if it does not
// parse. numeric is false for ordinary host names.
func parseNumericIPv4(host string) (addr netip.Addr, numeric bool, err error) {
	parts := strings.Split(host, ".")
	if len(parts) > 1 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	last := parts[len(parts)-1]
	if !isNumberLabel(last) {
		return netip.Addr{}, false, nil
	}
	if len(parts) > 4 {
		return netip.Addr{}, true, fmt.Errorf("%d parts", len(parts))
	}
	nums := make([]uint64, len(parts))
	for i, s := range parts {
		n, err := parseIPv4Number(s)
		if err != nil {
			return netip.Addr{}, true, err
		}
		nums[i] = n
	}
	for _, n := range nums[:len(nums)-1] {
		if n > 255 {
			return netip.Addr{}, true, fmt.Errorf("part %d out of range", n)
		}
	}
	lastMax := uint64(1)<<(8*(5-len(nums))) - 1
	if nums[len(nums)-1] > lastMax {
		return netip.Addr{}, true, fmt.Errorf("last part %d out of range", nums[len(nums)-1])
	}
	v := nums[len(nums)-1]
	for i, n := range nums[:len(nums)-1] {
		v += n << (8 * (3 - i))
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true, nil
}

func isNumberLabel(s string) bool {
	if s == "" {
		return false
	}
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		for _, c := range s[2:] {
			if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
				return false
			}
		}
		return true
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func parseIPv4Number(s string) (uint64, error) {
	if s == "" {
		return 0, fmt.Errorf("empty part")
	}
	base := 10
	switch {
	case strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X"):
		s, base = s[2:], 16
		if s == "" {
			return 0, nil
		}
	case len(s) > 1 && s[0] == '0':
		s, base = s[1:], 8
	}
	n, err := strconv.ParseUint(s, base, 32)
	if err != nil {
		return 0, fmt.Errorf("bad number %q", s)
	}
	return n, nil
}
