package research

import (
	"context"
	"encoding/xml"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode"
)

// Arxiv is the keyless preprint Provider: the arXiv API's Atom feed
// (/api/query). Its hits are the papers' PDF URLs, which Fetch reads by
// direct HTTP and pdftotext. arXiv asks API clients for at most one
// request every three seconds: its rate is research.rate.arxiv. It is safe
// for concurrent use.
type Arxiv struct{ api *webAPI }

// NewArxiv returns the provider; an empty BaseURL means
// https://export.arxiv.org.
func NewArxiv(cfg WebSearchConfig) (*Arxiv, error) {
	api, err := newWebAPI(ArxivProviderName, "https://export.arxiv.org", cfg)
	if err != nil {
		return nil, err
	}
	return &Arxiv{api: api}, nil
}

// Name implements Provider.
func (a *Arxiv) Name() string { return ArxivProviderName }

// atomFeed is the part of the arXiv Atom answer the provider reads.
type atomFeed struct {
	XMLName      xml.Name    `xml:"http://www.w3.org/2005/Atom feed"`
	TotalResults int         `xml:"http://a9.com/-/spec/opensearch/1.1/ totalResults"`
	Entries      []atomEntry `xml:"http://www.w3.org/2005/Atom entry"`
}

type atomEntry struct {
	ID      string `xml:"http://www.w3.org/2005/Atom id"`
	Title   string `xml:"http://www.w3.org/2005/Atom title"`
	Summary string `xml:"http://www.w3.org/2005/Atom summary"`
	Links   []struct {
		Href  string `xml:"href,attr"`
		Rel   string `xml:"rel,attr"`
		Title string `xml:"title,attr"`
		Type  string `xml:"type,attr"`
	} `xml:"http://www.w3.org/2005/Atom link"`
}

// Search implements Provider: at most limit papers (100 at most), by
// relevance. The query's words are OR-ed over all fields, so that a
// question finds papers matching most of its terms first rather than
// nothing (arXiv's AND of every word rarely matches a sentence).
func (a *Arxiv) Search(ctx context.Context, query string, limit int) ([]Hit, error) {
	sq := arxivQuery(query)
	if sq == "" {
		return nil, nil
	}
	limit = limitOr(limit, 100)
	q := url.Values{
		"search_query": {sq}, "start": {"0"}, "max_results": {strconv.Itoa(limit)},
		"sortBy": {"relevance"}, "sortOrder": {"descending"},
	}
	req, err := http.NewRequest(http.MethodGet, a.api.endpoint("/api/query", q), nil)
	if err != nil {
		return nil, &SearchError{Provider: a.Name(), Msg: err.Error()}
	}
	req.Header.Set("Accept", "application/atom+xml")
	body, err := a.api.do(ctx, req, arxivErrMsg, "")
	if err != nil {
		return nil, err
	}
	var feed atomFeed
	if err := xml.Unmarshal(body, &feed); err != nil {
		return nil, a.api.malformed("an Atom feed", err)
	}
	if msg, ok := feed.errorEntry(); ok {
		return nil, &SearchError{Provider: a.Name(), Status: http.StatusOK, Msg: msg}
	}
	raw := make([]Hit, 0, len(feed.Entries))
	for _, e := range feed.Entries {
		if u := e.pdfURL(); u != "" {
			raw = append(raw, Hit{URL: u, Title: e.Title, Snippet: e.Summary})
		}
	}
	return a.api.hits(raw, limit), nil
}

// errorEntry: arXiv reports a bad query as a feed whose one entry has an
// id under /api/errors and the message as its summary.
func (f atomFeed) errorEntry() (string, bool) {
	for _, e := range f.Entries {
		if strings.Contains(e.ID, "/api/errors") {
			return strings.Join(strings.Fields(e.Summary), " "), true
		}
	}
	return "", false
}

// pdfURL is the entry's PDF link (title="pdf"), else the abstract id with
// /abs/ turned into /pdf/; arxiv.org links are upgraded to https.
func (e atomEntry) pdfURL() string {
	u := ""
	for _, l := range e.Links {
		if l.Title == "pdf" || l.Type == "application/pdf" {
			u = l.Href
			break
		}
	}
	if u == "" && strings.Contains(e.ID, "/abs/") {
		u = strings.Replace(e.ID, "/abs/", "/pdf/", 1)
	}
	u = strings.TrimSpace(u)
	if rest, ok := strings.CutPrefix(u, "http://arxiv.org/"); ok {
		u = "https://arxiv.org/" + rest
	}
	return u
}

func arxivErrMsg(body []byte) string {
	var feed atomFeed
	if xml.Unmarshal(body, &feed) == nil {
		if msg, ok := feed.errorEntry(); ok {
			return msg
		}
	}
	return ""
}

// arxivQuery turns a question into arXiv's query syntax: its words
// (letters and digits, at most 12, stop words dropped) as all:word
// terms joined by OR. Characters of the syntax (quotes, parentheses,
// colons) never pass through.
func arxivQuery(q string) string {
	words := strings.FieldsFunc(strings.ToLower(q), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-'
	})
	var terms []string
	seen := map[string]bool{}
	for _, w := range words {
		w = strings.Trim(w, "-")
		if w == "" || arxivStop[w] || seen[w] || (w == "and" || w == "or" || w == "andnot") {
			continue
		}
		seen[w] = true
		terms = append(terms, "all:"+w)
		if len(terms) == 12 {
			break
		}
	}
	return strings.Join(terms, " OR ")
}

var arxivStop = map[string]bool{
	"a": true, "an": true, "the": true, "of": true, "in": true, "on": true, "for": true, "to": true, "is": true,
	"are": true, "was": true, "were": true, "be": true, "by": true, "with": true, "what": true, "how": true,
	"why": true, "which": true, "who": true, "when": true, "do": true, "does": true, "did": true, "it": true,
	"its": true, "as": true, "at": true, "from": true, "that": true, "this": true, "can": true, "vs": true,
}
