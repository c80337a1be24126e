package docscheck

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/lethe-research/lethe/config/load"
	"github.com/lethe-research/lethe/service"
)

// Allowed are names the docs use on purpose that are not the project's,
// by kind and token, each with the reason. Keep it short: a name that
// should exist belongs in the code, a wrong one out of the docs.
var Allowed = map[[2]string]string{
	{KindPath, "models/minilm.py"}:         "docs/models.md describes the route it was, and says it is removed",
	{KindPath, "graph/similar/mark"}:       "a blob's name in the graph store, not a file",
	{KindPath, "graph/similar/nli-labels"}: "a blob's name in the graph store, not a file",
}

// Finding is a use that the code does not have.
type Finding struct {
	Use    Use
	Reason string
}

func (f Finding) String() string {
	tok := f.Use.Token
	if f.Use.Cmd != "" && (f.Use.Kind == KindFlag || f.Use.Kind == KindTemporalArg) {
		tok = fmt.Sprintf("-%s of %s", f.Use.Token, f.Use.Cmd)
	}
	return fmt.Sprintf("%s:%d: %s %q: %s", f.Use.File, f.Use.Line, f.Use.Kind, tok, f.Reason)
}

// Check verifies every use against the code and returns what is missing.
// docs holds the parsed docs by their path below the root, for anchors.
func (t *Truth) Check(ctx context.Context, uses []Use, docs map[string]Doc) ([]Finding, error) {
	flagSets, err := t.GoFlags(ctx, t.commandDirs(uses))
	if err != nil {
		return nil, err
	}
	cli := map[string]CLIHelp{}
	var out []Finding
	for _, u := range uses {
		if _, ok := Allowed[[2]string{u.Kind, u.Token}]; ok {
			continue
		}
		reason, err := t.check(ctx, u, flagSets, cli, docs)
		if err != nil {
			return nil, err
		}
		if reason != "" {
			out = append(out, Finding{Use: u, Reason: reason})
		}
	}
	return out, nil
}

// commandDirs are the package directories of the Go commands used with
// flags, that exist as main packages.
func (t *Truth) commandDirs(uses []Use) []string {
	seen := map[string]bool{}
	var out []string
	for _, u := range uses {
		if u.Kind == KindFlag && u.Cmd != AnyCommand && !seen[u.Cmd] && t.isMain(u.Cmd) {
			seen[u.Cmd] = true
			out = append(out, u.Cmd)
		}
	}
	sort.Strings(out)
	return out
}

var mainRe = regexp.MustCompile(`(?m)^package main$`)

func (t *Truth) isMain(dir string) bool {
	files, _ := filepath.Glob(filepath.Join(t.Root, dir, "*.go"))
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil && !strings.HasSuffix(f, "_test.go") && mainRe.Match(b) {
			return true
		}
	}
	return false
}

func (t *Truth) check(ctx context.Context, u Use, flagSets map[string]map[string]bool, cli map[string]CLIHelp, docs map[string]Doc) (string, error) {
	switch u.Kind {
	case KindMake:
		return missing(t.Targets[u.Token], "no such target in the Makefile"), nil
	case KindCommand:
		if u.Cmd == "" {
			return missing(t.Links[filepath.Base(u.Token)], "the Makefile makes no such bin/ link"), nil
		}
		return missing(t.isMain(u.Cmd), "no main package in "+u.Cmd), nil
	case KindFlag:
		if u.Cmd == AnyCommand {
			return missing(anyHas(flagSets, u.Token), "no documented command's -h lists it"), nil
		}
		set, ok := flagSets[u.Cmd]
		return missing(!ok || set[u.Token], u.Cmd+" -h lists no such flag"), nil
	case KindTemporal, KindTemporalArg:
		return t.checkTemporal(ctx, u, cli)
	case KindKey:
		return missing(t.keyExists(u.Token), "no such key in config/params.go"), nil
	case KindEnv:
		return missing(t.envExists(u.Token), "neither a parameter's variable (config/params.go) nor read by any source"), nil
	case KindPath:
		return t.pathReason(u.Token), nil
	case KindLink:
		return t.linkReason(u, docs), nil
	case KindTest:
		return missing(t.Words[u.Token], "no such test function"), nil
	case KindQueues:
		return queuesReason(u), nil
	}
	return "", fmt.Errorf("unknown kind %q", u.Kind)
}

func anyHas(sets map[string]map[string]bool, flag string) bool {
	for _, set := range sets {
		if set[flag] {
			return true
		}
	}
	return false
}

// queuesReason runs the worker's own check of -queues (service.Queues) on
// the config the command line's LETHE_* assignments give.
func queuesReason(u Use) string {
	env := []string{} // not nil: nil would read this process's environment
	if u.Cmd != "" {
		env = strings.Split(u.Cmd, "\n")
	}
	cfg, err := load.Load(load.Sources{Env: env})
	if err != nil {
		return err.Error()
	}
	if _, err := service.Queues(cfg, u.Token); err != nil {
		return "the worker refuses it: " + err.Error()
	}
	return ""
}

func missing(ok bool, reason string) string {
	if ok {
		return ""
	}
	return reason
}

func (t *Truth) checkTemporal(ctx context.Context, u Use, cli map[string]CLIHelp) (string, error) {
	if t.Temporal == "" {
		return "", nil // the test says it skipped these
	}
	path := u.Token
	if u.Kind == KindTemporalArg {
		path = u.Cmd
	}
	h, ok := cli[path]
	if !ok {
		var err error
		if h, err = t.TemporalHelp(ctx, path); err != nil {
			return "", err
		}
		cli[path] = h
	}
	if h.Path != path {
		return missing(u.Kind == KindTemporalArg, fmt.Sprintf("temporal has no such command (its help documents %q)", h.Path)), nil
	}
	return missing(u.Kind == KindTemporal || h.Flags[u.Token], "temporal "+path+" --help lists no such flag"), nil
}

// keyExists: a key, or a pattern of keys where * matches the rest and
// <name> one segment.
func (t *Truth) keyExists(tok string) bool {
	if t.Keys[tok] {
		return true
	}
	if !strings.ContainsAny(tok, "*<") {
		return false
	}
	pat := regexp.QuoteMeta(tok)
	pat = strings.ReplaceAll(pat, `\*`, `[a-z0-9_.]*`)
	pat = regexp.MustCompile(`<[a-z_]+>`).ReplaceAllString(pat, `[a-z0-9_]+`)
	re := regexp.MustCompile("^" + pat + "$")
	for k := range t.Keys {
		if re.MatchString(k) {
			return true
		}
	}
	return false
}

// envExists: a parameter's variable, a name a source reads, or a prefix of
// one (LETHE_RESEARCH_*, LETHE_TEST_NEO4J_).
func (t *Truth) envExists(tok string) bool {
	if t.Envs[tok] || t.Words[tok] {
		return true
	}
	prefix := strings.TrimSuffix(tok, "*")
	if !strings.HasSuffix(prefix, "_") {
		return false
	}
	for _, set := range []map[string]bool{t.Envs, t.Words} {
		for name := range set {
			if strings.HasPrefix(name, prefix) && len(name) > len(prefix) {
				return true
			}
		}
	}
	return false
}
