package research

import (
	"fmt"
	"os"
	"syscall"
)

// privateDir creates dir (0700) when missing and checks that it is a
// directory of this process's user that no one else can write to:
// the default media dir is a fixed name under the shared temporary
// directory, which another local user can create first (and then read the
// captured media, or swap a file between download and transcription) or
// make a symlink to a directory of theirs.
func privateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("research: media dir: %w", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("research: media dir: %w", err)
	}
	if fi.Mode()&os.ModeSymlink != 0 || !fi.IsDir() {
		return fmt.Errorf("research: media dir %s is not a directory (a symlink or a file); remove it or set research.media_dir", dir)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("research: media dir %s belongs to uid %d, not this worker's %d: another user could read or replace media; remove it or set research.media_dir", dir, st.Uid, os.Getuid())
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("research: media dir %s has mode %v: other users could replace media; chmod 700 it or set research.media_dir", dir, fi.Mode().Perm())
	}
	return nil
}
