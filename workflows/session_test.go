package workflows_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/config/load"
	"github.com/lethe-research/lethe/din"
	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/graph/embedded"
	"github.com/lethe-research/lethe/internal/lethetest"
	"github.com/lethe-research/lethe/llm/llmtest"
	"github.com/lethe-research/lethe/service"
	"github.com/lethe-research/lethe/workflows"
)

const goal = "How do solid-state batteries fail?"

type run struct {
	res   workflows.SessionResult
	err   error
	store graph.Store
	llm   *llmtest.Server
	cfg   config.Config
}

// runSession runs one whole session on the SDK's test environment with the
// real activities, the embedded graph store and the scripted model server.
func runSession(t *testing.T, script llmtest.Script, extra map[string]string) run {
	t.Helper()
	return runInput(t, script, extra, func(cfg *config.Config) workflows.SessionInput {
		return workflows.SessionInput{Goal: goal, Config: cfg}
	})
}

func runInput(t *testing.T, script llmtest.Script, extra map[string]string, input func(*config.Config) workflows.SessionInput) run {
	t.Helper()
	srv := llmtest.NewServer(script)
	t.Cleanup(srv.Close)
	return runAt(t, srv, srv.URL(), extra, input, nil)
}

// runAt runs a session against the scripted server srv reached at url
// (its own, or a fault injector's in front of it); during, when set, is
// given the environment before the session starts (delayed signals).
func runAt(t *testing.T, srv *llmtest.Server, url string, extra map[string]string, input func(*config.Config) workflows.SessionInput, during func(*testsuite.TestWorkflowEnvironment)) run {
	t.Helper()
	return runAtEnv(t, srv, url, extra, []string{}, input, during)
}

// runAtEnv is runAt with the worker's environment workerEnv (LETHE_*=value):
// the keys of a hosted API, which are never session parameters.
func runAtEnv(t *testing.T, srv *llmtest.Server, url string, extra map[string]string, workerEnv []string, input func(*config.Config) workflows.SessionInput, during func(*testsuite.TestWorkflowEnvironment)) run {
	t.Helper()
	env, store, cfg := sessionEnv(t, url, extra, workerEnv)
	if during != nil {
		during(env)
	}
	return execute(t, env, store, cfg, srv, input)
}

// sessionEnv is a test environment with the real activities on the
// embedded graph store, the model reached at url, the worker's
// environment workerEnv.
func sessionEnv(t *testing.T, url string, extra map[string]string, workerEnv []string) (*testsuite.TestWorkflowEnvironment, graph.Store, config.Config) {
	t.Helper()
	dir := t.TempDir()
	p := lethetest.Params(url, dir)
	for k, v := range extra {
		p[k] = v
	}
	cfg, err := load.Load(load.Sources{Env: workerEnv, Overrides: p})
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	store, err := embedded.Open(cfg.Graph.Path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	acts, err := service.NewActivities(cfg, load.Sources{Env: workerEnv, Overrides: lethetest.Params(url, dir)}, store, nil)
	if err != nil {
		t.Fatal(err)
	}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.SetTestTimeout(2 * time.Minute)
	service.Register(env, acts)
	env.SetWorkerOptions(worker.Options{Interceptors: service.Interceptors(cfg)})
	return env, store, cfg
}

// execute runs the session to its end in env.
func execute(t *testing.T, env *testsuite.TestWorkflowEnvironment, store graph.Store, cfg config.Config, srv *llmtest.Server, input func(*config.Config) workflows.SessionInput) run {
	t.Helper()
	env.ExecuteWorkflow(workflows.SessionWorkflow, input(&cfg))
	if !env.IsWorkflowCompleted() {
		t.Fatal("workflow did not complete")
	}
	r := run{err: env.GetWorkflowError(), store: store, llm: srv, cfg: cfg}
	if r.err == nil {
		if err := env.GetWorkflowResult(&r.res); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

func rulesUsed(srv *llmtest.Server) map[string]int {
	m := map[string]int{}
	for _, r := range srv.Requests() {
		if r.Path == "/v1/chat/completions" {
			m[r.Rule]++
		}
	}
	return m
}

func TestSessionEndsByRootDone(t *testing.T) {
	r := runSession(t, lethetest.Script(t, "battery_root_done"), nil)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.res.StopReason != workflows.StopRootDone {
		t.Fatalf("stop reason %q, want %q; rules %v", r.res.StopReason, workflows.StopRootDone, rulesUsed(r.llm))
	}
	used := rulesUsed(r.llm)
	// Whichever subtask runs first searches; the other may finish on the
	// evidence already in its context; the last one completes the root.
	if used["plan"] != 1 || used["dendrites-search"]+used["interface-search"] == 0 ||
		used["dendrites-done-last"]+used["interface-done-last"] != 1 {
		t.Errorf("unexpected conversation; rules used %v", used)
	}
	if r.res.Stats.WebSearches == 0 || r.res.Stats.NewEvidence == 0 {
		t.Errorf("web searches %d, new evidence %d", r.res.Stats.WebSearches, r.res.Stats.NewEvidence)
	}
	if r.res.Tasks != 3 || r.res.TasksDone != 3 {
		t.Errorf("tasks %d done %d, want 3/3", r.res.Tasks, r.res.TasksDone)
	}
	// The first turn, with nothing researched, tells the model to search;
	// the last, with evidence in hand, does not.
	var prompts []string
	for _, q := range r.llm.Requests() {
		if q.Path == "/v1/chat/completions" {
			prompts = append(prompts, q.User)
		}
	}
	if len(prompts) < 2 || !strings.Contains(prompts[0], din.UnresearchedHint) || strings.Contains(prompts[len(prompts)-1], din.UnresearchedHint) {
		t.Errorf("the unresearched hint should be in the first prompt only:\nfirst:\n%s\nlast:\n%s", prompts[0], prompts[len(prompts)-1])
	}
	if !strings.Contains(r.res.Report, "Solid-state batteries fail mainly by lithium dendrites") {
		t.Errorf("report is not the root result:\n%s", r.res.Report)
	}
	ev, err := r.store.Evidence(t.Context(), "default-test-workflow-id", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(ev) != r.res.Evidence || len(ev) == 0 {
		t.Fatalf("store has %d evidence, result says %d", len(ev), r.res.Evidence)
	}
	for _, e := range ev {
		if !strings.HasPrefix(e.SourceURL, "corpus:///") {
			t.Errorf("evidence from %q, want the corpus", e.SourceURL)
		}
	}
}

func TestSessionEndsByNoReadyTasks(t *testing.T) {
	r := runSession(t, lethetest.Script(t, "battery_no_ready"), nil)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.res.StopReason != workflows.StopNoReadyTasks {
		t.Fatalf("stop reason %q, want %q; rules %v", r.res.StopReason, workflows.StopNoReadyTasks, rulesUsed(r.llm))
	}
	// Assembly composed the report from sections; [99] names no source and
	// was removed after one repair call.
	if r.res.RemovedCitations == 0 {
		t.Errorf("invalid citation [99] was not removed")
	}
	if strings.Contains(r.res.Report, "[99]") {
		t.Errorf("report still cites [99]:\n%s", r.res.Report)
	}
	if !strings.Contains(r.res.Report, "## Sources") || !strings.Contains(r.res.Report, "corpus:///") {
		t.Errorf("report has no source list pointing at the corpus:\n%s", r.res.Report)
	}
	if r.res.Citations == 0 {
		t.Errorf("no valid citations survived:\n%s", r.res.Report)
	}
}

func TestSessionEndsByPsi(t *testing.T) {
	script := llmtest.Script{EmbeddingDim: 256, Rules: []llmtest.Rule{
		// Every task keeps searching the same ground: evidence converges.
		{Name: "search", Match: []string{"^=GOAL"}, Reply: `{"ops":[{"op":"call","task":"root","tool":"web_search","args":{"query":"solid electrolyte dendrites interface degradation"}},{"op":"continue","task":"root"}]}`},
		{Name: "compose", Match: []string{"^Goal: "}, Reply: "## Findings\n\nDendrites and interfaces [1]."},
	}}
	// Repeating a deduplicated query changes nothing: the no-op limit
	// would stop this session first (TestNoOpIterations); off here, where
	// the point is ψ.
	r := runSession(t, script, map[string]string{"budget.psi_threshold": "0.3", "budget.max_iterations": "30", "budget.min_iterations": "2", "loop.noop_limit": "0"})
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.res.StopReason != workflows.StopConverged {
		t.Fatalf("stop reason %q after %d iterations (psi %.3f), want %q", r.res.StopReason, r.res.Iterations, r.res.Psi, workflows.StopConverged)
	}
	if r.res.Iterations >= 30 || r.res.Psi <= 0.3 {
		t.Fatalf("iterations %d psi %.3f", r.res.Iterations, r.res.Psi)
	}
	if r.res.Stats.DuplicateCalls == 0 {
		t.Errorf("the repeated query was never deduplicated")
	}
}

func TestRepairLoopRecoversFromInvalidJSONTwice(t *testing.T) {
	valid := `{"ops":[{"op":"complete","task":"root","result":"Dendrites and interfaces.","embed_text":"dendrites interfaces"}]}`
	script := llmtest.Script{EmbeddingDim: 256, Rules: []llmtest.Rule{
		{Name: "repair-2", Match: []string{`repair attempt 2 of 2`}, Reply: valid},
		{Name: "repair-1", Match: []string{`repair attempt 1 of 2`}, Reply: `{"ops":[{"op":"complete","task":"nope"}]}`},
		{Name: "first", Match: []string{"^=GOAL"}, Reply: `<think>hmm</think> I think the answer is {ops: broken`},
	}}
	r := runSession(t, script, nil)
	if r.err != nil {
		t.Fatal(r.err)
	}
	used := rulesUsed(r.llm)
	if used["first"] != 1 || used["repair-1"] != 1 || used["repair-2"] != 1 {
		t.Fatalf("rules used %v, want one of each", used)
	}
	if r.res.StopReason != workflows.StopRootDone || r.res.Stats.RepairCalls != 2 || r.res.Iterations != 1 {
		t.Fatalf("stop %q repairs %d iterations %d", r.res.StopReason, r.res.Stats.RepairCalls, r.res.Iterations)
	}
	// The repair prompts carried the errors back to the model.
	for _, req := range r.llm.Requests() {
		if req.Rule == "repair-2" && !strings.Contains(req.User, "nope") {
			t.Errorf("second repair prompt does not name the unknown id:\n%s", req.User)
		}
	}
}

func TestFailedLLMCallRevertsTaskAndCountsIteration(t *testing.T) {
	script := llmtest.Script{EmbeddingDim: 256, Rules: []llmtest.Rule{
		{Name: "broken", Match: []string{"^=GOAL"}, Status: 400},
	}}
	r := runSession(t, script, map[string]string{"budget.max_iterations": "3"})
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.res.StopReason != workflows.StopMaxIterations || r.res.Iterations != 3 {
		t.Fatalf("stop %q after %d iterations, want max_iterations after 3", r.res.StopReason, r.res.Iterations)
	}
	// The root was selected every iteration: it went back to PENDING each time.
	if r.res.Stats.FailedCalls != 3 || rulesUsed(r.llm)["broken"] != 3 {
		t.Fatalf("failed calls %d, broken answered %d", r.res.Stats.FailedCalls, rulesUsed(r.llm)["broken"])
	}
}

func TestBadInputFailsBeforeAnyWork(t *testing.T) {
	script := lethetest.Script(t, "battery_root_done")
	cases := []struct {
		name  string
		extra map[string]string
		input func(*config.Config) workflows.SessionInput
		want  string
	}{
		{"empty goal", nil, func(c *config.Config) workflows.SessionInput { return workflows.SessionInput{Goal: "  ", Config: c} }, "goal is empty"},
		{"oversize goal", nil, func(c *config.Config) workflows.SessionInput {
			return workflows.SessionInput{Goal: strings.Repeat("why ", 1200), Config: c}
		}, "session.goal_max_chars"},
		{"unknown parameter", nil, func(*config.Config) workflows.SessionInput {
			return workflows.SessionInput{Goal: goal, Params: map[string]string{"budget.max_iteratons": "3"}}
		}, "budget.max_iteratons"},
		{"out-of-range threshold", nil, func(*config.Config) workflows.SessionInput {
			return workflows.SessionInput{Goal: goal, Params: map[string]string{"budget.psi_threshold": "1.7"}}
		}, "budget.psi_threshold"},
		{"unreachable model server", map[string]string{"llm.base_url": "http://127.0.0.1:9"}, func(c *config.Config) workflows.SessionInput {
			return workflows.SessionInput{Goal: goal, Config: c}
		}, "llm.base_url = http://127.0.0.1:9"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := runInput(t, script, tc.extra, tc.input)
			if r.err == nil || !strings.Contains(r.err.Error(), tc.want) {
				t.Fatalf("error %v, want one naming %q", r.err, tc.want)
			}
			if n := r.llm.ChatCount(); n != 0 {
				t.Errorf("%d chat calls before the error", n)
			}
			if _, err := r.store.GetSession(t.Context(), "default-test-workflow-id"); err == nil {
				t.Errorf("a session was created despite bad input")
			}
		})
	}
}

func TestSessionWithCLIInputResolvesConfigOnWorker(t *testing.T) {
	// As `temporal workflow start --input '{"goal": ...}'` does: no config in
	// the input; the worker resolves its own tree plus the params.
	r := runInput(t, lethetest.Script(t, "battery_root_done"), nil, func(*config.Config) workflows.SessionInput {
		return workflows.SessionInput{Goal: goal, Params: map[string]string{"budget.max_iterations": "3"}}
	})
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.res.StopReason != workflows.StopMaxIterations || r.res.Iterations != 3 {
		t.Fatalf("stop %q after %d iterations, want max_iterations after 3", r.res.StopReason, r.res.Iterations)
	}
}

// TestReasonSendsSchemaForm checks what the Reason activity sends with
// llm.json_schema on: the strict form with "strict": true by default, the
// loose form (optional fields not required) with "strict": false when
// llm.json_schema_loose is set; and the seed of llm.seed with every call.
func TestReasonSendsSchemaForm(t *testing.T) {
	for _, loose := range []bool{false, true} {
		t.Run(fmt.Sprintf("loose=%v", loose), func(t *testing.T) {
			r := runSession(t, lethetest.Script(t, "battery_root_done"), map[string]string{
				"llm.json_schema": "true", "llm.json_schema_loose": fmt.Sprint(loose), "llm.seed": "42",
			})
			if r.err != nil {
				t.Fatal(r.err)
			}
			want := din.Schema()
			if loose {
				want = din.LooseSchema()
			}
			n, verdicts := 0, 0
			for _, q := range r.llm.Requests() {
				if q.Path != "/v1/chat/completions" || q.Body == "" {
					continue
				}
				body := decodeChatBody(t, q.Body)
				if body.Seed != 42 {
					t.Errorf("seed %d, want 42", body.Seed)
				}
				_, strict, schema := body.schema()
				if schema == nil {
					continue // an assembly call: free text
				}
				if strings.HasPrefix(q.User, "Check these citations") {
					// The citation verdicts have their own schema, sent in the
					// same form (docs/citations.md).
					verdicts++
					if strict == loose || !bytes.Contains(schema, []byte(`"verdicts"`)) {
						t.Errorf("verification call: strict %v, schema %.120s…", strict, schema)
					}
					continue
				}
				n++
				if strict == loose || !bytes.Equal(schema, want) {
					t.Errorf("strict %v, schema %.120s…; want strict %v and the %s form", strict, schema, !loose, map[bool]string{false: "strict", true: "loose"}[loose])
				}
			}
			if n == 0 || verdicts == 0 {
				t.Errorf("%d reasoning and %d verification calls carried a schema", n, verdicts)
			}
		})
	}
}

// TestStatsCountCompositionCalls: the session's LLM accounting covers every
// chat call, the assembly's composition and repair calls included, so a
// user reading llm_latency_ms sees all the time spent in the model.
func TestStatsCountCompositionCalls(t *testing.T) {
	const delay = 30 * time.Millisecond
	s := lethetest.Script(t, "battery_no_ready")
	// The script's default answer (what the summary and citation checks
	// get) as a rule, so that every call takes the delay.
	s.Rules = append(s.Rules, llmtest.Rule{Name: "default", Reply: llmtest.DefaultReply})
	for i := range s.Rules {
		s.Rules[i].DelayMS = int(delay.Milliseconds())
	}
	r := runSession(t, s, nil)
	if r.err != nil {
		t.Fatal(r.err)
	}
	chats := r.llm.ChatCount()
	if r.res.Stats.LLMCalls != chats {
		t.Errorf("stats count %d LLM calls, the server answered %d", r.res.Stats.LLMCalls, chats)
	}
	if got, min := time.Duration(r.res.Stats.LLMLatencyMS)*time.Millisecond, time.Duration(chats)*delay; got < min {
		t.Errorf("llm latency %v for %d calls of at least %v each", got, chats, delay)
	}
	used := rulesUsed(r.llm)
	compose := 0
	for _, q := range r.llm.Requests() {
		if q.Path == "/v1/chat/completions" && strings.Contains(q.User, "This is part ") {
			compose++
		}
	}
	if compose < 2 { // the draft and its repair
		t.Errorf("%d composition calls, want the draft and its repair; rules %v", compose, used)
	}
}

// TestComposeAsksForCitationsOnce: a draft that cites nothing gets one
// repair call asking for source numbers; the cited rewrite is the report.
func TestComposeAsksForCitationsOnce(t *testing.T) {
	s := lethetest.Script(t, "battery_no_ready")
	uncited := llmtest.Rule{Name: "compose-uncited", Match: []string{"^Goal: "}, Not: []string{"The draft cites no source"},
		Reply: "## Dendrites\n\nLithium dendrites penetrate the solid electrolyte along grain boundaries."}
	s.Rules = append([]llmtest.Rule{uncited}, s.Rules...)
	r := runSession(t, s, nil)
	if r.err != nil {
		t.Fatal(r.err)
	}
	used := rulesUsed(r.llm)
	if used["compose-uncited"] != 1 || used["compose"] != 1 {
		t.Fatalf("want one uncited draft and one repair; rules used %v", used)
	}
	if r.res.Citations == 0 || !strings.Contains(r.res.Report, "[1]") {
		t.Errorf("the repaired report cites nothing:\n%s", r.res.Report)
	}
	if r.res.Stats.RepairCalls == 0 {
		t.Errorf("the citation repair is not counted: %+v", r.res.Stats)
	}
}
