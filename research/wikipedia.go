package research

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Wikipedia is the keyless encyclopedia Provider: the MediaWiki search API
// (action=query&list=search) of one language edition. Its hits are the
// articles' /wiki/ URLs, which Fetch reads like any page. It is safe for
// concurrent use.
type Wikipedia struct{ api *webAPI }

// NewWikipedia returns the provider; an empty BaseURL means
// https://<Language>.wikipedia.org.
func NewWikipedia(cfg WebSearchConfig) (*Wikipedia, error) {
	lang := cfg.Language
	if lang == "" {
		lang = "en"
	}
	api, err := newWebAPI(WikipediaProviderName, "https://"+url.PathEscape(lang)+".wikipedia.org", cfg)
	if err != nil {
		return nil, err
	}
	return &Wikipedia{api: api}, nil
}

// Name implements Provider.
func (w *Wikipedia) Name() string { return WikipediaProviderName }

// wikiResponse is the part of the MediaWiki API answer (formatversion=2)
// the provider reads. MediaWiki reports errors in the body of a 200 answer.
type wikiResponse struct {
	Error *struct {
		Code string `json:"code"`
		Info string `json:"info"`
	} `json:"error"`
	Query *struct {
		Search []struct {
			Title   string `json:"title"`
			PageID  int    `json:"pageid"`
			Snippet string `json:"snippet"`
		} `json:"search"`
	} `json:"query"`
}

// Search implements Provider: at most limit articles (50 at most, the
// API's cap for anonymous clients), best first. A query without results
// is no error.
func (w *Wikipedia) Search(ctx context.Context, query string, limit int) ([]Hit, error) {
	if strings.TrimSpace(query) == "" {
		return nil, nil
	}
	limit = limitOr(limit, 50)
	q := url.Values{
		"action": {"query"}, "list": {"search"}, "srsearch": {query}, "srlimit": {strconv.Itoa(limit)},
		"srprop": {"snippet"}, "format": {"json"}, "formatversion": {"2"}, "utf8": {"1"},
		"maxlag": {"5"}, // the etiquette for automated clients: back off when the servers lag
	}
	req, err := http.NewRequest(http.MethodGet, w.api.endpoint("/w/api.php", q), nil)
	if err != nil {
		return nil, &SearchError{Provider: w.Name(), Msg: err.Error()}
	}
	req.Header.Set("Accept", "application/json")
	body, err := w.api.do(ctx, req, wikiErrMsg, "")
	if err != nil {
		return nil, err
	}
	var res wikiResponse
	if err := json.Unmarshal(body, &res); err != nil {
		return nil, w.api.malformed("MediaWiki JSON", err)
	}
	if res.Error != nil {
		return nil, wikiError(res.Error.Code, res.Error.Info)
	}
	if res.Query == nil {
		return nil, w.api.malformed("a MediaWiki search answer", errMissing("query"))
	}
	raw := make([]Hit, 0, len(res.Query.Search))
	for _, r := range res.Query.Search {
		raw = append(raw, Hit{URL: w.pageURL(r.Title), Title: r.Title, Snippet: r.Snippet})
	}
	return w.api.hits(raw, limit), nil
}

// pageURL is the article's URL: /wiki/ and the title with underscores.
func (w *Wikipedia) pageURL(title string) string {
	u := *w.api.base
	u.Path += "/wiki/" + strings.ReplaceAll(title, " ", "_")
	return u.String()
}

// wikiError maps a MediaWiki error code: ratelimited and maxlag are the
// API asking us to slow down (retryable, like a 429); any other code is
// a request the API refuses.
func wikiError(code, info string) *SearchError {
	se := &SearchError{Provider: WikipediaProviderName, Status: http.StatusOK, Msg: code + ": " + info}
	switch code {
	case "ratelimited", "maxlag":
		se.Status, se.Retryable = http.StatusTooManyRequests, true
	}
	return se
}

func wikiErrMsg(body []byte) string {
	var res wikiResponse
	if json.Unmarshal(body, &res) == nil && res.Error != nil {
		return res.Error.Code + ": " + res.Error.Info
	}
	return ""
}

type errMissing string

func (e errMissing) Error() string { return "no " + string(e) + " field" }
