package workflows_test

import (
	"errors"
	"reflect"
	"strconv"
	"testing"
	"time"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/lethe-research/lethe/config/load"
	"github.com/lethe-research/lethe/graph/embedded"
	"github.com/lethe-research/lethe/internal/lethetest"
	"github.com/lethe-research/lethe/llm/llmtest"
	"github.com/lethe-research/lethe/service"
	"github.com/lethe-research/lethe/workflows"
)

// longScript keeps the root busy forever: evidence, a search (deduplicated
// after the first time) and continue, so every tracker moves.
func longScript() llmtest.Script {
	return llmtest.Script{EmbeddingDim: 128, Rules: []llmtest.Rule{
		{Name: "loop", Match: []string{"^=GOAL"}, Reply: `{"ops":[
			{"op":"evidence","task":"root","content":"Dendrites penetrate solid electrolytes along grain boundaries.","embed_text":"dendrites grain boundaries"},
			{"op":"call","task":"root","tool":"web_search","args":{"query":"solid electrolyte dendrites"}},
			{"op":"continue","task":"root"}]}`},
		{Name: "compose", Match: []string{"^Goal: "}, Reply: "## Findings\n\nDendrites [1]."},
	}}
}

// chain runs a session to completion on fresh test environments, following
// continue-as-new by hand; it returns the final state, the result and the
// state carried at each continuation.
func chain(t *testing.T, iterations, every int) (workflows.SessionState, workflows.SessionResult, []workflows.SessionState) {
	t.Helper()
	return chainScript(t, longScript(), map[string]string{
		"budget.max_iterations": strconv.Itoa(iterations), "budget.psi_threshold": "1",
		"temporal.continue_every": strconv.Itoa(every), "budget.max_wall_clock": "24h",
		// Every answer after the first changes nothing (held evidence, a
		// deduplicated query): the no-op count grows and is carried, but
		// must not stop the session.
		"loop.noop_limit": "0",
	})
}

// chainScript is chain with any script and parameters.
func chainScript(t *testing.T, script llmtest.Script, params map[string]string) (workflows.SessionState, workflows.SessionResult, []workflows.SessionState) {
	t.Helper()
	srv := llmtest.NewServer(script)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	cfg := lethetest.Config(t, srv.URL(), dir, params)
	store, err := embedded.Open(cfg.Graph.Path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	acts, err := service.NewActivities(cfg, load.Sources{Env: []string{}}, store, nil)
	if err != nil {
		t.Fatal(err)
	}
	in := workflows.SessionInput{Goal: goal, Config: &cfg}
	var carried []workflows.SessionState
	for run := 0; ; run++ {
		var suite testsuite.WorkflowTestSuite
		env := suite.NewTestWorkflowEnvironment()
		env.SetTestTimeout(5 * time.Minute)
		service.Register(env, acts)
		env.ExecuteWorkflow(workflows.SessionWorkflow, in)
		var last workflows.SessionState
		v, err := env.QueryWorkflow(workflows.QueryState)
		if err != nil {
			t.Fatal(err)
		}
		if err := v.Get(&last); err != nil {
			t.Fatal(err)
		}
		werr := env.GetWorkflowError()
		var can *workflow.ContinueAsNewError
		if errors.As(werr, &can) {
			var next workflows.SessionInput
			if err := converter.GetDefaultDataConverter().FromPayloads(can.Input, &next); err != nil {
				t.Fatal(err)
			}
			// What the new run starts with is exactly what the old one ended with.
			want := last
			want.RunIterations, want.Runs = 0, last.Runs+1
			if !reflect.DeepEqual(*next.State, want) {
				t.Fatalf("run %d: carried state differs from the state at continue-as-new:\ncarried %+v\nlast    %+v", run, *next.State, want)
			}
			carried = append(carried, *next.State)
			in = next
			continue
		}
		if werr != nil {
			t.Fatal(werr)
		}
		var res workflows.SessionResult
		if err := env.GetWorkflowResult(&res); err != nil {
			t.Fatal(err)
		}
		return last, res, carried
	}
}

func TestContinueAsNewCarriesStateExactly(t *testing.T) {
	n, every := 500, 100
	if testing.Short() {
		n, every = 60, 20
	}
	whole, wres, none := chain(t, n, n+1)
	split, sres, carried := chain(t, n, every)
	if len(none) != 0 {
		t.Fatalf("uninterrupted run continued as new %d times", len(none))
	}
	if len(carried) != n/every { // the last one fires after iteration n
		t.Fatalf("%d continuations, want %d", len(carried), n/every)
	}
	for i, st := range carried {
		if st.Iteration != (i+1)*every || st.Runs != i+1 {
			t.Errorf("continuation %d at iteration %d (runs %d), want %d", i, st.Iteration, st.Runs, (i+1)*every)
		}
	}
	if wres.Iterations != n || sres.Iterations != n || sres.StopReason != workflows.StopMaxIterations {
		t.Fatalf("iterations %d/%d stop %q", wres.Iterations, sres.Iterations, sres.StopReason)
	}
	// Budget, trackers, signals, zero-yield count and thinking budget evolve
	// identically whether or not the session was split into runs.
	// Only the start time and measured model latency may differ between the
	// two sessions (they ran at different moments).
	whole.Runs, split.Runs, whole.RunIterations, split.RunIterations = 0, 0, 0, 0
	split.StartedAt, split.Stats.LLMLatencyMS = whole.StartedAt, whole.Stats.LLMLatencyMS
	if !reflect.DeepEqual(whole, split) {
		t.Fatalf("state after %d iterations differs:\nwhole %+v\nsplit %+v", n, whole, split)
	}
	if whole.ZeroYield == 0 || whole.NoOps != n-1 || whole.Trackers == (workflows.SessionState{}).Trackers {
		t.Fatalf("the scenario did not exercise the trackers: %+v", whole)
	}
}
