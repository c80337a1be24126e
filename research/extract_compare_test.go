package research

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"golang.org/x/net/html"
)

// The extractor comparison (docs/research.md "HTML extraction"): real
// pages from Debian's HTML documentation (testdata/extract/README.md has
// their sources and licences), each with its main text and its
// boilerplate marked by the page family's own markup, and the share of
// each that an extractor keeps, counted in word tokens.
//
// This file only uses ExtractHTML and Document.Text, so that the same
// measurement runs on the extractor of an older commit (the numbers of
// the hand-written extractor in testdata/extract/old-extractor.tsv were
// made that way; README.md says how).

// extractFamily marks, by CSS-like selectors (tag, .class, #id, tag.class),
// the main content of a family of pages and the boilerplate inside or
// around it (navigation, tables of contents, page headers and footers).
type extractFamily struct {
	prefix string
	main   string
	boiler []string
}

var extractFamilies = []extractFamily{
	// DocBook (Debian Reference, Valgrind): navigation header and footer
	// tables and the chapter's table of contents around the chapter.
	{"debian-reference-", "body", []string{"div.navheader", "div.navfooter", "div.toc"}},
	{"valgrind-", "body", []string{"table.nav", "div.toc"}},
	// Texinfo (libffi): the Next/Previous/Up header and the section TOC.
	{"libffi-", "body", []string{"div.header", "ul.section-toc", "ul.mini-toc"}},
	// Node.js API docs: the side navigation and the page header with its
	// version picker and table of contents; the content is #apicontent.
	{"nodejs-", "#apicontent", []string{"#column2", "header"}},
}

// extractScore is one extractor's result on one page, in tokens.
type extractScore struct {
	Page                        string
	Main, Boiler, Out           int // tokens of the main text, of the boilerplate, of the output
	MainKept, BoilerKept, Extra int // main tokens in the output; boilerplate tokens in it beyond the main text's; output tokens matching neither
}

func (s extractScore) lost() float64 { return 1 - float64(s.MainKept)/float64(max(s.Main, 1)) }
func (s extractScore) boiler() float64 {
	return float64(s.BoilerKept) / float64(max(s.Boiler, 1))
}
func (s extractScore) precision() float64 { return float64(s.MainKept) / float64(max(s.Out, 1)) }

func (s *extractScore) add(o extractScore) {
	s.Main += o.Main
	s.Boiler += o.Boiler
	s.Out += o.Out
	s.MainKept += o.MainKept
	s.BoilerKept += o.BoilerKept
	s.Extra += o.Extra
}

// scoreExtraction counts, as multisets of tokens: MainKept = |out ∩ main|;
// BoilerKept = |(out − main) ∩ boiler| (a word of the navigation that also
// occurs in the main text counts as main text up to its count there).
func scoreExtraction(page string, main, boiler, out map[string]int) extractScore {
	s := extractScore{Page: page, Main: total(main), Boiler: total(boiler), Out: total(out)}
	for t, n := range out {
		m := min(n, main[t])
		s.MainKept += m
		b := min(n-m, boiler[t])
		s.BoilerKept += b
		s.Extra += n - m - b
	}
	return s
}

func total(m map[string]int) int {
	n := 0
	for _, c := range m {
		n += c
	}
	return n
}

// extractTokens are the lowercased runs of letters and digits of s.
func extractTokens(s string, into map[string]int) map[string]int {
	if into == nil {
		into = map[string]int{}
	}
	for _, f := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		into[f]++
	}
	return into
}

// referenceTokens returns the tokens of the main text (the main element
// less the boilerplate inside it) and of the boilerplate (wherever it is).
func referenceTokens(t *testing.T, data []byte, fam extractFamily) (main, boiler map[string]int) {
	t.Helper()
	root, err := html.Parse(strings.NewReader(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	mains := cmpSelect(root, fam.main)
	if len(mains) != 1 {
		t.Fatalf("%s: %d main elements", fam.main, len(mains))
	}
	isBoiler := func(n *html.Node) bool {
		for _, sel := range fam.boiler {
			if cmpMatch(n, sel) {
				return true
			}
		}
		return false
	}
	main, boiler = map[string]int{}, map[string]int{}
	var walk func(n *html.Node, inBoiler, inMain bool)
	walk = func(n *html.Node, inBoiler, inMain bool) {
		switch {
		case n.Type == html.TextNode && inBoiler:
			extractTokens(n.Data, boiler)
		case n.Type == html.TextNode && inMain:
			extractTokens(n.Data, main)
		case n.Type == html.ElementNode:
			switch n.Data {
			case "script", "style", "head", "noscript", "template":
				return
			}
			inBoiler = inBoiler || isBoiler(n)
			inMain = inMain || n == mains[0]
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, inBoiler, inMain)
		}
	}
	walk(root, false, false)
	if total(boiler) == 0 {
		t.Fatalf("no boilerplate marked by %v", fam.boiler)
	}
	return main, boiler
}

// cmpSelect returns the elements matching sel in document order.
func cmpSelect(n *html.Node, sel string) []*html.Node {
	var out []*html.Node
	if cmpMatch(n, sel) {
		out = append(out, n)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		out = append(out, cmpSelect(c, sel)...)
	}
	return out
}

// cmpMatch matches tag, .class, #id and tag.class selectors.
func cmpMatch(n *html.Node, sel string) bool {
	if n.Type != html.ElementNode {
		return false
	}
	if id, ok := strings.CutPrefix(sel, "#"); ok {
		return cmpAttr(n, "id") == id
	}
	tag, class, _ := strings.Cut(sel, ".")
	if tag != "" && n.Data != tag {
		return false
	}
	return class == "" || containsWord(cmpAttr(n, "class"), class)
}

func cmpAttr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func containsWord(list, w string) bool {
	for _, f := range strings.Fields(list) {
		if f == w {
			return true
		}
	}
	return false
}

// measureExtractor scores ExtractHTML on every fixture.
func measureExtractor(t *testing.T) []extractScore {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "extract", "*.html"))
	if err != nil || len(files) < 20 {
		t.Fatalf("%d fixtures (%v): the comparison needs at least 20", len(files), err)
	}
	var out []extractScore
	for _, f := range files {
		page := filepath.Base(f)
		var fam *extractFamily
		for i := range extractFamilies {
			if strings.HasPrefix(page, extractFamilies[i].prefix) {
				fam = &extractFamilies[i]
			}
		}
		if fam == nil {
			t.Fatalf("%s: no family", page)
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		main, boiler := referenceTokens(t, data, *fam)
		doc, err := ExtractHTML(strings.NewReader(string(data)), "https://docs.example/"+page)
		if err != nil {
			t.Fatalf("%s: %v", page, err)
		}
		out = append(out, scoreExtraction(page, main, boiler, extractTokens(doc.Text, nil)))
	}
	return out
}

const oldExtractorScores = "testdata/extract/old-extractor.tsv"

func writeScores(path string, scores []extractScore) error {
	var b strings.Builder
	b.WriteString("page\tmain\tboiler\tout\tmain_kept\tboiler_kept\textra\n")
	for _, s := range scores {
		fmt.Fprintf(&b, "%s\t%d\t%d\t%d\t%d\t%d\t%d\n", s.Page, s.Main, s.Boiler, s.Out, s.MainKept, s.BoilerKept, s.Extra)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func readScores(path string) (map[string]extractScore, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]extractScore{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		c := strings.Split(sc.Text(), "\t")
		if len(c) != 7 || c[0] == "page" {
			continue
		}
		var n [6]int
		for i := range n {
			if n[i], err = strconv.Atoi(c[i+1]); err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
		}
		out[c[0]] = extractScore{Page: c[0], Main: n[0], Boiler: n[1], Out: n[2], MainKept: n[3], BoilerKept: n[4], Extra: n[5]}
	}
	return out, sc.Err()
}

// Thresholds of the comparison (docs/research.md "HTML extraction"): the
// new extractor may lose at most maxMainLostTotal of all main-text tokens
// (measured: 5 %; a tenth of the text is where answers start to go
// missing from what Ingest can choose from) and at most maxMainLostPage
// on any one page (measured: 53 % on one Debian Reference chapter, where
// readability keeps the best-scored section and drops a weaker sibling
// section: a known limit of Readability.js's candidate selection, kept
// visible here rather than patched by hand), and may keep at most
// maxBoilerKept of the boilerplate (measured: 0 %, the old extractor 28 %).
const (
	maxMainLostTotal = 0.10
	maxMainLostPage  = 0.60
	maxBoilerKept    = 0.05
)

// TestExtractorComparison measures the extractor on the fixtures, prints
// the table of docs/research.md next to the numbers of the hand-written
// extractor it replaced, and fails when readability loses more main text
// than the thresholds allow. LETHE_EXTRACT_SCORES=file writes this
// extractor's numbers (how old-extractor.tsv was made at the base commit).
func TestExtractorComparison(t *testing.T) {
	scores := measureExtractor(t)
	if path := os.Getenv("LETHE_EXTRACT_SCORES"); path != "" {
		if err := writeScores(path, scores); err != nil {
			t.Fatal(err)
		}
	}
	old, err := readScores(oldExtractorScores)
	if err != nil {
		t.Logf("no numbers of the old extractor: %v", err)
	}
	var b strings.Builder
	b.WriteString("| page | main tokens | boilerplate tokens | main lost, old | main lost, new | boilerplate kept, old | boilerplate kept, new | precision, old | precision, new |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	var sumNew, sumOld extractScore
	pct := func(f float64) string { return strconv.FormatFloat(100*f, 'f', 1, 64) + " %" }
	sort.Slice(scores, func(i, j int) bool { return scores[i].Page < scores[j].Page })
	for _, s := range scores {
		o, ok := old[s.Page]
		if ok {
			sumOld.add(o)
		}
		sumNew.add(s)
		fmt.Fprintf(&b, "| %s | %d | %d | %s | %s | %s | %s | %s | %s |\n", strings.TrimSuffix(s.Page, ".html"), s.Main, s.Boiler,
			orNA(ok, pct(o.lost())), pct(s.lost()), orNA(ok, pct(o.boiler())), pct(s.boiler()), orNA(ok, pct(o.precision())), pct(s.precision()))
		if s.lost() > maxMainLostPage {
			t.Errorf("%s: readability lost %.1f %% of the main text (limit %.0f %% on a page)", s.Page, 100*s.lost(), 100*maxMainLostPage)
		}
	}
	fmt.Fprintf(&b, "| **all %d pages** | %d | %d | %s | %s | %s | %s | %s | %s |\n", len(scores), sumNew.Main, sumNew.Boiler,
		pct(sumOld.lost()), pct(sumNew.lost()), pct(sumOld.boiler()), pct(sumNew.boiler()), pct(sumOld.precision()), pct(sumNew.precision()))
	t.Logf("extractor comparison:\n%s", b.String())
	if sumNew.boiler() > maxBoilerKept {
		t.Errorf("readability kept %.1f %% of the boilerplate (limit %.0f %%)", 100*sumNew.boiler(), 100*maxBoilerKept)
	}
	if sumNew.lost() > maxMainLostTotal {
		t.Errorf("readability lost %.1f %% of all main text (limit %.0f %%)", 100*sumNew.lost(), 100*maxMainLostTotal)
	}
}

func orNA(ok bool, s string) string {
	if !ok {
		return "n/a"
	}
	return s
}
