package main

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
)

func TestServePprofLoopbackOnly(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:0", "example.com:0", "nonsense"} {
		if stop, err := servePprof(addr); err == nil {
			stop()
			t.Errorf("servePprof(%q) accepted a non-loopback address", addr)
		}
	}
	stop, err := servePprof("")
	if err != nil {
		t.Fatalf("empty addr: %v", err)
	}
	stop()
}

func TestServePprofServesProfiles(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	stop, err := servePprof(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	resp, err := http.Get("http://" + addr + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "goroutine profile:") {
		t.Fatalf("status %d, body %.200q", resp.StatusCode, b)
	}
}
