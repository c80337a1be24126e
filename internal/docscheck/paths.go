package docscheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"
)

var placeholderRe = regexp.MustCompile(`<[^>/]*>`)

// pathReason says why a repository path a doc names does not exist, or "".
// <name> placeholders and * match any name.
func (t *Truth) pathReason(tok string) string {
	if strings.HasPrefix(tok, "../") {
		return "points outside the repository"
	}
	if strings.Contains(tok, "…") || strings.Contains(tok, "...") {
		return "" // an elided name
	}
	pat := placeholderRe.ReplaceAllString(tok, "*")
	matches, err := filepath.Glob(filepath.Join(t.Root, filepath.FromSlash(pat)))
	if err != nil || len(matches) == 0 {
		return "no such file or directory"
	}
	return ""
}

// linkReason checks a relative link: its file exists in the repository
// and its #anchor, if any, is a heading of that file.
func (t *Truth) linkReason(u Use, docs map[string]Doc) string {
	target, anchor, _ := strings.Cut(u.Token, "#")
	file := u.File
	if target != "" {
		file = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(u.File), target)))
		if strings.HasPrefix(file, "../") {
			return "points outside the repository"
		}
		if _, err := os.Stat(filepath.Join(t.Root, filepath.FromSlash(file))); err != nil {
			return "no such file"
		}
	}
	d, parsed := docs[file]
	if anchor == "" || !parsed {
		return ""
	}
	for _, h := range d.Headings {
		if Slug(h) == anchor {
			return ""
		}
	}
	return "no heading " + file + "#" + anchor
}

// Slug is a heading's anchor as GitHub makes it: lower case, punctuation
// dropped, spaces as hyphens.
func Slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
