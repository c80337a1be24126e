package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// serverCPU reads this process's threads: their time grows with work.
func TestServerCPU(t *testing.T) {
	m, err := newServerMeter(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	end := m.around()
	x := 1.0
	for start := time.Now(); time.Since(start) < 30*time.Millisecond; {
		x = x*1.0000001 + 1e-9
	}
	end()
	if m.sum() < 10*time.Millisecond || m.err != nil {
		t.Fatalf("30 ms of spinning measured as %v (err %v, x %v)", m.sum(), m.err, x)
	}
}

func TestServerMeterOff(t *testing.T) {
	m, err := newServerMeter(0)
	if err != nil || m != nil {
		t.Fatalf("pid 0: meter %v, err %v; want none", m, err)
	}
	m.around()() // a nil meter measures nothing, and does not fail
	if m.sum() != 0 {
		t.Fatal("a nil meter summed time")
	}
	if _, err := newServerMeter(1 << 30); err == nil || !strings.Contains(err.Error(), "-server-pid") {
		t.Fatalf("a pid with no process: err %v", err)
	}
}

func TestServerCell(t *testing.T) {
	p := point{timings: []timing{{server: 40 * time.Millisecond}, {server: 60 * time.Millisecond}, {server: 50 * time.Millisecond}}}
	if got := p.serverCell(); got != "–" {
		t.Fatalf("not measured: %q", got)
	}
	p.server = true
	if got := p.serverCell(); got != ms(50*time.Millisecond) {
		t.Fatalf("median: %q, want %q", got, ms(50*time.Millisecond))
	}
	p.serverErr = "gone"
	if got := p.serverCell(); !strings.Contains(got, "gone") {
		t.Fatalf("failed reads: %q", got)
	}
}

// A server that exits during a step: the meter keeps what it had, stops
// measuring, and the table's cell says why instead of showing a number.
func TestServerMeterServerGone(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Skipf("no sleep binary: %v", err)
	}
	m, err := newServerMeter(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	end := m.around()
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	end()
	if m.err == nil || m.sum() != 0 {
		t.Fatalf("server gone mid-step: err %v, sum %v; want an error and nothing summed", m.err, m.sum())
	}
	m.around()() // later spans measure nothing and do not panic
	p := point{server: true, serverErr: m.err.Error()}
	if got := p.serverCell(); !strings.HasPrefix(got, "failed: ") {
		t.Fatalf("cell %q, want the failure", got)
	}
}
