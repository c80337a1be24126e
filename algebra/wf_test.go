package algebra

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// workflowFiles hold the functions Temporal workflow code calls: they must
// not import gonum (its BLAS starts goroutines) nor anything that reads the
// clock, randomness or the environment.
var workflowFiles = []string{"smooth.go", "budget.go", "rank.go", "knapsack.go", "mmr.go", "static.go", "batch.go", "ppr.go"}

func TestWorkflowFilesImportOnlyMath(t *testing.T) {
	fset := token.NewFileSet()
	for _, name := range workflowFiles {
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if path != "math" {
				t.Errorf("%s imports %q; workflow-safe files may import only math", name, path)
			}
		}
	}
}

// TestNoPackageState: no package-level variables in non-test files (pure
// functions, no global mutable state).
func TestNoPackageState(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.VAR {
				t.Errorf("%s: package-level var at %v", name, fset.Position(g.Pos()))
			}
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if !strings.HasPrefix(path, "gonum.org/v1/gonum/") && strings.Contains(path, ".") {
				t.Errorf("%s imports %q: only stdlib and gonum are allowed", name, path)
			}
			if path == "time" || path == "os" || path == "math/rand" {
				t.Errorf("%s imports %q", name, path)
			}
		}
	}
}
