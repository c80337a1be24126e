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
	s, path, sid := newFileSession(t)
	add := func(key string, iter int, content string) {
		t.Helper()
		if _, err := s.AddEvidence(ctx, sid, key, graph.RootShortID, []graph.Evidence{{Content: content, Kind: graph.KindHTML, Embedding: graphtest.Unit(iter), CreatedIter: iter}}); err != nil {
			t.Fatal(err)
		}
	}
	add("a", 1, "one")
	s = reopenWithout(t, s, path, sid, "evidence_by_iter")
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

// TestFetchedSourcesWithoutIndex: a session created before the sources
// bucket existed is scanned instead, with the same answer.
func TestFetchedSourcesWithoutIndex(t *testing.T) {
	ctx := context.Background()
	s, path, sid := newFileSession(t)
	if _, err := s.AddEvidence(ctx, sid, "a", graph.RootShortID, []graph.Evidence{
		{Content: "one", SourceURL: "https://example.org/1", Kind: graph.KindHTML, Embedding: graphtest.Unit(1), CreatedIter: 1},
		{Content: "two", SourceURL: "https://example.org/2", Kind: graph.KindLLM, Embedding: graphtest.Unit(2), CreatedIter: 1},
	}); err != nil {
		t.Fatal(err)
	}
	urls := []string{"https://example.org/1", "https://example.org/2", "https://example.org/3"}
	want, err := s.FetchedSources(ctx, sid, urls)
	if err != nil {
		t.Fatal(err)
	}
	s = reopenWithout(t, s, path, sid, "sources")
	defer s.Close()
	got, err := s.FetchedSources(ctx, sid, urls)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(want, map[string]bool{"https://example.org/1": true}) {
		t.Fatalf("scanned %v, indexed %v, want only the fetched page", got, want)
	}
}

// reopenWithout closes s, deletes the session's bucket name from the file,
// as a session created before that bucket existed has it, and reopens.
func reopenWithout(t *testing.T, s *embedded.Store, path, sid, name string) *embedded.Store {
	t.Helper()
	_ = s.Close()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("sessions")).Bucket([]byte(sid)).DeleteBucket([]byte(name))
	}); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	if s, err = embedded.Open(path); err != nil {
		t.Fatal(err)
	}
	return s
}

// newFileSession opens a store in a new file with one session, "old-session".
func newFileSession(t *testing.T) (*embedded.Store, string, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "graph.db")
	s, err := embedded.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	sid := "old-session"
	if err := s.CreateSession(context.Background(), graph.Session{ID: sid, Goal: "g", GoalQueryEmb: graphtest.Unit(0), Dim: graphtest.Dim},
		graph.Task{Description: "g", EmbedText: "g", Embedding: graphtest.Unit(0)}); err != nil {
		t.Fatal(err)
	}
	return s, path, sid
}
