// Package docscheck checks that the commands, flags, make targets, config
// keys, environment variables, tests and paths that README.md and docs/*.md
// name exist in the code. Its test runs over the repository's docs.
package docscheck

import (
	"regexp"
	"strings"
)

// Snippet is code a doc shows: an inline code span or one command line of
// a fenced block (continuation lines joined).
type Snippet struct {
	File  string
	Line  int
	Text  string
	Block bool // from a fenced block, where every line is a shell line
	Para  int  // paragraph (or block) index within the file: the context of a bare flag
}

// Link is the target of a Markdown link [text](target).
type Link struct {
	File   string
	Line   int
	Target string
}

// Doc is what one Markdown file shows as code and links to.
type Doc struct {
	Snippets []Snippet
	Links    []Link
	Headings []string
}

var (
	fenceRe   = regexp.MustCompile("^\\s*(```+|~~~+)\\s*([A-Za-z]*)")
	linkRe    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	headingRe = regexp.MustCompile(`^#{1,6}\s+(.*)$`)
)

// shellFences are the fence languages whose lines are shell commands; a
// fence without a language holds commands or their output, and is read as
// shell (output lines name no command and so are not checked beyond keys,
// variables and paths).
var shellFences = map[string]bool{"": true, "sh": true, "bash": true, "shell": true, "console": true}

// Parse reads a Markdown file's code spans, fenced shell lines, links and
// headings. file is the name used in findings.
func Parse(file, text string) Doc {
	var d Doc
	lines := strings.Split(text, "\n")
	para, paraStart := []string(nil), 0
	n := 0 // paragraph counter
	flush := func() {
		if len(para) > 0 {
			n++
			d.addParagraph(file, paraStart, n, para)
		}
		para = nil
	}
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if m := fenceRe.FindStringSubmatch(line); m != nil {
			flush()
			n++
			i = d.addFence(file, lines, i, m[1], m[2], n)
			continue
		}
		if strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		if m := headingRe.FindStringSubmatch(line); m != nil {
			d.Headings = append(d.Headings, m[1])
		}
		if para == nil {
			paraStart = i + 1
		}
		para = append(para, line)
	}
	flush()
	return d
}

// addFence reads the fenced block opening at lines[open] and returns the
// index of its closing line.
func (d *Doc) addFence(file string, lines []string, open int, fence, lang string, para int) int {
	shell := shellFences[strings.ToLower(lang)]
	cmd, cmdLine := "", 0
	i := open + 1
	for ; i < len(lines); i++ {
		if strings.HasPrefix(strings.TrimSpace(lines[i]), fence) {
			break
		}
		if !shell {
			continue
		}
		l := strings.TrimPrefix(strings.TrimSpace(lines[i]), "$ ")
		if cmd == "" {
			cmdLine = i + 1
		}
		if strings.HasSuffix(l, "\\") {
			cmd += strings.TrimSuffix(l, "\\") + " "
			continue
		}
		cmd += l
		if strings.TrimSpace(cmd) != "" {
			d.Snippets = append(d.Snippets, Snippet{File: file, Line: cmdLine, Text: cmd, Block: true, Para: para})
		}
		cmd = ""
	}
	return i
}

// addParagraph records the code spans and links of a paragraph whose first
// line is line start (1-based). A span may cross a line break.
func (d *Doc) addParagraph(file string, start, para int, lines []string) {
	text := strings.Join(lines, "\n")
	lineAt := func(off int) int { return start + strings.Count(text[:off], "\n") }
	outside := strings.Builder{}
	for i := 0; i < len(text); {
		if text[i] != '`' {
			outside.WriteByte(text[i])
			i++
			continue
		}
		run := backtickRun(text[i:])
		end := strings.Index(text[i+run:], strings.Repeat("`", run))
		for end >= 0 && backtickRun(text[i+run+end:]) != run {
			next := strings.Index(text[i+run+end+run:], strings.Repeat("`", run))
			if next < 0 {
				end = -1
				break
			}
			end += run + next
		}
		if end < 0 { // an unmatched run is literal text
			outside.WriteString(text[i : i+run])
			i += run
			continue
		}
		span := strings.TrimSpace(strings.ReplaceAll(text[i+run:i+run+end], "\n", " "))
		d.Snippets = append(d.Snippets, Snippet{File: file, Line: lineAt(i), Text: span, Para: para})
		outside.WriteString(strings.Repeat(" ", run+end+run))
		i += run + end + run
	}
	rest := outside.String()
	for _, m := range linkRe.FindAllStringSubmatchIndex(rest, -1) {
		d.Links = append(d.Links, Link{File: file, Line: lineAt(m[2]), Target: rest[m[2]:m[3]]})
	}
}

func backtickRun(s string) int {
	n := 0
	for n < len(s) && s[n] == '`' {
		n++
	}
	return n
}
