// Command importcheck enforces the import rules of DESIGN.md §2: the
// algebra is pure, the protocol is pure, the LLM client is stateless,
// drivers are leaves, and workflow code does no I/O.
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
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
}

var rules = []rule{
	{pkg: "algebra", allow: []string{}, stdlib: true, third: []string{"gonum.org/"}},
	{pkg: "din", allow: []string{"graph"}},
	{pkg: "graph", allow: []string{"config", "algebra", "graph"}},
	{pkg: "research", allow: []string{"config", "algebra", "llm", "graph"}, deny: []string{mod + "graph/embedded", mod + "graph/neo4j"}},
	{pkg: "llm", allow: []string{"config", "llm"}},
	{pkg: "workflows", allow: []string{"algebra", "din", "config", "activities", "graph", "research"},
		deny: []string{"net/http", "os", "os/exec", "math/rand", "math/rand/v2", "github.com/neo4j/", "github.com/chromedp/", "go.etcd.io/bbolt", "time/tzdata"}},
	{pkg: "activities", deny: []string{mod + "workflows"}},
}

func main() {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...").Output()
	if err != nil {
		fmt.Fprintln(os.Stderr, "importcheck: go list:", err)
		os.Exit(2)
	}
	var bad []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || !strings.HasPrefix(f[0], mod) {
			continue
		}
		rel := strings.TrimPrefix(f[0], mod)
		for _, r := range rules {
			if rel != r.pkg && !strings.HasPrefix(rel, r.pkg+"/") {
				continue
			}
			for _, imp := range f[1:] {
				if msg := r.check(imp); msg != "" {
					bad = append(bad, fmt.Sprintf("%s imports %s: %s", rel, imp, msg))
				}
			}
		}
	}
	if len(bad) > 0 {
		fmt.Fprintln(os.Stderr, strings.Join(bad, "\n"))
		os.Exit(1)
	}
	fmt.Println("import rules: ok")
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
		return "only the standard library and " + strings.Join(r.third, ", ")
	}
	return ""
}
