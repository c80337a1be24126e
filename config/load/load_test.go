package load

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lethe-research/lethe/config"
)

func loadDefaults(t *testing.T) config.Config {
	t.Helper()
	c, err := Load(Sources{Env: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestDefaultsMatchLoad(t *testing.T) {
	if got, want := config.Defaults(), loadDefaults(t); !reflect.DeepEqual(got, want) {
		t.Fatalf("Defaults() differs from Load's defaults:\n got  %+v\n want %+v", got, want)
	}
}

func TestLoadLayers(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "lethe.yaml")
	os.WriteFile(file, []byte("budget:\n  max_iterations: 40\n  max_wall_clock: 45m\nllm:\n  base_url: http://gpu:8080\n"), 0o644)
	c, err := Load(Sources{File: file, Env: []string{"LETHE_BUDGET_MAX_ITERATIONS=50", "HOME=/root", "LETHE_CACHE=/c", "LETHE_TEST_NEO4J_URI=bolt://x"},
		Overrides: map[string]string{"thinking.min_tokens": "100"}})
	if err != nil {
		t.Fatal(err)
	}
	if c.Budget.MaxIterations != 50 {
		t.Errorf("env must beat file: got %d", c.Budget.MaxIterations)
	}
	if c.Budget.MaxWallClock != 45*time.Minute || c.LLM.BaseURL != "http://gpu:8080" {
		t.Errorf("file values lost: %v %q", c.Budget.MaxWallClock, c.LLM.BaseURL)
	}
	if c.Thinking.MinTokens != 100 {
		t.Errorf("override lost: %d", c.Thinking.MinTokens)
	}
	// LETHE_CONFIG names the file when Sources.File is empty.
	c, err = Load(Sources{Env: []string{"LETHE_CONFIG=" + file}})
	if err != nil || c.Budget.MaxIterations != 40 {
		t.Fatalf("LETHE_CONFIG: %v %d", err, c.Budget.MaxIterations)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("budget:\n  max_iteratons: 3\n"), 0o644)
	cases := []struct {
		name string
		src  Sources
		want string
	}{
		{"unknown file key", Sources{File: bad, Env: []string{}}, "budget.max_iteratons"},
		{"missing file", Sources{File: filepath.Join(dir, "nope.yaml"), Env: []string{}}, "nope.yaml"},
		{"unknown env", Sources{Env: []string{"LETHE_BUDGET_MAX_ITERATONS=3"}}, "LETHE_BUDGET_MAX_ITERATONS"},
		{"out of range", Sources{Env: []string{"LETHE_BUDGET_PSI_THRESHOLD=1.5"}}, "budget.psi_threshold"},
		{"negative", Sources{Env: []string{"LETHE_BUDGET_MAX_ITERATIONS=-1"}}, "budget.max_iterations"},
		{"not a number", Sources{Env: []string{"LETHE_BUDGET_MAX_ITERATIONS=many"}}, "max_iterations"},
		{"bad duration", Sources{Env: []string{"LETHE_BUDGET_MAX_WALL_CLOCK=soon"}}, "max_wall_clock"},
		{"unknown override", Sources{Env: []string{}, Overrides: map[string]string{"budget.nope": "1"}}, "budget.nope"},
		{"cross rule", Sources{Env: []string{"LETHE_THINKING_MIN_TOKENS=20000"}}, "thinking.min_tokens"},
		{"backend", Sources{Env: []string{"LETHE_GRAPH_BACKEND=sqlite"}}, "graph.backend"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(tc.src)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want mention of %q", err, tc.want)
			}
		})
	}
}
