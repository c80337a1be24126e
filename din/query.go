package din

import (
	"sort"
	"strings"
	"unicode"
)

// queryStopwords are the English function words a rewording adds or drops
// without changing what a search engine is asked: "how do X fail" and
// "X failure how" must meet as one search.
var queryStopwords = map[string]bool{
	"a": true, "an": true, "and": true, "are": true, "as": true, "at": true, "be": true, "by": true,
	"can": true, "do": true, "does": true, "for": true, "from": true, "how": true, "in": true,
	"into": true, "is": true, "it": true, "its": true, "of": true, "on": true, "or": true,
	"the": true, "their": true, "this": true, "that": true, "to": true, "vs": true, "was": true,
	"what": true, "when": true, "where": true, "which": true, "who": true, "why": true, "with": true,
	"about": true, "please": true, "search": true, "find": true, "information": true, "info": true,
}

// SearchKey normalises a web_search query into the key the session's
// search dedup compares across tasks: case folded, split on every
// character that is not a letter or digit (punctuation and whitespace
// vanish), stopwords dropped, a plural "s"/"ies" folded, each word kept
// once and the words sorted, so that word order, casing, punctuation and
// filler do not make a new search. A query of stopwords only keys on its
// folded words. Why not an embedding: the cosine check is per task and
// reworded queries pass it; a key is exact and deterministic, so the
// workflow can apply it itself on replay.
func SearchKey(query string) string {
	fields := strings.FieldsFunc(strings.ToLower(query), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	seen := map[string]bool{}
	words := make([]string, 0, len(fields))
	for _, f := range fields {
		if queryStopwords[f] {
			continue
		}
		f = foldPlural(f)
		if !seen[f] {
			seen[f] = true
			words = append(words, f)
		}
	}
	if len(words) == 0 {
		return strings.Join(fields, " ")
	}
	sort.Strings(words)
	return strings.Join(words, " ")
}

// foldPlural maps the regular English plural to its singular ("batteries"
// → "battery", "dendrites" → "dendrite"); "ss" endings ("glass") and short
// words stay.
func foldPlural(w string) string {
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		return w[:len(w)-3] + "y"
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us"):
		return w[:len(w)-1]
	}
	return w
}
