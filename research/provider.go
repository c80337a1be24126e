package research

import (
	"context"
	"io"

	"github.com/lethe-research/lethe/graph"
)

// Hit is one search result of a Provider.
type Hit struct {
	URL      string
	Title    string
	Snippet  string
	Score    float64 // provider-specific relevance; higher is better (BM25 for the corpus)
	Provider string  // Provider.Name() of the provider that returned it
}

// Provider finds URLs for a query (the Discover activity).
type Provider interface {
	Name() string
	// Search returns at most limit hits, best first. limit <= 0 means the
	// provider's default.
	Search(ctx context.Context, query string, limit int) ([]Hit, error)
}

// Fetcher turns a URL into a Document (the Fetch activity). The corpus
// implements it for corpus:/// URLs; the headless browser and the PDF
// fetcher implement it for http(s).
type Fetcher interface {
	Fetch(ctx context.Context, url string) (Document, error)
}

// Document is the readable content of one fetched or opened resource.
type Document struct {
	URL   string
	Title string
	Text  string // readable text; paragraphs separated by a blank line
	Kind  graph.EvidenceKind
	Links []string // absolute URLs found in the content, fragment stripped, deduplicated, in document order
	// LinkText is the anchor text of links (by URL, when it had any): what
	// a following crawl ranks a link by, as Discover ranks a search hit by
	// its title and snippet.
	LinkText map[string]string `json:",omitempty"`
	Bytes    int               // size of the raw input that was read
	// Truncated: the text was cut at a bound (Limits.MaxTextBytes, a PDF's
	// converter output, the page size cap); what fits was kept.
	Truncated bool
	// Media lists media (audio/video) that belongs to the document and still
	// needs the Transcribe activity; empty for text documents.
	Media []MediaRef
	// Hit is the part of Text a search matched: a corpus passage fetched
	// with its neighbours marks the passage that was the hit, so Ingest
	// keeps it before the context around it. Nil: the whole text was asked
	// for.
	Hit *Span `json:",omitempty"`
}

// Span is a byte range [Start, End) of a text.
type Span struct {
	Start, End int
}

// MediaRef points at a media resource to be transcribed (DESIGN.md §7 step
// 3). Fetchers fill it for media responses they captured; a corpus audio
// file becomes a Document whose only content is one MediaRef.
type MediaRef struct {
	URL      string // where the media came from
	Path     string // local file holding the captured bytes, if any
	MIMEType string
	Bytes    int64
}

// Extractor turns the raw bytes of one resource into a Document. url is the
// resource's own URL: it becomes Document.URL and the base for relative
// links. Extractors read r to the end; callers cap the size (io.LimitReader).
type Extractor func(r io.Reader, url string) (Document, error)

// DefaultExtractors returns a fresh map from lowercase file extension (with
// the dot) to the built-in extractor for it: HTML (.html .htm .xhtml),
// Markdown (.md .markdown) and plain text (.txt .text). Callers may add to
// the returned map (e.g. ".pdf") and pass it in CorpusConfig.Extractors.
func DefaultExtractors() map[string]Extractor { return DefaultLimits().Extractors() }

// Extractors is DefaultExtractors bounded by l.
func (l Limits) Extractors() map[string]Extractor {
	return map[string]Extractor{
		".html":     l.ExtractHTML,
		".htm":      l.ExtractHTML,
		".xhtml":    l.ExtractHTML,
		".md":       l.ExtractMarkdown,
		".markdown": l.ExtractMarkdown,
		".txt":      l.ExtractText,
		".text":     l.ExtractText,
	}
}

// ExtractorForType returns the built-in extractor for a media type (as in a
// Content-Type header, parameters allowed), for fetchers that see types
// rather than file names.
func ExtractorForType(mediaType string) (Extractor, bool) {
	return DefaultLimits().ExtractorForType(mediaType)
}

// ExtractorForType is the package's ExtractorForType bounded by l.
func (l Limits) ExtractorForType(mediaType string) (Extractor, bool) {
	mt := mediaType
	for i := 0; i < len(mt); i++ {
		if mt[i] == ';' {
			mt = mt[:i]
			break
		}
	}
	switch lowerTrim(mt) {
	case "text/html", "application/xhtml+xml":
		return l.ExtractHTML, true
	case "text/markdown", "text/x-markdown":
		return l.ExtractMarkdown, true
	case "text/plain":
		return l.ExtractText, true
	}
	return nil, false
}
