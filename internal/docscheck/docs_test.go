package docscheck

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/lethe-research/lethe/internal/lethetest"
)

// TestDocsMatchCode checks every command, flag, make target, config key,
// LETHE_* variable, test name, repository path and link of README.md and
// docs/*.md against the code: the flags against the commands' own -h (built
// here), the temporal CLI's against its --help.
func TestDocsMatchCode(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds every documented command")
	}
	root := lethetest.Root()
	cli := lethetest.TemporalCLI()
	if cli == "" {
		if lethetest.Strict() {
			t.Fatal("no temporal CLI (make temporal installs it)")
		}
		t.Log("no temporal CLI (make temporal installs it): temporal commands unchecked")
	}
	truth, err := LoadTruth(root, cli)
	if err != nil {
		t.Fatal(err)
	}
	docs, uses := parseDocs(t, root, Extractor{Sections: truth.Sections(), TopLevel: truth.TopLevel})
	findings, err := truth.Check(context.Background(), uses, docs)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range findings {
		t.Error(f)
	}
	counts := map[string]int{}
	for _, u := range uses {
		counts[u.Kind]++
	}
	kinds := make([]string, 0, len(counts))
	for k := range counts {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		t.Logf("checked %5d %s", counts[k], k)
	}
	t.Logf("%d files, %d uses, %d not in the code", len(docs), len(uses), len(findings))
}

// parseDocs reads README.md and docs/*.md.
func parseDocs(t *testing.T, root string, x Extractor) (map[string]Doc, []Use) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{filepath.Join(root, "README.md")}, files...)
	docs := map[string]Doc{}
	var uses []Use
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, f)
		rel = filepath.ToSlash(rel)
		d := Parse(rel, string(b))
		docs[rel] = d
		uses = append(uses, x.Extract(d)...)
	}
	return docs, uses
}

var temporalVersionRe = regexp.MustCompile(`(?m)^TEMPORAL_VERSION\s*:=\s*(\S+)`)

// TestTemporalCLIStatedOnce: the docs' examples type `temporal`; README.md
// says, once, where the Makefile installs it and the link it makes.
func TestTemporalCLIStatedOnce(t *testing.T) {
	root := lethetest.Root()
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := temporalVersionRe.FindSubmatch(mk)
	if m == nil {
		t.Fatal("Makefile: no TEMPORAL_VERSION")
	}
	dir := "~/.cache/lethe/temporal-" + string(m[1]) + "/"
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"`" + dir + "`", "`bin/temporal`"} {
		if !strings.Contains(string(readme), want) {
			t.Errorf("README.md does not say %s", want)
		}
	}
	docs, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	for _, f := range docs {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "cache/lethe/temporal-"+string(m[1])) { // the CLI's cache, not the server's
			t.Errorf("%s says where the temporal CLI is installed again; README.md says it once", f)
		}
	}
}
