package docscheck

import "strings"

// Commands splits a shell line into simple commands, each a list of words
// with quotes removed: at | ; & ( ) < > and newlines, and the inside of
// every $( … ) as commands of its own. A # that starts a word ends the line.
// It is a reader of documentation, not a shell: an unbalanced quote runs
// to the end of the line.
func Commands(line string) [][]string {
	line, subs := cutSubstitutions(line)
	var out [][]string
	for _, s := range subs {
		out = append(out, Commands(s)...)
	}
	var cmd []string
	var word strings.Builder
	inWord := false
	endWord := func() {
		if inWord {
			cmd = append(cmd, word.String())
		}
		word.Reset()
		inWord = false
	}
	endCmd := func() {
		endWord()
		if len(cmd) > 0 {
			out = append(out, cmd)
		}
		cmd = nil
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\'' || c == '"':
			j := strings.IndexByte(line[i+1:], c)
			if j < 0 {
				j = len(line) - i - 1
			}
			word.WriteString(line[i+1 : i+1+j])
			inWord = true
			i += j + 1
		case c == '\\' && i+1 < len(line):
			word.WriteByte(line[i+1])
			inWord = true
			i++
		case c == '#' && !inWord:
			endCmd()
			return out
		case strings.IndexByte("|;&()<>\n", c) >= 0:
			endCmd()
		case c == ' ' || c == '\t':
			endWord()
		default:
			word.WriteByte(c)
			inWord = true
		}
	}
	endCmd()
	return out
}

// cutSubstitutions replaces each $( … ) (balanced) by a placeholder word
// and returns the insides.
func cutSubstitutions(line string) (string, []string) {
	var subs []string
	for {
		i := strings.Index(line, "$(")
		if i < 0 {
			return line, subs
		}
		depth, j := 0, i+1
		for ; j < len(line); j++ {
			if line[j] == '(' {
				depth++
			} else if line[j] == ')' {
				depth--
				if depth == 0 {
					break
				}
			}
		}
		if j >= len(line) {
			subs = append(subs, line[i+2:])
			return line[:i], subs
		}
		subs = append(subs, line[i+2:j])
		line = line[:i] + "SUBST" + line[j+1:]
	}
}
