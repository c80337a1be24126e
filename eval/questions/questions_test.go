package questions

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

func TestParseErrors(t *testing.T) {
	const ok = `{"id":"a","question":"q?","answer":"x.","gold":["x"],"kind":"fact","sources":["ch01.en.html#_a"]}`
	for _, tc := range []struct {
		name, in string
		want     []string // substrings of the error
	}{
		{"truncated JSON", `{"id":`, []string{"line 1: bad JSON"}},
		{"line number counts blank lines", "\n\n{oops}", []string{"line 3: bad JSON"}},
		{"unknown field", `{"id":"a","question":"q","answer":"x","gold":["x"],"kind":"fact","sources":["s"],"golds":["y"]}`,
			[]string{"line 1: bad JSON", `unknown field "golds"`}},
		{"two values on a line", ok + " {}", []string{"line 1: bad JSON: more than one value"}},
		{"missing id", `{"question":"q","answer":"x","gold":["x"],"kind":"fact","sources":["s"]}`, []string{`line 1: missing field "id"`}},
		{"missing question", `{"id":"a","answer":"x","gold":["x"],"kind":"fact","sources":["s"]}`, []string{`line 1: a: missing field "question"`}},
		{"blank answer", `{"id":"a","question":"q","answer":"  ","gold":["x"],"kind":"fact","sources":["s"]}`, []string{`line 1: a: missing field "answer"`}},
		{"missing gold", `{"id":"a","question":"q","answer":"x","kind":"fact","sources":["s"]}`, []string{`line 1: a: missing field "gold"`}},
		{"missing kind", `{"id":"a","question":"q","answer":"x","gold":["x"],"sources":["s"]}`, []string{`line 1: a: missing field "kind"`}},
		{"missing sources", `{"id":"a","question":"q","answer":"x","gold":["x"],"kind":"fact"}`, []string{`line 1: a: missing field "sources"`}},
		{"unknown kind", `{"id":"a","question":"q","answer":"x","gold":["x"],"kind":"trivia","sources":["s"]}`,
			[]string{`line 1: a: unknown kind "trivia" (want fact, multihop, paraphrase)`}},
		{"too many gold", `{"id":"a","question":"q","answer":"x","gold":["w","x","y","z"],"kind":"fact","sources":["s"]}`,
			[]string{"line 1: a: gold has 4 strings; at most 3"}},
		{"empty alternative", `{"id":"a","question":"q","answer":"x","gold":["x| "],"kind":"fact","sources":["s"]}`,
			[]string{`line 1: a: gold[0] "x| " has an empty alternative`}},
		{"empty source", `{"id":"a","question":"q","answer":"x","gold":["x"],"kind":"fact","sources":[""]}`,
			[]string{"line 1: a: sources[0] is empty"}},
		{"duplicate id", ok + "\n\n" + ok, []string{`line 3: duplicate id "a" (first on line 1)`}},
		{"every bad line is reported", "{\n" + ok + "\n" + `{"id":"b"}`, []string{"line 1: bad JSON", `line 3: b: missing field "question"`}},
		{"empty input", "\n \n", []string{"no questions"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			qs, err := Parse(strings.NewReader(tc.in))
			if err == nil {
				t.Fatalf("no error; got %d questions", len(qs))
			}
			if qs != nil {
				t.Errorf("questions returned with an error: %v", qs)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func TestParseValid(t *testing.T) {
	in := `{"id":"b","question":"Which?","answer":"Use x.","gold":["x","y|z"],"kind":"multihop","sources":["ch01.en.html#_a","ch02.en.html#_b"]}

{"id":"a","question":"Q2","answer":"A2","gold":["k"],"kind":"paraphrase","sources":["apa.en.html#_c"]}
`
	qs, err := Parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []Question{
		{ID: "b", Question: "Which?", Answer: "Use x.", Gold: []string{"x", "y|z"}, Kind: KindMultihop,
			Sources: []string{"ch01.en.html#_a", "ch02.en.html#_b"}},
		{ID: "a", Question: "Q2", Answer: "A2", Gold: []string{"k"}, Kind: KindParaphrase, Sources: []string{"apa.en.html#_c"}},
	}
	if !reflect.DeepEqual(qs, want) {
		t.Fatalf("got %+v\nwant %+v", qs, want)
	}
}

func TestContains(t *testing.T) {
	q := Question{Gold: []string{"systemd-timesyncd", "0002|umask 002"}}
	for _, tc := range []struct {
		name string
		q    Question
		text string
		want bool
	}{
		{"both gold", q, "Enable systemd-timesyncd and set umask to 0002.", true},
		{"second alternative", q, "systemd-timesyncd; put umask 002 in ~/.bashrc", true},
		{"case", q, "SYSTEMD-TIMESYNCD with a UMASK 002", true},
		{"whitespace layout", q, "systemd-timesyncd, then umask\n\t   002", true},
		{"gold with odd spacing", Question{Gold: []string{"  lsof   -p 1 "}}, "run lsof -p\n1 as root", true},
		{"near miss: other mask", q, "systemd-timesyncd with umask 0022", false},
		{"near miss: truncated name", q, "systemd-timesync and umask 0002", false},
		{"one gold of two", q, "set umask 0002", false},
		{"no gold strings", Question{}, "anything", false},
		{"empty text", q, "", false},
		{"space inside a gold string is required", Question{Gold: []string{"chvt 3"}}, "chvt3", false},
		{"not inside a longer word", Question{Gold: []string{"wall"}}, "configure the firewall", false},
		{"not followed by a digit", Question{Gold: []string{"rfc1321"}}, "see rfc13210", false},
		{"punctuation is a boundary", Question{Gold: []string{"LC_ALL", "inputrc"}}, "set $LC_ALL, then edit ~/.inputrc.", true},
		{"gold edged with punctuation", Question{Gold: []string{"-F 32"}}, "mkfs.vfat -F 32 /dev/sda1", true},
		{"later occurrence on a boundary", Question{Gold: []string{"lsof"}}, "lsofx is not it; lsof is", true},
		{"non-ASCII letters are word characters", Question{Gold: []string{"caf"}}, "café", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.q.Contains(tc.text); got != tc.want {
				t.Errorf("Contains(%q) = %v, want %v (gold %q)", tc.text, got, tc.want, tc.q.Gold)
			}
		})
	}
}

func TestEvidence(t *testing.T) {
	q := Question{Gold: []string{"blkid", "/boot/grub/grub.cfg", "CP437|codepage 437"}}
	for _, tc := range []struct {
		name  string
		q     Question
		texts []string
		want  float64
	}{
		{"nothing read", q, nil, 0},
		{"none found", q, []string{"grub is a boot loader"}, 0},
		{"one of three", q, []string{"Probe it with BLKID(8)."}, 1.0 / 3},
		{"two of three, in different texts", q, []string{"blkid", "the file /boot/grub/grub.cfg"}, 2.0 / 3},
		{"alternative counts", q, []string{"blkid /boot/grub/grub.cfg", "mount assumes codepage\n437"}, 1},
		{"a gold string found twice counts once", q, []string{"blkid", "blkid"}, 1.0 / 3},
		{"no match across the seam of two texts", Question{Gold: []string{"lsof -p 1"}}, []string{"run lsof", "-p 1"}, 0},
		{"no gold strings", Question{}, []string{"x"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Evidence(tc.q, tc.texts); math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("Evidence = %v, want %v", got, tc.want)
			}
		})
	}
}

// synth makes a set with the given number of questions per kind, ids
// interleaved across kinds as in a set written chapter by chapter.
func synth(nFact, nMulti, nPara int) []Question {
	var qs []Question
	counts := map[string]int{KindFact: nFact, KindMultihop: nMulti, KindParaphrase: nPara}
	for i := 0; len(qs) < nFact+nMulti+nPara; i++ {
		for _, k := range Kinds() {
			if counts[k] > 0 {
				counts[k]--
				qs = append(qs, Question{ID: fmt.Sprintf("q-%03d", len(qs)+1), Kind: k, Gold: []string{"g"}})
			}
		}
	}
	return qs
}

func kindCounts(qs []Question) map[string]int {
	m := map[string]int{}
	for _, q := range qs {
		m[q.Kind]++
	}
	return m
}

func TestStratified(t *testing.T) {
	set, err := DebianReference()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		qs   []Question
		n    int
		want map[string]int // nil: check proportions only
	}{
		{"largest remainder", synth(41, 12, 16), 12, map[string]int{KindFact: 7, KindMultihop: 2, KindParaphrase: 3}},
		{"exact shares", synth(20, 10, 10), 8, map[string]int{KindFact: 4, KindMultihop: 2, KindParaphrase: 2}},
		{"every kind at n=3 however skewed", synth(40, 1, 1), 3, map[string]int{KindFact: 1, KindMultihop: 1, KindParaphrase: 1}},
		{"skewed, n=4", synth(40, 1, 2), 4, map[string]int{KindFact: 2, KindMultihop: 1, KindParaphrase: 1}},
		{"n below the number of kinds", synth(10, 5, 5), 2, map[string]int{KindFact: 1, KindMultihop: 1}},
		{"a kind absent", synth(6, 0, 3), 3, map[string]int{KindFact: 2, KindParaphrase: 1}},
		{"the real set, 12", set, 12, nil},
		{"the real set, 20", set, 20, nil},
		{"the real set, 44", set, 44, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Stratified(tc.qs, tc.n)
			if len(got) != tc.n {
				t.Fatalf("got %d questions, want %d", len(got), tc.n)
			}
			c := kindCounts(got)
			if tc.want != nil && !reflect.DeepEqual(c, tc.want) {
				t.Errorf("kinds %v, want %v", c, tc.want)
			}
			all := kindCounts(tc.qs)
			for k, size := range all {
				share := float64(size) * float64(tc.n) / float64(len(tc.qs))
				if tc.n >= len(all) && c[k] < 1 {
					t.Errorf("kind %s missing from a subset of %d", k, tc.n)
				}
				// Without the at-least-one rule, apportionment is within one
				// of the exact share.
				if tc.want == nil && math.Abs(float64(c[k])-share) >= 1+1e-9 {
					t.Errorf("kind %s: %d questions, proportional share %.2f", k, c[k], share)
				}
			}
			seen := map[string]bool{}
			for i, q := range got {
				if seen[q.ID] {
					t.Errorf("%s twice", q.ID)
				}
				seen[q.ID] = true
				if i > 0 && got[i-1].ID >= q.ID {
					t.Errorf("not ordered by id: %s before %s", got[i-1].ID, q.ID)
				}
			}
		})
	}
}

func TestStratifiedDeterministic(t *testing.T) {
	qs, err := DebianReference()
	if err != nil {
		t.Fatal(err)
	}
	first := Stratified(qs, 12)
	for seed := uint64(1); seed <= 5; seed++ {
		shuffled := append([]Question(nil), qs...)
		r := rand.New(rand.NewPCG(seed, seed))
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		if got := Stratified(shuffled, 12); !reflect.DeepEqual(ids(got), ids(first)) {
			t.Fatalf("input order changed the subset:\n%v\n%v", ids(got), ids(first))
		}
	}
	// Spread: a subset of 12 from a set written chapter by chapter should
	// not bunch in a few chapters.
	chapters := map[string]bool{}
	for _, q := range first {
		chapters[strings.SplitN(q.Sources[0], ".", 2)[0]] = true
	}
	if len(chapters) < 8 {
		t.Errorf("a subset of 12 covers only %d chapters: %v", len(chapters), ids(first))
	}
	t.Logf("Stratified(12): %v over %d chapters", ids(first), len(chapters))
}

func TestStratifiedEdges(t *testing.T) {
	qs := synth(3, 2, 1)
	qs[0], qs[5] = qs[5], qs[0] // out of id order
	all := Stratified(qs, 100)
	if len(all) != len(qs) {
		t.Fatalf("n > len: got %d, want all %d", len(all), len(qs))
	}
	for i := 1; i < len(all); i++ {
		if all[i-1].ID >= all[i].ID {
			t.Fatalf("n > len: not ordered by id: %v", ids(all))
		}
	}
	if qs[0].ID != "q-006" {
		t.Errorf("Stratified reordered its input: %v", ids(qs))
	}
	if got := Stratified(qs, 0); got != nil {
		t.Errorf("n = 0: got %v", ids(got))
	}
	if got := Stratified(nil, 5); got != nil {
		t.Errorf("empty set: got %v", ids(got))
	}
}

func ids(qs []Question) []string {
	out := make([]string, len(qs))
	for i, q := range qs {
		out[i] = q.ID
	}
	return out
}

// TestDebianReferenceSet checks the embedded set against the rules it was
// written to (the book itself is checked in TestDebianReferenceAgainstBook).
func TestDebianReferenceSet(t *testing.T) {
	qs, err := DebianReference()
	if err != nil {
		t.Fatal(err)
	}
	c := kindCounts(qs)
	if len(qs) < 44 || c[KindFact] < 24 || c[KindMultihop] < 10 || c[KindParaphrase] < 10 {
		t.Errorf("%d questions, kinds %v: want ≥ 44, ≥ 24 fact, ≥ 10 multihop, ≥ 10 paraphrase", len(qs), c)
	}
	idRE := regexp.MustCompile(`^dr-\d{3}$`)
	srcRE := regexp.MustCompile(`^(ch\d\d|apa)\.en\.html#[A-Za-z0-9_]+$`)
	perChapter := map[string]int{}
	for _, q := range qs {
		if !idRE.MatchString(q.ID) {
			t.Errorf("%s: id not of the form dr-NNN", q.ID)
		}
		if !q.Contains(q.Answer) {
			t.Errorf("%s: the gold answer %q lacks a gold string of %q", q.ID, q.Answer, q.Gold)
		}
		files := map[string]bool{}
		for _, s := range q.Sources {
			if !srcRE.MatchString(s) {
				t.Errorf("%s: source %q is not chNN.en.html#anchor or apa.en.html#anchor", q.ID, s)
			}
			files[strings.SplitN(s, "#", 2)[0]] = true
		}
		for f := range files {
			perChapter[f]++
		}
		switch {
		case q.Kind == KindMultihop && len(q.Sources) < 2:
			t.Errorf("%s: multihop with %d source", q.ID, len(q.Sources))
		case q.Kind != KindMultihop && len(files) != 1:
			t.Errorf("%s: %s question over %d files", q.ID, q.Kind, len(files))
		}
		for _, g := range q.Gold {
			for _, alt := range strings.Split(g, "|") {
				if len(alt) > 40 {
					t.Errorf("%s: gold %q is not a short key string", q.ID, alt)
				}
			}
		}
	}
	for f, n := range perChapter {
		if share := float64(n) / float64(len(qs)); share > 0.20 {
			t.Errorf("%s: %d of %d questions (%.0f%%); at most 20%% per chapter", f, n, len(qs), 100*share)
		}
	}
	t.Logf("%d questions, kinds %v, per file %v", len(qs), c, perChapter)
}
