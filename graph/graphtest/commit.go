package graphtest

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/lethe-research/lethe/graph"
)

// testCommit: Commit writes edges, strengths, blobs and deletions
// together, and a commit with any bad part writes none of them.
func testCommit(t *testing.T, s graph.Store) {
	ctx := ctxOf(t)
	sid := newSession(t, s)
	ev := addEv(t, s, sid, "k",
		graph.Evidence{Content: "c0", Embedding: Unit(0)},
		graph.Evidence{Content: "c1", Embedding: Unit(1)},
		graph.Evidence{Content: "c2", Embedding: Unit(2)},
	)
	all := []string{ev[0].ID, ev[1].ID, ev[2].ID}
	if err := s.PutBlob(ctx, sid, "old", []byte("o")); err != nil {
		t.Fatal(err)
	}
	w := graph.Writes{
		SimilarScope: all,
		Similar:      []graph.Edge{{From: ev[1].ID, To: ev[0].ID, Weight: 0.9, Label: graph.LabelEntailment}},
		Strengths:    map[string]float64{ev[2].ID: 0.25},
		Blobs:        map[string][]byte{"a": []byte("A"), "b": []byte("B")},
		DeleteBlobs:  []string{"old", "never-written"},
	}
	if err := s.Commit(ctx, sid, w); err != nil {
		t.Fatal(err)
	}
	before := committed(t, s, sid)
	eq(t, "edges", len(before.edges), 1)
	eq(t, "strength", before.strength[ev[2].ID], 0.25)
	eq(t, "blob a", string(before.blobs["a"]), "A")
	if _, ok := before.blobs["old"]; ok {
		t.Fatal("deleted blob still there")
	}

	bad := []struct {
		what string
		w    graph.Writes
		err  error
	}{
		{"edge leaving the scope", graph.Writes{SimilarScope: all[:2], Similar: []graph.Edge{{From: ev[0].ID, To: ev[2].ID, Weight: 0.8}},
			Blobs: map[string][]byte{"a": []byte("lost")}}, graph.ErrNotFound},
		{"edges without a scope", graph.Writes{Similar: []graph.Edge{{From: ev[0].ID, To: ev[1].ID, Weight: 0.8}},
			Blobs: map[string][]byte{"a": []byte("lost")}}, graph.ErrNotFound},
		{"unknown strength id", graph.Writes{SimilarScope: all, Strengths: map[string]float64{graph.EvidenceID(sid, "nope"): 0.5},
			DeleteBlobs: []string{"a"}}, graph.ErrNotFound},
		{"put and deleted", graph.Writes{Strengths: map[string]float64{ev[2].ID: 0.75}, Blobs: map[string][]byte{"b": nil},
			DeleteBlobs: []string{"b"}}, nil},
		{"empty key", graph.Writes{Strengths: map[string]float64{ev[2].ID: 0.75}, Blobs: map[string][]byte{"": []byte("x")}}, nil},
	}
	for _, c := range bad {
		err := s.Commit(ctx, sid, c.w)
		if err == nil || (c.err != nil && !errors.Is(err, c.err)) {
			t.Fatalf("%s: err %v, want %v", c.what, err, c.err)
		}
		after := committed(t, s, sid)
		if !slices.Equal(after.edges, before.edges) || after.strength[ev[2].ID] != 0.25 || !equalBlobs(after.blobs, before.blobs) {
			t.Fatalf("%s: a rejected commit wrote something:\nbefore %+v\nafter  %+v", c.what, before, after)
		}
	}
	if err := s.Commit(ctx, sid, graph.Writes{}); err != nil {
		t.Fatalf("empty commit: %v", err)
	}
	// A recount alone changes no count: the count was right.
	n, err := s.EvidenceCount(ctx, sid)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx, sid, graph.Writes{RecountEvidence: true}); err != nil {
		t.Fatalf("recount: %v", err)
	}
	if m, err := s.EvidenceCount(ctx, sid); err != nil || m != n || m != len(ev) {
		t.Fatalf("after a recount: %d evidence items (%v), want %d", m, err, len(ev))
	}
	err = s.Commit(ctx, newSessionID(t), graph.Writes{Blobs: map[string][]byte{"a": []byte("A")}})
	wantErr(t, err, graph.ErrNotFound, "commit to a missing session")
}

// committedState is what testCommit compares around a rejected commit.
type committedState struct {
	edges    []graph.Edge
	strength map[string]float64
	blobs    map[string][]byte
}

func committed(t *testing.T, s graph.Store, sid string) committedState {
	t.Helper()
	ctx := ctxOf(t)
	evs, err := s.Evidence(ctx, sid, "")
	if err != nil {
		t.Fatal(err)
	}
	st := committedState{edges: edges(t, s, sid, graph.SimilarTo), strength: map[string]float64{}}
	for _, e := range evs {
		st.strength[e.ID] = e.Strength
	}
	if st.blobs, err = s.GetBlobs(ctx, sid, []string{"a", "b", "old", "never-written"}); err != nil {
		t.Fatal(err)
	}
	return st
}

func equalBlobs(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || string(v) != string(w) {
			return false
		}
	}
	return true
}

// commitFails fails the first commit of a sync (the one that writes its
// watermark): a worker killed at the commit.
type commitFails struct {
	graph.Store
	failed bool
}

func (c *commitFails) Commit(ctx context.Context, sid string, w graph.Writes) error {
	if _, ok := w.Blobs[graph.SimilarMarkBlob]; ok && !c.failed {
		c.failed = true
		return errors.New("worker killed at the commit")
	}
	return c.Store.Commit(ctx, sid, w)
}
