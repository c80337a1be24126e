// Command testsummary reads `go test -json` on stdin and prints what a
// plain `go test` prints: the package lines (ok, FAIL, ?), build errors,
// the output of failed tests and whatever a test binary prints outside
// tests. At the end it lists the skipped tests with their reasons and the
// failed tests, and closes with the line "N passed, N failed" (tests and
// subtests). `make test` pipes its go test through it (scripts/test.sh);
// the exit status stays go test's, this command only reports.
//
//	go test -json ./... 2>&1 | go run ./internal/testsummary -trim github.com/lethe-research/lethe/
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json), including the
// build events of Go 1.24+.
type event struct {
	Action      string
	Package     string
	Test        string
	Output      string
	ImportPath  string
	FailedBuild string
}

// result is one finished test with what to report about it.
type result struct {
	Package, Test, Reason string
}

// summary is what the run came to.
type summary struct {
	Passed  int
	Failed  []result
	Skipped []result
}

type filter struct {
	w       io.Writer
	trim    string
	running map[string][]string // package + "\x00" + test → its output so far
	order   map[string][]string // package → tests in the order they started
	sum     summary
}

func main() {
	trim := flag.String("trim", "", "package path prefix to leave out of the summary")
	flag.Parse()
	signal.Ignore(os.Interrupt) // on ^C go test ends, and the summary still shows what ran
	f := newFilter(os.Stdout, *trim)
	if err := f.read(os.Stdin); err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
	}
	f.report()
}

func newFilter(w io.Writer, trim string) *filter {
	return &filter{w: w, trim: trim, running: map[string][]string{}, order: map[string][]string{}}
}

// read handles every line of r; lines that are not JSON events (go
// command errors on the same stream) are printed as they are.
func (f *filter) read(r io.Reader) error {
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			f.line(line)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func (f *filter) line(line string) {
	var e event
	if !strings.HasPrefix(line, "{") || json.Unmarshal([]byte(line), &e) != nil || e.Action == "" {
		f.print(line)
		return
	}
	switch {
	case e.Action == "build-output":
		f.print(e.Output)
	case e.Test == "" && e.Action == "output":
		if strings.HasPrefix(e.Output, "FAIL") {
			f.unfinished(e.Package) // before the package's FAIL lines
		}
		if e.Output != "PASS\n" { // plain go test leaves it out for an ok package
			f.print(e.Output)
		}
	case e.Test == "" && (e.Action == "pass" || e.Action == "fail" || e.Action == "skip"):
		if e.Action == "fail" {
			f.unfinished(e.Package)
		}
		for _, test := range f.order[e.Package] {
			delete(f.running, key(e.Package, test))
		}
		delete(f.order, e.Package)
		if e.FailedBuild != "" {
			f.sum.Failed = append(f.sum.Failed, result{e.Package, "", "build failed"})
		}
	case e.Test == "":
	case e.Action == "run":
		k := key(e.Package, e.Test)
		if _, ok := f.running[k]; !ok {
			f.running[k] = []string{}
			f.order[e.Package] = append(f.order[e.Package], e.Test)
		}
	case e.Action == "output":
		if !isProgress(e.Output) {
			k := key(e.Package, e.Test)
			f.running[k] = append(f.running[k], e.Output)
		}
	case e.Action == "pass", e.Action == "skip", e.Action == "fail":
		f.testDone(e.Package, e.Test, e.Action)
	}
}

// isProgress tells the lines a verbose run adds (=== RUN and friends).
func isProgress(s string) bool {
	for _, p := range []string{"=== RUN", "=== PAUSE", "=== CONT", "=== NAME"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func key(pkg, test string) string { return pkg + "\x00" + test }

func (f *filter) testDone(pkg, test, action string) {
	k := key(pkg, test)
	out := f.running[k]
	delete(f.running, k)
	switch action {
	case "pass":
		f.sum.Passed++
	case "skip":
		f.sum.Skipped = append(f.sum.Skipped, result{pkg, test, reason(out)})
	case "fail":
		f.sum.Failed = append(f.sum.Failed, result{pkg, test, ""})
		for _, l := range out {
			f.print(l)
		}
	}
}

// unfinished fails the tests of a failed package that were still running
// when its binary ended (a panic, a timeout), with what they printed.
func (f *filter) unfinished(pkg string) {
	for _, test := range f.order[pkg] {
		k := key(pkg, test)
		out, ok := f.running[k]
		if !ok {
			continue
		}
		delete(f.running, k)
		f.print(fmt.Sprintf("--- FAIL: %s (did not finish)\n", test))
		for _, l := range out {
			f.print(l)
		}
		f.sum.Failed = append(f.sum.Failed, result{pkg, test, "did not finish"})
	}
}

// reason is a skipped test's message: its output without the --- SKIP
// line, as one line.
func reason(out []string) string {
	var parts []string
	for _, l := range out {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "--- SKIP") {
			continue
		}
		parts = append(parts, l)
	}
	if len(parts) == 0 {
		return "(no reason given)"
	}
	return strings.Join(parts, " ")
}

func (f *filter) print(s string) { io.WriteString(f.w, s) }

func (f *filter) name(r result) string {
	pkg := strings.TrimPrefix(r.Package, f.trim)
	if pkg == "" {
		pkg = "."
	}
	if r.Test == "" {
		return pkg
	}
	return pkg + " " + r.Test
}

// report prints the skipped and failed tests and the closing count line.
func (f *filter) report() {
	s := f.sum
	sort.SliceStable(s.Skipped, func(i, j int) bool { return f.name(s.Skipped[i]) < f.name(s.Skipped[j]) })
	fmt.Fprintf(f.w, "\nskipped: %d\n", len(s.Skipped))
	for _, r := range s.Skipped {
		fmt.Fprintf(f.w, "  %s: %s\n", f.name(r), r.Reason)
	}
	if len(s.Failed) > 0 {
		fmt.Fprintf(f.w, "failed: %d\n", len(s.Failed))
		for _, r := range s.Failed {
			if r.Reason != "" {
				fmt.Fprintf(f.w, "  %s (%s)\n", f.name(r), r.Reason)
			} else {
				fmt.Fprintf(f.w, "  %s\n", f.name(r))
			}
		}
	}
	fmt.Fprintf(f.w, "%d passed, %d failed\n", s.Passed, len(s.Failed))
}
