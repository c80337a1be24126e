package graphtest

// Lane observe: conformance of EvidenceSince and DeleteBlob
// (docs/incremental-signals.md).

import (
	"reflect"
	"testing"

	"github.com/lethe-research/lethe/graph"
)

// testEvidenceSince: EvidenceSince(iter) is exactly Evidence filtered to
// CreatedIter >= iter, with SUPPORTS targets, strengths and order, for
// fetched, linked and model-written evidence; other sessions never leak.
func testEvidenceSince(t *testing.T, s graph.Store) {
	ctx := ctxOf(t)
	sid, other := newSession(t, s), newSession(t, s)
	mustApply(t, s, graph.ApplyRequest{SessionID: sid, Key: "apply/1", Iteration: 1, ActiveTask: graph.RootShortID, Ops: []graph.Op{create("a", 2)}})
	addEv(t, s, sid, "web/1", graph.Evidence{Content: "one", Kind: graph.KindHTML, Strength: 0.5, Embedding: Unit(3), CreatedIter: 1},
		graph.Evidence{Content: "two", Kind: graph.KindHTML, Strength: 0.5, Embedding: Unit(4), CreatedIter: 1})
	addEv(t, s, sid, "web/2", graph.Evidence{Content: "three", Kind: graph.KindPDF, Strength: 0.6, Embedding: Unit(5), CreatedIter: 2})
	// Content held since iteration 1 found again for task a in iteration 3:
	// linked, it keeps its first iteration.
	if _, err := s.AddEvidence(ctx, sid, "web/3", "a", []graph.Evidence{
		{Content: "one", Kind: graph.KindHTML, Embedding: Unit(3), CreatedIter: 3},
		{Content: "four", Kind: graph.KindHTML, Strength: 0.7, Embedding: Unit(6), CreatedIter: 3},
	}); err != nil {
		t.Fatal(err)
	}
	mustApply(t, s, graph.ApplyRequest{SessionID: sid, Key: "apply/3", Iteration: 3, ActiveTask: "a", Ops: []graph.Op{
		{Kind: graph.OpEvidence, Task: "a", Content: "model says five", EmbedText: "five", Embedding: Unit(7)},
	}})
	addEv(t, s, other, "web/2", graph.Evidence{Content: "elsewhere", Kind: graph.KindHTML, Embedding: Unit(8), CreatedIter: 2})
	if err := s.SetStrengths(ctx, sid, map[string]float64{graph.EvidenceID(sid, graph.ContentHash("four")): 0.9}); err != nil {
		t.Fatal(err)
	}
	all := evidence(t, s, sid, "")
	for _, iter := range []int{-1, 0, 1, 2, 3, 4} {
		got, err := s.EvidenceSince(ctx, sid, iter)
		if err != nil {
			t.Fatalf("since %d: %v", iter, err)
		}
		var want []graph.Evidence
		for _, e := range all {
			if e.CreatedIter >= iter {
				want = append(want, e)
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("since %d = %v, want %v", iter, evIDs(got), evIDs(want))
		}
	}
	if got, _ := s.EvidenceSince(ctx, sid, 3); len(got) != 2 || got[0].Strength != 0.9 && got[1].Strength != 0.9 {
		t.Fatalf("since 3 = %+v: want the fetched and the model-written row, strength updated", got)
	}
	_, err := s.EvidenceSince(ctx, newSessionID(t), 0)
	wantErr(t, err, graph.ErrNotFound, "evidence since of a missing session")
}

// testDeleteBlob: a deleted blob is gone, deleting again is no error,
// other keys and sessions keep theirs, a missing session is ErrNotFound.
func testDeleteBlob(t *testing.T, s graph.Store) {
	ctx := ctxOf(t)
	sid, other := newSession(t, s), newSession(t, s)
	for _, id := range []string{sid, other} {
		for _, k := range []string{"signals/1", "signals/2"} {
			if err := s.PutBlob(ctx, id, k, []byte(k)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for range 2 {
		if err := s.DeleteBlob(ctx, sid, "signals/1"); err != nil {
			t.Fatalf("delete: %v", err)
		}
	}
	_, err := s.GetBlob(ctx, sid, "signals/1")
	wantErr(t, err, graph.ErrNotFound, "deleted blob")
	if got, err := s.GetBlob(ctx, sid, "signals/2"); err != nil || string(got) != "signals/2" {
		t.Fatalf("kept blob = %q, %v", got, err)
	}
	if got, err := s.GetBlob(ctx, other, "signals/1"); err != nil || string(got) != "signals/1" {
		t.Fatalf("other session's blob = %q, %v", got, err)
	}
	wantErr(t, s.DeleteBlob(ctx, newSessionID(t), "signals/1"), graph.ErrNotFound, "delete blob of a missing session")
}
