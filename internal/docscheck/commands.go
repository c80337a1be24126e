package docscheck

import (
	"path"
	"regexp"
	"strings"
)

// AnyCommand as a flag's Cmd: the flag of one of the documented commands.
const AnyCommand = "*"

// target is what a bare flag in a paragraph belongs to: the last command
// the paragraph named (kind KindFlag or KindTemporalArg, and its Cmd); env
// holds what the paragraph exported, the environment of its commands.
type target struct {
	kind, cmd string
	env       []string
}

// named records the paragraph's last command, keeping its exports.
func named(ctx map[int]target, para int, kind, cmd string) {
	t := ctx[para]
	t.kind, t.cmd = kind, cmd
	ctx[para] = t
}

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
	u := uses{s: s, ctx: ctx, env: append(append([]string(nil), ctx[s.Para].env...), assigns...)}
	w, args := words[0], words[1:]
	switch {
	case w == "export":
		t := ctx[s.Para]
		for _, a := range args {
			if assignRe.MatchString(a) {
				t.env = append(t.env, a)
			}
		}
		ctx[s.Para] = t
	case w == "go" && len(args) > 1 && args[0] == "run":
		u.program(args[1], strings.TrimSuffix(strings.TrimPrefix(args[1], "./"), "/"), args[2:])
	case w == "go" && len(args) > 0 && args[0] == "test":
		for _, t := range runTests(args[1:]) {
			u.add(KindTest, t, "")
		}
	case w == "make":
		for _, t := range makeTargets(args) {
			u.add(KindMake, t, "")
		}
	case w == "temporal" || path.Base(w) == "temporal" && strings.Contains(w, "bin/"):
		u.temporal(args)
	case bareCommands[w] != "":
		u.program(w, bareCommands[w], args)
	case strings.HasPrefix(w, "./bin/") || strings.HasPrefix(w, "bin/"):
		u.add(KindCommand, w, "")
	case !s.Block && flagRe.MatchString(w):
		u.bareFlags(words)
	}
	return append(out, u.out...)
}

// uses collects what one command line uses.
type uses struct {
	s   Snippet
	ctx map[int]target
	env []string // the command's environment: the paragraph's exports and its own assignments
	out []Use
}

func (u *uses) add(kind, tok, cmd string) {
	u.out = append(u.out, Use{Kind: kind, Token: tok, Cmd: cmd, File: u.s.File, Line: u.s.Line})
}

// program: a project command (its package dir) called as name with args.
func (u *uses) program(name, dir string, args []string) {
	u.add(KindCommand, name, dir)
	named(u.ctx, u.s.Para, KindFlag, dir)
	flags(args, func(f string) { u.add(KindFlag, f, dir) })
	u.out = append(u.out, queues(u.s, dir, args, u.env)...)
}

// temporal: the CLI's subcommand path and its flags.
func (u *uses) temporal(args []string) {
	sub := subcommand(args)
	if len(sub) == 0 {
		return
	}
	p := strings.Join(sub, " ")
	u.add(KindTemporal, p, "")
	named(u.ctx, u.s.Para, KindTemporalArg, p)
	flags(args[len(sub):], func(f string) { u.add(KindTemporalArg, f, p) })
}

// bareFlags: a code span that starts with a flag belongs to the command
// its paragraph named last; a parameter override (-flag key=value) with
// none there to some documented command. Any other is not checked.
func (u *uses) bareFlags(words []string) {
	t := u.ctx[u.s.Para]
	if t.kind == KindTemporalArg && !cobraStyle(words[0]) {
		t = target{env: t.env}
	}
	if t.kind == "" && len(words) > 1 && paramRe.MatchString(words[1]) {
		t = target{kind: KindFlag, cmd: AnyCommand}
	}
	if t.kind != "" {
		flags(words, func(f string) { u.add(t.kind, f, t.cmd) })
		u.out = append(u.out, queues(u.s, t.cmd, words, t.env)...)
	}
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
