package lethetest

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The components a test may need besides Go, as named in LETHE_TEST_SKIP.
// `make test` (scripts/test-setup.sh) installs and starts each of them
// unless LETHE_TEST_SKIP names it.
const (
	Neo4j      = "neo4j"       // a Neo4j 5 server (LETHE_TEST_NEO4J_URI)
	Chromium   = "chromium"    // headless Chromium
	FFmpeg     = "ffmpeg"      // ffmpeg (media → WAV)
	PDFToText  = "pdftotext"   // pdftotext (poppler-utils)
	EspeakNG   = "espeak-ng"   // espeak-ng (speaks the test audio)
	DebianDocs = "debian-docs" // the Debian Reference (debian-reference-en)
	SearXNG    = "searxng"     // a real SearXNG from PyPI (scripts/searxng.sh install)
	Cluster    = "cluster"     // the production-shaped cluster of scripts/cluster.sh (PostgreSQL, Temporal server, Neo4j)
	System     = "system"      // the OS itself (/proc, coreutils): cannot be opted out of
)

// Components is every component LETHE_TEST_SKIP may name.
var Components = []string{Neo4j, Chromium, FFmpeg, PDFToText, EspeakNG, DebianDocs, SearXNG, Cluster}

// OptedOut reports whether the user opted out of component c with
// LETHE_TEST_SKIP (comma- or space-separated names, or "all").
func OptedOut(c string) bool {
	if c == System {
		return false
	}
	for _, f := range strings.FieldsFunc(os.Getenv("LETHE_TEST_SKIP"), func(r rune) bool { return r == ',' || r == ' ' }) {
		if f == c || f == "all" {
			return true
		}
	}
	return false
}

// Strict reports whether a missing component fails a test instead of
// skipping it: under `make test` (LETHE_TEST_STRICT=1, after it has set
// everything up) and in CI (CI set).
func Strict() bool {
	return os.Getenv("LETHE_TEST_STRICT") == "1" || os.Getenv("CI") != ""
}

// Need skips t when the user opted out of component c (LETHE_TEST_SKIP).
// Call it first in a test that needs c, before looking for c.
func Need(t testing.TB, c string) {
	t.Helper()
	if OptedOut(c) {
		t.Skipf("%s: opted out (LETHE_TEST_SKIP)", c)
	}
}

// Missing ends t because component c, which it needs, is absent; what says
// what is missing and how to get it. Under LETHE_TEST_STRICT or CI it is a
// failure; under -short, or in a plain `go test` without set-up, it is a
// skip. A component the user opted out of is always a skip (System cannot
// be opted out of).
func Missing(t testing.TB, c, what string) {
	t.Helper()
	Need(t, c)
	switch {
	case testing.Short():
		t.Skipf("-short: %s: %s", c, what)
	case Strict() && c == System:
		t.Fatalf("%s: %s", c, what)
	case Strict():
		t.Fatalf("%s: %s; LETHE_TEST_SKIP=%s opts out", c, what, c)
	default:
		t.Skipf("%s: %s; `make test` sets it up", c, what)
	}
}

// Tool returns the path of the first of names found in PATH; component c
// (which provides it) skips or fails t as Need and Missing say.
func Tool(t testing.TB, c string, names ...string) string {
	t.Helper()
	Need(t, c)
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	Missing(t, c, fmt.Sprintf("%s is not installed", strings.Join(names, " / ")))
	return ""
}
