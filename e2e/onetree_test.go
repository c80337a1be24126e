package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"

	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/config/load"
	"github.com/lethe-research/lethe/internal/lethetest"
	"github.com/lethe-research/lethe/llm/llmtest"
	"github.com/lethe-research/lethe/workflows"
)

// A worker config file that disagrees with the defaults on every algorithm
// parameter an activity decides with. A session's parameters come from its
// recorded config, so a worker started with this file must serve a session
// exactly as one with the defaults does.
const deviantConfig = `context:
  ppr_alpha: 0.5
  max_candidates: 8
  token_budget: 900
  beta_min: 0.9
algebra:
  svd_k: 4
  similar_threshold: 0.5
  similar_max_per_node: 2
  attention_k: 2
  corroboration_boost: 0.9
  state_recency: 9
assembly:
  mmr_lambda: 0.2
  leaf_evidence: 2
research:
  chunk_chars: 300
  max_chunks_per_page: 2
  strength_goal_weight: 0.1
  prior_html: 0.4
  attention_k: 2
budget:
  zero_yield_step: 0.5
`

// TestTwoWorkerConfigsOneHistory runs one session on a single worker with
// the default config, then the same session on two workers: the one that
// runs the workflow and every store, PPR, ingest and assembly activity is
// started with a config file that disagrees on every algorithm parameter,
// the other (default config) runs the model and browser queues. The second
// session's history is the first one's: the same activities with the same
// results (latencies left out, floats to 9 digits).
func TestTwoWorkerConfigsOneHistory(t *testing.T) {
	graphParams := neo4jParams(t)
	srv := llmtest.NewServer(lethetest.Script(t, "battery_no_ready"))
	t.Cleanup(srv.Close)
	params := lethetest.Params(srv.URL(), t.TempDir())
	for k, v := range graphParams {
		params[k] = v
	}
	params["temporal.task_queue"] = "onetree"
	params["temporal.llm_queue"] = "onetree-llm"
	params["temporal.research_queue"] = "onetree-browser"
	file := filepath.Join(t.TempDir(), "deviant.yaml")
	if err := os.WriteFile(file, []byte(deviantConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := load.Load(load.Sources{Env: []string{}, Overrides: params})
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t)
	stamp := time.Now().UnixNano()

	single := startWorker(t, params)
	one := runOneTree(t, c, cfg, fmt.Sprintf("onetree-single-%d", stamp))
	single.stop(syscall.SIGTERM)

	startWorker(t, params, "-queues", "onetree-llm,onetree-browser")
	startWorker(t, params, "-queues", "onetree", "-config", file)
	two := runOneTree(t, c, cfg, fmt.Sprintf("onetree-two-%d", stamp))

	if ids := workerIdentities(two.history); len(ids) < 2 {
		t.Fatalf("only %v served the session: the test needs both workers", ids)
	}
	a, b := activityTrace(one), activityTrace(two)
	if len(a) != len(b) {
		t.Fatalf("%d activities on one worker, %d on two", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("activity %d differs:\none worker:  %.300s\ntwo workers: %.300s", i, a[i], b[i])
		}
	}
	if one.res.Report != strings.ReplaceAll(two.res.Report, two.res.SessionID, one.res.SessionID) {
		t.Fatalf("reports differ:\n%s\n---\n%s", one.res.Report, two.res.Report)
	}
}

func runOneTree(t *testing.T, c client.Client, cfg config.Config, id string) outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: cfg.Temporal.TaskQueue},
		workflows.SessionWorkflow, workflows.SessionInput{Goal: goal, Config: &cfg})
	if err != nil {
		t.Fatal(err)
	}
	var o outcome
	if err := run.Get(ctx, &o.res); err != nil {
		t.Fatalf("session %s: %v", id, err)
	}
	o.history = history(t, c, id, run.GetRunID())
	return o
}

// activityTrace is each completed activity's type and result, with the
// session id written out of it (evidence ids embed it), in the order the
// activities were scheduled: activities that run side by side (the parts
// of a report) may complete in either order.
func activityTrace(o outcome) []string {
	scheduled := map[int64]string{}
	var ids []int64
	byID := map[int64]string{}
	for _, e := range o.history.Events {
		if a := e.GetActivityTaskScheduledEventAttributes(); a != nil {
			scheduled[e.GetEventId()] = a.GetActivityType().GetName()
		}
		if m := e.GetMarkerRecordedEventAttributes(); m != nil && m.GetMarkerName() == "LocalActivity" {
			// Since local-steps and local-ends the store steps run as
			// local activities on the workflow's worker: their results
			// are in the marker.
			var d struct{ ActivityType string }
			_ = json.Unmarshal(m.GetDetails()["data"].GetPayloads()[0].GetData(), &d)
			var res string
			for _, p := range m.GetDetails()["result"].GetPayloads() {
				res += canonical(strings.ReplaceAll(string(p.GetData()), o.res.SessionID, "SESSION"))
			}
			ids = append(ids, e.GetEventId())
			byID[e.GetEventId()] = d.ActivityType + " " + res
			continue
		}
		if e.GetEventType() != enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED {
			continue
		}
		a := e.GetActivityTaskCompletedEventAttributes()
		var res string
		for _, p := range a.GetResult().GetPayloads() {
			res += canonical(strings.ReplaceAll(string(p.GetData()), o.res.SessionID, "SESSION"))
		}
		ids = append(ids, a.GetScheduledEventId())
		byID[a.GetScheduledEventId()] = scheduled[a.GetScheduledEventId()] + " " + res
	}
	slices.Sort(ids)
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = byID[id]
	}
	return out
}

// workerIdentities lists the workers that started activities or workflow
// tasks (whose worker runs the local activities).
func workerIdentities(h *historypb.History) []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range h.Events {
		id := e.GetActivityTaskStartedEventAttributes().GetIdentity()
		if id == "" {
			id = e.GetWorkflowTaskStartedEventAttributes().GetIdentity()
		}
		if id != "" && !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// canonical re-encodes a JSON result without its latencies and with floats
// to 9 significant digits: model timing differs between runs, and a SIMD
// dot product's last bits may too.
func canonical(s string) string {
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return s
	}
	b, _ := json.Marshal(normalize(v))
	return string(b)
}

func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if strings.HasSuffix(k, "latency_ms") || strings.HasSuffix(k, "LatencyMS") {
				delete(x, k)
				continue
			}
			x[k] = normalize(e)
		}
	case []any:
		for i, e := range x {
			x[i] = normalize(e)
		}
	case float64:
		return strconv.FormatFloat(x, 'g', 9, 64)
	}
	return v
}
