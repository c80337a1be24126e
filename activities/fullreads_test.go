package activities_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"

	"github.com/lethe-research/lethe/activities"
	"github.com/lethe-research/lethe/contract"
	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/graph/embedded"
	"github.com/lethe-research/lethe/llm/llmtest"
)

// Lane fullreads (#14): the end-of-session activities over a large tree.

// growTree adds n-1 PENDING tasks under the session's root (50 branches,
// the rest under the branches), every one with its own embedding, in
// writes of 250 creates, as bigTree in e2e does; every tenth leaf is DONE
// with a result (and no result embedding) and every 25th holds one
// evidence item.
func growTree(t testing.TB, store *embedded.Store, sid string, n, dim int) {
	t.Helper()
	ctx := t.Context()
	words := []string{"dendrites", "interface", "cathode", "anode", "electrolyte", "grain", "boundary", "pressure", "current", "density", "voids", "cracks"}
	var ops []graph.Op
	flush := func(key string) {
		if len(ops) == 0 {
			return
		}
		if _, err := store.Apply(ctx, graph.ApplyRequest{SessionID: sid, Key: key, ActiveTask: graph.RootShortID, Ops: ops}); err != nil {
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
			EmbedText: text, Embedding: llmtest.Embedding("passage: "+text, dim)})
		if len(ops) == 250 || i == 50 {
			flush(fmt.Sprintf("seed/%d", i))
		}
	}
	flush("seed/last")
	for i := 51; i < n; i++ {
		short := fmt.Sprintf("t%d", i)
		if i%25 == 0 {
			text := fmt.Sprintf("Finding %d on %s.", i, words[i%12])
			ev := []graph.Evidence{{Content: text, SourceURL: fmt.Sprintf("corpus:///doc%d.md", i%40), Title: "Doc", Kind: graph.KindHTML,
				Strength: 0.5 + float64(i%7)/20, Embedding: llmtest.Embedding("passage: "+text, dim), CreatedIter: 1}}
			if _, err := store.AddEvidence(ctx, sid, "ev/"+short, short, ev); err != nil {
				t.Fatal(err)
			}
		}
		if i%10 == 0 {
			ops = append(ops, graph.Op{Kind: graph.OpComplete, Task: short, Result: fmt.Sprintf("Result of %s.", short)})
		}
	}
	flush("seed/done")
}

// TestFinalizeFiveThousandTasks: over a tree of 5,000 tasks (4,500
// open), CollectSections and Finalize each fit well inside the 15 s
// activity timeout of the test parameters (before lane fullreads, on this
// machine: 81 s and 84 s), and Finalize leaves every task DONE or FAILED
// with a result embedding on each DONE one, counted right.
func TestFinalizeFiveThousandTasks(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("builds a 5,000-task session and times it: not under -short or -race")
	}
	env, store, _ := newActivityEnv(t, t.TempDir(), nil)
	sid := "fullreads-5000"
	if _, err := env.ExecuteActivity(acts.Bootstrap, activities.BootstrapInput{SessionID: sid, Goal: "How do solid-state batteries fail?"}); err != nil {
		t.Fatal(err)
	}
	sess, err := store.GetSession(t.Context(), sid)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	growTree(t, store, sid, 5000, len(sess.GoalQueryEmb))
	t.Logf("built in %s", time.Since(start).Round(time.Millisecond))
	const limit = 15 * time.Second // temporal.activity_timeout of lethetest.Params
	start = time.Now()
	if _, err := env.ExecuteActivity(acts.CollectSections, activities.CollectInput{SessionID: sid}); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > limit {
		t.Errorf("CollectSections took %s, over %s", d, limit)
	} else {
		t.Logf("CollectSections: %s", d.Round(time.Millisecond))
	}
	start = time.Now()
	v, err := env.ExecuteActivity(acts.Finalize, activities.FinalizeInput{SessionID: sid})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > limit {
		t.Errorf("Finalize took %s, over %s", d, limit)
	} else {
		t.Logf("Finalize: %s", d.Round(time.Millisecond))
	}
	var res activities.FinalizeResult
	if err := v.Get(&res); err != nil {
		t.Fatal(err)
	}
	ts, err := store.Tasks(t.Context(), sid)
	if err != nil {
		t.Fatal(err)
	}
	done := 0
	for _, tk := range ts {
		if tk.Status != graph.Done {
			t.Fatalf("task %s is %s after Finalize", tk.ShortID, tk.Status)
		}
		if len(tk.ResultEmbedding) == 0 {
			t.Fatalf("task %s has no result embedding after Finalize", tk.ShortID)
		}
		done++
	}
	if res.Tasks != 5000 || res.Done != done || res.Failed != 0 || res.Evidence != 197 {
		t.Errorf("result %+v, want 5000 tasks, %d done, 197 evidence", res, done)
	}
}

// TestSyncSimilarHeartbeats: a SIMILAR_TO sync heartbeats while it works,
// on its first (full) sync and on an incremental one after new evidence,
// so that a long sync is not taken for a dead worker. It fails if the
// sync stops calling its Progress hook, or the activity stops wiring it to
// activity.RecordHeartbeat.
func TestSyncSimilarHeartbeats(t *testing.T) {
	env, store, a := newActivityEnv(t, t.TempDir(), nil)
	var beats atomic.Int64
	env.SetOnActivityHeartbeatListener(func(*activity.Info, converter.EncodedValues) { beats.Add(1) })
	sid := "heartbeat-sync"
	if _, err := env.ExecuteActivity(acts.Bootstrap, activities.BootstrapInput{SessionID: sid, Goal: "How do solid-state batteries fail?"}); err != nil {
		t.Fatal(err)
	}
	sess, err := store.GetSession(t.Context(), sid)
	if err != nil {
		t.Fatal(err)
	}
	add := func(iter, n int) {
		var ev []graph.Evidence
		for i := range n {
			text := fmt.Sprintf("Dendrites grow along grain boundaries, observation %d of batch %d.", i%40, iter)
			ev = append(ev, graph.Evidence{Content: fmt.Sprintf("%s #%d", text, i), Kind: graph.KindHTML, Strength: 0.5,
				Embedding: llmtest.Embedding(text, len(sess.GoalQueryEmb)), CreatedIter: iter})
		}
		if _, err := store.AddEvidence(t.Context(), sid, fmt.Sprintf("ev/%d", iter), graph.RootShortID, ev); err != nil {
			t.Fatal(err)
		}
	}
	sync := func(iter int) (activities.SyncSimilarResult, int64) {
		t.Helper()
		before := beats.Load()
		v, err := env.ExecuteActivity(acts.SyncSimilar, activities.SyncSimilarInput{SessionID: sid, Iteration: iter, Similar: contract.SimilarOf(a.Cfg.Algebra)})
		if err != nil {
			t.Fatal(err)
		}
		var res activities.SyncSimilarResult
		if err := v.Get(&res); err != nil {
			t.Fatal(err)
		}
		return res, beats.Load() - before
	}
	add(1, 200)
	if res, n := sync(1); n == 0 || res.Edges == 0 {
		t.Errorf("first sync: %d heartbeats, %d edges; want heartbeats over a sync that made edges", n, res.Edges)
	}
	add(2, 40)
	if res, n := sync(2); n == 0 {
		t.Errorf("incremental sync: no heartbeat (%+v)", res)
	}
}
