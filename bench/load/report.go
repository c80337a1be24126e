package main

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// row is one round: n concurrent sessions.
type row struct {
	setup, target        string
	serverSeen           bool // the server's process was sampled (not an external one without pid file)
	countersSeen         bool // the server's persistence counters were read
	stores               []storeCPU
	n, failed            int
	latency, makespan    time.Duration
	perHour              float64
	p50, p99             time.Duration
	serverCPU, workerCPU float64 // percent of one core over the round
	benchCPU             float64 // this process: scripted model and client
	serverMS             float64 // server CPU time per session, ms
	workerMS             float64 // workers' CPU time per session, ms
	iterations           float64 // per session, mean
	persistOps           float64 // server persistence operations per session
	transitions          float64 // workflow state writes per session
	workerRSSMiB         float64
	events, kib          float64       // per session, mean
	session50, session95 time.Duration // completed sessions' wall time
	failures             []failure
	parts                parts // medians over sessions, per iteration
}

func summarize(n int, latency, makespan time.Duration, sessions []session, before, after []usage) row {
	r := row{n: n, latency: latency, makespan: makespan}
	var over, walls []time.Duration
	var ps [7][]time.Duration
	done, sticky := 0, 0
	for _, s := range sessions {
		if s.fail != nil {
			r.failed++
			r.failures = append(r.failures, *s.fail)
			continue
		}
		done++
		over = append(over, s.overhead())
		walls = append(walls, s.wall)
		sticky += s.parts.stickyTimeouts
		for i, d := range s.parts.list() {
			ps[i] = append(ps[i], d/time.Duration(max(1, s.iterations)))
		}
		r.events += float64(s.events)
		r.kib += float64(s.bytes) / 1024
		r.iterations += float64(s.iterations)
	}
	if done > 0 {
		r.events /= float64(done)
		r.kib /= float64(done)
		r.iterations /= float64(done)
	}
	r.p50, r.p99 = percentile(over, 50), percentile(over, 99)
	r.session50, r.session95 = percentile(walls, 50), percentile(walls, 95)
	r.parts = parts{wftWait: percentile(ps[0], 50), wftRun: percentile(ps[1], 50), actWait: percentile(ps[2], 50),
		actRun: percentile(ps[3], 50), llmWait: percentile(ps[4], 50), child: percentile(ps[5], 50), start: percentile(ps[6], 50),
		stickyTimeouts: sticky}
	r.perHour = float64(done) / makespan.Hours()
	secs := makespan.Seconds() * userHZ / 100 // ticks per percent of one core
	r.serverCPU = float64(after[0].ticks-before[0].ticks) / secs
	for i := 1; i < len(after); i++ {
		r.workerCPU += float64(after[i].ticks-before[i].ticks) / secs
		r.workerRSSMiB += float64(after[i].hwmKiB) / 1024
	}
	return r
}

// perIter is a per-session mean over the session's iterations (bootstrap
// and assembly included, so it is an upper bound on one loop iteration).
func (r row) perIter(v float64) float64 {
	if r.iterations == 0 {
		return 0
	}
	return v / r.iterations
}

// ratio is the median overhead as a share of one model call's latency.
func (r row) ratio() float64 {
	if r.latency == 0 {
		return 0
	}
	return float64(r.p50) / float64(r.latency)
}

func (r row) line() string {
	s := fmt.Sprintf("%s %s n=%d: %d failed, makespan %s, session p50 %s p95 %s, overhead p50 %s p99 %s (%.1f%% of latency), server CPU %.0f%% (%.0f ms/session, %.0f DB ops and %.0f transitions per session), worker CPU %.0f%% (%.0f ms/session), bench CPU %.0f%%, %.0f events and %.1f KiB per iteration",
		r.target, r.setup, r.n, r.failed, r.makespan.Round(100*time.Millisecond), r.session50.Round(100*time.Millisecond), r.session95.Round(100*time.Millisecond), r.p50.Round(time.Millisecond), r.p99.Round(time.Millisecond),
		100*r.ratio(), r.serverCPU, r.serverMS, r.persistOps, r.transitions, r.workerCPU, r.workerMS, r.benchCPU, r.perIter(r.events), r.perIter(r.kib))
	p := r.parts
	s += fmt.Sprintf("; per iteration: WFT wait %s run %s, activity wait %s run %s, model-call wait %s, research children %s, start %s, sticky timeouts %d",
		p.wftWait.Round(time.Millisecond), p.wftRun.Round(time.Millisecond), p.actWait.Round(time.Millisecond), p.actRun.Round(time.Millisecond),
		p.llmWait.Round(time.Millisecond), p.child.Round(time.Millisecond), p.start.Round(time.Millisecond), p.stickyTimeouts)
	if len(r.stores) > 0 {
		s += "; databases CPU: " + r.storesCPU()
	}
	for _, f := range r.failures {
		s += "\n  failed: " + f.String()
	}
	return s
}

func arrivals(ramp time.Duration) string {
	if ramp == 0 {
		return "at once"
	}
	return "evenly over " + ramp.String()
}

func renderTable(o options, rows []row) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Scripted model at %s per call (± %.0f%%), sessions started %s, %d worker process(es) of the bench's own on each target; overhead = (session time - model time) / iterations.\n\n",
		o.latency, 100*o.jitter, arrivals(o.ramp), o.workers)
	b.WriteString(sideBySide(rows))
	b.WriteString("\n| target | setup | sessions | failed | makespan | sessions/h | overhead p50 | overhead p99 | p50 / latency | server CPU | worker CPU | bench CPU | worker RSS | events/session | KiB/session | events/iteration | KiB/iteration | server CPU/session | worker CPU/session | DB ops/session | transitions/session | databases CPU |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %s | %.0f | %s | %s | %.1f%% | %s | %.0f%% | %.0f%% | %.0f MiB | %.0f | %.1f | %.1f | %.1f | %s | %.0f ms | %s | %s | %s |\n",
			r.target, r.setup, r.n, r.failed, r.makespan.Round(100*time.Millisecond), r.perHour, r.p50.Round(time.Millisecond), r.p99.Round(time.Millisecond),
			100*r.ratio(), r.server("%.0f%%", r.serverCPU), r.workerCPU, r.benchCPU, r.workerRSSMiB, r.events, r.kib, r.perIter(r.events), r.perIter(r.kib),
			r.server("%.0f ms", r.serverMS), r.workerMS, r.counter("%.0f", r.persistOps), r.counter("%.0f", r.transitions), r.storesCPU())
	}
	b.WriteString("\nWhere an iteration's time went (medians over sessions, per iteration, from history): waiting for a workflow task to start, running it, non-model activities waiting and running, model calls waiting for a slot, research child workflows (initiated to completed), the start (the session's first event to its first model call: health check and bootstrap, also inside the other columns); sticky timeouts: workflow tasks (all sessions) that waited out the sticky queue's schedule-to-start timeout and went back to the normal queue.\n\n")
	b.WriteString("| target | setup | sessions | WFT wait | WFT run | activity wait | activity run | model-call wait | research children | start | sticky timeouts |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %d", r.target, r.setup, r.n)
		for _, d := range r.parts.list() {
			fmt.Fprintf(&b, " | %s", d.Round(time.Millisecond))
		}
		fmt.Fprintf(&b, " | %d |\n", r.parts.stickyTimeouts)
	}
	b.WriteString("\nCPU is percent of one core over the round (the machine's cores times 100 is the ceiling); bench CPU is this process (scripted model and client). Server CPU/session, DB ops/session (the server's persistence_requests, which include its polling over time) and transitions/session (its workflow state writes, which depend on the sessions alone) are costs per session that a loaded machine inflates less than times; – is a number the bench cannot read (a cluster without pid files or metrics address). Databases CPU: the cluster's PostgreSQL and Neo4j process trees; the dev server's SQLite is in its own process and the embedded graph store in the worker's. Failed sessions count in neither overhead nor sessions/h.\n")
	b.WriteString(failureTable(rows))
	return b.String()
}

// server formats the server's CPU, "–" when its process was not seen.
func (r row) server(format string, v float64) string {
	return seen(r.serverSeen, format, v)
}

// counter formats a server counter, "–" when they were not read.
func (r row) counter(format string, v float64) string {
	return seen(r.countersSeen, format, v)
}

func seen(ok bool, format string, v float64) string {
	if !ok {
		return "–"
	}
	return fmt.Sprintf(format, v)
}

// storesCPU is the cluster's database processes' CPU: "postgres 30%
// (120 ms/session), neo4j ...", or what holds it on the dev server.
func (r row) storesCPU() string {
	if len(r.stores) == 0 {
		return "in server and worker"
	}
	var parts []string
	for _, s := range r.stores {
		parts = append(parts, fmt.Sprintf("%s %.0f%% (%.0f ms/session)", s.name, s.cpu, s.ms))
	}
	return strings.Join(parts, ", ")
}

// sideBySide is the headline: each target's sessions completed, failed
// by kind, session time and throughput, one row per target and round.
func sideBySide(rows []row) string {
	var b strings.Builder
	b.WriteString("| target | setup | sessions | completed | failed | session p50 | session p95 | sessions/h | overhead p50 | overhead p99 |\n|---|---|---:|---:|---|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %s | %s | %s | %.0f | %s | %s |\n", r.target, r.setup, r.n, r.n-r.failed, failedByKind(r.failures),
			r.session50.Round(100*time.Millisecond), r.session95.Round(100*time.Millisecond), r.perHour, r.p50.Round(time.Millisecond), r.p99.Round(time.Millisecond))
	}
	return b.String()
}

// failedByKind is "0", or the count with its kinds: "2 (failed 1, not finished 1)".
func failedByKind(fs []failure) string {
	if len(fs) == 0 {
		return "0"
	}
	count := map[string]int{}
	for _, f := range fs {
		count[f.kind]++
	}
	kinds := make([]string, 0, len(count))
	for k := range count {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	for i, k := range kinds {
		kinds[i] = fmt.Sprintf("%s %d", k, count[k])
	}
	return fmt.Sprintf("%d (%s)", len(fs), strings.Join(kinds, ", "))
}

// failureTable lists every session that did not complete, with its cause.
func failureTable(rows []row) string {
	var b strings.Builder
	b.WriteString("\nSessions that did not complete, each with the server's status and the failure's message (the close event's failure, or a running session's pending activities):\n\n")
	n := 0
	for _, r := range rows {
		for _, f := range r.failures {
			if n == 0 {
				b.WriteString("| target | setup | sessions | workflow id | run id | kind | status | cause |\n|---|---|---:|---|---|---|---|---|\n")
			}
			n++
			fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %s | %s | %s |\n", r.target, r.setup, r.n, f.id, f.runID, f.kind, f.status, cell(f.message))
		}
	}
	if n == 0 {
		b.WriteString("none.\n")
	}
	return b.String()
}

// cell keeps a message on one table row.
func cell(s string) string {
	return strings.NewReplacer("|", "\\|", "\n", " ").Replace(s)
}

// renderChart draws overhead p50 (solid) and p99 (dashed) in ms against
// the number of concurrent sessions, one colour per setup, with the 5%-of-
// latency target as a grey line.
func renderChart(o options, rows []row) string {
	const w, h, left, bottom, top, right = 640.0, 400.0, 70.0, 50.0, 40.0, 20.0
	target := float64(o.latency.Milliseconds()) * targetShare
	maxN, maxY := 1.0, max(1.0, target)
	for _, r := range rows {
		maxN = max(maxN, float64(r.n))
		maxY = max(maxY, float64(r.p99.Milliseconds()))
	}
	x := func(n int) float64 { return left + (w-left-right)*float64(n)/maxN }
	y := func(ms float64) float64 { return h - bottom - (h-bottom-top)*ms/maxY }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-family="sans-serif" font-size="12">`+"\n", w, h)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%.0f" y="20" font-size="14">Orchestration overhead per iteration, scripted model at %s</text>`+"\n", left, o.latency)
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="black"/>`+"\n", left, h-bottom, w-right, h-bottom)
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="black"/>`+"\n", left, top, left, h-bottom)
	for i := 0; i <= 4; i++ {
		v := maxY * float64(i) / 4
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" text-anchor="end">%.0f ms</text>`+"\n", left-6, y(v)+4, v)
	}
	seen := map[int]bool{}
	for _, r := range rows {
		if !seen[r.n] {
			seen[r.n] = true
			fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" text-anchor="middle">%d</text>`+"\n", x(r.n), h-bottom+16, r.n)
		}
	}
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" text-anchor="middle">concurrent sessions</text>`+"\n", (left+w-right)/2, h-12)
	if target > 0 {
		fmt.Fprintf(&b, `<line x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f" stroke="#999" stroke-dasharray="2,3"/><text x="%.0f" y="%.1f" fill="#777">5%% of latency</text>`+"\n",
			left, y(target), w-right, y(target), left+6, y(target)-4)
	}
	for i, name := range setupNames(rows) {
		color := palette[i%len(palette)]
		for _, s := range []struct {
			dash string
			get  func(row) time.Duration
		}{{"", func(r row) time.Duration { return r.p50 }}, {`stroke-dasharray="6,4"`, func(r row) time.Duration { return r.p99 }}} {
			var pts []string
			for _, r := range rows {
				if r.setup == name {
					pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(r.n), y(float64(s.get(r).Milliseconds()))))
				}
			}
			fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" %s points="%s"/>`+"\n", color, s.dash, strings.Join(pts, " "))
			for _, p := range pts {
				xy := strings.Split(p, ",")
				fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="3" fill="%s"/>`+"\n", xy[0], xy[1], color)
			}
		}
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" fill="%s">%s p50 (solid), p99 (dashed)</text>`+"\n", left+10, top+14+16*float64(i), color, name)
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// targetShare is issue 14's bar: median overhead at most 5% of latency.
const targetShare = 0.05

var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"}

// setupNames are the rows' setups in first-seen order.
func setupNames(rows []row) []string {
	var out []string
	for _, r := range rows {
		if !slices.Contains(out, r.setup) {
			out = append(out, r.setup)
		}
	}
	return out
}
