package main

import (
	"strings"
	"testing"
)

func TestOutsideShare(t *testing.T) {
	for _, c := range []struct {
		wall, llm float64
		want      string
	}{
		{100, 60, "at least 40% of wall time outside model calls"},
		{100, 0, "at least 100% of wall time outside model calls"},
		{100, 100, "model calls overlapped"},
		{100, 250, "model calls overlapped (250.0s of latency in 100.0s of wall time)"},
	} {
		if got := outsideShare(c.wall, c.llm); !strings.HasPrefix(got, c.want) {
			t.Errorf("outsideShare(%v, %v) = %q, want prefix %q", c.wall, c.llm, got, c.want)
		}
	}
}
