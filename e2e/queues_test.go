package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"

	"github.com/lethe-research/lethe/config/load"
	"github.com/lethe-research/lethe/internal/lethetest"
	"github.com/lethe-research/lethe/llm/llmtest"
	"github.com/lethe-research/lethe/workflows"
)

// neo4jParams returns the graph parameters of the shared Neo4j server that
// `make test` starts; several worker processes need a store they can share.
func neo4jParams(t *testing.T) map[string]string {
	t.Helper()
	lethetest.Need(t, lethetest.Neo4j)
	uri := os.Getenv("LETHE_TEST_NEO4J_URI")
	if uri == "" {
		lethetest.Missing(t, lethetest.Neo4j, "LETHE_TEST_NEO4J_URI is not set (`make neo4j` starts a server)")
	}
	return map[string]string{
		"graph.backend":        "neo4j",
		"graph.neo4j_uri":      uri,
		"graph.neo4j_user":     os.Getenv("LETHE_TEST_NEO4J_USER"),
		"graph.neo4j_password": os.Getenv("LETHE_TEST_NEO4J_PASSWORD"),
	}
}

// TestThreeWorkersThreeQueues runs one session with its workflow, LLM and
// research activities on three task queues, each polled by its own worker
// process, and checks from history that every activity ran where it belongs.
func TestThreeWorkersThreeQueues(t *testing.T) {
	graphParams := neo4jParams(t)
	srv := llmtest.NewServer(lethetest.Script(t, "battery_no_ready"))
	t.Cleanup(srv.Close)
	params := lethetest.Params(srv.URL(), t.TempDir())
	for k, v := range graphParams {
		params[k] = v
	}
	params["temporal.task_queue"] = "q3-lethe"
	params["temporal.llm_queue"] = "q3-lethe-llm"
	params["temporal.research_queue"] = "q3-lethe-browser"
	byQueue := map[string]*workerProc{}
	for _, q := range []string{"q3-lethe", "q3-lethe-llm", "q3-lethe-browser"} {
		byQueue[q] = startWorker(t, params, "-queues", q)
	}
	cfg, err := load.Load(load.Sources{Env: []string{}, Overrides: params})
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	id := fmt.Sprintf("q3-%d", time.Now().UnixNano())
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: cfg.Temporal.TaskQueue},
		workflows.SessionWorkflow, workflows.SessionInput{Goal: goal, Config: &cfg})
	if err != nil {
		t.Fatal(err)
	}
	var res workflows.SessionResult
	if err := run.Get(ctx, &res); err != nil {
		for _, w := range byQueue {
			w.dumpLog(t)
		}
		if d, derr := c.DescribeWorkflowExecution(context.Background(), id, ""); derr == nil {
			for _, pa := range d.GetPendingActivities() {
				t.Logf("pending %s attempt %d: %s", pa.GetActivityType().GetName(), pa.GetAttempt(), pa.GetLastFailure().GetMessage())
			}
			for _, pc := range d.GetPendingChildren() {
				t.Logf("pending child %s", pc.GetWorkflowId())
			}
		}
		t.Fatal(err)
	}
	if res.Evidence == 0 || res.Stats.WebSearches == 0 {
		t.Fatalf("session did no research: %+v", res)
	}
	// Each activity's queue, and the worker identity (pid@host) that ran it.
	want := map[string]string{"Reason": "q3-lethe-llm", "Compose": "q3-lethe-llm", "ReadState": "q3-lethe", "ApplyOps": "q3-lethe"}
	ran := map[string]map[string]bool{}
	scheduled := map[int64]string{}
	check := func(h historyEvents) {
		for _, e := range h {
			switch e.GetEventType() {
			case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
				a := e.GetActivityTaskScheduledEventAttributes()
				name, q := a.GetActivityType().GetName(), a.GetTaskQueue().GetName()
				if w, ok := want[name]; ok && w != q {
					t.Errorf("%s scheduled on %s, want %s", name, q, w)
				}
				scheduled[e.GetEventId()] = q
			case enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED:
				a := e.GetActivityTaskStartedEventAttributes()
				q := scheduled[a.GetScheduledEventId()]
				if ran[q] == nil {
					ran[q] = map[string]bool{}
				}
				ran[q][a.GetIdentity()] = true
			}
		}
	}
	check(history(t, c, id, run.GetRunID()).Events)
	// The research activities run in the child workflows' histories.
	check(childActivities(t, c, id))
	for q, w := range byQueue {
		pid := fmt.Sprintf("%d@", w.cmd.Process.Pid)
		if len(ran[q]) == 0 {
			t.Errorf("no activity ran on %s", q)
		}
		for ident := range ran[q] {
			if !strings.HasPrefix(ident, pid) {
				t.Errorf("activity on %s ran on %s, want worker pid %d", q, ident, w.cmd.Process.Pid)
			}
		}
	}
}

type historyEvents = []*historypb.HistoryEvent

// childActivities returns the events of every child workflow the session
// started.
func childActivities(t *testing.T, c client.Client, id string) historyEvents {
	t.Helper()
	var out historyEvents
	for _, e := range history(t, c, id, "").Events {
		if a := e.GetStartChildWorkflowExecutionInitiatedEventAttributes(); a != nil {
			out = append(out, history(t, c, a.GetWorkflowId(), "").Events...)
		}
	}
	return out
}
