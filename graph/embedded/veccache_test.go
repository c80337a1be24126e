package embedded

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/lethe-research/lethe/graph"
)

// TestVecCacheBound: past CacheMiB the least recently used session's rows
// and index are dropped, never the one in use, and a dropped session
// answers as before, rebuilt from the file.
func TestVecCacheBound(t *testing.T) {
	ctx := context.Background()
	o := DefaultANNOptions()
	o.MinItems, o.CacheMiB = 256, 1
	s, err := OpenWith(filepath.Join(t.TempDir(), "graph.db"), o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const n, dim = 600, 128 // about 0.8 MiB of rows and index per session: one fits in 1 MiB, two do not
	query := [][]float32{make([]float32, dim)}
	query[0][0], query[0][1] = 1, 1
	for _, sid := range []string{"a", "b"} {
		root := graph.Task{ID: graph.TaskID(sid, graph.RootShortID), SessionID: sid, ShortID: graph.RootShortID, Embedding: make([]float32, dim)}
		if err := s.CreateSession(ctx, graph.Session{ID: sid, Goal: "g", Dim: dim}, root); err != nil {
			t.Fatal(err)
		}
		items := make([]graph.Evidence, n)
		for i := range items {
			e := make([]float32, dim)
			e[i%dim], e[(i+1)%dim] = 1, float32(i%7)/7
			items[i] = graph.Evidence{Content: fmt.Sprintf("%s item %d", sid, i), Embedding: e}
		}
		if _, err := s.AddEvidence(ctx, sid, "k", graph.RootShortID, items); err != nil {
			t.Fatal(err)
		}
	}
	near := func(sid string) [][]graph.Neighbor {
		t.Helper()
		got, err := s.NearestEvidence(ctx, sid, query, 0.5)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	first := near("a")
	if s.vecs.sess["a"] == nil || s.vecs.sess["a"].ann == nil {
		t.Fatal("session a is not cached with its index")
	}
	if mib := float64(s.vecs.sess["a"].bytes()) / (1 << 20); mib < 0.5 || mib > 1 {
		t.Fatalf("session a is estimated at %.2f MiB, want between 0.5 and 1 for this test", mib)
	}
	near("b")
	if s.vecs.sess["a"] != nil || s.vecs.sess["b"] == nil {
		t.Fatalf("after b: a cached %v, b cached %v; want b only", s.vecs.sess["a"] != nil, s.vecs.sess["b"] != nil)
	}
	if again := near("a"); !reflect.DeepEqual(again, first) || len(first[0]) == 0 {
		t.Fatalf("a rebuilt answers %v, first %v", again, first)
	}
}
