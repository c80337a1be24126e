package din

import (
	"encoding/json"
	"strings"
)

// ExtractError says why no usable JSON object was found. Code is CodeNoJSON
// or CodeBadJSON.
type ExtractError struct {
	Code string
	Msg  string
}

func (e *ExtractError) Error() string { return e.Msg }

// Extract returns the JSON object of a model answer.
//
// Models wrap their answer in all kinds of packaging: <think>…</think>
// reasoning (sometimes only the closing tag survives because the chat
// template opened it, sometimes the opening tag is never closed), Markdown
// fences, and prose before or after. Extract therefore does not try to parse
// the whole text; it looks for balanced {…} spans with a string-aware brace
// matcher (braces inside JSON strings and escaped quotes do not count) and
// returns:
//
//  1. outside any think block, the first balanced object that is valid JSON
//     and has an "ops" key (fences and prose are simply skipped);
//  2. otherwise, inside think blocks, the last such object: a model that
//     never closed its reasoning often wrote drafts first and the answer last;
//  3. otherwise, the first valid JSON object outside think blocks, so that
//     Parse can tell the model precisely that "ops" is missing.
//
// When nothing qualifies the error says whether there was no object at all,
// an object that is not valid JSON, or one that was cut off.
//
// The search is bounded by a work budget proportional to the text length, so
// pathological inputs ("{{{{…") cannot stall the workflow task that calls it.
func Extract(text string) (string, error) {
	outside, inside, unclosed := splitThink(text)

	out := findObject(outside, false)
	if out.ops != "" {
		return out.ops, nil
	}
	for i := len(inside) - 1; i >= 0; i-- {
		if in := findObject(inside[i], true); in.ops != "" {
			return in.ops, nil
		}
	}
	// A valid object nested inside a broken one (say, the first op of an
	// answer with a trailing comma) is not the answer: report the breakage.
	enclosed := out.broken && out.brokenStart < out.validStart && out.brokenEnd >= out.validEnd
	if out.valid != "" && !enclosed {
		return out.valid, nil
	}
	switch {
	case out.broken && out.brokenErr != "":
		return "", &ExtractError{CodeBadJSON, "the answer contains an object that is not valid JSON (" + out.brokenErr + ")"}
	case out.broken:
		return "", &ExtractError{CodeBadJSON, "the JSON object is not closed: the answer was cut off or a brace is missing"}
	case unclosed:
		return "", &ExtractError{CodeNoJSON, "no JSON object found: the answer ended inside an unclosed <think> block"}
	case len(inside) > 0 && strings.TrimSpace(outside) == "":
		return "", &ExtractError{CodeNoJSON, "no JSON object found after the </think> block"}
	}
	return "", &ExtractError{CodeNoJSON, "no JSON object found in the answer"}
}

const (
	thinkOpen  = "<think>"
	thinkClose = "</think>"
)

// splitThink separates the text outside <think> blocks from the text inside
// them. Tags match ASCII case-insensitively. A closing tag before any
// opening tag means the chat template opened the block, so everything before
// it is reasoning. An opening tag that is never closed runs to the end.
func splitThink(s string) (outside string, inside []string, unclosed bool) {
	var b strings.Builder
	pos := 0
	if c := indexFold(s, thinkClose, 0); c >= 0 {
		if o := indexFold(s, thinkOpen, 0); o < 0 || o > c {
			inside = append(inside, s[:c])
			pos = c + len(thinkClose)
		}
	}
	for pos <= len(s) {
		o := indexFold(s, thinkOpen, pos)
		if o < 0 {
			b.WriteString(s[pos:])
			break
		}
		b.WriteString(s[pos:o])
		// Keep a separator so that text on both sides of a block cannot
		// fuse into one token.
		b.WriteByte('\n')
		start := o + len(thinkOpen)
		c := indexFold(s, thinkClose, start)
		if c < 0 {
			inside = append(inside, s[start:])
			unclosed = true
			break
		}
		inside = append(inside, s[start:c])
		pos = c + len(thinkClose)
	}
	return b.String(), inside, unclosed
}

// indexFold is strings.Index with ASCII case folding. It works on bytes so
// that offsets stay valid for any input (strings.ToLower may change the byte
// length of non-ASCII text).
func indexFold(s, tag string, from int) int {
	for i := from; i+len(tag) <= len(s); i++ {
		j := 0
		for j < len(tag) && lowerASCII(s[i+j]) == tag[j] {
			j++
		}
		if j == len(tag) {
			return i
		}
	}
	return -1
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

type found struct {
	ops        string // object with an "ops" key (first, or last if wantLast)
	valid      string // first valid JSON object
	validStart int
	validEnd   int
	// The first span that is balanced but not valid JSON, or a '{' that is
	// never closed (brokenErr empty, brokenEnd the end of the text).
	broken      bool
	brokenErr   string
	brokenStart int
	brokenEnd   int
}

func (f *found) setBroken(start, end int, err string) {
	if !f.broken {
		f.broken, f.brokenStart, f.brokenEnd, f.brokenErr = true, start, end, err
	}
}

// findObject scans s for balanced {…} spans in order of their opening brace.
// After a span that is valid JSON with an "ops" key it stops (or, when
// wantLast, skips past it); after any other span it continues inside it, so
// an ops object nested in a wrapper or following a broken prefix is found.
func findObject(s string, wantLast bool) found {
	var f found
	m := matcher{s: s, budget: 64*len(s) + 1<<16, close: map[int]int{}}
	i := 0
	for i < len(s) {
		j := strings.IndexByte(s[i:], '{')
		if j < 0 {
			break
		}
		p := i + j
		end, ok := m.match(p)
		if m.budget < 0 {
			break
		}
		if !ok {
			f.setBroken(p, len(s), "")
			i = p + 1
			continue
		}
		cand := s[p : end+1]
		m.budget -= 2 * len(cand)
		if err := validJSON(cand); err != "" {
			f.setBroken(p, end+1, err)
			i = p + 1
			continue
		}
		if hasOpsKey(cand) {
			f.ops = cand
			if !wantLast {
				return f
			}
			i = end + 1
			continue
		}
		if f.valid == "" {
			f.valid, f.validStart, f.validEnd = cand, p, end+1
		}
		i = p + 1
	}
	return f
}

// matcher finds the '}' that closes a '{', tracking JSON strings and escapes
// so that braces inside strings do not count.
//
// A scan from one '{' also settles every '{' it meets outside a string: from
// there on a scan started at that brace would see the same characters in the
// same state, so its match is the one the stack gives. Caching those matches
// keeps inputs like "{x{x{x…" linear instead of quadratic; only braces that
// one scan saw inside a string need a scan of their own. The budget bounds
// what remains (hostile "{\"{\"{\"…").
type matcher struct {
	s      string
	budget int
	close  map[int]int // '{' offset -> matching '}' offset, or -1 if never closed
}

func (m *matcher) match(p int) (int, bool) {
	if c, ok := m.close[p]; ok {
		return c, c >= 0
	}
	var stack []int
	inStr, esc := false, false
	for i := p; i < len(m.s); i++ {
		m.budget--
		if m.budget < 0 {
			return 0, false
		}
		c := m.s[i]
		if inStr {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		switch c {
		case '"':
			inStr = true
		case '{':
			stack = append(stack, i)
		case '}':
			open := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			m.close[open] = i
			if len(stack) == 0 {
				return m.close[p], true
			}
		}
	}
	for _, open := range stack {
		m.close[open] = -1
	}
	return 0, false
}

// validJSON returns "" when s is one valid JSON value, else a short reason.
func validJSON(s string) string {
	if json.Valid([]byte(s)) {
		return ""
	}
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return err.Error()
	}
	return "invalid JSON"
}

func hasOpsKey(obj string) bool {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(obj), &m); err != nil {
		return false
	}
	_, ok := m["ops"]
	return ok
}
