package lethetest

import (
	"os"
	"path/filepath"
)

// TemporalCLI finds the temporal CLI: $TEMPORAL_CLI, bin/temporal (the
// link `make temporal` makes), or the cache the Makefile installs into.
// "" when none is there.
func TemporalCLI() string {
	cands := []string{os.Getenv("TEMPORAL_CLI"), filepath.Join(Root(), "bin", "temporal")}
	if home, err := os.UserHomeDir(); err == nil {
		cands = append(cands, filepath.Join(home, ".cache", "lethe", "temporal-v1.5.1", "temporal"))
	}
	for _, c := range cands {
		if c == "" {
			continue
		}
		if st, err := os.Stat(c); err == nil && !st.IsDir() {
			return c
		}
	}
	return ""
}
