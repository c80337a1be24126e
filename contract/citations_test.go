package contract

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// sentenceView is what a test compares: each sentence's text and numbers.
func sentenceView(sents []Sentence) []string {
	var out []string
	for _, s := range sents {
		out = append(out, fmt.Sprintf("%s %v", s.Text, s.Cited()))
	}
	return out
}

func TestSplitSentences(t *testing.T) {
	for _, c := range []struct {
		name string
		text string
		want []string
	}{
		{"two sentences, marks before the period", "Dendrites grow [1]. Interfaces decay [2].",
			[]string{"Dendrites grow . [1]", "Interfaces decay . [2]"}},
		{"mark after the period belongs to the sentence before", "Dendrites grow. [1] Interfaces decay. [2][3]",
			[]string{"Dendrites grow. [1]", "Interfaces decay. [2 3]"}},
		{"adjacent and comma marks", "A claim [1][3]. Another [1, 3; 4].",
			[]string{"A claim . [1 3]", "Another . [1 3 4]"}},
		{"bullet without a period", "- Lithium shorts the cell [3]\n- Contact is lost [2]",
			[]string{"Lithium shorts the cell [3]", "Contact is lost [2]"}},
		{"abbreviations and initials", "Oxides, e.g. LLZO, crack [1]. See J. Smith et al. for more [2].",
			[]string{"Oxides, e.g. LLZO, crack . [1]", "See J. Smith et al. for more . [2]"}},
		{"decimals do not split", "Below 0.5 mA/cm2 it holds [1].", []string{"Below 0.5 mA/cm2 it holds . [1]"}},
		{"code span is opaque", "Run `apt-get install x. [9]` first [2]. Done.",
			[]string{"Run `apt-get install x. [9]` first . [2]", "Done. []"}},
		{"URL is opaque, its final period ends the sentence", "See https://example.org/a.b/c[4]. Then [5].",
			[]string{"See https://example.org/a.b/c. [4]", "Then . [5]"}},
		{"markdown link and footnote are not citations", "See [2](http://x.org) and note[^1]. Real [3].",
			[]string{"See [2](http://x.org) and note[^1]. []", "Real . [3]"}},
		{"headings and fences hold no sentences", "## Part [1]\n\n```\ncode [2]. more.\n```\nText [3].",
			[]string{"Text . [3]"}},
		{"question and exclamation, closing quote", `Is it "safe?" [1] Yes! [2]`,
			[]string{`Is it "safe?" [1]`, "Yes! [2]"}},
		{"duplicate numbers count once", "A [1] and again [1].", []string{"A and again . [1]"}},
		{"marks joined by commas after the period", "Done. [1], [2]; [3] Next [4].",
			[]string{"Done. [1 2 3]", "Next . [4]"}},
		{"a comma not between marks stays text", "A [1], then b [2].", []string{"A , then b . [1 2]"}},
		{"a mark before a capital ends a sentence without a period", "Pin-Priority: -1 [1] The value is the default [2].",
			[]string{"Pin-Priority: -1 [1]", "The value is the default . [2]"}},
		{"marks with separators before a capital", "It uses port 993 [1], [2] IMAP is older [3].",
			[]string{"It uses port 993 [1 2]", "IMAP is older . [3]"}},
		{"a mark before a lower-case word does not", "993 [1] is the port [2].", []string{"993 is the port . [1 2]"}},
		{"empty", "", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := sentenceView(SplitSentences(c.text)); !reflect.DeepEqual(got, c.want) {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}

func TestSplitSentencesOffsets(t *testing.T) {
	text := "# T\n\n- First [1]. Second. [2]\n\nThird [3]"
	for _, s := range SplitSentences(text) {
		for _, m := range s.Marks {
			if got := text[m.Start:m.End]; !strings.HasPrefix(got, "[") || !strings.HasSuffix(got, "]") {
				t.Errorf("mark offsets %d-%d give %q", m.Start, m.End, got)
			}
		}
		if s.Start < 0 || s.End > len(text) || strings.HasPrefix(text[s.Start:s.End], " ") || strings.HasPrefix(text[s.Start:s.End], "-") {
			t.Errorf("sentence offsets %d-%d give %q", s.Start, s.End, text[s.Start:s.End])
		}
	}
}

func TestApplyVerdicts(t *testing.T) {
	for _, c := range []struct {
		name   string
		text   string
		status map[int]string // pair index -> verdict
		want   string
		counts CitationCounts
	}{
		{"all supported: unchanged", "A [1]. B [2].", map[int]string{0: Supported, 1: Supported},
			"A [1]. B [2].", CitationCounts{Pairs: 2, Supported: 2}},
		{"the wrong one of two is removed", "A [1][3]. B [2].", map[int]string{0: Supported, 1: Unsupported, 2: Supported},
			"A [1]. B [2].", CitationCounts{Pairs: 3, Supported: 2, Unsupported: 1}},
		{"comma form keeps its form", "A [1, 3, 4].", map[int]string{0: Unsupported, 1: Supported, 2: Supported},
			"A [3, 4].", CitationCounts{Pairs: 3, Supported: 2, Unsupported: 1}},
		{"a sentence losing all is marked", "A [3]. B [2].", map[int]string{0: Unsupported, 1: Supported},
			"A [unverified]. B [2].", CitationCounts{Pairs: 2, Supported: 1, Unsupported: 1, Marked: 1}},
		{"two marks both wrong: one marker", "A [1] and x [3].", map[int]string{0: Unsupported, 1: Unsupported},
			"A and x [unverified].", CitationCounts{Pairs: 2, Unsupported: 2, Marked: 1}},
		{"adjacent marks, first removed keeps no stray space", "A [1][3].", map[int]string{0: Unsupported, 1: Supported},
			"A [3].", CitationCounts{Pairs: 2, Supported: 1, Unsupported: 1}},
		{"unchecked stays and is not judged", "A [1]. B [2].", map[int]string{0: Supported},
			"A [1]. B [2].", CitationCounts{Pairs: 2, Supported: 1, Unchecked: 1}},
		{"a duplicate number goes with its pair", "A [1] and [1] again [2].", map[int]string{0: Unsupported, 1: Supported},
			"A and again [2].", CitationCounts{Pairs: 2, Supported: 1, Unsupported: 1}},
		{"marks joined by a comma: the second removed with its comma", "A. [1], [2] B [3].", map[int]string{0: Supported, 1: Unsupported, 2: Supported},
			"A. [1] B [3].", CitationCounts{Pairs: 3, Supported: 2, Unsupported: 1}},
		{"marks joined by a comma: the first removed with the comma", "A. [1], [2]", map[int]string{0: Unsupported, 1: Supported},
			"A. [2]", CitationCounts{Pairs: 2, Supported: 1, Unsupported: 1}},
		{"marks joined by commas, all wrong: one marker", "A. [1], [2]; [3]", map[int]string{0: Unsupported, 1: Unsupported, 2: Unsupported},
			"A. [unverified]", CitationCounts{Pairs: 3, Unsupported: 3, Marked: 1}},
		{"the middle of three removed", "A [1], [2], [3].", map[int]string{0: Supported, 1: Unsupported, 2: Supported},
			"A [1], [3].", CitationCounts{Pairs: 3, Supported: 2, Unsupported: 1}},
		{"bullet and heading", "## H [1]\n\n- item [4]\n- other [1]", map[int]string{0: Unsupported, 1: Supported},
			"## H [1]\n\n- item [unverified]\n- other [1]", CitationCounts{Pairs: 2, Supported: 1, Unsupported: 1, Marked: 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, counts := ApplyVerdicts(c.text, SplitSentences(c.text), c.status)
			if got != c.want || counts != c.counts {
				t.Errorf("got %q %+v\nwant %q %+v", got, counts, c.want, c.counts)
			}
		})
	}
}

func TestApplyVerdictsMoving(t *testing.T) {
	for _, c := range []struct {
		name   string
		text   string
		status map[int]string
		moved  map[int]int
		want   string
		counts CitationCounts
	}{
		{"a sentence losing all cites its holder", "A [3]. B [2].", map[int]string{0: Unsupported, 1: Supported}, map[int]int{0: 1},
			"A [1]. B [2].", CitationCounts{Pairs: 2, Supported: 1, Unsupported: 1, Moved: 1}},
		{"two marks both wrong: one citation, the first move", "A [1] and x [3].", map[int]string{0: Unsupported, 1: Unsupported}, map[int]int{0: 4, 1: 5},
			"A and x [4].", CitationCounts{Pairs: 2, Unsupported: 2, Moved: 1}},
		{"a sentence keeping one is not moved", "A [1][3].", map[int]string{0: Supported, 1: Unsupported}, map[int]int{1: 2},
			"A [1].", CitationCounts{Pairs: 2, Supported: 1, Unsupported: 1}},
		{"comma form, moved", "A [3, 4].", map[int]string{0: Unsupported, 1: Unsupported}, map[int]int{1: 2},
			"A [2].", CitationCounts{Pairs: 2, Unsupported: 2, Moved: 1}},
		{"no move: marked", "A [3].", map[int]string{0: Unsupported}, nil,
			"A [unverified].", CitationCounts{Pairs: 1, Unsupported: 1, Marked: 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, counts := ApplyVerdictsMoving(c.text, SplitSentences(c.text), c.status, c.moved)
			if got != c.want || counts != c.counts {
				t.Errorf("got %q %+v\nwant %q %+v", got, counts, c.want, c.counts)
			}
		})
	}
}

func TestPrecisionAndFooter(t *testing.T) {
	for _, c := range []struct {
		counts CitationCounts
		prec   float64 // -1: nil
		footer string
	}{
		{CitationCounts{Pairs: 11, Supported: 9, Unsupported: 2, Marked: 1}, 9.0 / 11,
			"Citations verified: 9 of 11 supported (82%); 2 unsupported removed; 1 sentence(s) marked [unverified]."},
		{CitationCounts{Pairs: 4, Supported: 3, Unchecked: 1}, 1,
			"Citations verified: 3 of 3 supported (100%); 1 could not be checked and stand unverified."},
		{CitationCounts{Pairs: 2, Unchecked: 2}, -1, "Citations verified: none could be checked."},
		{CitationCounts{}, -1, "Citations verified: the report cites no source."},
		{CitationCounts{Pairs: 13, Supported: 5, Unsupported: 8, Moved: 2, Marked: 1}, 5.0 / 13,
			"Citations verified: 5 of 13 supported (38%); 8 unsupported removed; 2 sentence(s) re-cited to the source that holds them; 1 sentence(s) marked [unverified]."},
		{CitationCounts{Pairs: 1, Unsupported: 1, Marked: 1}, 0,
			"Citations verified: 0 of 1 supported (0%); 1 unsupported removed; 1 sentence(s) marked [unverified]."},
	} {
		p := c.counts.Precision()
		if (p == nil) != (c.prec < 0) || (p != nil && *p != c.prec) {
			t.Errorf("%+v: precision %v, want %v", c.counts, p, c.prec)
		}
		if got := c.counts.Footer(); got != c.footer {
			t.Errorf("%+v: footer\n%q, want\n%q", c.counts, got, c.footer)
		}
	}
}

func TestCitedPairsAndBatches(t *testing.T) {
	text := "Short claim [1][2]. A much longer claim about lithium dendrites in garnet electrolytes [3]. Last [1]."
	pairs := CitedPairs(SplitSentences(text))
	var got []string
	for _, p := range pairs {
		got = append(got, fmt.Sprintf("%d:%d:%d", p.I, p.Sentence, p.N))
	}
	if want := []string{"0:0:1", "1:0:2", "2:1:3", "3:2:1"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("pairs %v, want %v", got, want)
	}
	sizes := func(bs [][]CitedPair) []int {
		var out []int
		for _, b := range bs {
			out = append(out, len(b))
		}
		return out
	}
	for _, c := range []struct {
		budget, chars, answer int
		want                  []int
	}{
		{10000, 400, 0, []int{4}},       // all fit
		{250, 400, 0, []int{2, 1, 1}},   // ~120 tokens per pair, the long one ~135
		{10, 400, 0, []int{1, 1, 1, 1}}, // each over the budget alone: one per batch
		{10000, 400, 80, []int{2, 2}},   // the answer bound: 40 tokens per verdict
	} {
		if got := sizes(VerifyBatches(pairs, c.budget, c.chars, c.answer)); !reflect.DeepEqual(got, c.want) {
			t.Errorf("budget %d chars %d answer %d: batches %v, want %v", c.budget, c.chars, c.answer, got, c.want)
		}
	}
	// 100 answer tokens + per pair: its text, 400/4 of excerpt, 16 overhead.
	if got, want := BatchTokens(pairs[:2], 400, 100), 100+2*(EstimateTokens(pairs[0].Text)+100+16); got != want {
		t.Errorf("BatchTokens %d, want %d", got, want)
	}
	if VerifyBatches(nil, 100, 100, 100) != nil {
		t.Error("no pairs gave batches")
	}
}

func TestMarkedNumbers(t *testing.T) {
	got := MarkedNumbers("A [3][1]. `x [9]` B [1, 2]. [link](http://x/[7])")
	if want := []int{1, 2, 3}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// TestRenumberCitations: sources are numbered by first appearance in the
// final text, marks of every form are rewritten, uncited sources leave
// the list, a number that names no source is dropped, and a text citing
// nothing keeps all the sources as they were.
func TestRenumberCitations(t *testing.T) {
	src := func(ns ...int) []Source {
		var out []Source
		for _, n := range ns {
			out = append(out, Source{N: n, URL: fmt.Sprintf("https://s%d.example", n)})
		}
		return out
	}
	renum := func(n, was int) Source { return Source{N: n, URL: fmt.Sprintf("https://s%d.example", was)} }
	for _, c := range []struct {
		name    string
		parts   []string
		sources []Source
		want    []string
		wantSrc []Source
	}{
		{"first appearance, across parts", []string{"## Part\n\nA claim [4]. Another [2, 4].", "Then [2][5]. Code `x[4]` stays."}, src(1, 2, 4, 5),
			[]string{"## Part\n\nA claim [1]. Another [2, 1].", "Then [2][3]. Code `x[4]` stays."}, []Source{renum(1, 4), renum(2, 2), renum(3, 5)}},
		{"only [1] cited", []string{"It is xeyes [1]. Summary [unverified]."}, src(1, 2, 3),
			[]string{"It is xeyes [1]. Summary [unverified]."}, []Source{renum(1, 1)}},
		{"unknown number dropped", []string{"A [9][3]. B [9]."}, src(3),
			[]string{"A [1]. B [unverified]."}, []Source{renum(1, 3)}},
		{"nothing cited", []string{"No findings."}, src(1, 2), []string{"No findings."}, src(1, 2)},
	} {
		got, gotSrc := RenumberCitations(c.parts, c.sources)
		if !reflect.DeepEqual(got, c.want) || !reflect.DeepEqual(gotSrc, c.wantSrc) {
			t.Errorf("%s:\n got  %q %v\n want %q %v", c.name, got, gotSrc, c.want, c.wantSrc)
		}
	}
}

func TestFenceLine(t *testing.T) {
	for line, want := range map[string]string{
		"```":           "```",
		"```go":         "```",
		"  ~~~":         "  ~~~",
		"text ``` more": "",
		"`code`":        "",
		"":              "",
	} {
		if got := FenceLine(line); got != want {
			t.Errorf("FenceLine(%q) = %q, want %q", line, got, want)
		}
	}
}
