package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/lethe-research/lethe/activities"
	"github.com/lethe-research/lethe/config"
)

// -tols: what Expand's push tolerance (context.ppr_push_tol) buys. The
// push's work grows as the tolerance shrinks, and its error bound with it
// (docs/local-ppr.md); whether a coarser tolerance changes what the model
// is shown is an empirical question about the candidates, answered here:
// from each task the steady iterations focused, Expand runs at a reference
// tolerance (-tol-ref, with no node or push budget) and at each tolerance
// of -tols, and the sweep reports how many of the reference's candidates
// each keeps (overlap of the sets, at the 16 and the 64 best) and its time.

// tolRow is one tolerance at one size.
type tolRow struct {
	n          int
	tol        float64
	over16     []float64 // per task: share of the reference's 16 best kept in the 16 best
	over64     []float64
	times      []time.Duration
	candidates []int
}

// sweepTols runs the comparison from the given tasks.
func sweepTols(o options, r *runner, s *session, n int, tasks []string) ([]tolRow, error) {
	ref := tolContext(r.cfg.Context, o.tolRef, true)
	rows := make([]tolRow, len(o.tols))
	for i, tol := range o.tols {
		rows[i] = tolRow{n: n, tol: tol}
	}
	for _, task := range tasks {
		want, _, err := expandAt(r, s, task, ref)
		if err != nil {
			return nil, err
		}
		for i, tol := range o.tols {
			got, d, err := expandAt(r, s, task, tolContext(r.cfg.Context, tol, false))
			if err != nil {
				return nil, err
			}
			rows[i].over16 = append(rows[i].over16, overlap(want, got, 16))
			rows[i].over64 = append(rows[i].over64, overlap(want, got, 64))
			rows[i].times = append(rows[i].times, d)
			rows[i].candidates = append(rows[i].candidates, len(got))
		}
	}
	return rows, nil
}

// tolContext is the session's context settings at one push tolerance; the
// reference has no node or push budget.
func tolContext(c config.Context, tol float64, ref bool) config.Context {
	c.PPRPushTol = tol
	if ref {
		c.PPRMaxNodes, c.PPRMaxPushes = 10_000_000, 1_000_000_000
	}
	return c
}

func expandAt(r *runner, s *session, task string, c config.Context) ([]string, time.Duration, error) {
	var res activities.ExpandResult
	d, err := r.call("Expand", r.acts.Expand, activities.ExpandInput{SessionID: s.id, Task: task, Context: c, ChunkChars: r.cfg.Research.ChunkChars}, &res)
	if err != nil {
		return nil, d, fmt.Errorf("expand %s at tolerance %g: %w", task, c.PPRPushTol, err)
	}
	refs := make([]string, len(res.Candidates))
	for i, c := range res.Candidates {
		refs[i] = c.Ref
	}
	return refs, d, nil
}

// overlap is the share of want's first k found among got's first k (1
// when want has none).
func overlap(want, got []string, k int) float64 {
	want, got = want[:min(k, len(want))], got[:min(k, len(got))]
	if len(want) == 0 {
		return 1
	}
	in := map[string]bool{}
	for _, g := range got {
		in[g] = true
	}
	kept := 0
	for _, w := range want {
		if in[w] {
			kept++
		}
	}
	return float64(kept) / float64(len(want))
}

// renderTols is the sweep's Markdown table.
func renderTols(o options, rows []tolRow) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Expand's candidates at each push tolerance against the reference (tolerance %g, no budget), from the tasks the steady iterations focused:\n\n", o.tolRef)
	b.WriteString("| evidence | tolerance | tasks | kept of the best 16 (mean / min) | kept of the best 64 (mean / min) | Expand ms (median) |\n|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %d | %g | %d | %.3f / %.3f | %.3f / %.3f | %s |\n", r.n, r.tol, len(r.over64),
			mean(r.over16), minOf(r.over16), mean(r.over64), minOf(r.over64), ms(percentile(r.times, 0.5)))
	}
	return b.String()
}

func writeTols(o options, rows []tolRow) error {
	md := fmt.Sprintf("Measured %s with `go run ./bench/long %s`.\n\n%s", time.Now().UTC().Format("2006-01-02 15:04 MST"), strings.Join(os.Args[1:], " "), renderTols(o, rows))
	if err := os.WriteFile(filepath.Join(o.out, "tols.md"), []byte(md), 0o644); err != nil {
		return fmt.Errorf("write tolerance table: %w", err)
	}
	return nil
}

func mean(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(max(len(x), 1))
}

func minOf(x []float64) float64 {
	m := 1.0
	for _, v := range x {
		m = min(m, v)
	}
	return m
}
