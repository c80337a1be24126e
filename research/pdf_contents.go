package research

import (
	"regexp"
	"strings"
)

// A PDF's table of contents, and its lists of tables and figures, are
// pages of titles with dot leaders and page numbers. Indexed as passages,
// each one holds the titles of a whole part of the book and no fact: it
// matches a query by every section title on it, is read, and is retold.
// In the fourteenth evaluation run, dr-051's report carried "11.1 Text
// data conversion tools [2]. . . 199" from the Debian Reference's contents,
// and "List of insecure and secure services and ports . . . 92" is the
// page a query about secure ports finds first. Such pages are dropped.

var (
	// contentsLeaderRe is a contents entry's line: it ends in a dot
	// leader (four dots or more, spaced or not) and, laid out in one
	// line, the page number (arabic or roman).
	contentsLeaderRe = regexp.MustCompile(`(?:\s?\.){4,}\s*(?:\d+|[ivxlcdm]+)?\s*$`)
	// contentsNumberRe is a line pdftotext splits off a contents entry:
	// the section number ("1.1.3") or the page number ("17", "xv").
	contentsNumberRe = regexp.MustCompile(`^\s*(?:\d+(?:\.\d+)*|[ivxlcdm]+)\s*$`)
)

const (
	// contentsMinLeaders is the fewest leader lines a contents page has:
	// one "Loading . . . . done" in a page of prose is not a contents
	// page.
	contentsMinLeaders = 3
	// contentsShare is the share of a page's non-blank lines that leader
	// and number lines make on a contents page. On the Debian Reference
	// PDF the eighteen contents pages are at 0.71 to 0.99, and no other
	// page is above 0.25 (pages of one or two lines aside).
	contentsShare = 0.6
)

// dropContentsPages removes the contents pages of pdftotext's text (pages
// separated by form feeds; a dropped page is left empty, so the page
// count stays) and returns how many it removed.
func dropContentsPages(s string) (string, int) {
	pages := strings.Split(s, "\f")
	dropped := 0
	for i, p := range pages {
		if contentsPage(p) {
			pages[i] = ""
			dropped++
		}
	}
	if dropped == 0 {
		return s, 0
	}
	return strings.Join(pages, "\f"), dropped
}

// contentsPage says whether a page is one of contents entries.
func contentsPage(page string) bool {
	lines, leaders, numbers := 0, 0, 0
	for _, l := range strings.Split(page, "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		lines++
		switch {
		case contentsLeaderRe.MatchString(l):
			leaders++
		case contentsNumberRe.MatchString(l):
			numbers++
		}
	}
	return leaders >= contentsMinLeaders && float64(leaders+numbers) >= contentsShare*float64(lines)
}
