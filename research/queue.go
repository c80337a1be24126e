package research

import (
	"net/url"
	"strings"
	"unicode"

	"github.com/lethe-research/lethe/contract"
	"github.com/lethe-research/lethe/research/queue"
)

// Candidate is a URL waiting in the research queue (contract.URLCandidate:
// Discover returns it to the workflow).
type Candidate = contract.URLCandidate

// RankCandidates is queue.RankCandidates: the URLs to fetch, best first.
func RankCandidates(c []Candidate, seen map[string]bool) []Candidate {
	return queue.RankCandidates(c, seen)
}

// NormalizeURL is queue.NormalizeURL: the canonical form of a URL used for
// dedup and the seen set.
func NormalizeURL(raw string) string { return queue.NormalizeURL(raw) }

// LinkText is the text a followed link is embedded and ranked by, as a
// search hit is by its title and snippet: its anchor text, then the words
// of its URL's host and path (a link reading "next" or "here" still says
// where it goes: /docs/battery-failure-modes.html).
func LinkText(anchor, rawURL string) string {
	var words []string
	if u, err := url.Parse(rawURL); err == nil {
		words = strings.FieldsFunc(u.Hostname()+" "+u.Path, func(r rune) bool {
			return !unicode.IsLetter(r) && !unicode.IsDigit(r)
		})
	}
	for len(words) > 0 && isURLNoise(words[len(words)-1]) {
		words = words[:len(words)-1]
	}
	return strings.TrimSpace(collapseSpace(anchor) + "\n" + strings.Join(words, " "))
}

// isURLNoise: file extensions that say nothing about a page's subject.
func isURLNoise(w string) bool {
	switch strings.ToLower(w) {
	case "html", "htm", "php", "asp", "aspx", "jsp", "shtml", "xhtml", "index":
		return true
	}
	return false
}
