package workflows_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/internal/lethetest"
	"github.com/lethe-research/lethe/llm/llmtest"
	"github.com/lethe-research/lethe/workflows"
)

// runFaulty runs a session whose model server sits behind a fault
// injector; cut decides which requests lose their connection.
func runFaulty(t *testing.T, script string, extra map[string]string, cut func(chat int, r *http.Request) bool, during ...func(*testsuite.TestWorkflowEnvironment)) run {
	t.Helper()
	return runFaultyScript(t, lethetest.Script(t, script), extra, cut, during...)
}

// runFaultyScript is runFaulty with the model answering from script.
func runFaultyScript(t *testing.T, script llmtest.Script, extra map[string]string, cut func(chat int, r *http.Request) bool, during ...func(*testsuite.TestWorkflowEnvironment)) run {
	t.Helper()
	srv := llmtest.NewServer(script)
	t.Cleanup(srv.Close)
	f, err := llmtest.NewFaulty(srv.Handler())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	f.OnRequest(cut)
	var hook func(*testsuite.TestWorkflowEnvironment)
	if len(during) > 0 {
		hook = during[0]
	}
	return runAt(t, srv, f.URL(), extra, func(cfg *config.Config) workflows.SessionInput {
		return workflows.SessionInput{Goal: goal, Config: cfg}
	}, hook)
}

// sameOutcome fails unless a disturbed session ended as the undisturbed one.
func sameOutcome(t *testing.T, got, want workflows.SessionResult) {
	t.Helper()
	if got.StopReason != want.StopReason || got.Iterations != want.Iterations || got.Evidence != want.Evidence ||
		got.Tasks != want.Tasks || got.Report != want.Report {
		t.Fatalf("disturbed session differs:\n got  %s, %d iterations, %d tasks, %d evidence\n want %s, %d iterations, %d tasks, %d evidence\nreport:\n%s",
			got.StopReason, got.Iterations, got.Tasks, got.Evidence, want.StopReason, want.Iterations, want.Tasks, want.Evidence, got.Report)
	}
	if got.Stats.FailedCalls != 0 || got.Stats.LLMCalls != want.Stats.LLMCalls {
		t.Fatalf("an outage must cost no call: failed %d, calls %d (undisturbed %d)", got.Stats.FailedCalls, got.Stats.LLMCalls, want.Stats.LLMCalls)
	}
}

func isChat(r *http.Request) bool  { return r.URL.Path == "/v1/chat/completions" }
func isEmbed(r *http.Request) bool { return r.URL.Path == "/v1/embeddings" }

// An outage of the chat server inside a Reason call (five tries cut) is
// waited out: no failed call, no extra iteration, the same report.
func TestChatOutageIsWaitedOut(t *testing.T) {
	base := runSession(t, lethetest.Script(t, "battery_root_done"), nil)
	if base.err != nil {
		t.Fatal(base.err)
	}
	cuts := 0
	r := runFaulty(t, "battery_root_done", nil, func(chat int, req *http.Request) bool {
		if isChat(req) && chat >= 2 && cuts < 5 {
			cuts++
			return true
		}
		return false
	})
	if r.err != nil {
		t.Fatal(r.err)
	}
	sameOutcome(t, r.res, base.res)
	if r.res.ModelWaitedS <= 0 {
		t.Fatalf("model_waited_s %.1f: the wait was not recorded", r.res.ModelWaitedS)
	}
}

// An embedding outage in the middle of research (every embeddings request
// from the 6th on cut six times) is waited out by the research child.
func TestEmbeddingOutageInResearchIsWaitedOut(t *testing.T) {
	base := runSession(t, lethetest.Script(t, "battery_root_done"), nil)
	if base.err != nil {
		t.Fatal(base.err)
	}
	embeds, cuts := 0, 0
	r := runFaulty(t, "battery_root_done", nil, func(chat int, req *http.Request) bool {
		if !isEmbed(req) {
			return false
		}
		embeds++
		if embeds >= 6 && cuts < 6 {
			cuts++
			return true
		}
		return false
	})
	if r.err != nil {
		t.Fatal(r.err)
	}
	if cuts < 6 {
		t.Fatalf("only %d embedding requests were cut (of %d); err %v", cuts, embeds, r.err)
	}
	sameOutcome(t, r.res, base.res)
}

// A model server that stays down past the tolerance ends the session with
// an extractive report, not a failed workflow: every section's material
// and every evidence item's source are in it.
func TestModelDownPastToleranceGivesExtractiveReport(t *testing.T) {
	r := runFaulty(t, "battery_no_ready", map[string]string{"llm.outage_tolerance": "3m"}, func(chat int, req *http.Request) bool {
		return isChat(req) && chat >= 5
	})
	if r.err != nil {
		t.Fatalf("the workflow failed: %v", r.err)
	}
	if r.res.StopReason != workflows.StopComposeFailed {
		t.Fatalf("stop reason %q, want %q", r.res.StopReason, workflows.StopComposeFailed)
	}
	if !strings.Contains(r.res.Report, "extractive") || r.res.Error == "" {
		t.Fatalf("the report does not say it is extractive (error %q):\n%s", r.res.Error, r.res.Report)
	}
	ev, err := r.store.Evidence(t.Context(), r.res.SessionID, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(ev) == 0 {
		t.Fatal("no evidence: the outage came too early to test the report")
	}
	for _, e := range ev {
		if e.SourceURL != "" && !strings.Contains(r.res.Report, e.SourceURL) {
			t.Errorf("source %s of evidence %s is not in the report", e.SourceURL, e.ID)
		}
	}
	if r.res.Stats.FailedCalls != 0 {
		t.Fatalf("failed calls %d: an outage is not a failed call", r.res.Stats.FailedCalls)
	}
}

// A stop request reaches a session that waits for its model: it stops
// waiting and assembles what it has (extractive, since the model is still
// down) instead of waiting out the whole tolerance.
func TestStopEndsAWait(t *testing.T) {
	r := runFaulty(t, "battery_no_ready", nil, func(chat int, req *http.Request) bool {
		return isChat(req) && chat >= 3
	}, func(env *testsuite.TestWorkflowEnvironment) {
		env.RegisterDelayedCallback(func() { env.SignalWorkflow(workflows.SignalStop, nil) }, 5*time.Minute)
	})
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.res.StopReason != workflows.StopComposeFailed || !strings.Contains(r.res.Report, "extractive") {
		t.Fatalf("stop reason %q, report:\n%s", r.res.StopReason, r.res.Report)
	}
	if w := r.res.ModelWaitedS; w < 60 || w > 600 {
		t.Fatalf("waited %.0f s: the stop (at 5 min) did not end the wait (tolerance 30 min)", w)
	}
}

// A stop reaches research runs that wait for the embedding server: the
// session tells its children, they stop waiting and return what they have,
// and the session assembles instead of waiting out the whole tolerance.
func TestStopEndsAResearchWait(t *testing.T) {
	embeds := 0
	r := runFaulty(t, "battery_root_done", nil, func(chat int, req *http.Request) bool {
		if !isEmbed(req) {
			return false
		}
		embeds++
		return embeds >= 6 // down from the research's first embeddings on
	}, func(env *testsuite.TestWorkflowEnvironment) {
		env.RegisterDelayedCallback(func() { env.SignalWorkflow(workflows.SignalStop, nil) }, 5*time.Minute)
	})
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.res.StopReason != workflows.StopRequested && r.res.StopReason != workflows.StopComposeFailed {
		t.Fatalf("stop reason %q, want stop_requested (or compose_failed)", r.res.StopReason)
	}
	if w := r.res.ModelWaitedS; w < 60 || w > 900 {
		t.Fatalf("waited %.0f s: the stop (at 5 min) did not end the research run's wait (tolerance 30 min)", w)
	}
}

// A hosted API's rate limit (every third chat and embeddings call refused
// with 429 and a Retry-After of 40 s, longer than the first backoffs) is
// waited out as an outage is: each refused call is tried again only once
// its Retry-After has passed, the waits are off the budget, and the
// session ends as an undisturbed one. The corpus has no dense stage here:
// its build at worker start runs on the real clock, not the test's, and
// would hold searches for its 40 s.
func TestRetryAfterIsWaitedOut(t *testing.T) {
	script := lethetest.Script(t, "battery_root_done")
	noDense := map[string]string{"research.corpus_dense": "0"}
	base := runSession(t, script, noDense)
	if base.err != nil {
		t.Fatal(base.err)
	}
	script.Hosted = &llmtest.Hosted{Key: "sk-k", RateLimitEvery: 3, RetryAfterS: 40}
	srv := llmtest.NewServer(script)
	t.Cleanup(srv.Close)
	r := runAtEnv(t, srv, srv.URL(), noDense, []string{"LETHE_LLM_API_KEY=sk-k", "LETHE_EMBED_API_KEY=sk-k"},
		func(cfg *config.Config) workflows.SessionInput {
			return workflows.SessionInput{Goal: goal, Config: cfg}
		}, nil)
	if r.err != nil {
		t.Fatal(r.err)
	}
	sameOutcome(t, r.res, base.res)
	refused := 0
	for _, q := range srv.Requests() {
		if q.Status == http.StatusTooManyRequests {
			refused++
		}
	}
	if refused == 0 {
		t.Fatal("no call was refused: the rate limit was not exercised")
	}
	// Parallel research runs wait side by side and count once; a wait
	// shorter than 40 s would show as less than 40 s in all.
	if r.res.ModelWaitedS < 40 {
		t.Fatalf("model_waited_s %.1f after %d refusals asking for 40 s each", r.res.ModelWaitedS, refused)
	}
	t.Logf("%d calls refused with Retry-After 40 s; waited %.0f s off the budget", refused, r.res.ModelWaitedS)
}

// TestKeyRefusedMidSessionFails: a model server that starts refusing the
// worker's key (a key revoked mid-session) fails the session at the first
// refusal, naming the key's setting, instead of sending each later
// iteration to the same refusal.
func TestKeyRefusedMidSessionFails(t *testing.T) {
	srv := llmtest.NewServer(lethetest.Script(t, "battery_root_done"))
	t.Cleanup(srv.Close)
	var mu sync.Mutex
	chats, refused := 0, 0
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if isChat(r) {
			chats++
		}
		revoked := chats > 2 && isChat(r)
		if revoked {
			refused++
		}
		mu.Unlock()
		if revoked {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`))
			return
		}
		srv.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	var u upserts
	r := runAt(t, srv, proxy.URL, map[string]string{"temporal.search_attributes": "true"}, func(cfg *config.Config) workflows.SessionInput {
		return workflows.SessionInput{Goal: goal, Config: cfg}
	}, func(env *testsuite.TestWorkflowEnvironment) { recordUpserts(env, &u) })
	if r.err == nil {
		t.Fatalf("the session ended %q with its key refused; want it failed", r.res.StopReason)
	}
	if !strings.Contains(r.err.Error(), "llm.api_key") {
		t.Fatalf("error %v does not name the key's setting", r.err)
	}
	if got := u.status(); got != workflows.StatusFailed {
		t.Fatalf("LetheStatus ends %q, want %q", got, workflows.StatusFailed)
	}
	mu.Lock()
	defer mu.Unlock()
	if refused != 1 {
		t.Fatalf("%d chat calls were refused; want the session to stop at the first", refused)
	}
}
