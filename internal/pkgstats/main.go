// Command pkgstats prints, for every Go package under a directory, its
// non-test lines, its longest function and its test-to-code line ratio, as
// a Markdown table: the before/after table of a refactoring's closing note.
//
// Usage: go run ./internal/pkgstats [dir]
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Stats are one package's numbers.
type Stats struct {
	Dir       string
	Code      int    // lines of non-test .go files
	Test      int    // lines of _test.go files
	Longest   string // name of the longest function (Recv.Name for methods)
	LongestLn int
}

// Ratio is test lines per code line.
func (s Stats) Ratio() float64 {
	if s.Code == 0 {
		return 0
	}
	return float64(s.Test) / float64(s.Code)
}

func main() {
	root := "."
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	stats, err := collect(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pkgstats:", err)
		os.Exit(1)
	}
	write(os.Stdout, stats)
}

// collect walks root; testdata, vendor and hidden directories are skipped.
func collect(root string) ([]Stats, error) {
	byDir := map[string]*Stats{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		st := byDir[rel]
		if st == nil {
			st = &Stats{Dir: rel}
			byDir[rel] = st
		}
		return addFile(fset, path, strings.HasSuffix(name, "_test.go"), st)
	})
	if err != nil {
		return nil, err
	}
	out := make([]Stats, 0, len(byDir))
	for _, s := range byDir {
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Dir < out[j].Dir })
	return out, nil
}

// addFile counts a file's lines and, for code, its functions' lengths
// (first line of the declaration to the closing brace).
func addFile(fset *token.FileSet, path string, test bool, st *Stats) error {
	src, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	lines := strings.Count(string(src), "\n")
	if test {
		st.Test += lines
		return nil
	}
	st.Code += lines
	f, err := parser.ParseFile(fset, path, src, 0)
	if err != nil {
		return fmt.Errorf("parse %s: %w", path, err)
	}
	for _, decl := range f.Decls {
		fd, ok := decl.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1
		if n > st.LongestLn {
			st.Longest, st.LongestLn = funcName(fd), n
		}
	}
	return nil
}

func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if ix, ok := t.(*ast.IndexExpr); ok { // generic receiver
		t = ix.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}

func write(w io.Writer, stats []Stats) {
	fmt.Fprintln(w, "| package | lines | longest function | lines | test/code |")
	fmt.Fprintln(w, "|---|---:|---|---:|---:|")
	for _, s := range stats {
		fn := s.Longest
		if fn == "" {
			fn = "–"
		}
		ratio := fmt.Sprintf("%.2f", s.Ratio())
		if s.Code == 0 {
			ratio = fmt.Sprintf("tests only (%d lines)", s.Test)
		}
		fmt.Fprintf(w, "| %s | %d | %s | %d | %s |\n", s.Dir, s.Code, fn, s.LongestLn, ratio)
	}
}
