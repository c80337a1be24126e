package embedded_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/graph/embedded"
	"github.com/lethe-research/lethe/graph/graphtest"
)

func openTemp(t *testing.T) *embedded.Store {
	t.Helper()
	s, err := embedded.Open(filepath.Join(t.TempDir(), "graph.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	graphtest.Run(t, func(t *testing.T) graph.Store { return openTemp(t) })
}

// TestConformanceSharedStore runs the suite with one store for every
// subtest, the way it runs against a shared Neo4j server.
func TestConformanceSharedStore(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	shared := openTemp(t)
	graphtest.Run(t, func(t *testing.T) graph.Store { return shared })
}

// snapshot is everything a session holds, as the interface shows it.
type snapshot struct {
	sess  graph.Session
	tasks []graph.Task
	ev    []graph.Evidence
	edges []graph.Edge
	blob  []byte
}

func take(t *testing.T, s graph.Store, sid string) snapshot {
	t.Helper()
	ctx := context.Background()
	var sn snapshot
	var err error
	if sn.sess, err = s.GetSession(ctx, sid); err != nil {
		t.Fatal(err)
	}
	if sn.tasks, err = s.Tasks(ctx, sid); err != nil {
		t.Fatal(err)
	}
	if sn.ev, err = s.Evidence(ctx, sid, ""); err != nil {
		t.Fatal(err)
	}
	if sn.edges, err = s.Edges(ctx, sid); err != nil {
		t.Fatal(err)
	}
	if sn.blob, err = s.GetBlob(ctx, sid, "svd/1"); err != nil {
		t.Fatal(err)
	}
	return sn
}

func TestReopenPreservesEverything(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "graph.db")
	s, err := embedded.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	const sid = "reopen"
	if err := s.CreateSession(ctx, graph.Session{ID: sid, Goal: "g", GoalDocEmb: graphtest.Unit(0), GoalQueryEmb: graphtest.Unit(1)}, graph.Task{Description: "g", Embedding: graphtest.Unit(0)}); err != nil {
		t.Fatal(err)
	}
	req := graph.ApplyRequest{SessionID: sid, Key: "apply/1", Iteration: 1, ActiveTask: graph.RootShortID, DedupThreshold: 0.95, Ops: []graph.Op{
		{Kind: graph.OpCreate, Task: "a", Description: "a", EmbedText: "a", Embedding: graphtest.Unit(2)},
		{Kind: graph.OpCreate, Task: "b", Description: "b", EmbedText: "b", Embedding: graphtest.Unit(3), DependsOn: []string{"a"}},
		{Kind: graph.OpComplete, Task: "a", Result: "ra", EmbedText: "ra", Embedding: graphtest.Blend(2, 4, 0.3)},
		{Kind: graph.OpEvidence, Task: "a", Content: "llm fact", EmbedText: "f", Embedding: graphtest.Unit(5)},
	}}
	first, err := s.Apply(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddEvidence(ctx, sid, "web/1", "b", []graph.Evidence{
		{Content: "web fact one", SourceURL: "https://a.example", Kind: graph.KindHTML, Strength: 0.5, Embedding: graphtest.Unit(6)},
		{Content: "web fact two", SourceURL: "https://b.example", Kind: graph.KindPDF, Strength: 0.5, Embedding: graphtest.Blend(6, 7, 0.9)},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := graph.SyncSimilar(ctx, s, sid, graph.SimilarParams{Threshold: 0.8}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.PutBlob(ctx, sid, "svd/1", []byte("basis")); err != nil {
		t.Fatal(err)
	}
	before := take(t, s, sid)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Ping(ctx); err == nil {
		t.Fatal("Ping after Close succeeded")
	}

	s, err = embedded.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	after := take(t, s, sid)
	if before.sess.Goal != after.sess.Goal || !slices.Equal(before.sess.GoalDocEmb, after.sess.GoalDocEmb) || !slices.Equal(before.sess.GoalQueryEmb, after.sess.GoalQueryEmb) || after.sess.Dim != 16 {
		t.Fatalf("session: %+v -> %+v", before.sess, after.sess)
	}
	if len(before.tasks) != 3 || len(after.tasks) != len(before.tasks) {
		t.Fatalf("tasks: %d -> %d", len(before.tasks), len(after.tasks))
	}
	for i := range before.tasks {
		b, a := before.tasks[i], after.tasks[i]
		if b.ID != a.ID || b.Status != a.Status || b.Depth != a.Depth || b.NProductive != a.NProductive || b.ResultSummary != a.ResultSummary ||
			b.Parent != a.Parent || !slices.Equal(b.DependsOn, a.DependsOn) || !slices.Equal(b.Embedding, a.Embedding) || !slices.Equal(b.ResultEmbedding, a.ResultEmbedding) {
			t.Fatalf("task %d: %+v -> %+v", i, b, a)
		}
	}
	if len(before.ev) != 3 || len(after.ev) != len(before.ev) {
		t.Fatalf("evidence: %d -> %d", len(before.ev), len(after.ev))
	}
	for i := range before.ev {
		b, a := before.ev[i], after.ev[i]
		if b.ID != a.ID || b.Content != a.Content || b.Strength != a.Strength || b.Kind != a.Kind || b.TaskID != a.TaskID || !slices.Equal(b.Embedding, a.Embedding) {
			t.Fatalf("evidence %d: %+v -> %+v", i, b, a)
		}
	}
	// 2 SUBTASK_OF, 1 DEPENDS_ON, 3 SUPPORTS, 1 SIMILAR_TO.
	if !slices.Equal(before.edges, after.edges) || len(after.edges) != 7 {
		t.Fatalf("edges: %v -> %v", before.edges, after.edges)
	}
	if string(after.blob) != "basis" {
		t.Fatalf("blob = %q", after.blob)
	}
	// Idempotency records survive too.
	again, err := s.Apply(ctx, req)
	if err != nil || !again.Replayed || !slices.Equal(again.Created, first.Created) {
		t.Fatalf("replay after reopen = %+v, %v", again, err)
	}
}

func TestOpenRejectsForeignFormat(t *testing.T) {
	path := filepath.Join(t.TempDir(), "graph.db")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket([]byte("meta"))
		if err != nil {
			return err
		}
		return b.Put([]byte("format"), []byte("lethe-graph/99"))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err := embedded.Open(path); err == nil {
		_ = s.Close()
		t.Fatal("opened a file of another format")
	}
}

// TestOpenLockedSays: a second Open of a file a store holds fails after
// the lock wait, and says that another process holds it; the first store
// is unharmed.
func TestOpenLockedSays(t *testing.T) {
	path := filepath.Join(t.TempDir(), "graph.db")
	s, err := embedded.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	second, err := embedded.Open(path)
	if err == nil {
		_ = second.Close()
		t.Fatal("opened a file another store holds")
	}
	if !errors.Is(err, bolt.ErrTimeout) || !strings.Contains(err.Error(), "locked by another process") {
		t.Fatalf("error %q does not say the file is locked", err)
	}
	if err := s.Ping(context.Background()); err != nil {
		t.Fatalf("the first store after the failed open: %v", err)
	}
}

func TestCanceledContext(t *testing.T) {
	s := openTemp(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.CreateSession(ctx, graph.Session{ID: "x"}, graph.Task{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("CreateSession with a canceled context: %v", err)
	}
	if _, err := s.Tasks(ctx, "x"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Tasks with a canceled context: %v", err)
	}
}
