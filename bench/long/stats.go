package main

import (
	"slices"
	"time"
)

// percentile is the nearest-rank p-th percentile of d (0 for none).
func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	k := int(p/100*float64(len(s))+0.999999) - 1
	return s[min(max(k, 0), len(s)-1)]
}

// point is one size of one backend: the fill, the first iteration after
// the fill (which pays for everything the fill left to do: the SIMILAR_TO
// sync of the new items, a cold SVD), and the steady iterations after it.
type point struct {
	backend  string
	n        int // the size asked for (-sizes)
	items    int // evidence items before the first iteration at this size
	tasks    int
	fill     time.Duration
	first    timing
	timings  []timing
	err      string // why the size stopped short, if it did
	observed int    // evidence items after the last iteration
	tols     []tolRow
	ingests  []time.Duration // research Ingest calls (-ingest)
	calls    string          // the store calls of the timed iterations (-calls)
	arms     string          // the timed iterations by setting (-alternate)
	// server says whether the server's CPU was measured (-server-pid),
	// and serverErr why its reads stopped, if they did.
	server    bool
	serverErr string
}

// serverCell is the table's server CPU cell: the median, "–" when not
// measured, or why the measurement failed.
func (p point) serverCell() string {
	switch {
	case !p.server:
		return "–"
	case p.serverErr != "":
		return "failed: " + p.serverErr
	}
	m, _ := p.stat("server")
	return ms(m)
}

// stat is the median and p90 of one step (or the total, step "total").
func (p point) stat(step string) (med, p90 time.Duration) {
	var d []time.Duration
	for _, t := range p.timings {
		if step == "total" {
			d = append(d, t.total())
		} else if step == "ingest" {
			d = append(d, t.ingest)
		} else if step == "cpu" {
			d = append(d, t.cpu)
		} else if step == "server" {
			d = append(d, t.server)
		} else {
			d = append(d, t.step[step])
		}
	}
	return percentile(d, 50), percentile(d, 90)
}

// meanTotal is the mean of the iterations' totals: unlike the median it
// carries the periodic recompute of Observe (algebra.signals_recompute_every),
// which a session pays once every so many iterations.
func (p point) meanTotal() time.Duration {
	if len(p.timings) == 0 {
		return 0
	}
	var sum time.Duration
	for _, t := range p.timings {
		sum += t.total()
	}
	return sum / time.Duration(len(p.timings))
}

// growth is the ratio of the median totals of two sizes (0 when either is
// missing). Linear growth from 1k to 10k is 10; sublinear is well under.
func growth(small, large point) float64 { return ratio(small, large, "total") }

// ratio is the ratio of the medians of one step (or "total", "cpu") of two
// sizes, 0 when either is missing.
func ratio(small, large point, step string) float64 {
	a, _ := small.stat(step)
	b, _ := large.stat(step)
	if a <= 0 || b <= 0 {
		return 0
	}
	return float64(b) / float64(a)
}
