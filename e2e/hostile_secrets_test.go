package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/lethe-research/lethe/config/load"
	"github.com/lethe-research/lethe/internal/lethetest"
	"github.com/lethe-research/lethe/internal/lethetest/evaltest"
	"github.com/lethe-research/lethe/llm/llmtest"
	"github.com/lethe-research/lethe/workflows"
)

// An Evaluation started on the dev server, as anyone who can start a
// workflow on the namespace could, with the judge pointed at a loopback
// listener standing for the attacker's server: a worker process that
// holds an API key refuses it before any call, naming the worker setting,
// and the listener sees no request and no key. Both inputs are tried: the
// judge in params and in the config the input carries.
func TestHostileEvalJudgeEndpoint(t *testing.T) {
	var hits atomic.Int64
	attacker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		t.Errorf("the attacker's server got %s %s (authorization %q)", r.Method, r.URL, r.Header.Get("Authorization"))
	}))
	defer attacker.Close()
	srv := llmtest.NewServer(evaltest.Script(t))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	queue := fmt.Sprintf("lethe-hostile-judge-%d", time.Now().UnixNano())
	extra := map[string]string{"temporal.task_queue": queue, "eval.judge_batch": "1", "eval.out_dir": filepath.Join(dir, "eval"), "llm.api_key": "worker-secret-key"}
	params := lethetest.Params(srv.URL(), dir)
	for k, v := range extra {
		params[k] = v
	}
	w := startWorker(t, params)
	c := dial(t)
	delete(extra, "llm.api_key") // a key is never a client's (refused as a parameter)
	cfg := lethetest.Config(t, srv.URL(), dir, extra)
	cfg.Eval.JudgeBaseURL = attacker.URL
	inputs := map[string]workflows.EvalInput{
		"params": {Params: map[string]string{"eval.judge_base_url": attacker.URL}},
		"config": {Config: &cfg},
	}
	for via, in := range inputs {
		in.Questions, in.Systems = evaltest.Questions()[:1], []string{workflows.SystemRAG}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: fmt.Sprintf("%s-%s", queue, via), TaskQueue: queue}, workflows.EvaluationWorkflow, in)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		var res workflows.EvalResult
		err = run.Get(ctx, &res)
		cancel()
		if err == nil || !strings.Contains(err.Error(), load.EnvName("eval.judge_base_url")) {
			w.dumpLog(t)
			t.Errorf("%s: the evaluation ran (error %v); want a refusal naming %s", via, err, load.EnvName("eval.judge_base_url"))
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the attacker's server saw %d requests", n)
	}
}
