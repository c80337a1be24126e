package research

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lethe-research/lethe/internal/lethetest"
)

// TestRunChildCaps: a child that writes for ever is killed at the output
// cap and what fits is kept; one that hangs is killed at its deadline; the
// address-space limit is set on the child itself.
func TestRunChildCaps(t *testing.T) {
	yes := needTool(t, "yes")
	start := time.Now()
	res, err := runChild(context.Background(), childSpec{Path: yes, Args: []string{"lethe"}, Timeout: 20 * time.Second, MaxStdout: 1 << 20})
	if err != nil || !res.Truncated || len(res.Stdout) != 1<<20 || !strings.HasPrefix(string(res.Stdout), "lethe\nlethe\n") {
		t.Fatalf("yes: err %v truncated %v, %d bytes", err, res.Truncated, len(res.Stdout))
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("an endless writer took %s to stop", d)
	}

	sleep := needTool(t, "sleep")
	start = time.Now()
	_, err = runChild(context.Background(), childSpec{Path: sleep, Args: []string{"60"}, Timeout: 300 * time.Millisecond})
	if !errors.Is(err, errChildTimeout) || time.Since(start) > 5*time.Second {
		t.Fatalf("sleep: %v after %s", err, time.Since(start))
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	if _, err := runChild(ctx, childSpec{Path: sleep, Args: []string{"60"}, Timeout: time.Minute}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}

	const limit = 256 << 20
	res, err = runChild(context.Background(), childSpec{Path: "sh", Args: []string{"-c", "ulimit -v"}, Timeout: 10 * time.Second, MemoryBytes: limit})
	if err != nil || strings.TrimSpace(string(res.Stdout)) != strconv.Itoa(limit/1024) {
		t.Fatalf("address-space limit in the child: %q %v, want %d KiB", res.Stdout, err, limit/1024)
	}
	if _, err := exec.LookPath("prlimit"); err != nil {
		t.Log("prlimit is not installed: the sh ulimit fallback was used")
	}
	if _, err := runChild(context.Background(), childSpec{Path: "/nonexistent/tool", Timeout: time.Second}); err == nil {
		t.Fatal("a missing program ran")
	}
}

// TestWhisperUploadStreamed: a 20 MB WAV goes to the whisper server with a
// Content-Length and without being read into memory (the allocations of
// the whole call stay far below the file's size).
func TestWhisperUploadStreamed(t *testing.T) {
	var gotLen, gotBytes int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotLen = r.ContentLength
		gotBytes, _ = io.CopyBuffer(io.Discard, r.Body, make([]byte, 32<<10))
		io.WriteString(w, `{"text": "streamed"}`)
	}))
	defer srv.Close()
	wav := filepath.Join(t.TempDir(), "big.wav")
	if err := os.WriteFile(wav, lethetest.SilentWAV(16000, 10<<20), 0o644); err != nil { // 20 MB
		t.Fatal(err)
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	text, err := (&WhisperClient{BaseURL: srv.URL}).Inference(context.Background(), wav)
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("uploaded %d bytes (Content-Length %d), %d bytes allocated", gotBytes, gotLen, alloc)
	if err != nil || text != "streamed" || gotLen <= 20<<20 || gotBytes != gotLen || alloc > 4<<20 {
		t.Fatalf("text %q err %v, Content-Length %d, body %d, allocated %d", text, err, gotLen, gotBytes, alloc)
	}
}
