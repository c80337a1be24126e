package research

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func sentence(i int) string {
	return fmt.Sprintf("Sentence number %03d talks about lighthouses and the sea.", i) // 55 chars
}

func para(words int, tag string) string {
	var parts []string
	for i := 0; i < words; i++ {
		parts = append(parts, tag)
	}
	return strings.Join(parts, " ")
}

func TestChunk(t *testing.T) {
	small := ChunkConfig{TargetChars: 100, MaxChars: 160, MinChars: 30}
	var huge []string
	for i := 0; i < 40; i++ {
		huge = append(huge, sentence(i))
	}
	hugePara := strings.Join(huge, " ") // one paragraph, ~2200 chars

	tests := []struct {
		name string
		text string
		cfg  ChunkConfig
		want []string // nil: only checked by invariants
		n    int      // expected count when want is nil (-1: don't check)
	}{
		{name: "empty", text: "", want: nil, n: 0},
		{name: "whitespace", text: " \n\n\t\n ", want: nil, n: 0},
		{name: "one short paragraph kept although below min", text: "  Tiny.  ", want: []string{"Tiny."}},
		{name: "CRLF and blank-line runs", text: "aaa\r\n\r\n\r\n\r\nbbb", cfg: small, want: []string{"aaa\n\nbbb"}},
		{
			name: "small paragraphs merged up to target",
			text: "Para one is here.\n\nPara two is here.\n\nPara three is here.\n\nPara four is here.\n\nPara five is here.\n\nPara six is here.",
			cfg:  ChunkConfig{TargetChars: 60, MaxChars: 80, MinChars: 10},
			want: []string{
				"Para one is here.\n\nPara two is here.\n\nPara three is here.",
				"Para four is here.\n\nPara five is here.\n\nPara six is here.",
			},
		},
		{
			name: "small tail joins the previous group within max",
			text: "Para one is here.\n\nPara two is here.\n\nPara three is here.\n\nPara four is here.\n\nPara five is here.\n\nPara six is here.",
			cfg:  small,
			want: []string{"Para one is here.\n\nPara two is here.\n\nPara three is here.\n\nPara four is here.\n\nPara five is here.\n\nPara six is here."},
		},
		{
			name: "lines inside a paragraph are kept",
			text: "line a\nline b\n\nnext",
			cfg:  small,
			want: []string{"line a\nline b\n\nnext"},
		},
		{
			name: "fragment below min dropped when not alone",
			text: para(18, "alpha") + "\n\n" + "tiny" + "\n\n" + para(22, "beta") + "\n\n" + para(18, "gamma"),
			cfg:  ChunkConfig{TargetChars: 100, MaxChars: 110, MinChars: 30},
			want: []string{para(18, "alpha"), para(22, "beta"), para(18, "gamma")},
		},
		{
			name: "a heading starts the next group instead of ending one",
			text: "Intro sentence one is here.\n\nIntro sentence two is here.\n\nSection Two\n\nBody of section two is a longer paragraph.",
			cfg:  ChunkConfig{TargetChars: 70, MaxChars: 90, MinChars: 10},
			want: []string{
				"Intro sentence one is here.\n\nIntro sentence two is here.",
				"Section Two\n\nBody of section two is a longer paragraph.",
			},
		},
		{name: "huge paragraph split at sentences", text: hugePara, n: 2},
		{name: "huge paragraph, small config", text: hugePara, cfg: small, n: -1},
		{name: "sentence longer than max is cut between words", text: para(100, "word"), cfg: small, n: -1},
		{name: "word longer than max is cut between characters", text: strings.Repeat("é", 400), cfg: small, n: -1},
		{name: "CJK sentences", text: strings.Repeat("灯塔守护者每天晚上都爬上塔顶。", 20), cfg: small, n: -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Chunk(tc.text, tc.cfg)
			if tc.want != nil || tc.n == 0 {
				if !reflect.DeepEqual(got, tc.want) {
					t.Fatalf("got %q\nwant %q", got, tc.want)
				}
			}
			if tc.n > 0 && len(got) != tc.n {
				t.Fatalf("got %d chunks, want %d: %q", len(got), tc.n, got)
			}
			cfg := tc.cfg.withDefaults()
			for i, c := range got {
				n := utf8.RuneCountInString(c)
				if n > cfg.MaxChars {
					t.Errorf("chunk %d has %d > %d chars", i, n, cfg.MaxChars)
				}
				if len(got) > 1 && n < cfg.MinChars {
					t.Errorf("chunk %d has %d < %d chars", i, n, cfg.MinChars)
				}
				if c != strings.TrimSpace(c) || c == "" {
					t.Errorf("chunk %d not trimmed: %q", i, c)
				}
			}
			// Determinism.
			for k := 0; k < 3; k++ {
				if again := Chunk(tc.text, tc.cfg); !reflect.DeepEqual(again, got) {
					t.Fatal("not deterministic")
				}
			}
		})
	}
}

func TestChunkHugeParagraphDetails(t *testing.T) {
	var ss []string
	for i := 0; i < 40; i++ {
		ss = append(ss, sentence(i))
	}
	got := Chunk(strings.Join(ss, " "), ChunkConfig{})
	// Every chunk ends at a sentence boundary and no sentence is lost or cut.
	joined := strings.Join(got, " ")
	for _, s := range ss {
		if !strings.Contains(joined, s) {
			t.Fatalf("sentence lost or cut: %q", s)
		}
	}
	for _, c := range got {
		if !strings.HasSuffix(c, ".") {
			t.Fatalf("chunk not ending at a sentence: %q", c[len(c)-20:])
		}
		if n := utf8.RuneCountInString(c); n > DefaultChunkTarget {
			t.Fatalf("piece of %d chars above target", n)
		}
	}
}

func TestChunkNothingLost(t *testing.T) {
	// With no minimum, every word of the input is in exactly one chunk, in order.
	var b strings.Builder
	for i := 0; i < 300; i++ {
		fmt.Fprintf(&b, "w%d ", i)
		if i%7 == 0 {
			b.WriteString(". ")
		}
		if i%23 == 0 {
			b.WriteString("\n\n")
		}
	}
	text := b.String()
	got := Chunk(text, ChunkConfig{TargetChars: 80, MaxChars: 120, MinChars: -1})
	if strings.Join(strings.Fields(strings.Join(got, " ")), " ") != strings.Join(strings.Fields(text), " ") {
		t.Fatal("words lost or reordered")
	}
}

func TestChunkConfigDefaults(t *testing.T) {
	c := ChunkConfig{}.withDefaults()
	if c != (ChunkConfig{1200, 2000, 200}) {
		t.Fatalf("%+v", c)
	}
	c = ChunkConfig{TargetChars: 3000, MinChars: 5000}.withDefaults()
	if c.MaxChars != 3000 || c.MinChars != 3000 {
		t.Fatalf("%+v", c)
	}
	if c = (ChunkConfig{MinChars: -1}).withDefaults(); c.MinChars != 0 {
		t.Fatalf("%+v", c)
	}
}
