package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// serverCPU is the CPU time the threads of process pid have run, from
// each thread's schedstat (nanoseconds; /proc/PID/stat counts in ticks of
// 10 ms, coarser than a step). A thread that exits between two reads
// takes its time with it: in a steady Neo4j server the bolt and query
// threads stay.
func serverCPU(pid int) (time.Duration, error) {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("server threads: %w", err)
	}
	var sum time.Duration
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name(), "schedstat"))
		if err != nil {
			continue // the thread exited meanwhile
		}
		f := strings.Fields(string(b))
		if len(f) == 0 {
			continue
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("server thread %s schedstat %q: %w", e.Name(), f[0], err)
		}
		sum += time.Duration(ns)
	}
	return sum, nil
}

// serverMeter adds up the CPU time of the database server's process
// (-server-pid) over the steps' calls; nil measures nothing.
type serverMeter struct {
	pid   int
	total time.Duration
	err   error // the first failed read; the column then says so
}

func newServerMeter(pid int) (*serverMeter, error) {
	if pid <= 0 {
		return nil, nil
	}
	if _, err := serverCPU(pid); err != nil {
		return nil, fmt.Errorf("-server-pid %d: %w", pid, err)
	}
	return &serverMeter{pid: pid}, nil
}

// around returns the function that ends a measured span begun now.
func (m *serverMeter) around() func() {
	if m == nil || m.err != nil {
		return func() {}
	}
	before, err := serverCPU(m.pid)
	if err != nil {
		m.err = err
		return func() {}
	}
	return func() {
		after, err := serverCPU(m.pid)
		if err != nil {
			m.err = err
			return
		}
		m.total += after - before
	}
}

// sum is the total so far (0 for a nil meter).
func (m *serverMeter) sum() time.Duration {
	if m == nil {
		return 0
	}
	return m.total
}
