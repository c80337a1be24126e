package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestParseGuess: the guess of a plan answer, spaces collapsed and cut at
// 300 runes, or "" when the answer has none or is not JSON; the schema
// requires it beside the queries.
func TestParseGuess(t *testing.T) {
	long := strings.Repeat("word ", 100)
	for _, c := range []struct{ content, want string }{
		{`{"queries":["boot target"],"guess":"Run  systemctl set-default\n multi-user.target."}`, "Run systemctl set-default multi-user.target."},
		{`{"queries":["boot target"]}`, ""},
		{`not json`, ""},
		{`{"queries":[],"guess":"` + long + `"}`, strings.TrimSpace(long)[:300]},
	} {
		if got := parseGuess(c.content); got != c.want {
			t.Errorf("parseGuess(%.40q) = %q, want %q", c.content, got, c.want)
		}
	}
	var s struct{ Required []string }
	if err := json.Unmarshal(guessSchema(3), &s); err != nil || strings.Join(s.Required, ",") != "queries,guess" {
		t.Errorf("schema requires %v (%v)", s.Required, err)
	}
}
