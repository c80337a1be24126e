package workflows_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/config/load"
	"github.com/lethe-research/lethe/graph/embedded"
	"github.com/lethe-research/lethe/internal/lethetest"
	"github.com/lethe-research/lethe/internal/lethetest/evaltest"
	"github.com/lethe-research/lethe/llm/llmtest"
	"github.com/lethe-research/lethe/service"
	"github.com/lethe-research/lethe/workflows"
)

// workerKey is the worker's chat API key in the hostile tests: what an
// attacker's endpoint must never receive.
const workerKey = "worker-secret-key"

// attackerServer is a loopback listener standing for a server of the
// attacker's: it records every request, with any credential it carries.
type attackerServer struct {
	*httptest.Server
	hits atomic.Int64
}

func newAttacker(t *testing.T) *attackerServer {
	t.Helper()
	a := &attackerServer{}
	a.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.hits.Add(1)
		t.Errorf("the attacker's server got %s %s (authorization %q)", r.Method, r.URL, r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"choices":[{"message":{"content":"{}"}}]}`))
	}))
	t.Cleanup(a.Close)
	return a
}

// hostileEnv is a test environment with the real activities, the scripted
// evaluation model and a worker that holds an API key and its own
// eval.out_dir, which it returns with the worker's config.
func hostileEnv(t *testing.T) (*testsuite.TestWorkflowEnvironment, config.Config) {
	t.Helper()
	srv := llmtest.NewServer(evaltest.Script(t))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	p := lethetest.Params(srv.URL(), dir)
	p["eval.judge_batch"], p["eval.out_dir"], p["temporal.search_attributes"] = "1", filepath.Join(dir, "eval"), "false"
	cfg := lethetest.Config(t, srv.URL(), dir, p)
	cfg.LLM.APIKey = workerKey
	store, err := embedded.Open(cfg.Graph.Path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	acts, err := service.NewActivities(cfg, load.Sources{Env: []string{load.EnvName("llm.api_key") + "=" + workerKey}, Overrides: p}, store, nil)
	if err != nil {
		t.Fatal(err)
	}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.SetTestTimeout(2 * time.Minute)
	service.Register(env, acts)
	env.SetWorkerOptions(worker.Options{Interceptors: service.Interceptors(cfg)})
	return env, cfg
}

// refused checks that the workflow ended with an error that names the
// worker setting (its environment variable) and the attacker saw nothing.
func refused(t *testing.T, env *testsuite.TestWorkflowEnvironment, attacker *attackerServer, key string) {
	t.Helper()
	err := env.GetWorkflowError()
	if !env.IsWorkflowCompleted() || err == nil {
		t.Fatalf("started: completed %v, error %v; want a refusal", env.IsWorkflowCompleted(), err)
	}
	t.Logf("refused: %v", err)
	if msg := err.Error(); !strings.Contains(msg, load.EnvName(key)) || !strings.Contains(msg, "worker configuration only") {
		t.Errorf("the refusal does not name %s: %v", load.EnvName(key), err)
	}
	if attacker != nil && attacker.hits.Load() != 0 {
		t.Errorf("the attacker's server saw %d requests", attacker.hits.Load())
	}
}

// An evaluation that points the judge (or the chat server it falls back
// to) at the attacker's server, by params or in the config it carries, is
// refused before any call: the server never sees a request, let alone the
// worker's key.
func TestHostileEvalJudgeEndpointRefused(t *testing.T) {
	attacker := newAttacker(t)
	qs := evaltest.Questions()[:1]
	for _, key := range []string{"eval.judge_base_url", "llm.base_url"} {
		t.Run("params "+key, func(t *testing.T) {
			env, _ := hostileEnv(t)
			env.ExecuteWorkflow(workflows.EvaluationWorkflow, workflows.EvalInput{Questions: qs, Systems: []string{workflows.SystemRAG},
				Params: map[string]string{key: attacker.URL}})
			refused(t, env, attacker, key)
		})
	}
	t.Run("config eval.judge_base_url", func(t *testing.T) {
		env, cfg := hostileEnv(t)
		cfg.Eval.JudgeBaseURL = attacker.URL
		env.ExecuteWorkflow(workflows.EvaluationWorkflow, workflows.EvalInput{Questions: qs, Systems: []string{workflows.SystemRAG}, Config: &cfg})
		refused(t, env, attacker, "eval.judge_base_url")
	})
}

// An evaluation that names its own output directory is refused and
// writes nothing there.
func TestHostileEvalOutDirRefused(t *testing.T) {
	target := filepath.Join(t.TempDir(), "chosen-by-the-input")
	for _, via := range []string{"params", "config"} {
		t.Run(via, func(t *testing.T) {
			env, cfg := hostileEnv(t)
			in := workflows.EvalInput{Questions: evaltest.Questions()[:1], Systems: []string{workflows.SystemRAG}}
			if via == "params" {
				in.Params = map[string]string{"eval.out_dir": target}
			} else {
				cfg.Eval.OutDir = target
				in.Config = &cfg
			}
			env.ExecuteWorkflow(workflows.EvaluationWorkflow, in)
			refused(t, env, nil, "eval.out_dir")
			if _, err := os.Stat(target); err == nil {
				t.Errorf("the evaluation wrote into %s", target)
			}
		})
	}
}

// An evaluation whose id climbs out of eval.out_dir ("..") is refused and
// writes nothing beside the output directory.
func TestHostileEvalIDRefused(t *testing.T) {
	env, cfg := hostileEnv(t)
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: ".."})
	env.ExecuteWorkflow(workflows.EvaluationWorkflow, workflows.EvalInput{Questions: evaltest.Questions()[:1], Systems: []string{workflows.SystemRAG}, Config: &cfg})
	err := env.GetWorkflowError()
	if err == nil || !strings.Contains(err.Error(), "evaluation id") {
		t.Fatalf("evaluation with id \"..\": error %v, want a refusal of the id", err)
	}
	for _, f := range []string{"results.md", "results.jsonl", "records"} {
		if _, err := os.Stat(filepath.Join(filepath.Dir(cfg.Eval.OutDir), f)); err == nil {
			t.Errorf("%s written outside eval.out_dir", f)
		}
	}
}

// A session that sets the chat server is refused, naming the worker
// setting, instead of running with the setting silently dropped.
func TestHostileSessionEndpointRefused(t *testing.T) {
	attacker := newAttacker(t)
	for _, via := range []string{"params", "config"} {
		t.Run(via, func(t *testing.T) {
			env, cfg := hostileEnv(t)
			in := workflows.SessionInput{Goal: "How do solid-state batteries fail?"}
			if via == "params" {
				in.Params = map[string]string{"llm.base_url": attacker.URL, "budget.max_iterations": "2"}
			} else {
				cfg.LLM.BaseURL = attacker.URL
				in.Config = &cfg
			}
			env.ExecuteWorkflow(workflows.SessionWorkflow, in)
			refused(t, env, attacker, "llm.base_url")
		})
	}
}
