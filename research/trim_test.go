package research

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestBestWindow(t *testing.T) {
	filler := strings.Repeat("Nothing to see in this sentence at all. ", 10) // 400 bytes
	answer := "Run update-alternatives to change the default editor. "
	for _, tc := range []struct {
		name, text, query string
		max               int
		want              string // exact result, or "" with contains
		contains          string
	}{
		{"fits: whole, trimmed", "  short text \n", "editor", 100, "short text", ""},
		{"no budget", "some text", "text", 0, "", ""},
		{"the window with the query's terms, from its sentence start",
			filler + answer + filler, "which command changes the default editor?", 80, "", "Run update-alternatives to change the default editor."},
		{"no query term: the beginning, cut at a word", filler, "zebra", 30, "Nothing to see in this", ""},
		{"starts at a line", "alpha beta gamma\nThe editor is nano here\nomega", "editor nano", 26, "The editor is nano here", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := BestWindow(tc.text, tc.query, tc.max)
			if utf8.RuneCountInString(got) > max(tc.max, 0) {
				t.Fatalf("%d characters, more than %d: %q", utf8.RuneCountInString(got), tc.max, got)
			}
			if tc.contains != "" {
				if !strings.Contains(got, tc.contains) || !strings.HasPrefix(got, "Run") {
					t.Errorf("got %q, want a window starting at and holding %q", got, tc.contains)
				}
				return
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	// Multibyte text is cut at characters, never inside one.
	if got := BestWindow(strings.Repeat("é ", 100), "x", 11); !utf8.ValidString(got) || utf8.RuneCountInString(got) > 11 {
		t.Errorf("multibyte cut: %q", got)
	}
}

func TestSelectEvidence(t *testing.T) {
	// Two pages: hit 0 (less relevant by cosine) ranks before hit 2; 1 and
	// 3 are neighbours, more relevant than either hit.
	c := []ChunkCandidate{
		{Page: 0, Chars: 500, Relevance: 0.3, Hit: true},
		{Page: 0, Chars: 400, Relevance: 0.9},
		{Page: 1, Chars: 500, Relevance: 0.6, Hit: true},
		{Page: 1, Chars: 300, Relevance: 0.8},
	}
	for _, tc := range []struct {
		name string
		o    SelectOptions
		want []Pick
	}{
		{"hits first by relevance, overflow skipped (SelectRelevant)", SelectOptions{Lambda: 1, MaxChars: 1300},
			[]Pick{{2, 0}, {0, 0}, {3, 0}}},
		{"hits in rank order", SelectOptions{Lambda: 1, MaxChars: 1300, HitsInOrder: true},
			[]Pick{{0, 0}, {2, 0}, {3, 0}}},
		{"the overflowing chunk is cut to what is left", SelectOptions{Lambda: 1, MaxChars: 1200, HitsInOrder: true, MinTrim: 100},
			[]Pick{{0, 0}, {2, 0}, {1, 200}}},
		{"a cut hit when the budget ends among the hits", SelectOptions{Lambda: 1, MaxChars: 700, HitsInOrder: true, MinTrim: 100},
			[]Pick{{0, 0}, {2, 200}}},
		{"too little left to cut: nothing more", SelectOptions{Lambda: 1, MaxChars: 1050, HitsInOrder: true, MinTrim: 100},
			[]Pick{{0, 0}, {2, 0}}},
		{"per-page cap still applies", SelectOptions{Lambda: 1, MaxPerPage: 1, HitsInOrder: true, MinTrim: 100},
			[]Pick{{0, 0}, {2, 0}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := SelectEvidence(c, nil, tc.o); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
