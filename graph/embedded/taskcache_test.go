package embedded

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/lethe-research/lethe/graph"
)

// TestTaskCacheFollowsTheRecords: a read after a write sees the write, a
// caller changing what it read changes nothing stored or cached, and a
// reset session reads as new.
func TestTaskCacheFollowsTheRecords(t *testing.T) {
	ctx := context.Background()
	s, err := Open(filepath.Join(t.TempDir(), "graph.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sid := "tc"
	root := graph.Task{ID: graph.TaskID(sid, graph.RootShortID), SessionID: sid, ShortID: graph.RootShortID,
		Description: "goal", Embedding: []float32{1, 0, 0}, Status: graph.Pending}
	if err := s.CreateSession(ctx, graph.Session{ID: sid, Goal: "goal", Dim: 3}, root); err != nil {
		t.Fatal(err)
	}
	first := mustTasks(t, s, sid)
	first[0].Embedding[0] = 42
	first[0].Description = "changed by the caller"
	if again := mustTasks(t, s, sid); again[0].Embedding[0] != 1 || again[0].Description != "goal" {
		t.Fatalf("a caller's change reached the cache: %+v", again[0])
	}
	if _, err := s.SetStatus(ctx, sid, graph.RootShortID, nil, graph.Active); err != nil {
		t.Fatal(err)
	}
	if got := mustTasks(t, s, sid); got[0].Status != graph.Active {
		t.Fatalf("status after SetStatus: %s, want ACTIVE", got[0].Status)
	}
	if err := s.SetResultEmbedding(ctx, sid, graph.RootShortID, []float32{0, 1, 0}); err != nil {
		t.Fatal(err)
	}
	got := mustTasks(t, s, sid)
	if !reflect.DeepEqual(got[0].ResultEmbedding, []float32{0, 1, 0}) {
		t.Fatalf("result embedding after SetResultEmbedding: %v", got[0].ResultEmbedding)
	}
	if err := s.ResetSession(ctx, sid); err != nil {
		t.Fatal(err)
	}
	root.Description = "another goal"
	if err := s.CreateSession(ctx, graph.Session{ID: sid, Goal: "another goal", Dim: 3}, root); err != nil {
		t.Fatal(err)
	}
	if got := mustTasks(t, s, sid); got[0].Description != "another goal" || got[0].Status != graph.Pending {
		t.Fatalf("after reset and re-creation: %+v", got[0])
	}
}

// TestTaskCacheEvictsTheLeastRecent: past taskCacheSessions sessions the
// one read longest ago goes, and one read since stays.
func TestTaskCacheEvictsTheLeastRecent(t *testing.T) {
	c := newTaskCache()
	for i := range taskCacheSessions {
		c.session(fmt.Sprint(i))
	}
	c.session("0") // read again: now the most recent
	c.session("new")
	if len(c.sess) != taskCacheSessions {
		t.Fatalf("%d sessions cached, want %d", len(c.sess), taskCacheSessions)
	}
	if c.sess["0"] == nil || c.sess["1"] != nil || c.sess["new"] == nil {
		t.Fatalf("evicted the wrong session: 0 kept %v, 1 kept %v", c.sess["0"] != nil, c.sess["1"] != nil)
	}
}

func mustTasks(t *testing.T, s *Store, sid string) []graph.Task {
	t.Helper()
	ts, err := s.Tasks(context.Background(), sid)
	if err != nil || len(ts) != 1 {
		t.Fatalf("Tasks: %d tasks, %v", len(ts), err)
	}
	return ts
}

// TestTaskCacheEvictsByBytes: past its bytes the cache evicts the least
// recently read sessions, never the one being read, and keeps its count of
// bytes equal to what it holds.
func TestTaskCacheEvictsByBytes(t *testing.T) {
	ctx := context.Background()
	s, err := Open(filepath.Join(t.TempDir(), "graph.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, sid := range []string{"a", "b", "c"} {
		root := graph.Task{ID: graph.TaskID(sid, graph.RootShortID), SessionID: sid, ShortID: graph.RootShortID,
			Description: "goal " + sid, Embedding: make([]float32, 64)}
		if err := s.CreateSession(ctx, graph.Session{ID: sid, Goal: "goal", Dim: 64}, root); err != nil {
			t.Fatal(err)
		}
	}
	mustTasks(t, s, "a")
	one := s.tasks.bytes
	s.tasks.maxBytes = 2*one + one/2 // two sessions fit, three do not
	mustTasks(t, s, "b")
	mustTasks(t, s, "a") // a is now more recent than b
	mustTasks(t, s, "c")
	c := s.tasks
	if c.sess["b"] != nil || c.sess["a"] == nil || c.sess["c"] == nil {
		t.Fatalf("kept a %v, b %v, c %v; want a and c", c.sess["a"] != nil, c.sess["b"] != nil, c.sess["c"] != nil)
	}
	held := 0
	for _, st := range c.sess {
		held += st.bytes
	}
	if c.bytes != held || held != 2*one {
		t.Fatalf("counted %d bytes, held %d, want %d", c.bytes, held, 2*one)
	}
	s.tasks.maxBytes = one / 2 // not even one session fits: the one read stays
	mustTasks(t, s, "b")
	if len(c.sess) != 1 || c.sess["b"] == nil {
		t.Fatalf("sessions kept: %d", len(c.sess))
	}
}
