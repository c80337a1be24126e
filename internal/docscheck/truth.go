package docscheck

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/config/load"
)

// Truth is what the code has, for the uses to be checked against.
type Truth struct {
	Root     string
	Targets  map[string]bool // make targets (rules of the Makefile)
	Links    map[string]bool // bin/<name> links the Makefile makes
	Keys     map[string]bool // config keys (config/params.go)
	Envs     map[string]bool // their LETHE_* names (config/load.EnvName)
	Words    map[string]bool // LETHE* names and Test functions in the sources
	TopLevel map[string]bool // tracked top-level files and directories
	Temporal string          // the temporal CLI; "" = not installed
}

var (
	ruleRe     = regexp.MustCompile(`(?m)^([A-Za-z0-9_][A-Za-z0-9_.-]*(?:[ \t]+[A-Za-z0-9_][A-Za-z0-9_.-]*)*)[ \t]*:(?:[^=]|$)`)
	binLinkRe  = regexp.MustCompile(`\bbin/([A-Za-z0-9_-]+)`)
	srcWordRe  = regexp.MustCompile(`LETHE[A-Z0-9_]*|\bfunc (Test\w+)\(`)
	goFlagRe   = regexp.MustCompile(`(?m)^  -([^\s=]+)`)
	cliFlagRe  = regexp.MustCompile(`(?m)^\s+(?:-([A-Za-z]), )?--([A-Za-z0-9-]+)`)
	cliAliasRe = regexp.MustCompile(`Aliased as "--([A-Za-z0-9-]+)"`)
	cliUsageRe = regexp.MustCompile(`(?m)^Usage:\n\s+(temporal[a-z -]*?)\s*(?:\[|$)`)
)

// Sections are the first segments of the config keys.
func (t *Truth) Sections() map[string]bool {
	out := map[string]bool{}
	for k := range t.Keys {
		s, _, _ := strings.Cut(k, ".")
		out[s] = true
	}
	return out
}

// LoadTruth reads the Makefile, the parameter table, the tracked top-level
// names and the sources' LETHE* names and test functions under root.
func LoadTruth(root, temporal string) (*Truth, error) {
	t := &Truth{Root: root, Temporal: temporal, Targets: map[string]bool{}, Links: map[string]bool{},
		Keys: map[string]bool{}, Envs: map[string]bool{}, Words: map[string]bool{}, TopLevel: map[string]bool{}}
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		return nil, fmt.Errorf("read Makefile: %w", err)
	}
	for _, m := range ruleRe.FindAllStringSubmatch(string(mk), -1) {
		for _, name := range strings.Fields(m[1]) {
			t.Targets[name] = true
		}
	}
	for _, m := range binLinkRe.FindAllStringSubmatch(string(mk), -1) {
		t.Links[m[1]] = true
	}
	for _, p := range config.Params() {
		t.Keys[p.Key] = true
		t.Envs[load.EnvName(p.Key)] = true
	}
	files, err := exec.Command("git", "-C", root, "ls-files").Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files: %w", err)
	}
	for _, f := range strings.Fields(string(files)) {
		first, _, _ := strings.Cut(f, "/")
		t.TopLevel[first] = true
	}
	return t, t.readSources()
}

// readSources collects the LETHE* names and Test functions of every source
// file (Go, shell, the Makefile, CI): the tooling's variables and the tests
// the docs may name.
func (t *Truth) readSources() error {
	return filepath.WalkDir(t.Root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(t.Root, p)
		if d.IsDir() {
			// Not docs, builds, data, nor this package, whose tests name
			// missing things on purpose.
			if rel != "." && (strings.HasPrefix(d.Name(), ".") && d.Name() != ".ci" || rel == "docs" || rel == "bin" ||
				rel == "lethe-data" || rel == "testdata" || rel == filepath.Join("internal", "docscheck")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !isSource(rel) {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("read %s: %w", rel, err)
		}
		for _, m := range srcWordRe.FindAllSubmatch(b, -1) {
			if len(m[1]) > 0 {
				t.Words[string(m[1])] = true
			} else {
				t.Words[string(m[0])] = true
			}
		}
		return nil
	})
}

func isSource(rel string) bool {
	switch filepath.Ext(rel) {
	case ".go", ".sh", ".yml", ".yaml":
		return true
	}
	return rel == "Makefile" || rel == "Dockerfile" || strings.HasPrefix(rel, ".ci"+string(filepath.Separator))
}

// GoFlags builds the commands in dirs (package directories below the
// root) and returns the flags each one's -h lists.
func (t *Truth) GoFlags(ctx context.Context, dirs []string) (map[string]map[string]bool, error) {
	out := map[string]map[string]bool{}
	if len(dirs) == 0 {
		return out, nil
	}
	bin, err := os.MkdirTemp("", "docscheck-")
	if err != nil {
		return nil, fmt.Errorf("temp dir: %w", err)
	}
	defer os.RemoveAll(bin)
	args := []string{"build", "-o", bin + string(filepath.Separator)}
	for _, d := range dirs {
		args = append(args, "./"+d)
	}
	build := exec.CommandContext(ctx, "go", args...)
	build.Dir = t.Root
	if b, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, b)
	}
	for _, d := range dirs {
		help, err := runHelp(ctx, filepath.Join(bin, filepath.Base(d)), "-h")
		if err != nil {
			return nil, err
		}
		set := map[string]bool{"h": true, "help": true} // the flag package's own
		for _, m := range goFlagRe.FindAllStringSubmatch(help, -1) {
			set[m[1]] = true
		}
		out[d] = set
	}
	return out, nil
}

// runHelp runs a program for its usage text. A program asked for help may
// exit non-zero (flag.ContinueOnError returns flag.ErrHelp); its output is
// the answer all the same, unless it printed nothing.
func runHelp(ctx context.Context, prog string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var buf bytes.Buffer
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	if buf.Len() == 0 && err != nil {
		return "", fmt.Errorf("%s %s: %w", prog, strings.Join(args, " "), err)
	}
	return buf.String(), nil
}

// CLIHelp is what `temporal <path> --help` says: the command path it
// documents and its flags (long and short names, aliases, global flags).
type CLIHelp struct {
	Path  string
	Flags map[string]bool
}

// TemporalHelp asks the temporal CLI about a subcommand path.
func (t *Truth) TemporalHelp(ctx context.Context, path string) (CLIHelp, error) {
	help, err := runHelp(ctx, t.Temporal, append(strings.Fields(path), "--help")...)
	if err != nil {
		return CLIHelp{}, err
	}
	h := CLIHelp{Flags: map[string]bool{}}
	if m := cliUsageRe.FindStringSubmatch(help); m != nil {
		h.Path = strings.TrimSpace(strings.TrimPrefix(m[1], "temporal"))
	}
	for _, m := range cliFlagRe.FindAllStringSubmatch(help, -1) {
		h.Flags[m[2]] = true
		if m[1] != "" {
			h.Flags[m[1]] = true
		}
	}
	for _, m := range cliAliasRe.FindAllStringSubmatch(help, -1) {
		h.Flags[m[1]] = true
	}
	return h, nil
}
