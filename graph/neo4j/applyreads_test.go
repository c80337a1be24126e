package neo4j_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/graph/neo4j"
)

// applyPool holds few directions so that creates often land over the
// dedup threshold of some task, and a zero vector, which has no dedup copy.
var applyPool = [][]float32{{1, 0, 0, 0}, {0, 1, 0, 0}, {0.6, 0.8, 0, 0}, {0.8, 0.6, 0, 0}, {0, 0, 0, 0}, {0, 0, 0.1, 1}}

// TestApplyReads: the tasks Apply reads for a request are the rows
// graph.ApplyReads says, whole where it says, on a session of 60 tasks
// with prerequisites, for random requests: named tasks, dedup candidates
// found in the server, every row when the request may close a cycle.
func TestApplyReads(t *testing.T) {
	s, sid := applySession(t)
	ctx := t.Context()
	r := rand.New(rand.NewPCG(5, 61))
	all, err := s.Tasks(ctx, sid)
	if err != nil || len(all) != 61 {
		t.Fatalf("tasks: %d, %v", len(all), err)
	}
	var partial, cands int
	for c := range 150 {
		req := randomApply(r, sid, all)
		reads := graph.ReadsFor(req)
		got, err := neo4j.TasksForApply(ctx, s, req)
		if err != nil {
			t.Fatal(err)
		}
		want := reads.Rows(all)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("case %d: request %+v\nreads %+v\ngot %d rows %v\nwant %d rows %v", c, req, reads, len(got), ids(got), len(want), ids(want))
		}
		if !reads.All {
			partial++
		}
		if len(want) > len(reads.Named) && !reads.All {
			cands++
		}
	}
	if partial < 50 || cands < 20 {
		t.Fatalf("coverage: %d partial reads, %d with dedup candidates", partial, cands)
	}
}

// TestApplyReadsListEmbedding: a task whose embedding an older binary
// wrote as a float list, not packed, is compared as one: a create over
// the threshold to it still maps onto it, and a task not over it is not
// read whole.
func TestApplyReadsListEmbedding(t *testing.T) {
	cfg := serverConfig(t)
	s, sid := applySession(t)
	cypher := cypherOf(t, cfg)
	ctx := t.Context()
	// t6 had applyPool[5]; an older binary rewrites it as a list.
	list := []any{0.0, 0.0, 0.1, 1.0}
	cypher("MATCH (t:Task {session_id: $sid, short_id: 't6'}) SET t.embedding = $list", map[string]any{"sid": sid, "list": list})
	req := graph.ApplyRequest{SessionID: sid, Key: "list", Iteration: 50, ActiveTask: graph.RootShortID, DedupThreshold: 0.95,
		Ops: []graph.Op{{Kind: graph.OpCreate, Task: "again", Description: "again", Embedding: applyPool[5]}}}
	got, err := neo4j.TasksForApply(ctx, s, req)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(ids(got), "t6") || slices.Contains(ids(got), "t1") {
		t.Fatalf("read %v: want t6 (a list, over the threshold), not t1", ids(got))
	}
	res, err := s.Apply(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Mapped["again"] != "t6" && res.Mapped["again"] != "t12" {
		t.Fatalf("the create did not map onto a task of its direction: %+v", res)
	}
	// Without creates to deduplicate, only the named tasks are read.
	req = graph.ApplyRequest{SessionID: sid, Iteration: 51, ActiveTask: graph.RootShortID, Ops: []graph.Op{{Kind: graph.OpUpdate, Task: "t3", Description: "d"}}}
	if got, err = neo4j.TasksForApply(ctx, s, req); err != nil || !slices.Equal(ids(got), []string{"root", "t3"}) {
		t.Fatalf("update read %v, %v", ids(got), err)
	}
}

// applySession is a session of 60 tasks under the root, each under an
// earlier one, a third with a prerequisite, some done or failed.
func applySession(t *testing.T) (*neo4j.Store, string) {
	t.Helper()
	s := open(t, serverConfig(t))
	ctx := t.Context()
	sid := fmt.Sprintf("applyreads-%d", time.Now().UnixNano())
	t.Cleanup(func() { _ = s.ResetSession(context.Background(), sid) })
	if err := s.CreateSession(ctx, graph.Session{ID: sid, Goal: "g", GoalDocEmb: applyPool[0], GoalQueryEmb: applyPool[0], Dim: 4},
		graph.Task{Description: "g", EmbedText: "g", Embedding: applyPool[0]}); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(9, 61))
	names := []string{graph.RootShortID}
	for i := range 60 {
		short := fmt.Sprintf("t%d", i+1)
		op := graph.Op{Kind: graph.OpCreate, Task: short, Description: short, Parent: names[r.IntN(len(names))], Embedding: applyPool[i%len(applyPool)]}
		if r.IntN(3) == 0 {
			op.DependsOn = []string{names[r.IntN(len(names))]}
		}
		ops := []graph.Op{op}
		if r.IntN(6) == 0 {
			ops = append(ops, graph.Op{Kind: graph.OpComplete, Task: short, Result: "r", Embedding: applyPool[1]})
		}
		res, err := s.Apply(ctx, graph.ApplyRequest{SessionID: sid, Key: "seed/" + short, Iteration: i + 1, ActiveTask: graph.RootShortID, Ops: ops})
		if err != nil || res.RolledBack {
			t.Fatalf("seed %s: %+v, %v", short, res, err)
		}
		names = append(names, short)
	}
	var fails []graph.Op
	for i := 7; i <= 60; i += 9 {
		fails = append(fails, graph.Op{Kind: graph.OpFail, Task: fmt.Sprintf("t%d", i), Reason: "x"})
	}
	if _, err := s.Apply(ctx, graph.ApplyRequest{SessionID: sid, Key: "seed/fail", Iteration: 61, Ops: fails}); err != nil {
		t.Fatal(err)
	}
	return s, sid
}

func randomApply(r *rand.Rand, sid string, ts []graph.Task) graph.ApplyRequest {
	pick := func() string { return ts[r.IntN(len(ts))].ShortID }
	req := graph.ApplyRequest{SessionID: sid, Iteration: 99, ActiveTask: pick(), DedupThreshold: []float64{0, 0.95, 0.95}[r.IntN(3)]}
	for i := range 1 + r.IntN(3) {
		op := graph.Op{Task: pick(), Embedding: applyPool[r.IntN(len(applyPool))]}
		switch r.IntN(5) {
		case 0, 1:
			op.Kind, op.Task, op.Parent = graph.OpCreate, fmt.Sprintf("n%d", i), pick()
			if r.IntN(8) == 0 {
				op.DependsOn = []string{pick()}
			}
		case 2:
			op.Kind, op.On = graph.OpDepend, pick()
		case 3:
			op.Kind, op.Description = graph.OpUpdate, "d"
		default:
			op.Kind = graph.OpContinue
		}
		req.Ops = append(req.Ops, op)
	}
	return req
}

func ids(ts []graph.Task) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.ShortID
	}
	return out
}
