package research

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// childEnvNames are the variables every child program gets from the
// worker: where programs are, a home and a temporary directory, and the
// locale. Nothing else: the worker's environment holds its API keys and
// the graph store's password, and a child parses page-controlled input (a
// renderer or parser exploit reads its own environment).
var childEnvNames = []string{"PATH", "HOME", "TMPDIR", "LANG"}

// ChildEnv is the environment of a program the worker starts: the worker's
// values of childEnvNames and of extra (what that program needs, by name),
// those that are set. Never nil, so exec.Cmd inherits nothing.
func ChildEnv(extra ...string) []string {
	return minimalEnv(os.Environ(), extra...)
}

// minimalEnv picks childEnvNames and extra from environ ("NAME=value").
func minimalEnv(environ []string, extra ...string) []string {
	out := []string{}
	for _, kv := range environ {
		name, _, ok := strings.Cut(kv, "=")
		if ok && (slices.Contains(childEnvNames, name) || slices.Contains(extra, name)) {
			out = append(out, kv)
		}
	}
	return out
}

// childSpec describes one run of a helper program (pdftotext, ffmpeg) on
// page-controlled input: a PDF or media file crafted to expand without
// bound, or to make the converter allocate without bound, must cost a
// bounded amount of memory, time and output.
type childSpec struct {
	Path string
	Args []string
	// Timeout is the child's deadline (within the caller's context).
	Timeout time.Duration
	// MemoryBytes is the child's address-space limit (RLIMIT_AS); 0 = none.
	MemoryBytes int64
	// MaxStdout bytes of standard output are kept; past them the child is
	// killed and what fits is returned (childResult.Truncated).
	MaxStdout int64
}

// maxChildStderr bytes of a child's standard error are kept for messages.
const maxChildStderr = 16 << 10

type childResult struct {
	Stdout    []byte
	Stderr    string
	Truncated bool // stdout overflowed MaxStdout: the child was killed
}

// runChild runs spec and reaps the child on every path (success, error,
// overflow, timeout, cancellation, a panic while reading): it never leaves
// a process, a zombie or a pipe behind. A child killed for overflowing
// MaxStdout is no error.
func runChild(ctx context.Context, spec childSpec) (res childResult, err error) {
	// Resolved first: behind the memory-limit wrapper a missing program
	// would look like a failing one.
	path, err := exec.LookPath(spec.Path)
	if err != nil {
		return res, fmt.Errorf("research: %w", err)
	}
	cctx, cancel := context.WithTimeout(ctx, spec.Timeout)
	defer cancel()
	name, args := withMemoryLimit(path, spec.Args, spec.MemoryBytes)
	cmd := exec.CommandContext(cctx, name, args...)
	cmd.Env = ChildEnv()
	// Its own process group, killed as a whole; killed with the worker too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return killGroup(cmd) }
	cmd.WaitDelay = 2 * time.Second // pipes held open by a stray grandchild
	stderr := &capWriter{max: maxChildStderr}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return res, fmt.Errorf("research: %s: %w", spec.Path, err)
	}
	if err := cmd.Start(); err != nil {
		return res, fmt.Errorf("research: start %s: %w", spec.Path, err)
	}
	waited := false
	defer func() {
		if !waited { // a panic between Start and Wait
			killGroup(cmd)
			cmd.Wait()
		}
	}()
	res.Stdout, res.Truncated, err = readCapped(stdout, spec.MaxStdout)
	if res.Truncated || err != nil {
		killGroup(cmd)
	}
	werr := cmd.Wait()
	waited = true
	res.Stderr = stderr.String()
	switch {
	case res.Truncated:
		return res, nil
	case err != nil:
		return res, fmt.Errorf("research: %s output: %w", spec.Path, err)
	case werr == nil:
		return res, nil
	case ctx.Err() != nil:
		return res, ctx.Err()
	case cctx.Err() != nil:
		return res, fmt.Errorf("research: %s: %w after %s", spec.Path, errChildTimeout, spec.Timeout)
	}
	return res, werr
}

// errChildTimeout is wrapped when a child ran past its deadline.
var errChildTimeout = errors.New("timed out")

func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	// The child leads its own group (Setpgid): -pid reaches it and anything
	// it started.
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil {
		return cmd.Process.Kill()
	}
	return nil
}

// readCapped reads r to the end, keeping at most max bytes (max <= 0: no
// cap); truncated reports that more was there.
func readCapped(r io.Reader, max int64) (out []byte, truncated bool, err error) {
	var buf bytes.Buffer
	if max <= 0 {
		_, err = io.Copy(&buf, r)
		return buf.Bytes(), false, err
	}
	n, err := io.CopyN(&buf, r, max+1)
	if n > max {
		return buf.Bytes()[:max], true, nil
	}
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return buf.Bytes(), false, err
}

// withMemoryLimit returns the command line that runs path under an
// address-space limit. Go's os/exec cannot set a resource limit between
// fork and exec, and setting it on the started child (prlimit(2) on its
// pid) races with the child's first allocations; so a small exec wrapper
// sets it on itself and then execs the program (same pid, so the context
// kill and Pdeathsig still hit it): util-linux prlimit when it is on PATH
// (no shell involved), else sh's ulimit -v (in KiB), which every POSIX
// shell has.
func withMemoryLimit(path string, args []string, limit int64) (string, []string) {
	if limit <= 0 {
		return path, args
	}
	if pl, err := exec.LookPath("prlimit"); err == nil {
		return pl, append([]string{"--as=" + strconv.FormatInt(limit, 10), "--", path}, args...)
	}
	script := `ulimit -v "$1" || exit 126; shift; exec "$@"`
	return "/bin/sh", append([]string{"-c", script, "sh", strconv.FormatInt(limit/1024, 10), path}, args...)
}

// capWriter keeps the first max bytes written to it and discards the rest
// (without failing the writer: a child must not die of EPIPE on stderr).
type capWriter struct {
	max int
	buf bytes.Buffer
}

func (w *capWriter) Write(p []byte) (int, error) {
	if room := w.max - w.buf.Len(); room > 0 {
		w.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (w *capWriter) String() string { return w.buf.String() }
