package din

import (
	"regexp"
	"strings"
)

// opsStart finds the opening of an answer's ops list.
var opsStart = regexp.MustCompile(`"ops"\s*:\s*\[`)

// CutOps rebuilds an answer that the output limit cut off inside its ops
// list: it returns {"ops":[…]} holding the ops written whole before the
// cut, and how many there are (0 and "" when there is none, or when the
// text is not such an answer).
//
// The ops are read in order from the first `"ops": [` outside <think>
// blocks: each must be a balanced object that is valid JSON; the first op
// that is not closed, or anything that is not an op, ends the list. An op
// the cut split is dropped, never completed. Whether the ops are valid is
// Parse's question: the caller parses what CutOps returns.
//
// A small model with a tight output limit writes a long list, is cut, and
// when asked to repair writes the same list and is cut again
// (docs/cut-answers.md); the ops before the cut are decisions it wrote
// whole.
func CutOps(text string) (string, int) {
	outside, _, _ := splitThink(text)
	loc := opsStart.FindStringIndex(outside)
	if loc == nil {
		return "", 0
	}
	s := outside
	m := matcher{s: s, budget: 64*len(s) + 1<<16, close: map[int]int{}}
	var ops []string
	for p := loc[1]; ; {
		p += len(s[p:]) - len(strings.TrimLeft(s[p:], " \t\r\n,"))
		if p >= len(s) || s[p] != '{' {
			break // the cut, the list's end, or text that is not an op
		}
		end, ok := m.match(p)
		if !ok || validJSON(s[p:end+1]) != "" {
			break
		}
		ops = append(ops, s[p:end+1])
		p = end + 1
	}
	if len(ops) == 0 {
		return "", 0
	}
	return `{"ops":[` + strings.Join(ops, ",") + `]}`, len(ops)
}

// CutError tells the model that its answer reached the output limit, of
// tokens tokens, before it ended. The repair prompt echoes the cut answer,
// and a model shown only "the object is not closed" copies it and is cut
// again.
func CutError(tokens int) Error {
	return errf(-1, "", "", CodeCut, "your answer reached the output limit (%d tokens) before it ended: "+
		"write fewer operations, with shorter texts, so that the whole object fits", tokens)
}
