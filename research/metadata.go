package research

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// metadataPrefixes are the cloud instance-metadata services: they hand out
// the instance's credentials to any local caller, so no allowance opens
// them. Several sit outside the link-local range that is always refused:
// AWS's IPv6 endpoint fd00:ec2::254 (and the rest of fd00:ec2::/32, AWS's
// instance-services prefix) is unique-local, Alibaba's 100.100.100.200 is
// CGNAT, both "private" and so opened by AllowPrivate without this list;
// Azure's wire server 168.63.129.16 is a global address.
var metadataPrefixes = []netip.Prefix{
	netip.MustParsePrefix("169.254.169.254/32"), // AWS, GCP, Azure IMDS, OpenStack, DigitalOcean, Oracle (the rest of 169.254/16 is refused as link-local)
	netip.MustParsePrefix("169.254.170.2/32"),   // AWS ECS task credentials
	netip.MustParsePrefix("fd00:ec2::/32"),      // AWS IMDS over IPv6
	netip.MustParsePrefix("100.100.100.200/32"), // Alibaba Cloud
	netip.MustParsePrefix("168.63.129.16/32"),   // Azure wire server
	netip.MustParsePrefix("192.0.0.192/32"),     // Oracle Cloud legacy metadata
	netip.MustParsePrefix("fd20:ce::254/128"),   // GCP IMDS over IPv6
}

// metadataHosts are the metadata services' names, refused before any DNS
// lookup (a resolver on the instance answers them with the addresses
// above).
var metadataHosts = map[string]bool{
	"metadata.google.internal": true, "metadata.goog": true, "metadata": true,
	"instance-data": true, "instance-data.ec2.internal": true, "metadata.azure.internal": true,
}

// isMetadata reports whether a is a metadata address, also in an
// IPv4-mapped, NAT64, 6to4 or Teredo form.
func isMetadata(a netip.Addr) bool {
	a = a.WithZone("").Unmap()
	for _, p := range metadataPrefixes {
		if p.Contains(a) {
			return true
		}
	}
	if a.Is6() {
		if v4, _, ok := embeddedIPv4(a); ok {
			return isMetadata(v4)
		}
	}
	return false
}

// ServiceEndpoints resolves the worker's own service addresses (base URLs
// such as http://127.0.0.1:8080, bolt://neo4j:7687, or host:port) into the
// endpoints URLPolicy.Denied refuses. A loopback endpoint also stands for
// its port on each of this host's interface addresses, where a service
// listening on all interfaces answers too. Global endpoints are left out:
// a public API is reachable by anyone, and its address may be a CDN's that
// serves pages too. Entries that do not parse or resolve are returned in
// skipped, for the caller to log.
func ServiceEndpoints(ctx context.Context, resolver *net.Resolver, targets []string) (denied []netip.AddrPort, skipped []string) {
	if resolver == nil {
		resolver = net.DefaultResolver
	}
	local := interfaceAddrs()
	for _, t := range targets {
		if strings.TrimSpace(t) == "" {
			continue
		}
		host, port, err := endpointHostPort(t)
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("%s: %v", t, err))
			continue
		}
		addrs, err := lookupEndpoint(ctx, resolver, host)
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("%s: %v", t, err))
			continue
		}
		for _, a := range addrs {
			a = a.WithZone("").Unmap()
			if addrClass(a) == "" {
				continue
			}
			denied = append(denied, netip.AddrPortFrom(a, port))
			if a.IsLoopback() || a.IsUnspecified() {
				for _, l := range local {
					denied = append(denied, netip.AddrPortFrom(l, port))
				}
			}
		}
	}
	return denied, skipped
}

// endpointHostPort splits a service URL or host:port, with the scheme's
// default port when none is given.
func endpointHostPort(t string) (string, uint16, error) {
	if !strings.Contains(t, "://") {
		t = "tcp://" + t
	}
	u, err := url.Parse(t)
	if err != nil {
		return "", 0, err
	}
	ps := u.Port()
	if ps == "" {
		ps = map[string]string{"http": "80", "https": "443", "bolt": "7687", "neo4j": "7687",
			"bolt+s": "7687", "neo4j+s": "7687", "bolt+ssc": "7687", "neo4j+ssc": "7687"}[strings.ToLower(u.Scheme)]
	}
	n, err := strconv.ParseUint(ps, 10, 16)
	if err != nil || n == 0 {
		return "", 0, fmt.Errorf("no port")
	}
	if u.Hostname() == "" {
		return "0.0.0.0", uint16(n), nil // a listen address such as ":9464": every interface
	}
	return u.Hostname(), uint16(n), nil
}

func lookupEndpoint(ctx context.Context, resolver *net.Resolver, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.IPv6Loopback()}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return resolver.LookupNetIP(ctx, "ip", host)
}

// interfaceAddrs are this host's own non-loopback interface addresses.
func interfaceAddrs() []netip.Addr {
	ifs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	var out []netip.Addr
	for _, ia := range ifs {
		if p, err := netip.ParsePrefix(ia.String()); err == nil && !p.Addr().IsLoopback() {
			out = append(out, p.Addr().WithZone("").Unmap())
		}
	}
	return out
}
