package questions

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/lethe-research/lethe/internal/lethetest"
)

// bookDirs are where debian-reference-en puts the HTML of the book.
var bookDirs = []string{
	"/usr/share/doc/debian-reference-en/docs",
	"/usr/share/debian-reference",
}

// maxParaphraseOverlap bounds the share of a paraphrase question's content
// words that may occur in its source section. Below 0.4, at least 60% of
// what the question says is worded differently from the passage, so a
// lexical retriever (BM25 on the question alone) has mostly the wrong
// words to go on. The fact questions of the set, asked in the book's own
// words, have a median share near 0.75, and the test checks that they stay
// above the bound, so the bound separates the two kinds.
const maxParaphraseOverlap = 0.4

// stopwords are the function words of questions that are at least four
// letters long (content words are lower-case words of four or more
// letters or digits, minus these).
var stopwords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`what which where when does with from that this into your their there them
		they have will would should could about must make made show tell want using used uses some than then
		also only each every other more most such very need needs give gives been were being just like after
		before over under while`) {
		stopwords[w] = true
	}
}

// anchor is where a heading's anchor starts in a file's text.
type anchor struct {
	level int // 1 for h1 … 6 for h6
	id    string
	pos   int
}

// bookFile is the extracted text of one HTML file of the book, with its
// headings' anchors to cut sections.
type bookFile struct {
	text    string
	anchors []anchor
}

// section returns the normalised text of the section under the heading
// anchor id: from the heading to the next heading of the same or a higher
// level. ok is false when the file has no such heading anchor.
func (f bookFile) section(id string) (text string, ok bool) {
	for i, a := range f.anchors {
		if a.id != id {
			continue
		}
		end := len(f.text)
		for _, next := range f.anchors[i+1:] {
			if next.level <= a.level {
				end = next.pos
				break
			}
		}
		return normalize(f.text[a.pos:end]), true
	}
	return "", false
}

// extractBook reads an HTML file of the book as a browser shows its text:
// tags dropped, entities unescaped (the tokenizer does it), a space at
// every block boundary, script and style skipped. It records where each
// heading's anchor (an id on the heading or on an element inside it)
// starts.
func extractBook(r io.Reader) (bookFile, error) {
	var (
		b       strings.Builder
		anchors []anchor
		heading int // level of the heading being read, 0 outside one
		skip    int // depth inside script or style
	)
	z := html.NewTokenizer(r)
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			if z.Err() != io.EOF {
				return bookFile{}, z.Err()
			}
			return bookFile{text: b.String(), anchors: anchors}, nil
		case html.TextToken:
			if skip == 0 {
				b.Write(z.Text())
			}
		case html.StartTagToken, html.SelfClosingTagToken, html.EndTagToken:
			tok := z.Token()
			start := tt != html.EndTagToken
			switch tok.DataAtom {
			case atom.Script, atom.Style:
				if tt == html.StartTagToken {
					skip++
				} else if tt == html.EndTagToken && skip > 0 {
					skip--
				}
			case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
				heading = 0
				if start {
					heading = int(tok.Data[1] - '0')
				}
			}
			if blockTags[tok.DataAtom] {
				b.WriteByte(' ')
			}
			if start && heading > 0 {
				for _, a := range tok.Attr {
					if a.Key == "id" {
						anchors = append(anchors, anchor{heading, a.Val, b.Len()})
					}
				}
			}
		}
	}
}

var blockTags = map[atom.Atom]bool{
	atom.P: true, atom.Div: true, atom.Td: true, atom.Th: true, atom.Tr: true, atom.Li: true, atom.Br: true,
	atom.H1: true, atom.H2: true, atom.H3: true, atom.H4: true, atom.H5: true, atom.H6: true, atom.Pre: true,
	atom.Dt: true, atom.Dd: true, atom.Table: true, atom.Ul: true, atom.Ol: true, atom.Dl: true,
	atom.Blockquote: true, atom.Title: true, atom.Caption: true,
}

func TestExtractBook(t *testing.T) {
	const page = `<html><head><title>T</title><style>h1{}</style></head><body>
<div class="chapter"><h1><a id="_ch"/>Chapter&nbsp;1. Intro</h1><p>Top &amp; text.</p>
<div class="section"><h2 class="title"><a id="_a"></a>1.1. A</h2><p>Use <code>chvt</code> 3.</p>
<h3 id="_a1">1.1.1. A one</h3><p>inner<br/>line</p></div>
<div class="section"><h2><a id="_b"/>1.2. B</h2><td>cell</td><td>two</td><a id="_not_a_heading"/></div>
<script>var x = "<p>no</p>";</script></div></body></html>`
	f, err := extractBook(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ id, want string }{
		{"_ch", "chapter 1. intro top & text. 1.1. a use chvt 3. 1.1.1. a one inner line 1.2. b cell two"},
		{"_a", "1.1. a use chvt 3. 1.1.1. a one inner line"},
		{"_a1", "1.1.1. a one inner line"},
		{"_b", "1.2. b cell two"},
	} {
		got, ok := f.section(tc.id)
		if !ok || got != tc.want {
			t.Errorf("section %s = %q (found %v), want %q", tc.id, got, ok, tc.want)
		}
	}
	if _, ok := f.section("_not_a_heading"); ok {
		t.Error("an anchor outside a heading made a section")
	}
}

// contentWords are the lower-case words of s (letters and digits) of four
// or more characters that are not stopwords, each once, sorted.
func contentWords(s string) []string {
	seen := map[string]bool{}
	for _, w := range wordsOf(s) {
		if len([]rune(w)) >= 4 && !stopwords[w] {
			seen[w] = true
		}
	}
	out := make([]string, 0, len(seen))
	for w := range seen {
		out = append(out, w)
	}
	sort.Strings(out)
	return out
}

var wordRE = regexp.MustCompile(`[\p{L}\p{N}]+`)

func wordsOf(s string) []string { return wordRE.FindAllString(strings.ToLower(s), -1) }

// overlap is the share of the content words of q found among the words of
// text, and those found.
func overlap(q, text string) (float64, []string) {
	cw := contentWords(q)
	if len(cw) == 0 {
		return 0, nil
	}
	have := map[string]bool{}
	for _, w := range wordsOf(text) {
		have[w] = true
	}
	var found []string
	for _, w := range cw {
		if have[w] {
			found = append(found, w)
		}
	}
	return float64(len(found)) / float64(len(cw)), found
}

// TestDebianReferenceAgainstBook verifies the set against the installed
// book: every source section exists, every gold string (one of its
// alternatives) occurs in the text of one of the question's source
// sections, and paraphrase questions share few content words with theirs.
func TestDebianReferenceAgainstBook(t *testing.T) {
	lethetest.Need(t, lethetest.DebianDocs)
	dir := ""
	for _, d := range bookDirs {
		if _, err := os.Stat(filepath.Join(d, "ch01.en.html")); err == nil {
			dir = d
			break
		}
	}
	if dir == "" {
		lethetest.Missing(t, lethetest.DebianDocs, "the Debian Reference HTML is not installed (apt-get install debian-reference-en)")
	}
	qs, err := DebianReference()
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]bookFile{}
	load := func(name string) (bookFile, error) {
		if f, ok := files[name]; ok {
			return f, nil
		}
		r, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			return bookFile{}, err
		}
		defer r.Close()
		f, err := extractBook(r)
		if err != nil {
			return bookFile{}, fmt.Errorf("%s: %w", name, err)
		}
		files[name] = f
		return f, nil
	}
	var factShares []float64
	for _, q := range qs {
		var texts []string
		for _, src := range q.Sources {
			name, id, _ := strings.Cut(src, "#")
			f, err := load(name)
			if err != nil {
				t.Fatalf("%s: %v", q.ID, err)
			}
			text, ok := f.section(id)
			if !ok {
				t.Errorf("%s: source %s: no heading with anchor %q in %s", q.ID, src, id, name)
				continue
			}
			texts = append(texts, text)
		}
		for _, g := range q.Gold {
			if Evidence(Question{Gold: []string{g}}, texts) != 1 {
				t.Errorf("%s: gold %q occurs in none of its source sections %v", q.ID, g, q.Sources)
			}
		}
		share, found := overlap(q.Question, strings.Join(texts, " "))
		switch q.Kind {
		case KindParaphrase:
			t.Logf("%s paraphrase: %.2f of its content words in the passage %v", q.ID, share, found)
			if share >= maxParaphraseOverlap {
				t.Errorf("%s: paraphrase shares %.2f of its content words with its passage (%v); want < %.2f",
					q.ID, share, found, maxParaphraseOverlap)
			}
		case KindFact:
			factShares = append(factShares, share)
		}
	}
	sort.Float64s(factShares)
	if len(factShares) > 0 {
		median := factShares[len(factShares)/2]
		t.Logf("fact questions: median overlap %.2f (min %.2f, max %.2f) over %d", median, factShares[0], factShares[len(factShares)-1], len(factShares))
		if median <= maxParaphraseOverlap {
			t.Errorf("fact questions' median overlap %.2f is not above the paraphrase bound %.2f: the bound does not separate them",
				median, maxParaphraseOverlap)
		}
	}
}
