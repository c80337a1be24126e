package neo4j_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lethe-research/lethe/algebra"
	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/graph/graphtest"
	"github.com/lethe-research/lethe/graph/neo4j"
)

// TestPackedEmbeddings: every evidence embedding is written with its
// packed copy too, and a session whose nodes lack the copies (as a binary
// from before them wrote it, during a rolling upgrade) reads the same
// through every read that returns an embedding, tasks' included.
func TestPackedEmbeddings(t *testing.T) {
	cfg := serverConfig(t)
	s := open(t, cfg)
	cypher := cypherOf(t, cfg)
	sid := fmt.Sprintf("packed-%d", time.Now().UnixNano())
	t.Cleanup(func() { _ = s.ResetSession(context.Background(), sid) })
	written := packedSession(t, s, sid)

	rows := cypher(`MATCH (e:Evidence {session_id: $sid}) RETURN e.id, size(e.embedding), e.embedding_f32`, map[string]any{"sid": sid})
	if len(rows) != 12 {
		t.Fatalf("%d evidence nodes, want 12", len(rows))
	}
	for _, r := range rows {
		if b, _ := r.Values[2].([]byte); len(b) != 4*int(r.Values[1].(int64)) {
			t.Errorf("%v: packed embedding of %d bytes for %v components", r.Values[0], len(b), r.Values[1])
		}
	}

	packed := readEmbeddings(t, s, sid)
	if len(packed.vectors) != len(written) {
		t.Errorf("read %d embeddings, wrote %d", len(packed.vectors), len(written))
	}
	for id, emb := range written {
		if got, ok := packed.vectors[id]; !ok || !reflect.DeepEqual(got, emb) {
			t.Errorf("%s: read %v, wrote %v", id, head(got), head(emb))
		}
	}
	cypher("MATCH (e:Evidence {session_id: $sid}) REMOVE e.embedding_f32", map[string]any{"sid": sid})
	if old := readEmbeddings(t, s, sid); !reflect.DeepEqual(old, packed) {
		t.Errorf("reads without the packed copies differ from reads with them:\n%+v\n%+v", old.reads, packed.reads)
	}
}

// TestPackedTaskEmbeddings: a task's embeddings are stored packed in the
// properties themselves, with no second copy to go stale. A task an older
// binary wrote or rewrote holds float lists there, and every read gives
// the same vectors from either form, and the newest write whichever binary
// made it.
func TestPackedTaskEmbeddings(t *testing.T) {
	cfg := serverConfig(t)
	s := open(t, cfg)
	cypher := cypherOf(t, cfg)
	sid := fmt.Sprintf("packed-tasks-%d", time.Now().UnixNano())
	t.Cleanup(func() { _ = s.ResetSession(context.Background(), sid) })
	written := packedSession(t, s, sid)
	params := map[string]any{"sid": sid}
	rows := cypher(`MATCH (t:Task {session_id: $sid}) RETURN t.id, t.embedding, t.result_embedding, keys(t)`, params)
	if len(rows) != 3 {
		t.Fatalf("%d tasks, want 3", len(rows))
	}
	for _, r := range rows {
		for i, key := range []string{"", "#result"} {
			b, ok := r.Values[1+i].([]byte)
			if want := written[r.Values[0].(string)+key]; !ok || len(b) != 4*len(want) {
				t.Errorf("%v%s stored as %T of %d bytes, want %d packed bytes", r.Values[0], key, r.Values[1+i], len(b), 4*len(want))
			}
		}
		for _, k := range r.Values[3].([]any) {
			if strings.HasSuffix(k.(string), "_f32") {
				t.Errorf("%v has a second copy %v", r.Values[0], k)
			}
		}
	}
	packed := readEmbeddings(t, s, sid)
	for id, emb := range written {
		if got := packed.vectors[id]; !reflect.DeepEqual(got, emb) {
			t.Errorf("%s: read %v, wrote %v", id, head(got), head(emb))
		}
	}

	// An older binary rewrites every task with lists of the same values.
	for id, emb := range written {
		prop, task := "embedding", id
		if base, ok := strings.CutSuffix(id, "#result"); ok {
			prop, task = "result_embedding", base
		} else if strings.HasPrefix(id, "content:") {
			continue
		}
		cypher("MATCH (t:Task {id: $id}) SET t."+prop+" = $list", map[string]any{"id": task, "list": algebra.ToFloat64(emb)})
	}
	if old := readEmbeddings(t, s, sid); !reflect.DeepEqual(old, packed) {
		t.Errorf("reads of lists differ from reads of packed embeddings:\n%+v\n%+v", old.reads, packed.reads)
	}

	// Then it rewrites b's embedding with another vector, and this binary
	// rewrites it after that: each read gives the newest.
	b := graph.TaskID(sid, "b")
	older := graphtest.Unit(5)
	cypher("MATCH (t:Task {id: $id}) SET t.embedding = $list", map[string]any{"id": b, "list": algebra.ToFloat64(older)})
	if got := taskEmbedding(t, s, sid, "b"); !reflect.DeepEqual(got, older) {
		t.Errorf("after an older binary's rewrite: %v, want %v", head(got), head(older))
	}
	newer := graphtest.Unit(6)
	res, err := s.Apply(t.Context(), graph.ApplyRequest{SessionID: sid, Key: "apply/2", Iteration: 2, ActiveTask: graph.RootShortID, Ops: []graph.Op{
		{Kind: graph.OpUpdate, Task: "b", EmbedText: "b again", Embedding: newer},
	}})
	if err != nil || res.RolledBack {
		t.Fatalf("apply: %+v, %v", res, err)
	}
	if got := taskEmbedding(t, s, sid, "b"); !reflect.DeepEqual(got, newer) {
		t.Errorf("after this binary's rewrite: %v, want %v", head(got), head(newer))
	}
}

func taskEmbedding(t *testing.T, s *neo4j.Store, sid, short string) []float32 {
	t.Helper()
	ts, err := s.TasksByIDs(t.Context(), sid, []string{short})
	if err != nil || len(ts) != 1 {
		t.Fatalf("tasks by ids %s: %v, %v", short, ts, err)
	}
	return ts[0].Embedding
}

// packedSession writes a session of tasks and evidence whose embeddings
// have components that are not short decimals, and returns them by node
// task id (a result embedding under the id + "#result") and evidence
// content ("content:" + the content).
func packedSession(t *testing.T, s *neo4j.Store, sid string) map[string][]float32 {
	t.Helper()
	ctx := t.Context()
	rng := rand.New(rand.NewPCG(7, 11))
	vec := func() []float32 {
		v := make([]float32, graphtest.Dim)
		for i := range v {
			v[i] = float32(rng.NormFloat64()) / 3
		}
		return v
	}
	out := map[string][]float32{}
	root := vec()
	if err := s.CreateSession(ctx, graph.Session{ID: sid, Goal: "g", GoalDocEmb: graphtest.Unit(0)}, graph.Task{Embedding: root}); err != nil {
		t.Fatal(err)
	}
	out[graph.TaskID(sid, graph.RootShortID)] = root
	a, b, done := vec(), vec(), vec()
	res, err := s.Apply(ctx, graph.ApplyRequest{SessionID: sid, Key: "apply/1", Iteration: 1, ActiveTask: graph.RootShortID, Ops: []graph.Op{
		{Kind: graph.OpCreate, Task: "a", Description: "task a", EmbedText: "a", Embedding: a},
		{Kind: graph.OpCreate, Task: "b", Description: "task b", EmbedText: "b", Embedding: b, DependsOn: []string{"a"}},
		{Kind: graph.OpComplete, Task: "a", Result: "a is done", EmbedText: "a result", Embedding: done},
	}})
	if err != nil || res.RolledBack {
		t.Fatalf("apply: %+v, %v", res, err)
	}
	out[graph.TaskID(sid, "a")], out[graph.TaskID(sid, "b")], out[graph.TaskID(sid, "a")+"#result"] = a, b, done
	rootRes, bRes := vec(), vec()
	if err := s.SetResultEmbedding(ctx, sid, graph.RootShortID, rootRes); err != nil {
		t.Fatal(err)
	}
	if err := s.SetResultEmbeddings(ctx, sid, map[string][]float32{"b": bRes}); err != nil {
		t.Fatal(err)
	}
	out[graph.TaskID(sid, graph.RootShortID)+"#result"], out[graph.TaskID(sid, "b")+"#result"] = rootRes, bRes
	for i, task := range []string{"a", "a", "b", graph.RootShortID} {
		var items []graph.Evidence
		for j := range 3 {
			e := graph.Evidence{Content: fmt.Sprintf("fact %d.%d", i, j), SourceURL: "https://example.org/", Kind: graph.KindHTML, Strength: 0.5, Embedding: vec(), CreatedIter: i}
			items = append(items, e)
			out["content:"+e.Content] = e.Embedding
		}
		if _, err := s.AddEvidence(ctx, sid, fmt.Sprintf("ev/%d", i), task, items); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// embeddingReads is what every read that returns an embedding gave.
type embeddingReads struct {
	reads   map[string]any
	vectors map[string][]float32 // keyed as packedSession keys them, from Tasks and EvidenceSince
}

func readEmbeddings(t *testing.T, s *neo4j.Store, sid string) embeddingReads {
	t.Helper()
	ctx := t.Context()
	must := func(v any, err error) any {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	tasks := must(s.Tasks(ctx, sid)).([]graph.Task)
	rows := must(s.EvidenceRows(ctx, sid)).([]graph.Evidence)
	var ids, eids []string
	out := embeddingReads{reads: map[string]any{}, vectors: map[string][]float32{}}
	for _, task := range tasks {
		ids = append(ids, task.ID)
		out.vectors[task.ID] = task.Embedding
		if len(task.ResultEmbedding) > 0 {
			out.vectors[task.ID+"#result"] = task.ResultEmbedding
		}
	}
	var queries [][]float32
	for _, e := range rows {
		ids, eids = append(ids, e.ID), append(eids, e.ID)
		queries = append(queries, e.Embedding)
	}
	since := must(s.EvidenceSince(ctx, sid, 0)).([]graph.Evidence)
	for _, e := range since {
		out.vectors["content:"+e.Content] = e.Embedding
	}
	out.reads["tasks"] = tasks
	out.reads["evidence rows"] = rows
	out.reads["ready set"] = must(s.ReadySet(ctx, sid))
	out.reads["tasks by ids"] = must(s.TasksByIDs(ctx, sid, []string{graph.RootShortID, "a", "b"}))
	out.reads["evidence of a"] = must(s.Evidence(ctx, sid, "a"))
	out.reads["evidence of tasks"] = must(s.EvidenceOfTasks(ctx, sid, []string{"a", "b"}))
	out.reads["evidence since"] = since
	out.reads["evidence by ids"] = must(s.EvidenceByIDs(ctx, sid, eids))
	out.reads["neighbourhood"] = must(s.Neighbourhood(ctx, sid, ids))
	out.reads["shape"] = must(s.NeighbourhoodShape(ctx, sid, ids, nil))
	out.reads["nearest"] = must(s.NearestEvidence(ctx, sid, queries, 0.2))
	out.reads["nearest cosine"] = must(s.NearestCosine(ctx, sid, queries))
	return out
}

func head(v []float32) []float32 { return v[:min(len(v), 3)] }
