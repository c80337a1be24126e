package embedded_test

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/graph/embedded"
	"github.com/lethe-research/lethe/graph/graphtest"
)

// TestEvidenceSinceWithoutIndex: a session created before the iteration
// index existed (no evidence_by_iter bucket) is scanned instead, with the
// same answer, and evidence added later is found too.
func TestEvidenceSinceWithoutIndex(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "graph.db")
	s, err := embedded.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	sid := "old-session"
	if err := s.CreateSession(ctx, graph.Session{ID: sid, Goal: "g", GoalQueryEmb: graphtest.Unit(0), Dim: graphtest.Dim},
		graph.Task{Description: "g", EmbedText: "g", Embedding: graphtest.Unit(0)}); err != nil {
		t.Fatal(err)
	}
	add := func(key string, iter int, content string) {
		t.Helper()
		if _, err := s.AddEvidence(ctx, sid, key, graph.RootShortID, []graph.Evidence{{Content: content, Kind: graph.KindHTML, Embedding: graphtest.Unit(iter), CreatedIter: iter}}); err != nil {
			t.Fatal(err)
		}
	}
	add("a", 1, "one")
	_ = s.Close()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("sessions")).Bucket([]byte(sid)).DeleteBucket([]byte("evidence_by_iter"))
	}); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	if s, err = embedded.Open(path); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	add("b", 2, "two")
	add("c", 3, "three")
	all, err := s.Evidence(ctx, sid, "")
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.EvidenceSince(ctx, sid, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, all[1:]) {
		t.Fatalf("since 2 = %+v, want the rows of iterations 2 and 3", got)
	}
}
