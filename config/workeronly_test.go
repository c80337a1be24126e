package config

import (
	"reflect"
	"testing"
)

// Every worker-only key is a parameter (a typo would leave a setting open
// to sessions), and a config given by a session conflicts with the
// worker's only where it sets a different value.
func TestWorkerOnlyKeys(t *testing.T) {
	vals := Defaults().Flatten()
	for _, k := range workerOnly {
		if _, ok := vals[k]; !ok {
			t.Errorf("worker-only key %s is not a parameter", k)
		}
	}
	worker := Defaults()
	worker.LLM.BaseURL, worker.Eval.OutDir = "http://127.0.0.1:1", "/srv/eval"
	given := worker
	if bad := given.WorkerOnlyConflicts(worker); len(bad) != 0 {
		t.Errorf("the worker's own values conflict: %v", bad)
	}
	cleared := worker.WithoutWorkerOnly()
	if bad := cleared.WorkerOnlyConflicts(worker); len(bad) != 0 || cleared.LLM.BaseURL != "" || cleared.Eval.OutDir != "" {
		t.Errorf("cleared config: conflicts %v, llm.base_url %q, eval.out_dir %q", bad, cleared.LLM.BaseURL, cleared.Eval.OutDir)
	}
	if filled := cleared.WithWorkerOnly(worker); filled.LLM.BaseURL != worker.LLM.BaseURL || filled.Eval.OutDir != worker.Eval.OutDir {
		t.Errorf("filled config: %q, %q", filled.LLM.BaseURL, filled.Eval.OutDir)
	}
	checkCopiesWorkerOnly(t)
	partial := Defaults() // a config whose JSON left the worker's keys out
	if bad := partial.WorkerOnlyConflicts(worker); len(bad) != 0 {
		t.Errorf("defaults conflict: %v", bad)
	}
	given.Eval.JudgeBaseURL, given.Budget.MaxIterations = "http://127.0.0.1:2", 3
	if bad := given.WorkerOnlyConflicts(worker); len(bad) != 1 || bad[0] != "eval.judge_base_url" {
		t.Errorf("conflicts %v, want [eval.judge_base_url]", bad)
	}
}

// checkCopiesWorkerOnly: WithWorkerOnly copies exactly the keys of
// workerOnly, and WithoutWorkerOnly empties exactly those.
func checkCopiesWorkerOnly(t *testing.T) {
	t.Helper()
	worker := Defaults()
	v := reflect.ValueOf(&worker).Elem()
	for _, k := range workerOnly {
		fieldByKey(v, k).SetString("worker-" + k)
	}
	base := Defaults()
	filled, cleared := base.WithWorkerOnly(worker).Flatten(), base.WithoutWorkerOnly().Flatten()
	want, def := worker.Flatten(), base.Flatten()
	for k := range def {
		switch {
		case WorkerOnly(k) && (filled[k] != want[k] || cleared[k] != ""):
			t.Errorf("%s: filled %v (want %v), cleared %v", k, filled[k], want[k], cleared[k])
		case !WorkerOnly(k) && (filled[k] != def[k] || cleared[k] != def[k]):
			t.Errorf("%s is not worker-only but WithWorkerOnly changed it", k)
		}
	}
}

// TestWorkerOnlyConflictsAcceptsRedactedOwn: a config resolved by the
// worker records its endpoints redacted; carried into a child session or
// the next run, it is the worker's own, not a conflict, while another
// endpoint still is.
func TestWorkerOnlyConflictsAcceptsRedactedOwn(t *testing.T) {
	worker := Defaults()
	worker.LLM.BaseURL = "https://user:secret@models.example/v1?api_key=k"
	carried := worker.Redacted()
	if carried.LLM.BaseURL == worker.LLM.BaseURL {
		t.Fatal("the test's URL was not redacted")
	}
	if bad := carried.WorkerOnlyConflicts(worker); len(bad) != 0 {
		t.Fatalf("the worker's own redacted endpoint is a conflict: %v", bad)
	}
	other := carried
	other.LLM.BaseURL = "https://attacker.example/v1"
	if bad := other.WorkerOnlyConflicts(worker); len(bad) != 1 || bad[0] != "llm.base_url" {
		t.Fatalf("another endpoint: conflicts %v, want [llm.base_url]", bad)
	}
}
