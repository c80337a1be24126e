// Command importcheck enforces the import rules of DESIGN.md §2: the
// algebra is pure, the protocol is pure, the LLM client is stateless,
// drivers are leaves, and workflow code does no I/O. It checks each
// package's direct imports, and the whole dependency closure of the
// workflow package (docs/contract.md).
//
// Usage: go run ./internal/importcheck [-C dir]
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
)

const mod = "github.com/lethe-research/lethe/"

// rule says which project packages a package may import (prefix match on
// the path below the module) and which imports are forbidden outright.
type rule struct {
	pkg    string
	allow  []string // project packages it may import; nil = any but deny
	deny   []string // import path prefixes it must not import
	stdlib bool     // only stdlib and the listed third-party prefixes
	third  []string
	exact  bool // the package itself, not its sub-packages
}

var rules = []rule{
	{pkg: "algebra", allow: []string{}, stdlib: true, third: []string{"gonum.org/"}},
	// config is pure data (types, parameter table, defaults, validation);
	// config/load holds the viper loader.
	{pkg: "config", allow: []string{"algebra"}, stdlib: true, exact: true},
	{pkg: "config/load", allow: []string{"config"}},
	{pkg: "contract", allow: []string{"algebra", "config"}, stdlib: true, exact: true},
	{pkg: "din", allow: []string{"graph", "contract"}},
	{pkg: "graph", allow: []string{"config", "algebra", "graph", "contract"}},
	{pkg: "research", allow: []string{"config", "algebra", "llm", "graph", "contract", "research"}, deny: []string{mod + "graph/embedded", mod + "graph/neo4j"}},
	{pkg: "research/queue", allow: []string{"contract"}, stdlib: true},
	// eval/score aggregates and formats an evaluation's records; the
	// Evaluation workflow computes its result table with it.
	{pkg: "eval/score", allow: []string{"contract"}, stdlib: true},
	{pkg: "llm", allow: []string{"config", "llm"}},
	{pkg: "workflows", allow: []string{"algebra", "din", "contract", "research/queue", "eval/score"},
		deny: []string{"net/http", "os", "os/exec", "math/rand", "math/rand/v2", "github.com/neo4j/", "github.com/chromedp/", "go.etcd.io/bbolt", "time/tzdata", "go.uber.org/zap"}},
	{pkg: "activities", deny: []string{mod + "workflows"}},
}

// closureRule: nothing the workflow package links on its own (the Temporal
// SDK's own dependencies aside) may do I/O, and the only project packages
// in it are the pure ones.
type closureRule struct {
	root    string   // package below the module whose closure is checked
	trusted []string // import path prefixes whose own closure is not ours to check
	deny    []string // import paths (a trailing / = prefix) that must not be linked
	pure    []string // project packages the closure may hold (with their sub-packages when listed so)
}

var closure = closureRule{
	root: "workflows",
	// The SDK links net/http and gRPC itself; what it links is the SDK's
	// business. Every package reached without passing through it is ours.
	trusted: []string{"go.temporal.io/"},
	deny: []string{"net/http", "net/http/", "github.com/spf13/viper", "github.com/spf13/", "github.com/chromedp/",
		"github.com/neo4j/", "go.etcd.io/bbolt", "go.uber.org/zap", "go.uber.org/zap/", "os/exec", "database/sql"},
	pure: []string{"workflows", "algebra", "din", "contract", "config", "graph", "research/queue", "eval/score"},
}

func main() {
	dir := flag.String("C", ".", "module directory to check")
	flag.Parse()
	os.Exit(run(*dir, os.Stdout, os.Stderr))
}

// run checks the module in dir and reports to stdout/stderr; the result is
// the exit code: 0 clean, 1 violations, 2 the check could not run.
func run(dir string, stdout, stderr io.Writer) int {
	direct, err := goList(dir, "./...")
	if err != nil {
		fmt.Fprintln(stderr, "importcheck:", err)
		return 2
	}
	bad := checkDirect(direct)
	deps, err := goList(dir, "-deps", "./"+closure.root)
	if err != nil {
		fmt.Fprintln(stderr, "importcheck:", err)
		return 2
	}
	bad = append(bad, closure.check(deps)...)
	if len(bad) > 0 {
		fmt.Fprintln(stderr, strings.Join(bad, "\n"))
		return 1
	}
	fmt.Fprintln(stdout, "import rules: ok")
	return 0
}

// goList maps each listed package to its direct imports.
func goList(dir string, args ...string) (map[string][]string, error) {
	cmd := exec.Command("go", append([]string{"list", "-e", "-f", `{{.ImportPath}} {{join .Imports " "}}`}, args...)...)
	cmd.Dir = dir
	var errb strings.Builder
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list %s in %s: %w: %s", strings.Join(args, " "), dir, err, errb.String())
	}
	pkgs := map[string][]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			pkgs[f[0]] = f[1:]
		}
	}
	return pkgs, nil
}

func checkDirect(pkgs map[string][]string) []string {
	var bad []string
	for _, path := range sortedKeys(pkgs) {
		if !strings.HasPrefix(path, mod) {
			continue
		}
		rel := strings.TrimPrefix(path, mod)
		for _, r := range rules {
			if rel != r.pkg && (r.exact || !strings.HasPrefix(rel, r.pkg+"/")) {
				continue
			}
			for _, imp := range pkgs[path] {
				if msg := r.check(imp); msg != "" {
					bad = append(bad, fmt.Sprintf("%s imports %s: %s", rel, imp, msg))
				}
			}
		}
	}
	return bad
}

func (r rule) check(imp string) string {
	for _, d := range r.deny {
		if imp == d || strings.HasPrefix(imp, strings.TrimSuffix(d, "/")+"/") && strings.HasSuffix(d, "/") {
			return "forbidden"
		}
	}
	if strings.HasPrefix(imp, mod) {
		if r.allow == nil {
			return ""
		}
		rel := strings.TrimPrefix(imp, mod)
		for _, a := range r.allow {
			if rel == a || strings.HasPrefix(rel, a+"/") && a == r.pkg {
				return ""
			}
		}
		return "project package not allowed here"
	}
	if r.stdlib && strings.Contains(strings.SplitN(imp, "/", 2)[0], ".") {
		for _, t := range r.third {
			if strings.HasPrefix(imp, t) {
				return ""
			}
		}
		if len(r.third) == 0 {
			return "only the standard library"
		}
		return "only the standard library and " + strings.Join(r.third, ", ")
	}
	return ""
}

// check walks the closure of the root breadth first from the root, not
// into trusted packages, and reports every package it reaches that is
// denied or is a project package outside the pure set, with the import
// chain that links it. Walking (instead of subtracting the SDK's closure
// from the root's) catches a package that the SDK links too: net/http
// pulled in through a project package is reported although the SDK also
// links it.
func (c closureRule) check(pkgs map[string][]string) []string {
	root := mod + c.root
	if _, ok := pkgs[root]; !ok {
		return []string{fmt.Sprintf("closure of %s: package not found", c.root)}
	}
	from := map[string]string{root: ""}
	queue := []string{root}
	var bad []string
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if msg := c.verdict(p); msg != "" {
			bad = append(bad, fmt.Sprintf("closure of %s links %s (%s): %s", c.root, p, msg, chain(from, p)))
			continue // one report per offender, not one per package behind it
		}
		for _, imp := range pkgs[p] {
			if _, seen := from[imp]; seen || hasPrefix(imp, c.trusted) {
				continue
			}
			from[imp] = p
			queue = append(queue, imp)
		}
	}
	return bad
}

// verdict says why p must not be in the closure, or "".
func (c closureRule) verdict(p string) string {
	for _, d := range c.deny {
		if p == d || strings.HasSuffix(d, "/") && strings.HasPrefix(p, d) {
			return "I/O code"
		}
	}
	if !strings.HasPrefix(p, mod) {
		return ""
	}
	rel := strings.TrimPrefix(p, mod)
	for _, ok := range c.pure {
		if rel == ok {
			return ""
		}
	}
	return "project package outside the pure set " + strings.Join(c.pure, ", ")
}

// chain is the import path from the root to p: "workflows → a → b → p".
func chain(from map[string]string, p string) string {
	var path []string
	for q := p; q != ""; q = from[q] {
		path = append([]string{strings.TrimPrefix(q, mod)}, path...)
	}
	return strings.Join(path, " → ")
}

func hasPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func sortedKeys(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
