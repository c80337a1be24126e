package research

import (
	"strings"
	"testing"
)

func TestDropContentsPages(t *testing.T) {
	// Contents as pdftotext writes them without -layout: the section
	// number, the title with its leader, and the page number on lines of
	// their own.
	contents := "Debian Reference\niv\nContents\n1 GNU/Linux tutorials\n1.1\n1\nConsole basics . . . . . . . . . . . .\n1\n1.1.1\nThe shell prompt . . . . . . . . .\n1\n1.1.2\nThe root account . . . . . . . . . .\n2\n"
	// The same laid out, one entry a line, and a list of tables.
	laidOut := "List of Tables\n4.7 List of insecure and secure services and ports ........ 92\n4.8 List of tools . . . . . . 93\n4.9 List of keys . . . . . . xv\n"
	prose := "Chapter 4\nAuthentication\nYou can run these services over TLS.\nTable 4.7. List of insecure and secure services and ports\nimap2 143 imaps 993\n"
	// Prose with a line or two that looks like an entry stays.
	dots := "Wait for it . . . . 3\nThen type the command and press Enter.\nThe output ends with . . . .\nNothing else is printed here.\nA second paragraph follows.\n"
	for _, c := range []struct {
		name  string
		pages []string
		keep  []bool
	}{
		{"contents then prose", []string{contents, laidOut, prose}, []bool{false, false, true}},
		{"prose with leaders", []string{prose, dots}, []bool{true, true}},
		{"blank page", []string{"", prose}, []bool{true, true}},
	} {
		in := strings.Join(c.pages, "\f")
		got, n := dropContentsPages(in)
		pages := strings.Split(got, "\f")
		if len(pages) != len(c.pages) {
			t.Fatalf("%s: %d pages out of %d", c.name, len(pages), len(c.pages))
		}
		want := 0
		for i, keep := range c.keep {
			if keep && pages[i] != c.pages[i] || !keep && pages[i] != "" {
				t.Errorf("%s: page %d kept %v, want %v:\n%q", c.name, i, pages[i] != "", keep, pages[i])
			}
			if !keep {
				want++
			}
		}
		if n != want {
			t.Errorf("%s: %d pages dropped, want %d", c.name, n, want)
		}
		if want == 0 && got != in {
			t.Errorf("%s: text changed with no page dropped", c.name)
		}
	}
}
