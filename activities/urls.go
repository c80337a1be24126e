package activities

import (
	"regexp"
	"strings"
)

// Links the model made up (docs/citations.md, "Links the sources do not
// hold"): a 1.5B summary of dr-018 (sixteenth evaluation run) ended "…
// uses port 443 (https://example.org/secure-imap)". A reader follows a
// link as a source; one that no source holds is a fabricated citation
// the number check cannot see. A composition keeps the links its prompt,
// its evidence or its sources' addresses hold, and loses the others.

var (
	// mdLinkRe is a Markdown link, [text](url): an invented one keeps its
	// text.
	mdLinkRe = regexp.MustCompile(`\[([^\]\n]+)\]\((https?://[^\s()]+)\)`)
	// bareURLRe is a URL, in parentheses or angle brackets or bare, with
	// the spaces before it.
	bareURLRe = regexp.MustCompile(`[ \t]*(?:\(\s*|<)?https?://[^\s<>()\[\]"'` + "`" + `]+(?:\s*\)|>)?`)
	// urlTailRe is what ends a sentence after a URL rather than the URL.
	urlTailRe = regexp.MustCompile(`[.,;:!?]+$`)
)

// dropInventedURLs removes the links of text that none of known holds
// (the address after its scheme, a closing slash aside),
// and returns the text and how many it removed. A Markdown link keeps its
// text; a URL goes with its brackets and the spaces before it, and the
// punctuation after it stays.
func dropInventedURLs(text string, known ...string) (string, int) {
	held := func(u string) bool {
		// Without its scheme: "the web interface at localhost:631"
		// holds http://localhost:631.
		u = strings.TrimRight(urlTailRe.ReplaceAllString(u, ""), "/")
		u = u[strings.Index(u, "//")+2:]
		for _, k := range known {
			if strings.Contains(k, u) {
				return true
			}
		}
		return false
	}
	removed := 0
	text = mdLinkRe.ReplaceAllStringFunc(text, func(m string) string {
		sub := mdLinkRe.FindStringSubmatch(m)
		if held(sub[2]) {
			return m
		}
		removed++
		return sub[1]
	})
	text = bareURLRe.ReplaceAllStringFunc(text, func(m string) string {
		core := strings.Trim(strings.TrimSpace(m), "()<> \t")
		tail := urlTailRe.FindString(core)
		if held(core) {
			return m
		}
		removed++
		return tail
	})
	return text, removed
}

// sourceURLs are the addresses of doc's sources, one per line, for
// dropInventedURLs.
func (d sectionsDoc) sourceURLs() string {
	var b strings.Builder
	for _, s := range d.Sources {
		b.WriteString(s.URL + "\n")
	}
	return b.String()
}

// knownLinks is what a composition's links may come from: its prompt,
// its evidence and its sources' addresses.
func knownLinks(doc sectionsDoc, prompt string, evidence map[int]string) []string {
	known := []string{prompt, doc.sourceURLs()}
	for _, text := range evidence {
		known = append(known, text)
	}
	return known
}
