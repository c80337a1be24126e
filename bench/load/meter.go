package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// meter reads what a round costs: the Temporal server's and the workers'
// CPU time, the cluster's database processes' (their whole trees), this
// process's, and the server's persistence counters. A pid of 0 or no
// metrics address is a part the bench cannot see (an external server
// without pid file or metrics).
type meter struct {
	pids       []int // [0] the Temporal server, then the workers
	stores     []proc
	metricsURL string
}

// reading is the meter at one instant.
type reading struct {
	procs  []usage
	self   usage
	stores []int64
	ops    map[string]float64
	text   string // the server's whole exposition
}

func (m meter) read(ctx context.Context) (reading, error) {
	r := reading{procs: sample(m.pids), self: readUsage(os.Getpid())}
	for _, p := range m.stores {
		r.stores = append(r.stores, treeTicks(p.pid))
	}
	r.ops = map[string]float64{}
	if m.metricsURL == "" {
		return r, nil
	}
	text, err := scrape(ctx, m.metricsURL)
	if err != nil {
		return r, err
	}
	r.text, r.ops = text, sumCounter(text, persistenceCounter)
	return r, nil
}

// storeCPU is a database process tree's CPU over a round.
type storeCPU struct {
	name string
	cpu  float64 // percent of one core
	ms   float64 // per session
}

// fill sets r's costs from the readings before and after the round.
func (m meter) fill(r *row, before, after reading, makespan time.Duration) {
	n := float64(r.n)
	ticksPerPercent := makespan.Seconds() * userHZ / 100
	r.serverSeen, r.countersSeen = m.pids[0] != 0, m.metricsURL != ""
	r.benchCPU = float64(after.self.ticks-before.self.ticks) / ticksPerPercent
	r.persistOps = (after.ops[""] - before.ops[""]) / n
	r.transitions = (transitions(after.ops) - transitions(before.ops)) / n
	r.serverMS = float64(after.procs[0].ticks-before.procs[0].ticks) * 1000 / userHZ / n
	for i := 1; i < len(after.procs); i++ {
		r.workerMS += float64(after.procs[i].ticks-before.procs[i].ticks) * 1000 / userHZ / n
	}
	for i, p := range m.stores {
		d := float64(after.stores[i] - before.stores[i])
		r.stores = append(r.stores, storeCPU{name: p.name, cpu: d / ticksPerPercent, ms: d * 1000 / userHZ / n})
	}
}

// save keeps the server's whole exposition after the round, for what the
// table does not show (matching's and persistence's latencies by
// operation, rate limits hit), with the round's database operations by
// kind.
func (m meter) save(base string, n int, before, after reading) error {
	if m.metricsURL == "" {
		return nil
	}
	if err := os.WriteFile(base+"-metrics.txt", []byte(after.text), 0o644); err != nil {
		return fmt.Errorf("write server metrics: %w", err)
	}
	if err := os.WriteFile(base+"-dbops.txt", []byte(opsTable(before.ops, after.ops, n)), 0o644); err != nil {
		return fmt.Errorf("write DB operations: %w", err)
	}
	return nil
}

// roundBase names a round's files in -out.
func roundBase(o options, t target, st setup, n int) string {
	return filepath.Join(o.out, fmt.Sprintf("%s-%s-n%d", t.name, st.name, n))
}
