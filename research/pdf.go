package research

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/lethe-research/lethe/graph"
)

// PDFConverter turns PDFs into text with poppler's pdftotext (Debian
// package poppler-utils). Why a subprocess rather than a Go library: the
// pure-Go PDF readers on the module proxy either extract text without
// reading order (rsc.io/pdf, ledongthuc/pdf: glyph runs, no spaces between
// words set by positioning, no font-encoding fallbacks) or do not extract
// text at all (pdfcpu); pdftotext handles CID fonts, ToUnicode maps,
// ligatures and column order, is in every distribution, and a crash or
// hang in it cannot take the worker down (it runs under a timeout in its
// own process).
type PDFConverter struct {
	Path     string        // pdftotext executable; "" means "pdftotext" on PATH
	MaxPages int           // pages converted; <= 0 means 200
	Timeout  time.Duration // per document; <= 0 means 60 s
	TmpDir   string        // for the temporary copy of the input; "" = os.TempDir()
	// Limits: pdftotext's output is read through a reader capped at
	// MaxTextBytes (the process is killed past it and the text that fits
	// is kept); the title is cut to MaxTitleChars.
	Limits Limits
	// MemoryBytes is pdftotext's address-space limit; <= 0 means
	// DefaultChildMemoryBytes.
	MemoryBytes int64
}

// Available reports whether the executable can be found.
func (p PDFConverter) Available() error {
	_, err := exec.LookPath(p.path())
	return err
}

func (p PDFConverter) path() string {
	if p.Path == "" {
		return "pdftotext"
	}
	return p.Path
}

// Extract converts the PDF read from r. The title is the PDF's Title
// metadata (else empty, for the caller to fill); the text is pdftotext's
// reading order without the running headers and footers of its pages
// (dropRunningLines) and without its contents pages (dropContentsPages),
// the lines of each text block joined, blocks and
// pages separated by a blank line, and words hyphenated across a line
// break joined again. A PDF whose text runs past Limits.MaxTextBytes gives its
// beginning (Document.Truncated). The temporary copy of the PDF is removed
// on every path.
func (p PDFConverter) Extract(ctx context.Context, r io.Reader, url string) (Document, error) {
	f, err := os.CreateTemp(p.TmpDir, "lethe-pdf-*.pdf")
	if err != nil {
		return Document{}, fmt.Errorf("research: pdf temp file: %w", err)
	}
	defer os.Remove(f.Name())
	n, err := io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Document{}, fmt.Errorf("research: read PDF %s: %w", url, err)
	}
	doc := Document{URL: url, Kind: graph.KindPDF, Bytes: int(n)}
	res, err := runChild(ctx, p.spec(f.Name()))
	if err != nil {
		var ee *exec.ExitError
		switch {
		case ctx.Err() != nil:
			return doc, ctx.Err()
		case errors.As(err, &ee):
			return doc, fmt.Errorf("research: pdftotext %s: not a readable PDF (exit %d) %s", url, ee.ExitCode(), strings.TrimSpace(res.Stderr))
		}
		return doc, fmt.Errorf("research: pdftotext %s: %w", url, err)
	}
	lim := p.Limits.withDefaults()
	title, text := parsePdftotextHTML(res.Stdout)
	text, _ = dropRunningLines(text)
	text, _ = dropContentsPages(text)
	doc.Title = lim.Title(title)
	doc.Text, doc.Truncated = lim.Text(reflowPDFText(text))
	doc.Truncated = doc.Truncated || res.Truncated
	return doc, nil
}

// spec is the pdftotext run for the file at path.
func (p PDFConverter) spec(path string) childSpec {
	timeout := p.Timeout
	if timeout <= 0 {
		timeout = time.Minute
	}
	maxPages := p.MaxPages
	if maxPages <= 0 {
		maxPages = 200
	}
	mem := p.MemoryBytes
	if mem <= 0 {
		mem = DefaultChildMemoryBytes
	}
	return childSpec{
		Path: p.path(), Args: []string{"-q", "-htmlmeta", "-enc", "UTF-8", "-l", strconv.Itoa(maxPages), path, "-"},
		Timeout: timeout, MemoryBytes: mem, MaxStdout: int64(p.Limits.withDefaults().MaxTextBytes),
	}
}

// Extractor adapts Extract to the Extractor signature (for the corpus),
// with no context beyond the converter's own timeout.
func (p PDFConverter) Extractor() Extractor {
	return func(r io.Reader, url string) (Document, error) {
		return p.Extract(context.Background(), r, url)
	}
}

// parsePdftotextHTML reads pdftotext -htmlmeta output: the <title> of its
// head (escaped there) and the text between <pre> and the last </pre>,
// taken as it is. pdftotext (poppler 22.12) does not escape the page
// text: parsed as HTML, "cd </etc/motd pager" or "#include <stdio.h>"
// opened a tag that swallowed the text up to the next ">", 4.4 % of the
// Debian Reference PDF's words (docs/research.md, "PDFs"). Output cut at
// Limits.MaxTextBytes has no </pre>: the text runs to its end. A body
// that holds no bare "<" but entities is taken as escaped, should a
// pdftotext escape it.
func parsePdftotextHTML(b []byte) (title, text string) {
	b = bytes.ToValidUTF8(b, []byte("\uFFFD"))
	open := bytes.Index(b, []byte("<pre>"))
	if open < 0 {
		return pdfTitle(b), ""
	}
	end := bytes.LastIndex(b, []byte("</pre>"))
	if end < open {
		end = len(b)
	}
	body := string(b[open+len("<pre>") : end])
	if !strings.Contains(body, "<") && (strings.Contains(body, "&lt;") || strings.Contains(body, "&amp;")) {
		body = html.UnescapeString(body)
	}
	return pdfTitle(b[:open]), strings.TrimPrefix(body, "\n")
}

// pdfTitle is the <title> of pdftotext's HTML head.
func pdfTitle(head []byte) string {
	root, err := html.Parse(bytes.NewReader(head))
	if err != nil {
		return ""
	}
	if t := findFirst(root, func(n *html.Node) bool { return n.DataAtom == atom.Title }); t != nil {
		return collapseSpace(textContent(t))
	}
	return ""
}

// reflowPDFText joins the hard-wrapped lines of each block into one
// paragraph; blank lines and form feeds separate paragraphs.
func reflowPDFText(s string) string {
	s = strings.ReplaceAll(s, "\f", "\n\n")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	var paras []string
	var cur strings.Builder
	flush := func() {
		if t := strings.TrimSpace(cur.String()); t != "" {
			paras = append(paras, t)
		}
		cur.Reset()
	}
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			flush()
			continue
		}
		if cur.Len() > 0 {
			prev := cur.String()
			// "electro-\nlyte" → "electrolyte" when the hyphen ends a word part.
			if strings.HasSuffix(prev, "-") && len(prev) > 1 && isLowerASCII(prev[len(prev)-2]) && isLowerASCII(line[0]) {
				cur.Reset()
				cur.WriteString(prev[:len(prev)-1])
			} else {
				cur.WriteByte(' ')
			}
		}
		cur.WriteString(collapseSpace(line))
	}
	flush()
	return strings.Join(paras, "\n\n")
}

func isLowerASCII(c byte) bool { return c >= 'a' && c <= 'z' }
