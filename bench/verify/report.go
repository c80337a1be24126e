package main

import (
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/lethe-research/lethe/contract"
)

// tally counts verdicts of one group of pairs.
type tally struct{ supported, unsupported, unchecked int }

func (t *tally) add(status string) {
	switch status {
	case contract.Supported:
		t.supported++
	case contract.Unsupported:
		t.unsupported++
	default:
		t.unchecked++
	}
}

func (t tally) n() int { return t.supported + t.unsupported + t.unchecked }

// printReport prints the verdicts by label and route, then recall and the
// false-support rate per kind: recall = true pairs judged supported / true
// pairs; false support = false pairs judged supported / false pairs. An
// unchecked pair counts in the denominator (the report keeps it as
// written, unproven).
func printReport(w io.Writer, set labelledSet, run runResult, verbose bool) {
	byRoute := map[string]map[bool]*tally{}
	byKind := map[string]*tally{}
	label := map[string]bool{}
	total := map[bool]*tally{true: {}, false: {}}
	for _, p := range set.Pairs {
		v := run.Verdicts[p.ID]
		route := v.Via
		if route == "" {
			route = "none"
		}
		if byRoute[route] == nil {
			byRoute[route] = map[bool]*tally{true: {}, false: {}}
		}
		byRoute[route][p.Supported].add(v.Status)
		if byKind[p.Kind] == nil {
			byKind[p.Kind] = &tally{}
		}
		byKind[p.Kind].add(v.Status)
		label[p.Kind] = p.Supported
		total[p.Supported].add(v.Status)
		if verbose {
			fmt.Fprintf(w, "%s\t%-5v\t%-11s\t%-11s\tmoved %d\t%s\n", p.ID, p.Supported, v.Status, route, v.Moved, p.Sentence)
		}
	}
	fmt.Fprintf(w, "\nmodel %q: %d pairs (%d true, %d false), %d batches, %d calls (%d repairs), %d tokens, %.1f minutes\n\n",
		run.Model, len(set.Pairs), total[true].n(), total[false].n(), run.Batches, run.Calls, run.Repairs, run.Tokens, run.Minutes)
	fmt.Fprintln(w, "| label | route | supported | unsupported | unchecked |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|")
	for _, lab := range []bool{true, false} {
		for _, r := range slices.Sorted(maps.Keys(byRoute)) {
			if t := byRoute[r][lab]; t.n() > 0 {
				fmt.Fprintf(w, "| %v | %s | %d | %d | %d |\n", lab, r, t.supported, t.unsupported, t.unchecked)
			}
		}
	}
	fmt.Fprintf(w, "\nrecall (true pairs supported): %s\nfalse support (false pairs supported): %s\n\n",
		share(total[true].supported, total[true].n()), share(total[false].supported, total[false].n()))
	fmt.Fprintln(w, "| kind | label | pairs | judged supported |")
	fmt.Fprintln(w, "|---|---|---:|---:|")
	for _, k := range slices.Sorted(maps.Keys(byKind)) {
		t := byKind[k]
		fmt.Fprintf(w, "| %s | %v | %d | %s |\n", k, label[k], t.n(), share(t.supported, t.n()))
	}
}

func share(k, n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%d/%d (%.2f)", k, n, float64(k)/float64(n))
}
