package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// profiles are the CPU profiles of one round: the worker's from its pprof
// endpoint, the dev server's from perf (a Go binary with symbols; the CLI
// has no pprof endpoint). Each covers o.profile from the round's start.
type profiles struct {
	wg sync.WaitGroup
}

func (p *profiles) wait() { p.wg.Wait() }

// startProfiles starts the round's profiles in the background, into files
// named from base; failures are reported on stderr and leave the round's
// numbers alone.
func startProfiles(ctx context.Context, o options, base string, srv *exec.Cmd, pprofs []string) *profiles {
	p := &profiles{}
	if o.profile <= 0 {
		return p
	}
	for i, addr := range pprofs {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			file := fmt.Sprintf("%s-worker%d.pprof", base, i)
			if err := workerProfile(ctx, addr, o.profile, file); err != nil {
				fmt.Fprintln(os.Stderr, "load: worker profile:", err)
			}
		}()
	}
	if srv == nil {
		return p // an external server: not the bench's process to profile
	}
	if perf, err := exec.LookPath("perf"); err == nil && srv.Process != nil {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			if err := serverProfile(ctx, perf, srv.Process.Pid, o.profile, base+"-server"); err != nil {
				fmt.Fprintln(os.Stderr, "load: server profile:", err)
			}
		}()
	} else {
		fmt.Fprintln(os.Stderr, "load: perf not found: no server profile")
	}
	return p
}

// workerProfile saves a CPU profile and its top functions by cumulative
// time (file.top.txt).
func workerProfile(ctx context.Context, addr string, d time.Duration, file string) error {
	secs := max(1, int(d.Seconds()))
	ctx, cancel := context.WithTimeout(ctx, d+30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet,
		"http://"+addr+"/debug/pprof/profile?seconds="+strconv.Itoa(secs), nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("get %s: %w", addr, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("get %s: %s", addr, resp.Status)
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return fmt.Errorf("save %s: %w", file, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	top, err := exec.CommandContext(ctx, "go", "tool", "pprof", "-top", "-cum", "-nodecount=60", file).Output()
	if err != nil {
		return fmt.Errorf("pprof -top %s: %w", file, err)
	}
	return os.WriteFile(file+".top.txt", top, 0o644)
}

// serverProfile samples the dev server with perf for d and writes the
// functions with the most inclusive time (base.top.txt); the raw data
// stays in base.perf.data for perf report.
func serverProfile(ctx context.Context, perf string, pid int, d time.Duration, base string) error {
	data := base + ".perf.data"
	rec := exec.CommandContext(ctx, perf, "record", "-F", "99", "-g", "-p", strconv.Itoa(pid), "-o", data,
		"--", "sleep", strconv.Itoa(max(1, int(d.Seconds()))))
	if out, err := rec.CombinedOutput(); err != nil {
		return fmt.Errorf("perf record: %w: %s", err, out)
	}
	rep := exec.CommandContext(ctx, perf, "report", "-i", data, "--children", "--stdio", "--sort", "symbol", "-g", "none")
	out, err := rep.Output()
	if err != nil {
		return fmt.Errorf("perf report: %w", err)
	}
	return os.WriteFile(base+".top.txt", []byte(perfTop(string(out), 80)), 0o644)
}

// perfTop keeps the first k sample lines of a perf report (children,
// self, symbol), without perf's comments and padding.
func perfTop(report string, k int) string {
	var b strings.Builder
	sc := bufio.NewScanner(strings.NewReader(report))
	sc.Buffer(make([]byte, 0, 1<<16), 1<<20)
	for n := 0; sc.Scan() && n < k; {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasSuffix(f[0], "%") || strings.HasPrefix(f[0], "#") {
			continue
		}
		sym := f[3:]
		for len(sym) > 1 && sym[len(sym)-1] == "-" { // perf's empty trailing columns
			sym = sym[:len(sym)-1]
		}
		fmt.Fprintf(&b, "%8s %8s  %s\n", f[0], f[1], strings.Join(sym, " "))
		n++
	}
	return b.String()
}
