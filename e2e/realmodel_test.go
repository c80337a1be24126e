package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"

	"github.com/lethe-research/lethe/activities"
	"github.com/lethe-research/lethe/config/load"
	"github.com/lethe-research/lethe/graph/embedded"
	"github.com/lethe-research/lethe/workflows"
)

// realModelIterations bounds the real-model session: on two cores each
// iteration is one or more LLM calls of 20-60 s, and research embeds whole
// documents; the session must finish within the test's 16 minutes (four
// reasoning calls, then the synthesis and citation verification calls,
// one at a time on a CPU: 9 minutes were not enough once assembly wrote
// prose and verified it).
const realModelIterations = 4

// TestRealModelSession runs a whole session against real local models (the
// chat and embedding servers of scripts/models.sh) over a real offline
// corpus (Debian's debian-reference-en), on the real dev server with the
// worker as a separate process. Nothing is scripted: the assertions are
// structural. It needs the model servers and minutes of CPU, so it runs
// when asked: .ci/run does, last (scripts/ci/post-50-real-models.sh), and
// so does make test-real-models; by hand,
//
//	LETHE_TEST_REAL_MODELS=1 go test -count=1 -run TestRealModelSession -timeout 17m ./e2e/
//
// LETHE_TEST_CHAT_URL, LETHE_TEST_EMBED_URL and LETHE_TEST_CORPUS_DIR point
// it elsewhere; LETHE_TEST_SEED changes the sampling seed (default 1).
func TestRealModelSession(t *testing.T) {
	if os.Getenv("LETHE_TEST_REAL_MODELS") != "1" {
		t.Skip("opt-in (LETHE_TEST_REAL_MODELS=1): `make test-real-models` and .ci/run's last step run it, not make test")
	}
	chatURL := realEnv("LETHE_TEST_CHAT_URL", "http://127.0.0.1:8080")
	embedURL := realEnv("LETHE_TEST_EMBED_URL", "http://127.0.0.1:8081")
	corpus := realCorpus(t)
	chatModel, embedModel := realServedModel(t, chatURL), realServedModel(t, embedURL)
	t.Logf("models: chat %q at %s, embeddings %q at %s; corpus %s", chatModel, chatURL, embedModel, embedURL, corpus)

	dir := t.TempDir()
	queue := "lethe-realmodel"
	// The settings `scripts/models.sh env` gives make run, with a smaller
	// budget (iterations, repairs, answer and context tokens, pages per
	// search) so that even a session whose answers keep failing validation
	// fits the test's 16 minutes.
	params := map[string]string{
		"llm.base_url":                 chatURL,
		"embed.base_url":               embedURL,
		"llm.json_schema":              "true",
		"llm.json_schema_loose":        "true",
		"llm.seed":                     realEnv("LETHE_TEST_SEED", "1"),
		"llm.stream":                   "false",
		"llm.timeout":                  "10m",
		"thinking.min_tokens":          "0",
		"thinking.max_tokens":          "0",
		"thinking.output_tokens":       "384",
		"llm.compose_tokens":           "512",
		"context.token_budget":         "1000",
		"embed.query_prefix":           "",
		"embed.doc_prefix":             "",
		"llm.max_repair_attempts":      "1",
		"research.corpus_dir":          corpus,
		"embed.timeout":                "5m",
		"temporal.activity_timeout":    "10m",
		"research.batch_size":          "1",
		"research.max_pages":           "2",
		"research.max_time":            "90s",
		"assembly.leaf_evidence":       "8",
		"assembly.leaf_evidence_chars": "400",
		"assembly.done_evidence":       "3",
		"graph.path":                   filepath.Join(dir, "graph.db"),
		"budget.max_iterations":        fmt.Sprint(realModelIterations),
		"temporal.task_queue":          queue,
	}
	w := startWorker(t, params)
	c := dial(t)
	over := map[string]string{"temporal.host_port": hostPort}
	for k, v := range params {
		over[k] = v
	}
	cfg, err := load.Load(load.Sources{Env: []string{}, Overrides: over})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 16*time.Minute)
	defer cancel()
	ctx, unwatch := w.untilExit(t, ctx)
	id := fmt.Sprintf("realmodel-%d", time.Now().UnixNano())
	goal := "How does APT resolve package dependencies in Debian, and how can packages be pinned to a release?"
	started := time.Now()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: queue}, workflows.SessionWorkflow,
		workflows.SessionInput{Goal: goal, Config: &cfg})
	if err != nil {
		t.Fatal(err)
	}
	var res workflows.SessionResult
	if err := run.Get(ctx, &res); err != nil {
		// What the session did until now, for the log: its history so far.
		logRealModelStats(t, res, history(t, c, id, run.GetRunID()), time.Since(started))
		keepRealModelLog(t, w)
		t.Fatalf("session %s: %v (%v)", id, err, context.Cause(ctx))
	}
	wall := time.Since(started)
	unwatch()
	w.stop(syscall.SIGTERM) // releases the graph file
	h := history(t, c, id, run.GetRunID())
	logRealModelStats(t, res, h, wall)
	if t.Failed() {
		keepRealModelLog(t, w)
	}
	t.Logf("report (%d bytes):\n%s", len(res.Report), realClip(res.Report, 6000))

	store, err := embedded.Open(cfg.Graph.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	checkRealSession(t, store, id, res, realModelIterations)
	if t.Failed() {
		keepRealModelLog(t, w)
	}
}

// checkRealSession asserts the structural facts of a session against real
// models (issue 7): it stopped for a reason of its own within its
// budget (iterations or wall clock), started at least one web_search,
// ingested evidence from corpus files, and its report lists sources that
// are corpus files. The wall-clock budget is a stop of its own: in the
// evaluation three systems and the scorer share one CPU-bound model
// server, so how many iterations fit in budget.max_wall_clock depends on
// the machine's load (on a loaded CI machine one call took 216 s), and a
// session that meets it still composes, verifies and cites its report,
// which the checks below hold it to.
// TestRealModelSession and TestRealModelEvaluation (on each lethe session)
// share it. The store must be closed by the worker (the graph file is
// released).
func checkRealSession(t *testing.T, store *embedded.Store, id string, res workflows.SessionResult, budget int) {
	t.Helper()
	switch res.StopReason {
	case workflows.StopRootDone, workflows.StopConverged, workflows.StopNoReadyTasks, workflows.StopMaxIterations, workflows.StopNoProgress,
		workflows.StopWallClockCap:
	default:
		t.Errorf("stop reason %q: want root_done, converged, no_ready_tasks, max_iterations, no_progress or wall_clock_cap", res.StopReason)
	}
	if res.Iterations < 1 || res.Iterations > budget {
		t.Errorf("%d iterations, budget %d", res.Iterations, budget)
	}
	if res.Stats.WebSearches < 1 {
		t.Errorf("the model started no web_search (%d LLM calls, %d invalid answers)", res.Stats.LLMCalls, res.Stats.InvalidAnswers)
	}

	ev, err := store.Evidence(context.Background(), id, "")
	if err != nil {
		t.Fatal(err)
	}
	fromCorpus := 0
	for _, e := range ev {
		if strings.HasPrefix(e.SourceURL, "corpus:///") {
			fromCorpus++
		}
	}
	t.Logf("evidence: %d in the graph, %d from corpus files; result counts %d", len(ev), fromCorpus, res.Evidence)
	if fromCorpus == 0 {
		t.Errorf("no evidence was ingested from the corpus (%d evidence items)", len(ev))
	}

	for _, s := range res.Sources {
		if !strings.HasPrefix(s.URL, "corpus:///") {
			t.Errorf("source [%d] %s is not a corpus file", s.N, s.URL)
		}
	}
	// The report's source list: "[n] title — url" lines after "## Sources"
	// (the cited sources, or all collected ones when nothing was cited).
	_, list, ok := strings.Cut(res.Report, "\n## Sources\n")
	if !ok {
		t.Fatal("the report has no Sources section")
	}
	listed := 0
	for _, line := range strings.Split(list, "\n") {
		if !strings.HasPrefix(line, "[") {
			continue
		}
		_, url, ok := strings.Cut(line, " — ")
		if !ok || !strings.HasPrefix(url, "corpus:///") {
			t.Errorf("report source %q does not point at a corpus file", line)
		}
		listed++
	}
	t.Logf("report: %d sources listed, %d citations in the text", listed, res.Citations)
	if listed == 0 {
		t.Error("the report lists no sources")
	}
}

func realEnv(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// realCorpus is LETHE_TEST_CORPUS_DIR or the Debian Reference's HTML.
func realCorpus(t *testing.T) string {
	t.Helper()
	cands := []string{os.Getenv("LETHE_TEST_CORPUS_DIR"), "/usr/share/doc/debian-reference-en/docs", "/usr/share/debian-reference"}
	for _, d := range cands {
		if d == "" {
			continue
		}
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			return d
		}
	}
	t.Fatal("no corpus: apt-get install debian-reference-en or set LETHE_TEST_CORPUS_DIR")
	return ""
}

// realServedModel is the first model id of GET base/v1/models; the test fails
// at once when the server does not answer.
func realServedModel(t *testing.T, base string) string {
	t.Helper()
	hc := &http.Client{Timeout: 10 * time.Second}
	resp, err := hc.Get(strings.TrimRight(base, "/") + "/v1/models")
	if err != nil {
		t.Fatalf("model server %s does not answer (scripts/models.sh start): %v", base, err)
	}
	defer resp.Body.Close()
	var m struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil || len(m.Data) == 0 {
		t.Fatalf("model server %s: GET /v1/models gave status %d, no model (%v)", base, resp.StatusCode, err)
	}
	return m.Data[0].ID
}

// logRealModelStats logs what a real-model session cost: tokens, the
// latency of each chat call from the workflow history (Reason per
// iteration and attempt, Compose for assembly), and the share of the
// session's wall time spent outside chat calls.
func logRealModelStats(t *testing.T, res workflows.SessionResult, h *historypb.History, wall time.Duration) {
	t.Helper()
	kind := map[int64]string{} // scheduled event id → activity type
	started := map[int64]time.Time{}
	var reason, compose []time.Duration
	var spans [][2]time.Time // chat calls, which may overlap (assembly composes in parallel)
	var answers []string
	var first, last time.Time
	for _, e := range h.Events {
		ts := e.GetEventTime().AsTime()
		if first.IsZero() {
			first = ts
		}
		last = ts
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			kind[e.GetEventId()] = e.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName()
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED:
			started[e.GetActivityTaskStartedEventAttributes().GetScheduledEventId()] = ts
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED, enumspb.EVENT_TYPE_ACTIVITY_TASK_FAILED, enumspb.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT:
			var sid int64
			switch {
			case e.GetActivityTaskCompletedEventAttributes() != nil:
				sid = e.GetActivityTaskCompletedEventAttributes().GetScheduledEventId()
			case e.GetActivityTaskFailedEventAttributes() != nil:
				sid = e.GetActivityTaskFailedEventAttributes().GetScheduledEventId()
			default:
				sid = e.GetActivityTaskTimedOutEventAttributes().GetScheduledEventId()
			}
			d := ts.Sub(started[sid])
			if k := kind[sid]; k == "Reason" || k == "Compose" {
				spans = append(spans, [2]time.Time{started[sid], ts})
			}
			switch kind[sid] {
			case "Reason":
				reason = append(reason, d)
				var out activities.ReasonResult
				if p := e.GetActivityTaskCompletedEventAttributes().GetResult().GetPayloads(); len(p) > 0 && json.Unmarshal(p[0].GetData(), &out) == nil {
					answers = append(answers, fmt.Sprintf("%.1fs, %d+%d tokens: %s", d.Seconds(), out.PromptTokens, out.CompletionTokens, realClip(strings.Join(strings.Fields(out.Content), " "), 700)))
				}
			case "Compose":
				compose = append(compose, d)
			}
		}
	}
	sum := func(ds []time.Duration) (s time.Duration) {
		for _, d := range ds {
			s += d
		}
		return s
	}
	session := last.Sub(first)
	// Time with at least one chat call under way: the union of the spans.
	sort.Slice(spans, func(i, j int) bool { return spans[i][0].Before(spans[j][0]) })
	var chat time.Duration
	var end time.Time
	for _, sp := range spans {
		if sp[0].After(end) {
			end = sp[0]
		}
		if sp[1].After(end) {
			chat += sp[1].Sub(end)
			end = sp[1]
		}
	}
	per := make([]string, len(reason))
	for i, d := range reason {
		per[i] = fmt.Sprintf("%.1fs", d.Seconds())
	}
	sorted := append([]time.Duration(nil), reason...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	median := time.Duration(0)
	if len(sorted) > 0 {
		median = sorted[len(sorted)/2]
	}
	t.Logf("result: stop %s after %d iterations; tasks %d (done %d, failed %d); evidence %d; citations %d (removed %d); models %v",
		res.StopReason, res.Iterations, res.Tasks, res.TasksDone, res.TasksFailed, res.Evidence, res.Citations, res.RemovedCitations, res.Models)
	t.Logf("LLM: %d calls (%d repairs, %d failed, %d invalid answers, %d cut answers kept, %d restated creates dropped); %d web searches (%d duplicates); %d ops applied; tokens %d prompt + %d completion = %d (all chat calls)",
		res.Stats.LLMCalls, res.Stats.RepairCalls, res.Stats.FailedCalls, res.Stats.InvalidAnswers, res.Stats.CutAnswers, res.Stats.RestatedCreates, res.Stats.WebSearches,
		res.Stats.DuplicateCalls, res.Stats.AppliedOps, res.Stats.PromptTokens, res.Stats.CompletionToken, res.Stats.PromptTokens+res.Stats.CompletionToken)
	t.Logf("latency: reasoning calls %v (total %.1fs, median %.1fs, %.1fs per iteration); composition activities %d, %.1fs summed (in parallel, queued at the server); the session's stats: %.1fs in chat calls",
		per, sum(reason).Seconds(), median.Seconds(), sum(reason).Seconds()/float64(max(res.Iterations, 1)), len(compose), sum(compose).Seconds(),
		float64(res.Stats.LLMLatencyMS)/1000)
	for i, a := range answers {
		t.Logf("answer %d: %s", i+1, a)
	}
	t.Logf("wall time: session %.1fs (history), %.1fs (client); with a chat call under way %.1fs; outside chat calls %.1fs = %.0f%% of the session",
		session.Seconds(), wall.Seconds(), chat.Seconds(), (session - chat).Seconds(), 100*(1-chat.Seconds()/max(session.Seconds(), 1e-9)))
}

// keepRealModelLog copies the worker's log out of the test's temporary directory.
func keepRealModelLog(t *testing.T, w *workerProc) {
	t.Helper()
	w.dumpLog(t)
	b, err := os.ReadFile(w.log.Name())
	if err != nil {
		return
	}
	p := filepath.Join(os.TempDir(), "lethe-realmodel-worker.log")
	if os.WriteFile(p, b, 0o644) == nil {
		t.Logf("whole worker log: %s", p)
	}
}

func realClip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "\n[…]"
}
