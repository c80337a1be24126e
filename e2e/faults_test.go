package e2e

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/config/load"
	"github.com/lethe-research/lethe/internal/lethetest"
	"github.com/lethe-research/lethe/internal/lethetest/sessiontest"
	"github.com/lethe-research/lethe/llm/llmtest"
	"github.com/lethe-research/lethe/workflows"
)

// faultRig is one session on the dev server whose chat and embedding
// servers can each be taken down, cut or slowed: the scripted model behind
// two fault injectors, one per endpoint, so that an embedding outage leaves
// chat up and the other way round. The worker runs with the default
// heartbeat and model timeouts, as a user's would.
type faultRig struct {
	id          string
	srv         *llmtest.Server
	chat, embed *llmtest.Faulty
	params      map[string]string
	cfg         config.Config
	c           client.Client
	w           *workerProc
	run         client.WorkflowRun
}

func newFaultRig(t *testing.T, id string, script llmtest.Script, extra map[string]string) *faultRig {
	t.Helper()
	return newFaultRigEnv(t, id, script, extra, nil)
}

// newFaultRigEnv is newFaultRig with env (NAME=value) added to the
// worker's environment: the keys of a hosted API, which are never
// session parameters.
func newFaultRigEnv(t *testing.T, id string, script llmtest.Script, extra map[string]string, env []string) *faultRig {
	t.Helper()
	r := &faultRig{id: id, srv: llmtest.NewServer(script)}
	t.Cleanup(r.srv.Close)
	var err error
	if r.chat, err = llmtest.NewFaulty(r.srv.Handler()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.chat.Close)
	if r.embed, err = llmtest.NewFaulty(r.srv.Handler()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.embed.Close)
	r.params = lethetest.Params(r.chat.URL(), t.TempDir())
	r.params["embed.base_url"] = r.embed.URL()
	r.params["temporal.task_queue"] = "lethe-" + id
	for _, k := range []string{"llm.timeout", "temporal.heartbeat_timeout", "temporal.activity_timeout"} {
		delete(r.params, k) // the defaults: what a user runs with
	}
	for k, v := range extra {
		r.params[k] = v
	}
	if r.cfg, err = load.Load(load.Sources{Env: []string{}, Overrides: r.params}); err != nil {
		t.Fatal(err)
	}
	r.w = startWorkerEnv(t, r.params, env)
	r.c = dial(t)
	return r
}

func (r *faultRig) start(t *testing.T) {
	t.Helper()
	var err error
	r.run, err = r.c.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{ID: r.id, TaskQueue: r.cfg.Temporal.TaskQueue},
		workflows.SessionWorkflow, workflows.SessionInput{Goal: goal, Config: &r.cfg})
	if err != nil {
		t.Fatal(err)
	}
}

func (r *faultRig) finish(t *testing.T, limit time.Duration) outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	return finishSession(t, ctx, r.c, r.run, r.w, embeddedAt(r.cfg.Graph.Path))
}

// runWatched runs the session while watching visibility for its
// waiting_for_model status.
func (r *faultRig) runWatched(t *testing.T, ctx context.Context) (outcome, *waitSeen) {
	t.Helper()
	seen := &waitSeen{}
	r.start(t)
	go watchWaiting(ctx, r.c, r.id, seen)
	return r.finish(t, 8*time.Minute), seen
}

// undisturbed runs the script once with nothing going wrong: what every
// disturbed run must end as.
func undisturbed(t *testing.T, id string, script llmtest.Script) outcome {
	t.Helper()
	r := newFaultRig(t, id, script, nil)
	r.start(t)
	return r.finish(t, 4*time.Minute)
}

// sameAsUndisturbed checks the promise: the same stop reason, iterations,
// tasks, evidence and report, nothing duplicated, no failed model call,
// and every history payload within bounds.
func sameAsUndisturbed(t *testing.T, got, base outcome) {
	t.Helper()
	sessiontest.SameAsUndisturbed(t, got.shared(), base.shared())
}

// bodyOf reads a request's body and puts it back for the handler.
func bodyOf(r *http.Request) string {
	b, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(b))
	return string(b)
}

// sawWaiting polls visibility until a workflow whose id starts with prefix
// shows LetheStatus="waiting_for_model"; it records how the session
// looked then.
type waitSeen struct {
	mu       sync.Mutex
	seen     bool
	progress workflows.Progress
}

func watchWaiting(ctx context.Context, c client.Client, id string, w *waitSeen) {
	q := `LetheStatus="` + workflows.StatusWaiting + `"`
	for ctx.Err() == nil {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: q})
		if err == nil {
			for _, e := range resp.Executions {
				if strings.HasPrefix(e.GetExecution().GetWorkflowId(), id) {
					w.record(ctx, c, id)
					return
				}
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func (w *waitSeen) record(ctx context.Context, c client.Client, id string) {
	var p workflows.Progress
	if v, err := c.QueryWorkflow(ctx, id, "", workflows.QueryProgress); err == nil {
		_ = v.Get(&p)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen, w.progress = true, p
}

func (w *waitSeen) check(t *testing.T) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.seen {
		t.Error(`the session never showed LetheStatus="waiting_for_model" while its model was down`)
	}
	if w.progress.Stats.FailedCalls != 0 {
		t.Errorf("failed_calls %d while waiting, want 0", w.progress.Stats.FailedCalls)
	}
}

const outage = 2 * time.Minute

// Model fault 1: the chat server goes down for two minutes inside
// iteration 2's Reason call (the second chat request).
func TestFaultChatDownInReason(t *testing.T) {
	t.Parallel()
	script := lethetest.Script(t, "battery_root_done")
	base := undisturbed(t, "fault-reason-base", script)
	r := newFaultRig(t, "fault-reason", script, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r.chat.OnRequest(func(chat int, _ *http.Request) bool {
		if chat == 2 {
			r.chat.DownFor(ctx, outage, func(err error) { t.Error(err) })
		}
		return false
	})
	got, seen := r.runWatched(t, ctx)
	seen.check(t)
	if seen.progress.Waiting == nil || seen.progress.Waiting.Service != "chat model" {
		t.Errorf("progress while waiting: %+v, want the chat model named", seen.progress.Waiting)
	}
	sameAsUndisturbed(t, got, base)
	if got.res.ModelWaitedS < 60 {
		t.Errorf("model_waited_s %.0f: a two-minute outage was not recorded", got.res.ModelWaitedS)
	}
	t.Logf("chat outage in Reason: waited %.0f s, %d iterations, %d evidence", got.res.ModelWaitedS, got.res.Iterations, len(got.evidence))
}

// Model fault 2: the chat server goes down for two minutes as assembly
// starts (the first composition request).
func TestFaultChatDownAtAssembly(t *testing.T) {
	t.Parallel()
	script := lethetest.Script(t, "battery_no_ready")
	base := undisturbed(t, "fault-assembly-base", script)
	r := newFaultRig(t, "fault-assembly", script, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var once sync.Once
	r.chat.OnRequest(func(chat int, req *http.Request) bool {
		if chat > 0 && strings.Contains(bodyOf(req), `"content":"Goal: `) {
			once.Do(func() { r.chat.DownFor(ctx, outage, func(err error) { t.Error(err) }) })
		}
		return false
	})
	got, seen := r.runWatched(t, ctx)
	seen.check(t)
	sameAsUndisturbed(t, got, base)
	t.Logf("chat outage at assembly: waited %.0f s", got.res.ModelWaitedS)
}

// Model fault 3: a slow model with the default settings (streaming on,
// default heartbeat timeout): the first token of iteration 1's answer
// comes after 90 s, and the first composition call takes 150 s.
func TestFaultSlowModel(t *testing.T) {
	t.Parallel()
	script := lethetest.Script(t, "battery_no_ready")
	base := undisturbed(t, "fault-slow-base", script)
	r := newFaultRig(t, "fault-slow", script, nil)
	var composed sync.Once
	r.chat.OnRequest(func(chat int, req *http.Request) bool {
		hold := time.Duration(0)
		if chat == 1 {
			hold = 90 * time.Second
		} else if strings.Contains(bodyOf(req), `"content":"Goal: `) {
			composed.Do(func() { hold = 150 * time.Second })
		}
		select { // nothing is sent while the model "thinks"
		case <-time.After(hold):
		case <-req.Context().Done():
		}
		return false
	})
	r.start(t)
	got := r.finish(t, 10*time.Minute)
	sameAsUndisturbed(t, got, base)
	causes := sessiontest.Retried(got.history)
	for _, a := range []string{"Compose", "Reason"} {
		if c, ok := causes[a]; ok {
			t.Errorf("a slow model call was retried: %s %s", a, c)
		}
	}
}

// Model fault 4: the embedding server goes down for two minutes in the
// middle of research: at the second embedding request after the first
// web_search query was embedded (Discover's hits, then Ingest's chunks).
func TestFaultEmbeddingDownInResearch(t *testing.T) {
	t.Parallel()
	script := lethetest.Script(t, "battery_root_done")
	base := undisturbed(t, "fault-embed-base", script)
	r := newFaultRig(t, "fault-embed", script, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	after := -1
	r.embed.OnRequest(func(_ int, req *http.Request) bool {
		body := bodyOf(req)
		switch {
		case after < 0 && strings.Contains(body, `"query: `) && !strings.Contains(body, goal): // a web_search query
			after = 0
		case after >= 0:
			after++
			if after == 2 {
				r.embed.DownFor(ctx, outage, func(err error) { t.Error(err) })
			}
		}
		return false
	})
	got, seen := r.runWatched(t, ctx)
	if after < 2 {
		t.Fatalf("the outage never started (%d embedding requests after the query)", after)
	}
	seen.check(t)
	sameAsUndisturbed(t, got, base)
}

// Model fault 5: the chat server goes down at iteration 2 and stays down
// past a short llm.outage_tolerance. The session ends with compose_failed
// and an extractive report holding every evidence item's source, not a
// failed workflow. Then the model comes back, and a reset to the workflow
// task before Compose (docs/operations.md) composes the report.
func TestFaultChatDownPastTolerance(t *testing.T) {
	t.Parallel()
	script := lethetest.Script(t, "battery_no_ready")
	r := newFaultRig(t, "fault-tolerance", script, map[string]string{"llm.outage_tolerance": "20s"})
	r.chat.OnRequest(func(chat int, _ *http.Request) bool {
		if chat == 3 {
			r.chat.Down()
		}
		return false
	})
	r.start(t)
	got := r.finish(t, 5*time.Minute)
	if got.res.StopReason != workflows.StopComposeFailed || got.res.Error == "" {
		t.Fatalf("stop reason %q, error %q; want %q with an error note", got.res.StopReason, got.res.Error, workflows.StopComposeFailed)
	}
	if !strings.Contains(got.res.Report, "extractive") {
		t.Errorf("the report does not say it is extractive:\n%s", got.res.Report)
	}
	if len(got.evidence) == 0 {
		t.Fatal("no evidence before the outage: nothing to check")
	}
	for _, e := range got.evidence {
		if e.SourceURL != "" && !strings.Contains(got.res.Report, e.SourceURL) {
			t.Errorf("source %s is not in the extractive report", e.SourceURL)
		}
	}
	if got.res.Stats.FailedCalls != 0 {
		t.Errorf("failed calls %d: an outage is not a failed call", got.res.Stats.FailedCalls)
	}
	sessiontest.CheckPayloadBound(t, got.history)
	r.chat.OnRequest(nil)
	if err := r.chat.Up(); err != nil {
		t.Fatal(err)
	}
	recomposed := resetBeforeCompose(t, r, got)
	if recomposed.StopReason == workflows.StopComposeFailed || strings.Contains(recomposed.Report, "extractive") || recomposed.Citations == 0 {
		t.Fatalf("after the reset: %s, %d citations:\n%s", recomposed.StopReason, recomposed.Citations, recomposed.Report)
	}
	t.Logf("extractive report (%d bytes) re-composed after reset: %s, %d citations", len(got.res.Report), recomposed.StopReason, recomposed.Citations)
}

// resetBeforeCompose resets a finished session with the recipe of
// docs/operations.md, run as written (bash, the temporal CLI, jq) with the
// session's id for ID, on a fresh worker, and returns the new run's
// result. The reset must land on the workflow task that scheduled the
// first Compose, as the recipe says.
func resetBeforeCompose(t *testing.T, r *faultRig, o outcome) workflows.SessionResult {
	t.Helper()
	resetAt := int64(0)
	for _, e := range o.history.Events {
		if e.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED {
			resetAt = e.GetEventId()
		}
		if a := e.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == "Compose" {
			break
		}
	}
	r.w = startWorker(t, r.params)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	runDocRecipe(ctx, t, "docs/operations.md", `--event-id "$N"`, r.id)
	run := r.c.GetWorkflow(ctx, r.id, "")
	var res workflows.SessionResult
	if err := run.Get(ctx, &res); err != nil {
		r.w.dumpLog(t)
		t.Fatal(err)
	}
	if run.GetRunID() == r.run.GetRunID() {
		t.Fatal("the recipe started no new run")
	}
	at := int64(0) // the reset run's history ends its copy with the failed task it was reset at
	for _, e := range history(t, r.c, r.id, run.GetRunID()).Events {
		if e.GetWorkflowTaskFailedEventAttributes().GetCause() == enumspb.WORKFLOW_TASK_FAILED_CAUSE_RESET_WORKFLOW {
			at = e.GetEventId()
		}
	}
	if at != resetAt {
		t.Fatalf("the recipe reset to event %d; the workflow task before the first Compose completed at %d", at, resetAt)
	}
	return res
}

// runDocRecipe runs the shell block of a doc that contains marker, as a
// reader would: bash with the temporal CLI and jq on PATH, the dev
// server's address in TEMPORAL_ADDRESS, and id for the placeholder ID.
func runDocRecipe(ctx context.Context, t *testing.T, doc, marker, id string) {
	t.Helper()
	jq := lethetest.Tool(t, lethetest.System, "jq")
	b, err := os.ReadFile(filepath.Join(lethetest.Root(), doc))
	if err != nil {
		t.Fatal(err)
	}
	var block string
	for _, part := range strings.Split(string(b), "```")[1:] {
		if strings.HasPrefix(part, "sh\n") && strings.Contains(part, marker) {
			block = strings.TrimPrefix(part, "sh\n")
			break
		}
	}
	if block == "" {
		t.Fatalf("%s has no sh block with %s", doc, marker)
	}
	bin := t.TempDir() // the CLI as `temporal`, whatever its file is called
	if err := os.Symlink(lethetest.TemporalCLI(), filepath.Join(bin, "temporal")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, "bash", "-e", "-o", "pipefail", "-c", regexp.MustCompile(`\bID\b`).ReplaceAllString(block, id))
	cmd.Env = append(os.Environ(), "TEMPORAL_ADDRESS="+hostPort, "PATH="+bin+":"+filepath.Dir(jq)+":"+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the recipe of %s: %v\n%s", doc, err, out)
	}
	t.Logf("the recipe of %s printed:\n%s", doc, out)
}

// TestFaultRecoveryAfterKill kills the worker in the middle of a long
// Reason call (the model holds iteration 2's answer) and starts a new one
// at once: the call's next attempt starts on the new worker, and the next
// activity completes, within 15 s of the kill, because every activity
// heartbeats on a timer and the heartbeat timeout is 10 s.
func TestFaultRecoveryAfterKill(t *testing.T) {
	t.Parallel()
	r := newFaultRig(t, "fault-kill", lethetest.Script(t, "battery_root_done"), nil)
	held := make(chan struct{})
	var once sync.Once
	r.chat.OnRequest(func(chat int, req *http.Request) bool {
		if chat == 2 {
			once.Do(func() { close(held) })
			select { // a long call: the worker dies inside it
			case <-time.After(2 * time.Minute):
			case <-req.Context().Done():
			}
		}
		return false
	})
	r.start(t)
	select {
	case <-held:
	case <-time.After(2 * time.Minute):
		t.Fatal("iteration 2's Reason call never came")
	}
	time.Sleep(2 * time.Second) // well inside the call
	r.w.stop(syscall.SIGKILL)
	killed := time.Now()
	r.w = startWorker(t, r.params)
	got := r.finish(t, 4*time.Minute)
	checkNoDuplicates(t, got)
	started, completed := nextAttempt(got.history, "Reason")
	if started.IsZero() || completed.IsZero() {
		t.Fatal("no second attempt of Reason in the history")
	}
	toStart, toDone := started.Sub(killed), completed.Sub(killed)
	t.Logf("kill -9 → next attempt started on the new worker: %.1f s; → completed: %.1f s", toStart.Seconds(), toDone.Seconds())
	if toDone > 15*time.Second {
		t.Errorf("the next activity completed %.1f s after the kill, want ≤ 15 s", toDone.Seconds())
	}
}

// nextAttempt finds the first activity of the name that ran more than once
// and returns when its last attempt started and completed.
func nextAttempt(h *historypb.History, name string) (started, completed time.Time) {
	sched := map[int64]string{}
	for _, e := range h.Events {
		if a := e.GetActivityTaskScheduledEventAttributes(); a != nil {
			sched[e.GetEventId()] = a.GetActivityType().GetName()
		}
		if a := e.GetActivityTaskStartedEventAttributes(); a != nil && a.GetAttempt() > 1 && sched[a.GetScheduledEventId()] == name {
			started = e.GetEventTime().AsTime()
		}
		if a := e.GetActivityTaskCompletedEventAttributes(); a != nil && !started.IsZero() && sched[a.GetScheduledEventId()] == name {
			return started, e.GetEventTime().AsTime()
		}
	}
	return started, time.Time{}
}
