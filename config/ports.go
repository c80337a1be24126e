package config

import (
	"fmt"
	"strconv"
	"strings"
)

// Ports parses research.allowed_ports: nil means any port ("*"), else the
// listed TCP ports. A list that names no port is an error, not "any": an
// empty setting must not open every port.
func (r Research) Ports() ([]uint16, error) {
	s := strings.TrimSpace(r.AllowedPorts)
	if s == "*" {
		return nil, nil
	}
	var out []uint16
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		n, err := strconv.ParseUint(f, 10, 16)
		if err != nil || n == 0 {
			return nil, fmt.Errorf("config: research.allowed_ports: %q is not a TCP port (1-65535, or * for any)", f)
		}
		out = append(out, uint16(n))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("config: research.allowed_ports = %q names no port (list ports such as 80,443, or * for any)", r.AllowedPorts)
	}
	return out, nil
}
