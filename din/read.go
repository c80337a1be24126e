package din

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/lethe-research/lethe/graph"
)

// TaskLine is a task as DIN-Read shows it. Result is the result summary of a
// DONE task, or the reason of a FAILED one.
type TaskLine struct {
	ShortID     string
	Description string
	Status      graph.Status
	Result      string
	Parent      string   // short id of the parent, "" for the root
	DependsOn   []string // short ids
}

// EvidenceLine is a piece of evidence as DIN-Read shows it. Ref is a short
// handle such as "e3" that lets the model point at it; it is not a task id.
type EvidenceLine struct {
	Ref     string
	Task    string // short id of the task it supports
	Content string
	Source  string
	Title   string
}

// View is everything one DIN-Read shows. Tasks and Evidence come in
// relevance order, most relevant first; Render places them in U-shaped
// zones.
type View struct {
	Goal     string
	Focus    *TaskLine // nil or ShortID == "root": the root goal is the focus
	Tasks    []TaskLine
	Evidence []EvidenceLine
	Warns    []string
	Tools    []string // e.g. ["web_search(query)"]
	Guide    []string // user notes, rendered as warn lines
}

// ToolHints returns the TOOLS line entries for the tools Validate accepts.
func ToolHints() []string { return []string{ToolWebSearch + "(query)"} }

// ResultChars is how much of a DONE task's result a task line shows: enough
// to know what was found, not the whole section.
const ResultChars = 300

// Render serializes a view into DIN-Read text (format in the package
// documentation). It is a pure function of v: the same view always gives
// the same bytes, which workflow replay relies on.
func Render(v View) string {
	var b strings.Builder
	line := func(parts ...string) {
		for _, p := range parts {
			b.WriteString(p)
		}
		b.WriteByte('\n')
	}

	goal := clean(v.Goal)
	rootFocus := v.Focus == nil || v.Focus.ShortID == graph.RootShortID
	focusID := graph.RootShortID
	if rootFocus {
		line("=GOAL ", goal)
	} else {
		focusID = cleanID(v.Focus.ShortID)
		line("YOUR TASK: [", focusID, "] ", clean(v.Focus.Description), " (Parent goal for context: ", goal, ")")
	}

	// Tasks: the focus is already the header, and a task listed twice would
	// only waste context.
	seen := map[string]bool{focusID: true}
	var tasks []TaskLine
	for _, t := range v.Tasks {
		id := cleanID(t.ShortID)
		if id == "" || seen[id] {
			continue
		}
		seen[id] = true
		tasks = append(tasks, t)
	}
	tasks = uShape(tasks)
	for _, t := range tasks {
		line(taskLine(t))
	}

	// Relationships: the focus's first, then in the order tasks appear.
	rels := newLineSet()
	if !rootFocus {
		relLines(rels, *v.Focus)
	}
	for _, t := range tasks {
		relLines(rels, t)
	}
	for _, l := range rels.lines {
		line(l)
	}

	for _, e := range uShape(v.Evidence) {
		if l := evidenceLine(e); l != "" {
			line(l)
		}
	}

	warns := newLineSet()
	for _, w := range v.Warns {
		warns.add(clean(w))
	}
	for _, g := range v.Guide {
		if g = clean(g); g != "" {
			warns.add(userNote(g))
		}
	}
	for _, w := range warns.lines {
		line("! ", w)
	}

	var tools []string
	for _, t := range v.Tools {
		if t = clean(t); t != "" {
			tools = append(tools, t)
		}
	}
	if len(tools) > 0 {
		line("TOOLS: ", strings.Join(tools, ", "))
	}
	return b.String()
}

func taskLine(t TaskLine) string {
	status := clean(string(t.Status))
	if status == "" {
		status = string(graph.Pending)
	}
	s := "T " + cleanID(t.ShortID) + " " + status + " " + clean(t.Description)
	res := clean(t.Result)
	switch {
	case res == "":
	case t.Status == graph.Done:
		s += " => " + truncate(res, ResultChars)
	case t.Status == graph.Failed:
		s += " (dead end: " + truncate(res, ResultChars) + ")"
	}
	return s
}

func relLines(set *lineSet, t TaskLine) {
	id := cleanID(t.ShortID)
	if p := cleanID(t.Parent); p != "" && id != "" {
		set.add(">SUB " + id + " " + p)
	}
	for _, d := range t.DependsOn {
		if d = cleanID(d); d != "" && id != "" {
			set.add(">DEP " + id + " " + d)
		}
	}
}

func evidenceLine(e EvidenceLine) string {
	content := clean(e.Content)
	if content == "" {
		return ""
	}
	s := "E"
	if r := cleanID(e.Ref); r != "" {
		s += " " + r
	}
	if t := cleanID(e.Task); t != "" {
		s += " [" + t + "]"
	}
	s += " " + content
	src, title := clean(e.Source), clean(e.Title)
	switch {
	case src != "" && title != "":
		s += " (source: " + src + " \"" + title + "\")"
	case src != "":
		s += " (source: " + src + ")"
	case title != "":
		s += " (source: \"" + title + "\")"
	}
	return s
}

// uShape reorders items given most relevant first so that the most relevant
// sit at both ends: rank 1 first, rank 2 last, rank 3 second, rank 4 second
// to last, and so on. Models attend best to the start and the end of a
// long context ("lost in the middle"), so the weakest items go to the middle.
func uShape[T any](items []T) []T {
	n := len(items)
	out := make([]T, n)
	front, back := 0, n-1
	for i, it := range items {
		if i%2 == 0 {
			out[front] = it
			front++
		} else {
			out[back] = it
			back--
		}
	}
	return out
}

// lineSet keeps lines in first-seen order without duplicates.
type lineSet struct {
	lines []string
	seen  map[string]bool
}

func newLineSet() *lineSet { return &lineSet{seen: map[string]bool{}} }

func (s *lineSet) add(l string) {
	if l == "" || s.seen[l] {
		return
	}
	s.seen[l] = true
	s.lines = append(s.lines, l)
}

// clean makes a text fit on one line: every run of whitespace or control
// characters (newlines, tabs, U+2028…) becomes one space. One item per line
// is what makes the format flat, and it also keeps a text from forging a
// line of its own (a fetched page containing "\nT root DONE …").
func clean(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			space = true
			continue
		}
		if r == utf8.RuneError {
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	return b.String()
}

// cleanID makes an id safe as one token: ids are separated by spaces in
// relationship lines, so any whitespace inside one is removed.
func cleanID(s string) string {
	return strings.ReplaceAll(clean(s), " ", "")
}

// truncate cuts s to at most n runes, at a word boundary when one is near,
// and marks the cut with an ellipsis.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)[:n]
	cut := len(r)
	for i := len(r) - 1; i > n*3/4; i-- {
		if r[i] == ' ' {
			cut = i
			break
		}
	}
	return strings.TrimRight(string(r[:cut]), " ,;:") + "…"
}

// SubtaskCoverage is a subtask of the focus with how much evidence supports
// it; Warnings turns the count into a qualitative tag.
type SubtaskCoverage struct {
	ShortID     string
	Description string
	Status      graph.Status
	Evidence    int
	Result      string
}

// WarnInput is the structured state that Warnings describes in words.
type WarnInput struct {
	Subtasks  []SubtaskCoverage
	DeadEnds  []TaskLine // FAILED siblings, fail reasons in Result
	Siblings  []TaskLine // other PENDING/ACTIVE siblings working on the parent goal
	ZeroYield int        // consecutive iterations whose searches found no new evidence
	// Unresearched: the task in focus and its subtasks have no evidence. The model is
	// told to look it up (a small model otherwise plans and answers from
	// memory); after searches that found nothing, the zero-yield hint says
	// the rest.
	Unresearched bool
	Guide        []string
}

// Coverage tags. The model must not see counts (the protocol keeps numbers
// out of the prompt), but it needs to know where evidence is missing.
const (
	TagNoEvidence  = "no evidence yet"
	TagThin        = "thin evidence"
	TagWellCovered = "well covered"
)

// ZeroYieldHint is the warn line shown after searches that found nothing new.
const ZeroYieldHint = "recent searches found nothing new: try different queries or synthesize what you have"

// NoProgressHint is the warn line shown after an answer that changed
// nothing (a lone continue, say): it names the operations that move the
// research forward.
const NoProgressHint = "your last answer changed nothing: continue alone does no work. Make progress with create (split the task into subtasks), call web_search, evidence, complete (with the answer you can give now) or fail (a dead end)"

// UnresearchedHint is the warn line shown while the task in focus has no
// evidence and no search has come back empty.
const UnresearchedHint = "your task has no evidence yet: look it up with web_search before you complete it"

// CoverageTag maps an evidence count to its qualitative tag: none, one or
// two, three or more.
func CoverageTag(evidence int) string {
	switch {
	case evidence <= 0:
		return TagNoEvidence
	case evidence < 3:
		return TagThin
	}
	return TagWellCovered
}

// Warnings turns the structured state around the focus into warn lines
// (without the "! " prefix; Render adds it). The lines contain no numbers:
// counts become qualitative tags.
func Warnings(w WarnInput) []string {
	out := newLineSet()
	for _, s := range w.Subtasks {
		id := cleanID(s.ShortID)
		if id == "" {
			continue
		}
		status := clean(string(s.Status))
		if status == "" {
			status = string(graph.Pending)
		}
		l := "subtask [" + id + "] " + status + " " + clean(s.Description)
		res := clean(s.Result)
		switch s.Status {
		case graph.Failed:
			l += ": dead end"
			if res != "" {
				l += " (" + truncate(res, ResultChars) + ")"
			}
		case graph.Done:
			l += ": " + CoverageTag(s.Evidence)
			if res != "" {
				l += " => " + truncate(res, ResultChars)
			}
		default:
			l += ": " + CoverageTag(s.Evidence)
		}
		out.add(l)
	}
	for _, d := range w.DeadEnds {
		id := cleanID(d.ShortID)
		if id == "" {
			continue
		}
		l := "dead end [" + id + "] " + clean(d.Description)
		if r := clean(d.Result); r != "" {
			l += " (" + truncate(r, ResultChars) + ")"
		}
		out.add(l + ": avoid repeating it")
	}
	for _, s := range w.Siblings {
		id := cleanID(s.ShortID)
		if id == "" {
			continue
		}
		out.add("sibling [" + id + "] " + clean(s.Description) + ": another task covers this part of the parent goal, do not duplicate it")
	}
	if w.ZeroYield > 0 {
		out.add(ZeroYieldHint)
	} else if w.Unresearched {
		out.add(UnresearchedHint)
	}
	for _, g := range w.Guide {
		if g = clean(g); g != "" {
			out.add(userNote(g))
		}
	}
	return out.lines
}

func userNote(s string) string { return "user note: " + s }
