package research

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMediaDirPreCreatedByAnotherUser plays a local user who creates the
// media dir first: world-writable, a symlink to a directory of theirs, or
// (when the test runs as root and can hand it over) owned by them. The
// fetcher refuses to save media there, and nothing lands in it.
func TestMediaDirPreCreatedByAnotherUser(t *testing.T) {
	wav := append([]byte("RIFF"), make([]byte, 4096)...)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "audio/wav")
		w.Write(wav)
	}))
	defer site.Close()
	base := t.TempDir()
	theirs := filepath.Join(base, "theirs")
	if err := os.Mkdir(theirs, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(theirs, 0o777) // past the umask
	link := filepath.Join(base, "link")
	if err := os.Symlink(theirs, link); err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{"world-writable": theirs, "symlink": link}
	if os.Getuid() == 0 {
		owned := filepath.Join(base, "owned")
		os.Mkdir(owned, 0o700)
		if err := os.Chown(owned, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		cases["another owner"] = owned
	}
	for name, dir := range cases {
		f := NewHTTPFetcher(HTTPFetcherConfig{Policy: URLPolicy{AllowLoopback: true}, MediaDir: dir})
		_, err := f.DownloadMedia(context.Background(), site.URL+"/talk.wav", 0)
		if err == nil || !strings.Contains(err.Error(), "media dir") {
			t.Errorf("%s: %v, want a refusal of the media dir", name, err)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("%s: %d files written to %s", name, len(entries), dir)
		}
	}
	// The worker's own new dir is made private and used.
	mine := filepath.Join(base, "mine")
	f := NewHTTPFetcher(HTTPFetcherConfig{Policy: URLPolicy{AllowLoopback: true}, MediaDir: mine})
	if _, err := f.DownloadMedia(context.Background(), site.URL+"/talk.wav", 0); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(mine); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("new media dir: %v %v", fi.Mode(), err)
	}
}
