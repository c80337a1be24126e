package workflows_test

import (
	"bytes"
	"errors"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/config/load"
	"github.com/lethe-research/lethe/din"
	"github.com/lethe-research/lethe/graph/embedded"
	"github.com/lethe-research/lethe/internal/lethetest"
	"github.com/lethe-research/lethe/internal/lethetest/evaltest"
	"github.com/lethe-research/lethe/llm/llmtest"
	"github.com/lethe-research/lethe/service"
	"github.com/lethe-research/lethe/workflows"
)

// evalEnv is a test environment with the real activities, the embedded
// store and the scripted evaluation model; fresh makes another
// environment over the same activities (the next run of a continue-as-new).
func evalEnv(t *testing.T, extra map[string]string) (env *testsuite.TestWorkflowEnvironment, cfg config.Config, fresh func() *testsuite.TestWorkflowEnvironment) {
	t.Helper()
	return evalEnvVia(t, extra, nil)
}

// evalEnvVia is evalEnv with the model reached through via (a fault
// injector in front of the scripted server) when via is set.
func evalEnvVia(t *testing.T, extra map[string]string, via func(*llmtest.Server) string) (env *testsuite.TestWorkflowEnvironment, cfg config.Config, fresh func() *testsuite.TestWorkflowEnvironment) {
	t.Helper()
	srv := llmtest.NewServer(evaltest.Script(t))
	t.Cleanup(srv.Close)
	url := srv.URL()
	if via != nil {
		url = via(srv)
	}
	dir := t.TempDir()
	p := map[string]string{"eval.judge_batch": "1", "eval.out_dir": filepath.Join(dir, "eval"), "temporal.search_attributes": "false"}
	for k, v := range extra {
		p[k] = v
	}
	cfg = lethetest.Config(t, url, dir, p)
	store, err := embedded.Open(cfg.Graph.Path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	acts, err := service.NewActivities(cfg, load.Sources{Env: []string{}, Overrides: lethetest.Params(url, dir)}, store, nil)
	if err != nil {
		t.Fatal(err)
	}
	fresh = func() *testsuite.TestWorkflowEnvironment {
		var suite testsuite.WorkflowTestSuite
		env := suite.NewTestWorkflowEnvironment()
		env.SetTestTimeout(2 * time.Minute)
		service.Register(env, acts)
		env.SetWorkerOptions(worker.Options{Interceptors: service.Interceptors(cfg)})
		return env
	}
	return fresh(), cfg, fresh
}

func TestEvaluationScores(t *testing.T) {
	env, cfg, _ := evalEnv(t, nil)
	env.ExecuteWorkflow(workflows.EvaluationWorkflow, workflows.EvalInput{Questions: evaltest.Questions(), Config: &cfg})
	if !env.IsWorkflowCompleted() || env.GetWorkflowError() != nil {
		t.Fatalf("evaluation: completed %v, error %v", env.IsWorkflowCompleted(), env.GetWorkflowError())
	}
	var res workflows.EvalResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if len(res.Summaries) != 3 || res.Failed != 0 {
		t.Fatalf("summaries %+v, failed %d", res.Summaries, res.Failed)
	}
	lethe, rag, loop := res.Summaries[0], res.Summaries[1], res.Summaries[2]
	if lethe.System != "lethe" || rag.System != "rag" || loop.System != "loop" {
		t.Fatalf("systems out of order: %+v", res.Summaries)
	}
	// rag and loop: t-paths 2 of 3 supported (WrongClaim), t-melt 1 of 2
	// (the [9] it was never given), t-flame 1 of 1: pooled 4/6.
	for _, s := range res.Summaries[1:] {
		if math.Abs(s.Precision-4.0/6) > 1e-12 || s.Contains != 1 || s.Judge != 1 || s.Calls == 0 || s.Tokens == 0 {
			t.Errorf("%s: %+v", s.System, s)
		}
		// Each gold string stands in a supported sentence (WrongClaim and
		// the [9] sentence hold none).
		if s.Backed != 1 {
			t.Errorf("%s: correct (backed) %v, want 1", s.System, s.Backed)
		}
	}
	if lethe.Backed > lethe.Contains {
		t.Errorf("lethe: correct (backed) %v above correct (contains) %v", lethe.Backed, lethe.Contains)
	}
	if lethe.Judge != 0 || math.Abs(lethe.Contains-1.0/3) > 1e-12 || lethe.Calls == 0 {
		t.Errorf("lethe: %+v", lethe)
	}
	// A baseline's answer carries no [unverified] mark: both shares agree.
	for _, s := range res.Summaries {
		if s.Verified > s.Contains || s.System != "lethe" && s.Verified != s.Contains {
			t.Errorf("%s: correct (verified) %v against correct (contains) %v", s.System, s.Verified, s.Contains)
		}
	}
	v, err := env.QueryWorkflow(workflows.QueryProgress)
	if err != nil {
		t.Fatal(err)
	}
	var p workflows.EvalProgress
	if err := v.Get(&p); err != nil {
		t.Fatal(err)
	}
	if len(p.Systems) != len(res.Summaries) {
		t.Fatalf("progress: %d systems, want %d", len(p.Systems), len(res.Summaries))
	}
	for i, s := range p.Systems {
		if sm := res.Summaries[i]; s.System != sm.System || s.Contains != sm.Contains || s.Verified != sm.Verified {
			t.Errorf("progress %s: contains %v verified %v; the result says %v and %v", s.System, s.Contains, s.Verified, sm.Contains, sm.Verified)
		}
	}
	b, err := os.ReadFile(filepath.Join(res.Dir, "results.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 9 || !strings.Contains(lines[1], `"question_id":"t-paths","kind":"fact","system":"rag"`) ||
		!strings.Contains(lines[1], `"cited_sentences":3,"supported_sentences":2`) || !strings.Contains(lines[1], "propagate along grain boundaries") {
		t.Fatalf("results.jsonl:\n%s", b)
	}
	for _, f := range []string{"results.md", "accuracy-tokens.svg"} {
		if st, err := os.Stat(filepath.Join(res.Dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// A child session that fails is a failed record and the evaluation goes
// on; continue-as-new after every question keeps the records, and no
// question runs twice.
func TestEvaluationFailedChildAndContinueAsNew(t *testing.T) {
	extra := map[string]string{"session.goal_max_chars": "16", "eval.continue_every": "1"}
	env, cfg, fresh := evalEnv(t, extra)
	in := workflows.EvalInput{Questions: evaltest.Questions(), Config: &cfg}
	var res workflows.EvalResult
	runs := 0
	for ; runs < 6; runs++ {
		env.ExecuteWorkflow(workflows.EvaluationWorkflow, in)
		err := env.GetWorkflowError()
		var can *workflow.ContinueAsNewError
		if !errors.As(err, &can) {
			if err != nil {
				t.Fatal(err)
			}
			if err := env.GetWorkflowResult(&res); err != nil {
				t.Fatal(err)
			}
			break
		}
		in = workflows.EvalInput{}
		if err := converter.GetDefaultDataConverter().FromPayloads(can.Input, &in); err != nil {
			t.Fatal(err)
		}
		if in.State == nil || len(in.State.Records) != 3*(runs+1) {
			t.Fatalf("run %d carried %+v", runs, in.State)
		}
		for _, r := range in.State.Records {
			if r.Answer != "" {
				t.Fatalf("history carries the answer of %s/%s", r.Question, r.System)
			}
		}
		env = fresh()
	}
	if runs+1 != 3 {
		t.Fatalf("%d runs, want 3 (one question each)", runs+1)
	}
	if res.Failed != 3 || res.Summaries[0].System != "lethe" || res.Summaries[0].Failed != 3 || res.Summaries[1].Failed != 0 {
		t.Fatalf("result %+v", res)
	}
	if math.Abs(res.Summaries[1].Precision-4.0/6) > 1e-12 {
		t.Fatalf("rag precision %v after continue-as-new", res.Summaries[1].Precision)
	}
	tab, err := os.ReadFile(filepath.Join(res.Dir, "results.md"))
	if err != nil || !strings.Contains(string(tab), "failed: invalid input: goal has") {
		t.Fatalf("results.md (%v):\n%s", err, tab)
	}
}

// A model outage during a baseline (connections cut, as when the server
// restarts or a call runs past llm.timeout) is retried, not recorded as a
// failure: the records are those of an undisturbed run.
func TestEvaluationRetriesModelOutage(t *testing.T) {
	var f *llmtest.Faulty
	env, cfg, _ := evalEnvVia(t, map[string]string{"llm.outage_max_backoff": "1s"}, func(srv *llmtest.Server) string {
		var err error
		if f, err = llmtest.NewFaulty(srv.Handler()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(f.Close)
		return f.URL()
	})
	f.OnRequest(func(chat int, _ *http.Request) bool { return chat >= 1 && chat <= 3 })
	env.ExecuteWorkflow(workflows.EvaluationWorkflow, workflows.EvalInput{Questions: evaltest.Questions()[:1], Systems: []string{"rag", "loop"}, Config: &cfg})
	var res workflows.EvalResult
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if f.Chats() < 4 || res.Failed != 0 || len(res.Summaries) != 2 {
		t.Fatalf("%d chats; result %+v", f.Chats(), res)
	}
	if rag := res.Summaries[0]; rag.Judge != 1 || rag.Precision != 2.0/3 {
		t.Fatalf("rag after the outage: %+v", rag)
	}
}

// The loop baseline's planning call is held to the plan schema as the
// session's seed plan is, in the form llm.json_schema_loose picks, so
// that the two systems plan alike (docs/seed-search.md).
func TestEvaluationLoopPlanSchema(t *testing.T) {
	var srv *llmtest.Server
	env, cfg, _ := evalEnvVia(t, map[string]string{"llm.json_schema": "true", "llm.json_schema_loose": "true"}, func(s *llmtest.Server) string {
		srv = s
		return s.URL()
	})
	env.ExecuteWorkflow(workflows.EvaluationWorkflow, workflows.EvalInput{Questions: evaltest.Questions()[:1], Systems: []string{"loop"}, Config: &cfg})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	plans := 0
	for _, q := range srv.Requests() {
		if !strings.HasPrefix(q.System, "You plan research.") {
			continue
		}
		plans++
		if _, strict, schema := decodeChatBody(t, q.Body).schema(); strict || !bytes.Equal(schema, din.PlanSchema(cfg.Eval.LoopQueries, false)) {
			t.Errorf("loop plan: strict %v, schema %s; want the loose plan schema", strict, schema)
		}
	}
	if plans != 1 {
		t.Fatalf("%d planning calls, want the loop's one", plans)
	}
}
