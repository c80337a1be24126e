package docscheck

import (
	"regexp"
	"strings"
)

// Kinds of what a doc names.
const (
	KindMake        = "make target"
	KindCommand     = "command"
	KindFlag        = "flag"
	KindTemporal    = "temporal command"
	KindTemporalArg = "temporal flag"
	KindKey         = "config key"
	KindEnv         = "env var"
	KindPath        = "path"
	KindLink        = "link"
	KindTest        = "test"
	KindQueues      = "worker queues"
)

// Use is one name a doc uses, to be checked against the code.
type Use struct {
	Kind  string
	Token string
	Cmd   string // KindFlag: the command's package dir; KindTemporalArg: the subcommand path; KindQueues: the LETHE_* assignments before the command, one a line
	File  string
	Line  int
}

// bareCommands are the binaries a deployment runs by name: the image
// installs worker and starter (Dockerfile). Any other bare word is some
// other program (eval, for one, is also the shell's builtin).
var bareCommands = map[string]string{"worker": "worker", "starter": "starter"}

var (
	envRe  = regexp.MustCompile(`LETHE[A-Z0-9]*_[A-Z0-9_*]*`)
	keyRe  = regexp.MustCompile(`[a-z][a-z0-9_]*(?:\.(?:[a-z0-9_*]+|<[a-z_]+>))+`)
	testRe = regexp.MustCompile(`^Test[A-Z0-9]\w*$`)
	flagRe = regexp.MustCompile(`^--?[A-Za-z][\w-]*`)
)

// fileExts end dotted words that are file names, not keys (graph.db).
var fileExts = map[string]bool{"db": true, "md": true, "go": true, "json": true, "jsonl": true, "yaml": true,
	"yml": true, "sh": true, "svg": true, "txt": true, "pdf": true, "html": true, "gguf": true, "bin": true}

// Extractor turns a parsed doc into uses. Sections are the first segments
// of config keys; TopLevel the repository's tracked top-level names, whose
// paths are checked.
type Extractor struct {
	Sections map[string]bool
	TopLevel map[string]bool
}

// Extract lists every use a doc makes.
func (x Extractor) Extract(d Doc) []Use {
	var out []Use
	ctx := map[int]target{} // paragraph → last command named in it
	for _, s := range d.Snippets {
		out = append(out, x.scanText(s)...)
		for _, words := range Commands(s.Text) {
			out = append(out, x.command(s, words, ctx)...)
		}
		if testRe.MatchString(s.Text) {
			out = append(out, Use{Kind: KindTest, Token: s.Text, File: s.File, Line: s.Line})
		}
	}
	for _, l := range d.Links {
		if !strings.Contains(l.Target, "://") && !strings.HasPrefix(l.Target, "mailto:") {
			out = append(out, Use{Kind: KindLink, Token: l.Target, File: l.File, Line: l.Line})
		}
	}
	return out
}

// scanText finds config keys and LETHE_* variables anywhere in a snippet.
func (x Extractor) scanText(s Snippet) []Use {
	var out []Use
	for _, m := range envRe.FindAllStringIndex(s.Text, -1) {
		if m[0] > 0 && isWordByte(s.Text[m[0]-1]) {
			continue
		}
		out = append(out, Use{Kind: KindEnv, Token: s.Text[m[0]:m[1]], File: s.File, Line: s.Line})
	}
	for _, m := range keyRe.FindAllStringIndex(s.Text, -1) {
		tok := s.Text[m[0]:m[1]]
		segs := strings.Split(tok, ".")
		if !x.Sections[segs[0]] || fileExts[segs[len(segs)-1]] {
			continue
		}
		if m[0] > 0 && (isWordByte(s.Text[m[0]-1]) || strings.IndexByte("./-@", s.Text[m[0]-1]) >= 0) {
			continue // part of a path, host or file name
		}
		if m[1] < len(s.Text) && (isWordByte(s.Text[m[1]]) || strings.IndexByte("(/", s.Text[m[1]]) >= 0) {
			continue // a Go identifier (graph.SimilarParams) or a call
		}
		out = append(out, Use{Kind: KindKey, Token: tok, File: s.File, Line: s.Line})
	}
	return out
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
