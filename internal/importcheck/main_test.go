package main

import (
	"strings"
	"testing"
)

// The check on fixture modules (testdata/*: each a throwaway module with
// the project's module path) and on the real tree.
func TestImportCheck(t *testing.T) {
	cases := []struct {
		name string
		dir  string
		code int
		want []string // substrings of the report
	}{
		// workflows → din → graph → net/http: every direct import is
		// allowed, only the closure rule sees the leak, and it names the path.
		{"net/http through an intermediate package", "testdata/leak", 1,
			[]string{"closure of workflows links net/http (I/O code): workflows → din → graph → net/http"}},
		// contract importing activities breaks the direct rule of contract
		// and puts a non-pure project package into the closure.
		{"project package outside the pure set", "testdata/impure", 1,
			[]string{"contract imports github.com/lethe-research/lethe/activities: project package not allowed here",
				"closure of workflows links github.com/lethe-research/lethe/activities (project package outside the pure set"}},
		{"clean fixture", "testdata/clean", 0, []string{"import rules: ok"}},
		{"the real tree", "../..", 0, []string{"import rules: ok"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb strings.Builder
			code := run(tc.dir, &out, &errb)
			report := out.String() + errb.String()
			if code != tc.code {
				t.Fatalf("exit %d, want %d; report:\n%s", code, tc.code, report)
			}
			for _, w := range tc.want {
				if !strings.Contains(report, w) {
					t.Errorf("report lacks %q:\n%s", w, report)
				}
			}
		})
	}
}
