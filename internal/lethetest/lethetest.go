// Package lethetest holds the test harness shared by the workflow tests
// (SDK test environment) and the end-to-end tests (real dev server): the
// scripted model server, a session configuration pointing at it, and the
// embedded graph store in a temporary directory.
package lethetest

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/config/load"
	"github.com/lethe-research/lethe/llm/llmtest"
)

// Root is the repository root (this file lives in internal/lethetest).
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// Script loads testdata/scripts/<name>.json.
func Script(t testing.TB, name string) llmtest.Script {
	t.Helper()
	s, err := llmtest.LoadScript(filepath.Join(Root(), "testdata", "scripts", name+".json"))
	if err != nil {
		t.Fatalf("load script %s: %v", name, err)
	}
	return s
}

// Params are the session parameters every scripted test shares: both model
// endpoints at the scripted server, the test corpus, a graph file in dir,
// short timeouts so that a killed worker is noticed within seconds.
func Params(modelURL, dir string) map[string]string {
	return map[string]string{
		"llm.base_url":               modelURL,
		"embed.base_url":             modelURL,
		"embed.query_prefix":         "query: ",
		"embed.doc_prefix":           "passage: ",
		"research.corpus_dir":        filepath.Join(Root(), "testdata", "corpus"),
		"graph.path":                 filepath.Join(dir, "graph.db"),
		"llm.timeout":                "20s",
		"temporal.activity_timeout":  "15s",
		"temporal.heartbeat_timeout": "5s",
		"budget.max_iterations":      "12",
		"thinking.min_tokens":        "256",
		"thinking.max_tokens":        "1024",
		"research.batch_size":        "2",
		"research.max_pages":         "4",
		"telemetry.metrics_addr":     "",
		// The scripted conversations are written around the model's own
		// first search; the seed search has its own tests.
		"research.seed_search": "false",
	}
}

// Config resolves Params plus extra overrides without reading the process
// environment.
func Config(t testing.TB, modelURL, dir string, extra map[string]string) config.Config {
	t.Helper()
	p := Params(modelURL, dir)
	for k, v := range extra {
		p[k] = v
	}
	c, err := load.Load(load.Sources{Env: []string{}, Overrides: p})
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	return c
}

// Env turns parameters into LETHE_* environment variables for a worker
// process.
func Env(p map[string]string) []string {
	var env []string
	for _, kv := range os.Environ() { // the worker sees only the test's parameters
		if !strings.HasPrefix(kv, load.EnvPrefix) {
			env = append(env, kv)
		}
	}
	for k, v := range p {
		env = append(env, load.EnvName(k)+"="+v)
	}
	return env
}
