package research

import (
	"strings"
	"unicode"
)

// Running headers and footers of a PDF ("125 / 233", "Debian Reference",
// "Journal of X, vol. 12"): pdftotext emits them as lines of every page,
// and reflowed they become paragraphs in the middle of the text, then
// inside passages and the report's copied sentences, where a citation
// judge rightly calls "125 / 233" unsupported. They are recognised by
// repetition, not by position alone: a line is running when, with its
// digits normalised, it is among the first or last runningEdgeLines
// lines of a clear majority of the pages. A page has few running lines
// and they sit in its margins, so what is there on most pages is not
// body text, which differs from page to page.
const (
	// runningMinPages: a shorter document keeps every line; with two or
	// three pages a repeated body line is as likely as a running one.
	runningMinPages = 4
	// runningEdgeLines is how deep the top and bottom windows of a page
	// reach. pdftotext orders a page's blocks by position, and a section
	// number in the left margin ("1.1.4") can come between the header's
	// two lines: the Debian Reference's page number is the third line of
	// 42 of its 260 pages.
	runningEdgeLines = 3
	// runningMaxChars: running lines are short; a long line repeated at
	// page edges is more likely body text (a table's repeated heading
	// row), and is kept.
	runningMaxChars = 100
)

// dropRunningLines removes the running headers and footers of
// pdftotext's text (pages separated by form feeds) and returns the text
// with the form feeds kept, and how many lines it removed. A running line
// is removed once per page: the occurrence nearest the page's top or
// bottom, wherever that is (on pages holding a table, pdftotext can put
// the page number among the table's cells). A body line that merely
// equals a running line survives on every page where the running line
// itself is present.
func dropRunningLines(s string) (string, int) {
	pages := strings.Split(s, "\f")
	lines := make([][]string, len(pages))
	for i, p := range pages {
		lines[i] = strings.Split(p, "\n")
	}
	running := runningKeys(lines)
	if len(running) == 0 {
		return s, 0
	}
	dropped := 0
	for i := range lines {
		kept, n := dropPageRunning(lines[i], running)
		if n > 0 {
			pages[i] = strings.Join(kept, "\n")
			dropped += n
		}
	}
	return strings.Join(pages, "\f"), dropped
}

// runningKeys returns the normalised lines that are at an edge of at
// least 60 % of the non-blank pages (and of at least three), or none when
// the document has fewer than runningMinPages such pages.
func runningKeys(pages [][]string) map[string]bool {
	counts := map[string]int{}
	n := 0
	for _, lines := range pages {
		body := nonBlank(lines)
		if len(body) == 0 {
			continue
		}
		n++
		// On a short page (a slide) every line would be near an edge:
		// the window shrinks to a third of the page, so only its first and
		// last lines can be running ones.
		w := min(runningEdgeLines, max(1, len(body)/3))
		seen := map[string]bool{}
		for j, k := range body {
			if j >= w && j < len(body)-w {
				continue
			}
			key := runningKey(lines[k])
			if key != "" && !seen[key] {
				seen[key] = true
				counts[key]++
			}
		}
	}
	if n < runningMinPages {
		return nil
	}
	keys := map[string]bool{}
	for key, c := range counts {
		if c >= 3 && c*5 >= n*3 {
			keys[key] = true
		}
	}
	return keys
}

// dropPageRunning removes from one page's lines, for each running key,
// the occurrence nearest an edge of the page.
func dropPageRunning(lines []string, running map[string]bool) ([]string, int) {
	body := nonBlank(lines)
	best := map[string]int{} // key → index into body of the line to drop
	for j, k := range body {
		key := runningKey(lines[k])
		if !running[key] {
			continue
		}
		if b, ok := best[key]; !ok || edgeDistance(j, len(body)) < edgeDistance(b, len(body)) {
			best[key] = j
		}
	}
	if len(best) == 0 {
		return lines, 0
	}
	drop := make(map[int]bool, len(best))
	for _, j := range best {
		drop[body[j]] = true
	}
	kept := make([]string, 0, len(lines)-len(drop))
	for k, l := range lines {
		if !drop[k] {
			kept = append(kept, l)
		}
	}
	return kept, len(drop)
}

func edgeDistance(j, n int) int { return min(j, n-1-j) }

// nonBlank returns the indexes of the lines that hold more than spaces.
func nonBlank(lines []string) []int {
	var out []int
	for k, l := range lines {
		if strings.TrimSpace(l) != "" {
			out = append(out, k)
		}
	}
	return out
}

// runningKey is a line as running lines are compared: spaces collapsed,
// every run of digits one "#", so "125 / 233" and "126 / 233" (or
// "Debian Reference 2.130" in two editions) are one line. Lines longer
// than runningMaxChars have no key.
func runningKey(line string) string {
	line = collapseSpace(line)
	if line == "" || len(line) > runningMaxChars {
		return ""
	}
	var b strings.Builder
	digit := false
	for _, r := range line {
		if unicode.IsDigit(r) {
			if !digit {
				b.WriteByte('#')
			}
			digit = true
			continue
		}
		digit = false
		b.WriteRune(r)
	}
	return b.String()
}
