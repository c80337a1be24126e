package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/proto"

	commonpb "go.temporal.io/api/common/v1"
	historypb "go.temporal.io/api/history/v1"

	"github.com/lethe-research/lethe/algebra"
	"github.com/lethe-research/lethe/contract"
	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/graph/embedded"
	"github.com/lethe-research/lethe/internal/lethetest"
	"github.com/lethe-research/lethe/llm/llmtest"
	"github.com/lethe-research/lethe/workflows"
)

// payloadLimit is the bound every payload of a session keeps (DESIGN.md §9,
// issue #14), half Temporal's 512 KiB warning.
const payloadLimit = 256 << 10

// bigTree builds a session of n tasks directly in the store: the root, 50
// branches under it and the rest spread under the branches, every task
// PENDING with its own embedding, as a long session would leave them.
func bigTree(t *testing.T, path, id string, n, dim int) {
	t.Helper()
	st, err := embedded.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	emb := func(prefix, text string) []float32 { return llmtest.Embedding(prefix+text, dim) }
	err = st.CreateSession(ctx, graph.Session{ID: id, Goal: goal, GoalDocEmb: emb("passage: ", goal), GoalQueryEmb: emb("query: ", goal), Dim: dim},
		graph.Task{ID: graph.TaskID(id, graph.RootShortID), SessionID: id, ShortID: graph.RootShortID, Description: goal, EmbedText: goal,
			Embedding: emb("passage: ", goal), Status: graph.Pending})
	if err != nil {
		t.Fatal(err)
	}
	words := []string{"dendrites", "interface", "cathode", "anode", "electrolyte", "grain", "boundary", "pressure", "current", "density", "voids", "cracks"}
	var ops []graph.Op
	flush := func(key string) {
		if len(ops) == 0 {
			return
		}
		if _, err := st.Apply(ctx, graph.ApplyRequest{SessionID: id, Key: key, ActiveTask: graph.RootShortID, Ops: ops}); err != nil {
			t.Fatalf("apply %s: %v", key, err)
		}
		ops = nil
	}
	for i := 1; i < n; i++ {
		parent := graph.RootShortID
		if i > 50 {
			parent = fmt.Sprintf("t%d", 1+(i-51)%50)
		}
		text := fmt.Sprintf("How do %s and %s shape %s failure, case %d?", words[i%12], words[(i/12)%12], words[(i/144)%12], i)
		ops = append(ops, graph.Op{Kind: graph.OpCreate, Task: fmt.Sprintf("t%d", i), Parent: parent, Description: text,
			EmbedText: text, Embedding: emb("passage: ", text)})
		if len(ops) == 250 || i == 50 {
			flush(fmt.Sprintf("seed/%d", i))
		}
	}
	flush("seed/last")
}

// A session of 5,000 tasks keeps every payload under 256 KiB: the tree is
// built in the store, then the session runs a few iterations with the
// scripted model on the dev server, continuing as new every two. Every
// event of every run (activity inputs and results, local-activity markers,
// child inputs and results, the continue-as-new input) and the answers of
// the queries are measured. The model creates "t4999" each time, an id taken
// outside its view: ApplyOps renames it. Its search names the task, since a
// session searches each wording once.
func TestFiveThousandTaskPayloads(t *testing.T) {
	const id, n, dim = "payloads-5000", 5000, llmtest.DefaultEmbeddingDim
	script := lethetest.Script(t, "battery_root_done")
	reply := `{"ops":[{"op":"create","id":"t4999","description":"A closer look at ${task}","embed_text":"closer look at battery failure"},` +
		`{"op":"call","task":"${task}","tool":"web_search","args":{"query":"lithium dendrites solid electrolyte critical current density ${task}"}}]}`
	script.Rules = append([]llmtest.Rule{
		{Name: "focus", Match: []string{`^YOUR TASK: \[(?P<task>[^\]]+)\]`}, Reply: reply, Expand: true},
		{Name: "goal", Match: []string{`^=GOAL`}, Reply: strings.ReplaceAll(reply, "${task}", graph.RootShortID)},
	}, script.Rules...)
	srv := llmtest.NewServer(script)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	queue := "lethe-" + id
	// The 15 s activity timeout of lethetest.Params: Finalize and
	// CollectSections over 5,000 tasks fit it since lane fullreads (#14).
	extra := map[string]string{"temporal.task_queue": queue, "budget.max_iterations": "4", "budget.min_iterations": "4", "temporal.continue_every": "2"}
	params := lethetest.Params(srv.URL(), dir)
	for k, v := range extra {
		params[k] = v
	}
	cfg := lethetest.Config(t, srv.URL(), dir, extra)
	start := time.Now()
	bigTree(t, cfg.Graph.Path, id, n, dim)
	t.Logf("built %d tasks in %s", n, time.Since(start).Round(time.Millisecond))

	w := startWorker(t, params)
	c := dial(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	state := &contract.SessionState{Bootstrapped: true, Dim: dim, StartedAt: time.Now(), Trackers: algebra.InitialTrackers()}
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: queue}, workflows.SessionWorkflow,
		workflows.SessionInput{Goal: goal, Config: &cfg, State: state})
	if err != nil {
		t.Fatal(err)
	}
	first := run.GetRunID() // Get follows the chain of runs to the last
	waitIteration(t, c, id, 1)
	for _, q := range []string{workflows.QueryProgress, workflows.QueryTree, workflows.QueryState} {
		checkQuery(t, c, id, q)
	}
	var res workflows.SessionResult
	if err := run.Get(ctx, &res); err != nil {
		w.dumpLog(t)
		t.Fatalf("session: %v", err)
	}
	t.Logf("result: %d iterations, stop %s, %d tasks", res.Iterations, res.StopReason, res.Tasks)
	if res.Iterations != 4 || res.Tasks < n {
		t.Fatalf("session made %d iterations over %d tasks; want 4 over %d or more", res.Iterations, res.Tasks, n)
	}
	runs, largest, events := 0, 0, 0
	for runID := first; runID != ""; runs++ {
		h := history(t, c, id, runID)
		runID = ""
		for _, e := range h.Events {
			events++
			if testing.Verbose() {
				t.Logf("run %d %4d %s %s %s%s", runs, e.EventId, e.EventTime.AsTime().Format("15:04:05.000"), e.EventType,
					e.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName(), e.GetMarkerRecordedEventAttributes().GetMarkerName())
			}
			for _, p := range eventPayloads(e) {
				largest = max(largest, p.size)
				if p.size > payloadLimit {
					t.Errorf("run %d event %d (%s) %s: %d bytes, over %d", runs, e.EventId, e.EventType, p.what, p.size, payloadLimit)
				}
			}
			if a := e.GetWorkflowExecutionContinuedAsNewEventAttributes(); a != nil {
				runID = a.GetNewExecutionRunId()
			}
		}
	}
	if runs < 2 {
		t.Errorf("the session ran %d runs; continue_every = 2 should make two", runs)
	}
	t.Logf("%d runs, %d events, largest payload %d bytes (limit %d); result: %d tasks, %d evidence", runs, events, largest, payloadLimit, res.Tasks, res.Evidence)
	renamed := 0
	w.stop(syscall.SIGTERM) // releases the graph file
	st, err := embedded.Open(cfg.Graph.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	tasks, err := st.Tasks(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range tasks {
		if strings.HasPrefix(tk.ShortID, "t4999-") {
			renamed++
		}
	}
	if renamed == 0 {
		t.Error(`no task was created as "t4999-<iteration>": the model's "t4999" (taken outside its view) was not renamed`)
	}
}

type sized struct {
	what string
	size int
}

// eventPayloads lists the payload fields of a history event with their
// encoded sizes: everything a workflow or activity put into history.
func eventPayloads(e *historypb.HistoryEvent) []sized {
	ps := func(what string, p *commonpb.Payloads) sized { return sized{what, proto.Size(p)} }
	var out []sized
	if a := e.GetWorkflowExecutionStartedEventAttributes(); a != nil {
		out = append(out, ps("workflow input", a.GetInput()))
	}
	if a := e.GetActivityTaskScheduledEventAttributes(); a != nil {
		out = append(out, ps(a.GetActivityType().GetName()+" input", a.GetInput()))
	}
	if a := e.GetActivityTaskCompletedEventAttributes(); a != nil {
		out = append(out, ps("activity result", a.GetResult()))
	}
	if a := e.GetMarkerRecordedEventAttributes(); a != nil {
		for k, p := range a.GetDetails() {
			out = append(out, ps("marker "+a.GetMarkerName()+"/"+k, p))
		}
	}
	if a := e.GetStartChildWorkflowExecutionInitiatedEventAttributes(); a != nil {
		out = append(out, ps("child input", a.GetInput()))
	}
	if a := e.GetChildWorkflowExecutionCompletedEventAttributes(); a != nil {
		out = append(out, ps("child result", a.GetResult()))
	}
	if a := e.GetWorkflowExecutionContinuedAsNewEventAttributes(); a != nil {
		out = append(out, ps("continue-as-new input", a.GetInput()))
	}
	if a := e.GetWorkflowExecutionCompletedEventAttributes(); a != nil {
		out = append(out, ps("workflow result", a.GetResult()))
	}
	if a := e.GetWorkflowExecutionUpdateAcceptedEventAttributes(); a != nil {
		out = append(out, sized{"update request", proto.Size(a.GetAcceptedRequest())})
	}
	if a := e.GetWorkflowExecutionUpdateCompletedEventAttributes(); a != nil {
		out = append(out, sized{"update outcome", proto.Size(a.GetOutcome())})
	}
	if a := e.GetWorkflowExecutionSignaledEventAttributes(); a != nil {
		out = append(out, ps("signal input", a.GetInput()))
	}
	return append(out, sized{"whole event", proto.Size(e)})
}

// checkQuery asks a query of the running session and bounds its answer.
func checkQuery(t *testing.T, c client.Client, id, name string) {
	t.Helper()
	v, err := c.QueryWorkflow(context.Background(), id, "", name)
	if err != nil {
		t.Fatalf("query %s: %v", name, err)
	}
	var raw any
	if err := v.Get(&raw); err != nil {
		t.Fatalf("query %s: %v", name, err)
	}
	b, err := json.Marshal(raw)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > payloadLimit {
		t.Errorf("query %s answered %d bytes, over %d", name, len(b), payloadLimit)
	}
	t.Logf("query %s: about %d bytes", name, len(b))
}
