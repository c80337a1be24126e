package main

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// targets are issue 14's bounds on the store work of one iteration at
// 100k evidence.
var targets = map[string]time.Duration{"embedded": 50 * time.Millisecond, "neo4j": 150 * time.Millisecond}

func ms(d time.Duration) string {
	switch {
	case d == 0:
		return "–"
	case d < 10*time.Millisecond:
		return fmt.Sprintf("%.1f", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.0f", float64(d)/float64(time.Millisecond))
}

func dur(d time.Duration) string {
	if d < time.Second {
		return ms(d) + " ms"
	}
	return d.Round(100 * time.Millisecond).String()
}

// renderTable is the Markdown report: one row per backend and size, the
// growth ratios, and the targets.
func renderTable(o options, pts []point) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Store work of one iteration (ms, median / p90 of %d iterations after the first iteration at that size, which is reported apart), %d-dim embeddings, instant deterministic embedder.\n\n", o.iters, o.dim)
	b.WriteString("| backend | evidence | tasks | fill | first iteration | ReadState | Focus | ApplyOps | Observe | **total** | mean total | CPU of this process in the steps | server CPU in the steps | ingest (not in total) |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, p := range pts {
		fmt.Fprintf(&b, "| %s | %d | %d | %s | %s |", p.backend, p.items, p.tasks, dur(p.fill), dur(p.first.total()))
		for _, s := range append(append([]string{}, steps...), "total") {
			m, q := p.stat(s)
			cell := ms(m) + " / " + ms(q)
			if s == "total" {
				cell = "**" + cell + "**"
			}
			fmt.Fprintf(&b, " %s |", cell)
		}
		c, _ := p.stat("cpu")
		m, _ := p.stat("ingest")
		fmt.Fprintf(&b, " %s | %s | %s | %s |\n", ms(p.meanTotal()), ms(c), p.serverCell(), ms(m))
	}
	b.WriteString("\nThe mean total carries Observe's recompute from all evidence, every `algebra.signals_recompute_every` iterations (20), when one fell among the timed iterations; the median does not. The ingest column is the store write of one page's items; a research child's Ingest activity is timed below.\n")
	b.WriteString(renderIngest(pts))
	b.WriteString("\nGrowth of the median total (linear growth would be the ratio of the sizes):\n\n")
	b.WriteString("| backend | from | to | size ratio | time ratio | CPU ratio | target at the largest size | met |\n|---|---:|---:|---:|---:|---:|---:|---|\n")
	for i := 1; i < len(pts); i++ {
		a, c := pts[i-1], pts[i]
		if a.backend != c.backend {
			continue
		}
		tgt, met := "", ""
		if i == len(pts)-1 || pts[i+1].backend != c.backend {
			m, _ := c.stat("total")
			if t, ok := targets[c.backend]; ok && c.n >= 100000 {
				tgt, met = dur(t), fmt.Sprint(m > 0 && m <= t)
			}
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %.1f | %.2f | %.2f | %s | %s |\n", c.backend, a.n, c.n, float64(c.n)/float64(a.n), growth(a, c), ratio(a, c, "cpu"), tgt, met)
	}
	for _, p := range pts {
		if p.err != "" {
			fmt.Fprintf(&b, "\n%s at %d: %s\n", p.backend, p.n, p.err)
		}
	}
	for _, p := range pts {
		b.WriteString(p.calls)
		b.WriteString(p.arms)
	}
	return b.String()
}

// renderIngest is the table of the research Ingest calls (-ingest).
func renderIngest(pts []point) string {
	var b strings.Builder
	for _, p := range pts {
		if len(p.ingests) == 0 {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("\nThe research child's Ingest activity on one page (4 or 5 chunks, at most 4,000 characters, embedded by the loopback embedding server), after the timed iterations (ms):\n\n")
			b.WriteString("| backend | evidence | calls | median | p90 |\n|---|---:|---:|---:|---:|\n")
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %s | %s |\n", p.backend, p.observed, len(p.ingests), ms(percentile(p.ingests, 50)), ms(percentile(p.ingests, 90)))
	}
	return b.String()
}

// renderSVG draws, per backend, the median time of each step and the total
// against the evidence count, both axes logarithmic, with a dashed line of
// linear growth from the smallest size's total and the target.
func renderSVG(pts []point) string {
	var backends []string
	for _, p := range pts {
		if len(backends) == 0 || backends[len(backends)-1] != p.backend {
			backends = append(backends, p.backend)
		}
	}
	const pw, ph, ml, mt = 420, 300, 60, 40
	w := len(backends)*(pw+ml) + 20
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">`+"\n", w, ph+mt+70)
	b.WriteString(`<rect width="100%" height="100%" fill="white"/>` + "\n")
	for i, be := range backends {
		var mine []point
		for _, p := range pts {
			if p.backend == be && len(p.timings) > 0 {
				mine = append(mine, p)
			}
		}
		panel(&b, be, mine, float64(ml+i*(pw+ml)), mt, pw, ph)
	}
	b.WriteString("</svg>\n")
	return b.String()
}

var colours = map[string]string{"ReadState": "#1f77b4", "Focus": "#ff7f0e", "ApplyOps": "#2ca02c", "Observe": "#9467bd", "total": "#000000"}

func panel(b *strings.Builder, backend string, pts []point, x0, y0, w, h float64) {
	fmt.Fprintf(b, `<text x="%.0f" y="%.0f" font-size="13">%s: median ms per iteration vs evidence (log-log)</text>`+"\n", x0, y0-15, backend)
	fmt.Fprintf(b, `<rect x="%.0f" y="%.0f" width="%.0f" height="%.0f" fill="none" stroke="#999"/>`+"\n", x0, y0, w, h)
	if len(pts) == 0 {
		fmt.Fprintf(b, `<text x="%.0f" y="%.0f">no data</text>`+"\n", x0+10, y0+20)
		return
	}
	lx0, lx1 := math.Floor(math.Log10(float64(pts[0].n))), math.Ceil(math.Log10(float64(pts[len(pts)-1].n)))
	if lx1 <= lx0 {
		lx1 = lx0 + 1
	}
	ly0, ly1 := 0.0, 1.0 // decades of milliseconds: 1 ms .. 10 ms at least
	for _, p := range pts {
		for _, s := range append(append([]string{}, steps...), "total") {
			if m, _ := p.stat(s); m > 0 {
				v := math.Log10(float64(m) / float64(time.Millisecond))
				ly0, ly1 = math.Min(ly0, math.Floor(v)), math.Max(ly1, math.Ceil(v))
			}
		}
	}
	if m0, _ := pts[0].stat("total"); m0 > 0 { // room for the line of linear growth
		lin := float64(m0) / float64(time.Millisecond) * float64(pts[len(pts)-1].n) / float64(pts[0].n)
		ly1 = math.Max(ly1, math.Ceil(math.Log10(lin)))
	}
	X := func(n float64) float64 { return x0 + (math.Log10(n)-lx0)/(lx1-lx0)*w }
	Y := func(msv float64) float64 {
		return y0 + h - (math.Log10(math.Max(msv, math.Pow(10, ly0)))-ly0)/(ly1-ly0)*h
	}
	for d := lx0; d <= lx1; d++ {
		fmt.Fprintf(b, `<text x="%.0f" y="%.0f" text-anchor="middle">%s</text>`+"\n", X(math.Pow(10, d)), y0+h+14, short(math.Pow(10, d)))
	}
	for d := ly0; d <= ly1; d++ {
		y := Y(math.Pow(10, d))
		fmt.Fprintf(b, `<line x1="%.0f" x2="%.0f" y1="%.1f" y2="%.1f" stroke="#eee"/><text x="%.0f" y="%.1f" text-anchor="end">%s</text>`+"\n", x0, x0+w, y, y, x0-4, y+4, short(math.Pow(10, d)))
	}
	for _, s := range append(append([]string{}, steps...), "total") {
		var path []string
		for _, p := range pts {
			m, _ := p.stat(s)
			path = append(path, fmt.Sprintf("%.1f,%.1f", X(float64(p.n)), Y(float64(m)/float64(time.Millisecond))))
		}
		sw := 1.5
		if s == "total" {
			sw = 3
		}
		fmt.Fprintf(b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="%.1f"/>`+"\n", strings.Join(path, " "), colours[s], sw)
		for _, xy := range path {
			x, y, _ := strings.Cut(xy, ",")
			fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="%.1f" fill="%s"/>`+"\n", x, y, sw+0.5, colours[s])
		}
	}
	m0, _ := pts[0].stat("total")
	if m0 > 0 { // linear growth from the smallest size
		n0, n1 := float64(pts[0].n), float64(pts[len(pts)-1].n)
		v0 := float64(m0) / float64(time.Millisecond)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#999" stroke-dasharray="5,4"/>`+"\n", X(n0), Y(v0), X(n1), Y(v0*n1/n0))
	}
	if t, ok := targets[backend]; ok {
		y := Y(float64(t) / float64(time.Millisecond))
		fmt.Fprintf(b, `<line x1="%.0f" x2="%.0f" y1="%.1f" y2="%.1f" stroke="#d62728" stroke-dasharray="2,3"/><text x="%.0f" y="%.1f" fill="#d62728">target %s at 100k</text>`+"\n", x0, x0+w, y, y, x0+4, y-3, dur(t))
	}
	lx := x0
	for _, s := range append(append([]string{}, steps...), "total", "linear") {
		c, dash := colours[s], ""
		if s == "linear" {
			c, dash = "#999", ` stroke-dasharray="5,4"`
		}
		fmt.Fprintf(b, `<line x1="%.0f" x2="%.0f" y1="%.0f" y2="%.0f" stroke="%s" stroke-width="2"%s/><text x="%.0f" y="%.0f">%s</text>`+"\n", lx, lx+14, y0+h+35, y0+h+35, c, dash, lx+17, y0+h+39, s)
		lx += 70
	}
}

// short is 1, 10, 100, 1k, 10k, 100k, 1M.
func short(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%gM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%gk", v/1e3)
	}
	return fmt.Sprintf("%g", v)
}
