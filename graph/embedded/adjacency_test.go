package embedded_test

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/graph/embedded"
	"github.com/lethe-research/lethe/graph/graphtest"
)

// indexedAnswers is everything the index buckets answer for a session.
type indexedAnswers struct {
	hoods []graph.Neighbourhood
	per   map[string]int
	total int
}

func answers(t *testing.T, s *embedded.Store, sid string) indexedAnswers {
	t.Helper()
	ctx := context.Background()
	ts, err := s.Tasks(ctx, sid)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := s.Evidence(ctx, sid, "")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, x := range ts {
		ids = append(ids, x.ID)
	}
	for _, e := range ev {
		ids = append(ids, e.ID)
	}
	var a indexedAnswers
	for _, set := range append([][]string{ids}, splitEach(ids)...) {
		nb, err := s.Neighbourhood(ctx, sid, set)
		if err != nil {
			t.Fatal(err)
		}
		a.hoods = append(a.hoods, nb)
	}
	if a.per, err = s.EvidenceCounts(ctx, sid); err != nil {
		t.Fatal(err)
	}
	if a.total, err = s.EvidenceCount(ctx, sid); err != nil {
		t.Fatal(err)
	}
	return a
}

func splitEach(ids []string) [][]string {
	out := make([][]string, len(ids))
	for i, id := range ids {
		out[i] = []string{id}
	}
	return out
}

// fillIndexed writes a session with every kind of edge the indexes hold.
func fillIndexed(t *testing.T, s *embedded.Store, sid string) {
	t.Helper()
	ctx := context.Background()
	if err := s.CreateSession(ctx, graph.Session{ID: sid, Goal: "g", GoalQueryEmb: graphtest.Unit(0), Dim: graphtest.Dim},
		graph.Task{Description: "g", EmbedText: "g", Embedding: graphtest.Unit(0)}); err != nil {
		t.Fatal(err)
	}
	op := func(id, parent string, axis int, deps ...string) graph.Op {
		return graph.Op{Kind: graph.OpCreate, Task: id, Parent: parent, Description: id, EmbedText: id, Embedding: graphtest.Unit(axis), DependsOn: deps}
	}
	if _, err := s.Apply(ctx, graph.ApplyRequest{SessionID: sid, Key: "a1", Iteration: 1, ActiveTask: graph.RootShortID, DedupThreshold: 0.95, Ops: []graph.Op{
		op("a", "", 2), op("b", "a", 3, "a"), op("c", "", 4, "b"),
		{Kind: graph.OpEvidence, Task: "a", Content: "model says", EmbedText: "m", Embedding: graphtest.Unit(5)},
	}}); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i, task := range []string{"a", "b", "c", "a"} {
		items := []graph.Evidence{
			{Content: fmt.Sprintf("fact %d", i), Embedding: graphtest.Blend(6+i, 1, 0.9)},
			{Content: "shared", Embedding: graphtest.Unit(10)}, // linked to every task, a duplicate for a
		}
		if _, err := s.AddEvidence(ctx, sid, fmt.Sprint("ev", i), task, items); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, graph.EvidenceID(sid, graph.ContentHash(items[0].Content)))
	}
	shared := graph.EvidenceID(sid, graph.ContentHash("shared"))
	scope := append([]string{shared}, ids...)
	if err := s.ReplaceSimilar(ctx, sid, scope, []graph.Edge{{From: ids[0], To: ids[1], Weight: 0.9}, {From: shared, To: ids[2], Weight: 0.85, Label: graph.LabelEntailment}}); err != nil {
		t.Fatal(err)
	}
	// A second replace over part of the scope drops 0-1 and adds 0-3.
	if err := s.ReplaceSimilar(ctx, sid, ids[:2:2], nil); err != nil {
		t.Fatal(err)
	}
	if err := s.ReplaceSimilar(ctx, sid, []string{ids[0], ids[3]}, []graph.Edge{{From: ids[3], To: ids[0], Weight: 0.81}}); err != nil {
		t.Fatal(err)
	}
}

// TestIndexesSurviveReopenAndMigration: the index buckets give the same
// answers after a reopen, and a lethe-graph/1 file (no index buckets) is
// migrated by Open to the same answers; writes after the migration keep
// them in step.
func TestIndexesSurviveReopenAndMigration(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "graph.db")
	s, err := embedded.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	sids := []string{"one", "two"}
	for _, sid := range sids {
		fillIndexed(t, s, sid)
	}
	before := map[string]indexedAnswers{}
	for _, sid := range sids {
		before[sid] = answers(t, s, sid)
	}
	if got := before["one"].per; got["a"] != 4 || got["b"] != 2 || got["c"] != 2 || before["one"].total != 6 {
		t.Fatalf("counts before reopen: %v total %d", got, before["one"].total)
	}
	reopen := func(what string) {
		t.Helper()
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if what == "migration" {
			downgrade(t, path)
		}
		if s, err = embedded.Open(path); err != nil {
			t.Fatal(err)
		}
		for _, sid := range sids {
			if got := answers(t, s, sid); !reflect.DeepEqual(got, before[sid]) {
				t.Fatalf("after %s, session %s:\n got  %+v\n want %+v", what, sid, got, before[sid])
			}
		}
	}
	reopen("reopen")
	reopen("migration")
	if _, err := s.AddEvidence(ctx, "one", "late", "c", []graph.Evidence{{Content: "late fact", Embedding: graphtest.Unit(12)}}); err != nil {
		t.Fatal(err)
	}
	per, err := s.EvidenceCounts(ctx, "one")
	total, err2 := s.EvidenceCount(ctx, "one")
	if err != nil || err2 != nil || per["c"] != 3 || total != 7 {
		t.Fatalf("after a write on the migrated file: %v %d %v", per, total, err)
	}
	_ = s.Close()
	setFormat(t, path, "lethe-graph/9")
	if s2, err := embedded.Open(path); err == nil {
		_ = s2.Close()
		t.Fatal("a file of an unknown format opened")
	}
}

// downgrade makes the file what a lethe-graph/1 binary wrote: no index
// buckets, no evidence total.
func downgrade(t *testing.T, path string) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("sessions")).ForEachBucket(func(k []byte) error {
			sb := tx.Bucket([]byte("sessions")).Bucket(k)
			for _, name := range []string{"task_adj", "supports", "similar_adj", "counts"} {
				if err := sb.DeleteBucket([]byte(name)); err != nil {
					return fmt.Errorf("%s: %w", name, err)
				}
			}
			return sb.Bucket([]byte("meta")).Delete([]byte("evidence_total"))
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	setFormat(t, path, "lethe-graph/1")
}

func setFormat(t *testing.T, path, format string) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(func(tx *bolt.Tx) error { return tx.Bucket([]byte("meta")).Put([]byte("format"), []byte(format)) }); err != nil {
		t.Fatal(err)
	}
}
