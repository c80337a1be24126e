package docscheck

import (
	"path"
	"regexp"
	"strings"
)

// AnyCommand as a flag's Cmd: the flag of one of the documented commands.
const AnyCommand = "*"

// target is what a bare flag in a paragraph belongs to: the last command
// the paragraph named (kind KindFlag or KindTemporalArg, and its Cmd).
type target struct{ kind, cmd string }

var (
	assignRe   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)
	subRe      = regexp.MustCompile(`^[a-z][a-z-]*$`)
	goSymbolRe = regexp.MustCompile(`\.[A-Z]\w*$`)
	paramRe    = regexp.MustCompile(`^[a-z][a-z0-9_]*(\.[a-z0-9_]+)+=`)
)

// command lists the uses of one simple command: the program, its flags
// and subcommands, make targets, tests named by go test -run, and paths.
func (x Extractor) command(s Snippet, words []string, ctx map[int]target) []Use {
	out := x.paths(s, words)
	var assigns []string // VAR=value before the command: its environment
	for len(words) > 0 && (assignRe.MatchString(words[0]) || words[0] == "sudo" || words[0] == "env") {
		if assignRe.MatchString(words[0]) {
			assigns = append(assigns, words[0])
		}
		words = words[1:]
	}
	if len(words) == 0 {
		return out
	}
	use := func(kind, tok, cmd string) {
		out = append(out, Use{Kind: kind, Token: tok, Cmd: cmd, File: s.File, Line: s.Line})
	}
	w, args := words[0], words[1:]
	switch {
	case w == "go" && len(args) > 1 && args[0] == "run":
		dir := strings.TrimSuffix(strings.TrimPrefix(args[1], "./"), "/")
		use(KindCommand, args[1], dir)
		ctx[s.Para] = target{KindFlag, dir}
		flags(args[2:], func(f string) { use(KindFlag, f, dir) })
		out = append(out, queues(s, dir, args[2:], assigns)...)
	case w == "go" && len(args) > 0 && args[0] == "test":
		for _, t := range runTests(args[1:]) {
			use(KindTest, t, "")
		}
	case w == "make":
		for _, t := range makeTargets(args) {
			use(KindMake, t, "")
		}
	case w == "temporal" || path.Base(w) == "temporal" && strings.Contains(w, "bin/"):
		sub := subcommand(args)
		if len(sub) == 0 {
			return out
		}
		p := strings.Join(sub, " ")
		use(KindTemporal, p, "")
		ctx[s.Para] = target{KindTemporalArg, p}
		flags(args[len(sub):], func(f string) { use(KindTemporalArg, f, p) })
	case bareCommands[w] != "":
		use(KindCommand, w, bareCommands[w])
		ctx[s.Para] = target{KindFlag, bareCommands[w]}
		flags(args, func(f string) { use(KindFlag, f, bareCommands[w]) })
		out = append(out, queues(s, bareCommands[w], args, assigns)...)
	case strings.HasPrefix(w, "./bin/") || strings.HasPrefix(w, "bin/"):
		use(KindCommand, w, "")
	case !s.Block && flagRe.MatchString(w):
		t := ctx[s.Para]
		if t.kind == KindTemporalArg && !cobraStyle(w) {
			t = target{}
		}
		if t.kind == "" && len(args) > 0 && paramRe.MatchString(args[0]) {
			// A parameter override without its command: a flag of some command.
			t = target{KindFlag, AnyCommand}
		}
		if t.kind != "" {
			flags(words, func(f string) { use(t.kind, f, t.cmd) })
			out = append(out, queues(s, t.cmd, words, nil)...)
		}
	}
	return out
}

// queues lists the task queues a worker command line asks for (-queues),
// with the LETHE_* assignments before it as the config they are checked
// under.
func queues(s Snippet, dir string, args, assigns []string) []Use {
	if dir != "worker" {
		return nil
	}
	var out []Use
	for i, a := range args {
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "queues" {
			continue
		}
		if !hasVal && i+1 < len(args) {
			val = args[i+1]
		}
		out = append(out, Use{Kind: KindQueues, Token: val, Cmd: strings.Join(assigns, "\n"), File: s.File, Line: s.Line})
	}
	return out
}

// cobraStyle reports whether a flag can be the temporal CLI's: --long or
// a one-letter -x; -long is Go's flag package.
func cobraStyle(f string) bool {
	return strings.HasPrefix(f, "--") || len(strings.TrimLeft(f, "-")) == 1
}

// flags calls fn with the name of every -flag or --flag among args.
func flags(args []string, fn func(string)) {
	for _, a := range args {
		if m := flagRe.FindString(a); m != "" {
			fn(strings.TrimLeft(m, "-"))
		}
	}
}

// subcommand is the temporal CLI command path at the start of args.
func subcommand(args []string) []string {
	n := 0
	for n < len(args) && subRe.MatchString(args[n]) {
		n++
	}
	return args[:n]
}

// makeTargets are make's goals among args: neither options (and -C's and
// -f's argument) nor variable assignments.
func makeTargets(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-C" || a == "-f" || a == "-j":
			i++
		case strings.HasPrefix(a, "-") || strings.Contains(a, "="):
		default:
			out = append(out, a)
		}
	}
	return out
}

// runTests are the top-level test names in go test's -run patterns.
func runTests(args []string) []string {
	var out []string
	for i, a := range args {
		pat, ok := "", false
		if a == "-run" && i+1 < len(args) {
			pat, ok = args[i+1], true
		} else if v, found := strings.CutPrefix(a, "-run="); found {
			pat, ok = v, true
		}
		if !ok {
			continue
		}
		for _, alt := range strings.Split(pat, "|") {
			top, _, _ := strings.Cut(alt, "/")
			top = strings.Trim(top, "^$()")
			if testRe.MatchString(top) {
				out = append(out, top)
			}
		}
	}
	return out
}

// paths lists the words of a command that name a file of the repository:
// a relative path whose first element is a tracked top-level name, or one
// that leaves the repository (../).
func (x Extractor) paths(s Snippet, words []string) []Use {
	var out []Use
	for _, w := range words {
		if i := strings.LastIndexByte(w, '='); i >= 0 {
			w = w[i+1:]
		}
		w = strings.TrimRight(strings.TrimPrefix(w, "./"), ".,;:)")
		if goSymbolRe.MatchString(w) {
			continue // a Go package's identifier: eval/score.Rubric
		}
		first, _, slash := strings.Cut(w, "/")
		if !slash || !(x.TopLevel[first] || first == "..") {
			continue
		}
		out = append(out, Use{Kind: KindPath, Token: w, File: s.File, Line: s.Line})
	}
	return out
}
