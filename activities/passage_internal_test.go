package activities

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestSplitPassage: sentences end at ".", "!" or "?" and a space; a
// sentence over the bound is cut at a space with "…" on both sides of the
// cut, so no excerpt ends mid-word (the CI report's "by the VNC o [1]").
func TestSplitPassage(t *testing.T) {
	const vnc = "For applications using Wayland protocol, the access to their display contents from a remote host is supported by the VNC over SSH connection."
	cases := []struct {
		name  string
		line  string
		chars int
		want  []string
	}{
		{"sentences", "Xeyes shows it. Does it move? Yes! Done", 400,
			[]string{"Xeyes shows it.", "Does it move?", "Yes!", "Done"}},
		{"decimal is not an end", "Version 2.5 is out. Next", 400, []string{"Version 2.5 is out.", "Next"}},
		{"cut at a space", vnc, 60, []string{
			"For applications using Wayland protocol, the access to…",
			"…their display contents from a remote host is supported by…",
			"…the VNC over SSH connection.",
		}},
		{"a word longer than half the bound", "abcdefghijklmnopqrstuvwxyz end", 12,
			[]string{"abcdefghijk…", "…lmnopqrstu…", "…vwxyz end"}},
		{"no bound", "a b c d e f g", 0, []string{"a b c d e f g"}},
	}
	for _, c := range cases {
		got := splitPassage(c.line, c.chars)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: splitPassage = %q, want %q", c.name, got, c.want)
		}
		var words []string
		for _, p := range got {
			if c.chars > 0 && utf8.RuneCountInString(p) > c.chars {
				t.Errorf("%s: piece %q is over %d runes", c.name, p, c.chars)
			}
			words = append(words, strings.Fields(strings.ReplaceAll(p, "…", " "))...)
		}
		if c.name != "a word longer than half the bound" && strings.Join(words, " ") != strings.Join(strings.Fields(c.line), " ") {
			t.Errorf("%s: pieces lose or split words: %q", c.name, words)
		}
	}
}

// TestExtractFactsEndOnWords: a fact cut from a long evidence sentence
// ends at a word with "…", and containment still proves it against its
// source, so the session's verification keeps its citation.
func TestExtractFactsEndOnWords(t *testing.T) {
	ev := "GUI communication protocol used on the GNOME desktop can be: Wayland (native) or X Window System core protocol (via xwayland) and for applications using Wayland protocol the access to their display contents from a remote host is supported by the VNC over SSH connection instead of X forwarding"
	facts := ExtractFacts("remote host display VNC", map[int]string{1: ev}, FactOptions{K: 3, MaxChars: 120, Follow: 1})
	if len(facts) == 0 {
		t.Fatal("no facts")
	}
	norm := []string{NormalizeContain(ev)}
	for _, f := range facts {
		if !strings.HasSuffix(f.Text, "…") && !strings.HasSuffix(f.Text, "forwarding") {
			t.Errorf("fact %q ends mid-text without an ellipsis", f.Text)
		}
		if _, ok := ContainedIn(f.Text, norm); !ok {
			t.Errorf("fact %q is not contained in its source", f.Text)
		}
	}
}
