package research

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
)

// pagesOf builds pdftotext-like text: each page's lines, blocks separated
// by blank lines, pages by form feeds (and a trailing one, as pdftotext
// ends its output).
func pagesOf(pages ...[]string) string {
	var b strings.Builder
	for _, p := range pages {
		b.WriteString(strings.Join(p, "\n\n"))
		b.WriteString("\n\n\f")
	}
	return b.String()
}

// topics make the body lines of book's pages differ in words, not only in
// numbers (which running lines are compared without).
var topics = []string{"anodes", "cathodes", "separators", "binders", "collectors", "casings", "vents", "tabs"}

// book is n pages (at most len(topics)) of distinct body text with the
// given header and footer ("%d" is the page number; "" for none).
func book(n int, header, footer string) [][]string {
	var out [][]string
	for i := 1; i <= n; i++ {
		var p []string
		if header != "" {
			p = append(p, fmt.Sprintf(header, i))
		}
		p = append(p, fmt.Sprintf("Body paragraph %c of page %d about cell chemistry.", 'A'+i, i))
		p = append(p, "Another paragraph, on "+topics[i-1]+".")
		if footer != "" {
			p = append(p, fmt.Sprintf(footer, i))
		}
		out = append(out, p)
	}
	return out
}

func TestDropRunningLines(t *testing.T) {
	withPage := func(pages [][]string, i int, edit func([]string) []string) [][]string {
		pages[i] = edit(append([]string(nil), pages[i]...))
		return pages
	}
	for _, tc := range []struct {
		name      string
		pages     [][]string
		dropped   int
		gone      []string // absent afterwards
		kept      []string // still there afterwards
		keptTwice []string // still there twice
	}{
		{name: "header and numbered footer", pages: book(6, "Battery Handbook", "%d / 6"), dropped: 12,
			gone: []string{"Battery Handbook", "3 / 6", "6 / 6"}, kept: []string{"Body paragraph D of page 3"}},
		{name: "version number in a footer", pages: book(5, "", "Battery Handbook 2.%d30"), dropped: 5,
			gone: []string{"Battery Handbook 2.130", "Battery Handbook 2.530"}},
		{name: "three pages keep everything", pages: book(3, "Battery Handbook", "%d / 3"), dropped: 0,
			kept: []string{"Battery Handbook", "2 / 3"}},
		// A body line at a page edge on two pages of six is no running line.
		{name: "body line repeated twice stays", dropped: 6,
			pages: withPage(withPage(book(6, "", "Page %d"), 1, func(p []string) []string {
				return append([]string{"See the table below."}, p...)
			}), 4, func(p []string) []string { return append([]string{"See the table below."}, p...) }),
			gone: []string{"Page 2"}, keptTwice: []string{"See the table below."}},
		// Half the pages are no clear majority.
		{name: "footer on half the pages stays", dropped: 0,
			pages: append(book(3, "", "Chapter %d. Anodes"), book(3, "", "")...), kept: []string{"Chapter 2. Anodes"}},
		// pdftotext put one page's number among a table's cells: still one
		// running line of that page.
		{name: "page number mid-page", dropped: 6,
			pages: withPage(book(6, "", "%d / 6"), 2, func(p []string) []string {
				return []string{p[0], p[1], "cell one", "cell two", "3 / 6", "cell three", "cell four", "cell five"}
			}), gone: []string{"3 / 6"}, kept: []string{"cell two"}},
		// A body line equal to the header survives where the header is
		// present: only the occurrence nearest the edge goes.
		{name: "body line equal to the header", dropped: 6,
			pages: withPage(book(6, "Battery Handbook", ""), 3, func(p []string) []string {
				return []string{p[0], p[1], "Battery Handbook", "more", "and more", "and yet more", p[2]}
			}), kept: []string{"\n\nBattery Handbook\n\nmore"}},
		{name: "long repeated lines stay", dropped: 0,
			pages: book(6, "", strings.Repeat("A very long repeated line of a table heading row. ", 3)+"%d"),
			kept:  []string{"A very long repeated line"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := pagesOf(tc.pages...)
			got, n := dropRunningLines(in)
			if n != tc.dropped {
				t.Errorf("dropped %d lines, want %d:\n%s", n, tc.dropped, got)
			}
			if strings.Count(got, "\f") != strings.Count(in, "\f") {
				t.Errorf("page breaks changed: %q", got)
			}
			for _, s := range tc.gone {
				if strings.Contains(got, s) {
					t.Errorf("%q is still there:\n%s", s, got)
				}
			}
			for _, s := range tc.kept {
				if !strings.Contains(got, s) {
					t.Errorf("%q was dropped:\n%s", s, got)
				}
			}
			for _, s := range tc.keptTwice {
				if c := strings.Count(got, s); c != 2 {
					t.Errorf("%q occurs %d times, want 2:\n%s", s, c, got)
				}
			}
			// Body text is never touched.
			for _, topic := range topics {
				if b := "Another paragraph, on " + topic + "."; strings.Contains(in, b) && !strings.Contains(got, b) {
					t.Errorf("body line %q dropped", b)
				}
			}
		})
	}
}

// TestPDFConverterDropsRunningLines: through pdftotext, a five-page PDF's
// running header and page footer are gone and its body is whole.
func TestPDFConverterDropsRunningLines(t *testing.T) {
	needTool(t, "pdftotext")
	var pages [][]string
	for i := 1; i <= 5; i++ {
		pages = append(pages, []string{"Solid-State Battery Notes", "", "Garnet " + topics[i] + " crack at",
			"high current density.", "", "", "", fmt.Sprintf("Page %d of 5", i)})
	}
	doc, err := PDFConverter{}.Extract(context.Background(), bytes.NewReader(makePDF("Notes", pages)), "http://example.org/n.pdf")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(doc.Text, "Page ") || strings.Contains(doc.Text, "Battery Notes") {
		t.Errorf("running lines left:\n%s", doc.Text)
	}
	for i := 1; i <= 5; i++ {
		if want := "Garnet " + topics[i] + " crack at high current density."; !strings.Contains(doc.Text, want) {
			t.Errorf("body %q missing:\n%s", want, doc.Text)
		}
	}
}
