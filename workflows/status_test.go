package workflows_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/internal/lethetest"
	"github.com/lethe-research/lethe/internal/lethetest/evaltest"
	"github.com/lethe-research/lethe/llm/llmtest"
	"github.com/lethe-research/lethe/workflows"
)

// upserts are the search attributes a session upserted, in order, as the
// test environment hands them to its recorder.
type upserts []temporal.SearchAttributes

// recordUpserts makes env hand every UpsertTypedSearchAttributes of the
// workflow to u; the environment still validates and applies each one.
func recordUpserts(env *testsuite.TestWorkflowEnvironment, u *upserts) {
	env.OnUpsertTypedSearchAttributes(mock.Anything).Run(func(args mock.Arguments) {
		*u = append(*u, args.Get(0).(temporal.SearchAttributes))
	}).Return(nil).Maybe()
}

// status is the LetheStatus visibility holds at the end: the last one
// upserted ("" when none was).
func (u upserts) status() string {
	for i := len(u) - 1; i >= 0; i-- {
		if v, ok := u[i].GetKeyword(workflows.AttrStatus); ok {
			return v
		}
	}
	return ""
}

func (u upserts) statuses() []string {
	var out []string
	for _, sa := range u {
		if v, ok := sa.GetKeyword(workflows.AttrStatus); ok {
			out = append(out, v)
		}
	}
	return out
}

// TestFailedSessionShowsFailed runs a session into each way it can fail
// and checks that its LetheStatus ends as failed, so that
// LetheStatus="running" no longer lists it.
func TestFailedSessionShowsFailed(t *testing.T) {
	withConfig := func(goal string) func(*config.Config) workflows.SessionInput {
		return func(c *config.Config) workflows.SessionInput { return workflows.SessionInput{Goal: goal, Config: c} }
	}
	cases := []struct {
		name  string
		extra map[string]string
		input func(*config.Config) workflows.SessionInput
		fault func(*testsuite.TestWorkflowEnvironment, graph.Store)
		want  string // in the error
	}{
		{name: "empty goal", input: withConfig(" "), want: "goal is empty"},
		{name: "oversize goal", input: withConfig(strings.Repeat("why ", 1200)), want: "session.goal_max_chars"},
		{name: "config and params", input: func(c *config.Config) workflows.SessionInput {
			return workflows.SessionInput{Goal: goal, Config: c, Params: map[string]string{"budget.max_iterations": "3"}}
		}, want: "either config or params"},
		{name: "health check", extra: map[string]string{"llm.base_url": "http://127.0.0.1:9"}, input: withConfig(goal), want: "health check"},
		{name: "graph lost in the loop", input: withConfig(goal), fault: resetOnActivity("Reason"), want: "iteration 1"},
		{name: "graph lost in assembly", input: withConfig(goal), fault: resetOnActivity("CollectSections"), want: "collect sections"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.NewServer(lethetest.Script(t, "battery_root_done"))
			t.Cleanup(srv.Close)
			env, store, cfg := sessionEnv(t, srv.URL(), tc.extra, []string{})
			var u upserts
			recordUpserts(env, &u)
			if tc.fault != nil {
				tc.fault(env, store)
			}
			r := execute(t, env, store, cfg, srv, tc.input)
			if r.err == nil || !strings.Contains(r.err.Error(), tc.want) {
				t.Fatalf("error %v, want one naming %q", r.err, tc.want)
			}
			if got := u.status(); got != workflows.StatusFailed {
				t.Fatalf("LetheStatus ends %q (upserted %v), want %q", got, u.statuses(), workflows.StatusFailed)
			}
		})
	}
}

// resetOnActivity clears the session's graph when the named activity
// (local or not) starts, as a second session started with the same id
// does: every later store step finds no session, which retrying cannot
// fix.
func resetOnActivity(name string) func(*testsuite.TestWorkflowEnvironment, graph.Store) {
	return func(env *testsuite.TestWorkflowEnvironment, store graph.Store) {
		reset := func(info *activity.Info, ctx context.Context) {
			if info.ActivityType.Name == name {
				if err := store.ResetSession(ctx, info.WorkflowExecution.ID); err != nil {
					panic(err)
				}
			}
		}
		env.SetOnActivityStartedListener(func(info *activity.Info, ctx context.Context, _ converter.EncodedValues) { reset(info, ctx) })
		env.SetOnLocalActivityStartedListener(func(info *activity.Info, ctx context.Context, _ []any) { reset(info, ctx) })
	}
}

// TestFailedBootstrapShowsFailed: the embedding server stops answering
// after the health check, so the bootstrap's embedding waits out the
// outage tolerance and the session fails; its status says so, not
// waiting_for_model or running.
func TestFailedBootstrapShowsFailed(t *testing.T) {
	var u upserts
	r := runFaulty(t, "battery_root_done", map[string]string{"llm.outage_tolerance": "1m"},
		func(_ int, r *http.Request) bool { return isEmbed(r) },
		func(env *testsuite.TestWorkflowEnvironment) { recordUpserts(env, &u) })
	if r.err == nil || !strings.Contains(r.err.Error(), "bootstrap") {
		t.Fatalf("error %v, want the bootstrap's", r.err)
	}
	if got := u.status(); got != workflows.StatusFailed {
		t.Fatalf("LetheStatus ends %q (upserted %v), want %q", got, u.statuses(), workflows.StatusFailed)
	}
}

// TestUnresolvedConfigShowsFailed: a session started with parameters the
// worker refuses has no config to say whether the search attributes are
// registered; ResolveConfig's error says whether the worker registered
// them. Registered: LetheStatus=failed. Not (temporal.search_attributes
// false on the worker): no upsert, which would fail every workflow task
// on a namespace without them.
func TestUnresolvedConfigShowsFailed(t *testing.T) {
	for _, registered := range []string{"true", "false"} {
		t.Run("registered="+registered, func(t *testing.T) {
			var u upserts
			srv := llmtest.NewServer(lethetest.Script(t, "battery_root_done"))
			t.Cleanup(srv.Close)
			r := runAt(t, srv, srv.URL(), map[string]string{"temporal.search_attributes": registered}, func(*config.Config) workflows.SessionInput {
				return workflows.SessionInput{Goal: goal, Params: map[string]string{"budget.max_iteratons": "3"}}
			}, func(env *testsuite.TestWorkflowEnvironment) { recordUpserts(env, &u) })
			if r.err == nil || !strings.Contains(r.err.Error(), "budget.max_iteratons") {
				t.Fatalf("error %v, want the unknown parameter named", r.err)
			}
			want := map[string][]string{"true": {workflows.StatusFailed}, "false": nil}[registered]
			if got := u.statuses(); strings.Join(got, ",") != strings.Join(want, ",") {
				t.Fatalf("upserted %v, want %v", got, want)
			}
		})
	}
}

// TestFinishedSessionAttributesEqualResult: the search attributes a
// finished session leaves are the numbers of its result, not those of the
// last iteration's read (which comes before the root is completed and the
// graph finalized).
func TestFinishedSessionAttributesEqualResult(t *testing.T) {
	var u upserts
	srv := llmtest.NewServer(lethetest.Script(t, "battery_root_done"))
	t.Cleanup(srv.Close)
	r := runAt(t, srv, srv.URL(), nil, func(c *config.Config) workflows.SessionInput {
		return workflows.SessionInput{Goal: goal, Config: c}
	}, func(env *testsuite.TestWorkflowEnvironment) { recordUpserts(env, &u) })
	if r.err != nil {
		t.Fatal(r.err)
	}
	if len(u) == 0 {
		t.Fatal("no search attributes upserted")
	}
	last := u[len(u)-1]
	status, _ := last.GetKeyword(workflows.AttrStatus)
	iter, _ := last.GetInt64(workflows.AttrIteration)
	done, _ := last.GetInt64(workflows.AttrTasksDone)
	ev, _ := last.GetInt64(workflows.AttrEvidence)
	tokens, _ := last.GetFloat64(workflows.AttrTokens)
	psi, _ := last.GetFloat64(workflows.AttrPsi)
	got := []any{status, iter, done, ev, tokens, psi}
	want := []any{workflows.StatusDone, int64(r.res.Iterations), int64(r.res.TasksDone), int64(r.res.Evidence), float64(r.res.Tokens), r.res.Psi}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("last upsert (status, iteration, tasks done, evidence, tokens, psi) = %v, result %v", got, want)
		}
	}
}

// TestFailedEvaluationShowsFailed: an evaluation whose config is refused
// fails, and its LetheStatus says so instead of staying at evaluating.
func TestFailedEvaluationShowsFailed(t *testing.T) {
	env, cfg, _ := evalEnv(t, map[string]string{"temporal.search_attributes": "true"})
	cfg.Budget.MinIterations = cfg.Budget.MaxIterations + 1
	var u upserts
	recordUpserts(env, &u)
	env.ExecuteWorkflow(workflows.EvaluationWorkflow, workflows.EvalInput{Questions: evaltest.Questions()[:1], Systems: []string{workflows.SystemRAG}, Config: &cfg})
	if err := env.GetWorkflowError(); err == nil || !strings.Contains(err.Error(), "budget.min_iterations") {
		t.Fatalf("error %v, want the config's one", err)
	}
	if got := u.status(); got != workflows.StatusFailed {
		t.Fatalf("LetheStatus ends %q (upserted %v), want %q", got, u.statuses(), workflows.StatusFailed)
	}
}
