package research

import (
	"reflect"
	"strings"
	"testing"
)

func TestDropNearDuplicates(t *testing.T) {
	const (
		a = "The blkid command probes the UUID of a block device and prints it with its type."
		// a as a PDF writes it: other quotes, case and line breaks.
		aPDF = "the BLKID command probes the “UUID” of a block\ndevice, and prints it with its type"
		b    = "GRUB keeps the menu entry in /boot/grub/grub.cfg, whose kernel line names root=UUID."
		c    = "Set the default target to multi-user with systemctl set-default multi-user."
		// Four of its eight five-word sequences are a's.
		half  = "The blkid command probes the UUID of a partition that udev names."
		short = "blkid(8)"
	)
	n := func(t ...string) []Passage {
		ps := make([]Passage, len(t))
		for i, x := range t {
			ps[i] = Passage{N: i, Text: x}
		}
		return ps
	}
	texts := func(ps []Passage) []string {
		var out []string
		for _, p := range ps {
			out = append(out, p.Text)
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		in    []Passage
		limit int
		share float64
		want  []string
	}{
		{"distinct, cut at the limit", n(a, b, c), 2, 0.5, []string{a, b}},
		{"a copy in another format goes, the next fills in", n(a, aPDF, b, c), 3, 0.5, []string{a, b, c}},
		{"the copy ranked first stays", n(aPDF, a, b), 2, 0.5, []string{aPDF, b}},
		{"half shared goes at 0.5", n(a, half, b), 3, 0.5, []string{a, b}},
		{"half shared stays at 0.6", n(a, half, b), 3, 0.6, []string{a, half, b}},
		{"a passage too short to compare stays", n(a, short, short), 3, 0.5, []string{a, short, short}},
		{"share 0 keeps all", n(a, aPDF, b), 3, 0, []string{a, aPDF, b}},
		{"fewer than the limit", n(a, aPDF), 5, 0.5, []string{a}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			scores := make([]float64, len(tc.in))
			for i := range scores {
				scores[i] = float64(len(scores) - i)
			}
			ps, sc := dropNearDuplicates(tc.in, scores, tc.limit, tc.share)
			if got := texts(ps); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("kept %q, want %q", got, tc.want)
			}
			for i, p := range ps {
				if sc[i] != scores[p.N] {
					t.Errorf("passage %d has score %v, want %v", p.N, sc[i], scores[p.N])
				}
			}
		})
	}
	if s := shingles(half); len(s) != 8 {
		t.Fatalf("the half case has %d sequences, want 8", len(s))
	}
	if !strings.Contains(aPDF, "“UUID”") {
		t.Fatal("the PDF copy lost its quotes")
	}
}

// TestCorpusSearchDropsCopies: a manual indexed twice (its HTML and a text
// copy) fills a search's top two with one answer unless copies are left
// out; with research.corpus_dedup off it does.
func TestCorpusSearchDropsCopies(t *testing.T) {
	root := t.TempDir()
	text := "The blkid command probes the UUID of a block device and prints it with its type and label."
	writeFile(t, root, "manual.html", "<html><body><p>"+text+"</p></body></html>")
	writeFile(t, root, "manual.txt", text)
	writeFile(t, root, "grub.txt", "GRUB keeps the menu entry for a block device in /boot/grub/grub.cfg.")
	for _, tc := range []struct {
		dedup float64
		want  []string
	}{
		{0, []string{"manual", "grub.txt"}},
		{-1, []string{"manual", "manual"}},
	} {
		c, err := NewCorpus(CorpusConfig{Root: root, Dedup: tc.dedup})
		if err != nil {
			t.Fatal(err)
		}
		hits, err := c.Search(t.Context(), "blkid UUID block device", 2)
		c.Close()
		if err != nil || len(hits) != 2 {
			t.Fatalf("dedup %v: hits %+v, %v", tc.dedup, hits, err)
		}
		for i, h := range hits {
			if !strings.Contains(h.URL, tc.want[i]) {
				t.Errorf("dedup %v: hit %d is %s, want %s", tc.dedup, i, h.URL, tc.want[i])
			}
		}
	}
}
