package graphtest

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/lethe-research/lethe/graph"
)

// Lane expand (#14): Neighbourhood against what the full reads (Tasks,
// Evidence, Edges) say one hop around the same ids is.

// testNeighbourhood builds a session with every edge kind (SUBTASK_OF,
// DEPENDS_ON, SUPPORTS with shared evidence, SIMILAR_TO) beside a second
// session, and checks Neighbourhood for several id sets.
func testNeighbourhood(t *testing.T, s graph.Store) {
	ctx := ctxOf(t)
	sid := newSession(t, s)
	other := newSession(t, s)
	mustApply(t, s, graph.ApplyRequest{SessionID: sid, Key: "a1", Iteration: 1, ActiveTask: graph.RootShortID, Ops: []graph.Op{
		create("A", 2), create("B", 3, "C"), create("C", 4),
	}})
	mustApply(t, s, graph.ApplyRequest{SessionID: sid, Key: "a2", Iteration: 2, ActiveTask: "A", Ops: []graph.Op{create("D", 5)}})
	ev := addEv(t, s, sid, "r", graph.Evidence{Content: "root fact", Embedding: Unit(6)}, graph.Evidence{Content: "shared fact", Embedding: Unit(7)})
	for _, task := range []string{"A", "B"} {
		if _, err := s.AddEvidence(ctx, sid, "ev-"+task, task, []graph.Evidence{
			{Content: "fact of " + task, Embedding: Blend(8, 9, 0.5)}, {Content: "shared fact", Embedding: Unit(7)},
		}); err != nil {
			t.Fatal(err)
		}
	}
	addEv(t, s, other, "o", graph.Evidence{Content: "shared fact", Embedding: Unit(7)})
	all := evidence(t, s, sid, "")
	var ids []string
	for _, e := range all {
		ids = append(ids, e.ID)
	}
	if err := s.ReplaceSimilar(ctx, sid, ids, []graph.Edge{
		{From: ids[0], To: ids[1], Weight: 0.9, Label: graph.LabelEntailment}, {From: ids[2], To: ids[3], Weight: 0.8},
	}); err != nil {
		t.Fatal(err)
	}
	task := func(short string) string { return graph.TaskID(sid, short) }
	sets := [][]string{
		{task(graph.RootShortID)},
		{task("A")},
		{task("B"), task("C")},
		{ev[1].ID},
		{task("A"), ids[0], ids[2]},
		{task("D"), graph.EvidenceID(sid, "absent"), graph.TaskID(other, graph.RootShortID), "junk"},
		{},
	}
	for i, set := range sets {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			got, err := s.Neighbourhood(ctx, sid, set)
			if err != nil {
				t.Fatal(err)
			}
			want := oneHop(t, s, sid, set)
			if !reflect.DeepEqual(shapeOf(got), shapeOf(want)) {
				t.Fatalf("Neighbourhood(%v)\n got  %+v\n want %+v", set, shapeOf(got), shapeOf(want))
			}
			if !reflect.DeepEqual(got.Evidence, want.Evidence) && !(len(got.Evidence) == 0 && len(want.Evidence) == 0) {
				t.Fatalf("evidence differs:\n got  %+v\n want %+v", got.Evidence, want.Evidence)
			}
			if !reflect.DeepEqual(got.Tasks, want.Tasks) && !(len(got.Tasks) == 0 && len(want.Tasks) == 0) {
				t.Fatalf("tasks differ:\n got  %+v\n want %+v", got.Tasks, want.Tasks)
			}
			sh, err := s.NeighbourhoodShape(ctx, sid, set, nil)
			if err != nil {
				t.Fatal(err)
			}
			checkKnownLeftOut(t, s, sid, set, sh)
			if !reflect.DeepEqual(shapeOf(sh), walkShapeOf(want)) || !reflect.DeepEqual(sh.Tasks, got.Tasks) {
				t.Fatalf("NeighbourhoodShape(%v) is not Neighbourhood's shape:\n got  %+v\n want %+v", set, shapeOf(sh), walkShapeOf(want))
			}
			for i, e := range want.Evidence {
				e = graph.Evidence{ID: e.ID, SessionID: e.SessionID, Embedding: e.Embedding, CreatedIter: e.CreatedIter, ContentHash: e.ContentHash}
				if !reflect.DeepEqual(sh.Evidence[i], e) {
					t.Fatalf("shape of evidence %d:\n got  %+v\n want %+v", i, sh.Evidence[i], e)
				}
			}
		})
	}
	_, err := s.NeighbourhoodShape(ctx, "gt-no-such-session", []string{"x"}, nil)
	wantErr(t, err, graph.ErrNotFound, "NeighbourhoodShape of an unknown session")
	_, err = s.Neighbourhood(ctx, "gt-no-such-session", []string{"x"})
	wantErr(t, err, graph.ErrNotFound, "Neighbourhood of an unknown session")
}

// checkKnownLeftOut: NeighbourhoodShape with known naming every other
// node of full (the answer without known) returns the same edges and
// exactly full's other nodes, in order; with every node known, none.
func checkKnownLeftOut(t *testing.T, s graph.Store, sid string, set []string, full graph.Neighbourhood) {
	t.Helper()
	for _, every := range []int{2, 1} {
		known := map[string]bool{}
		var want graph.Neighbourhood
		for i, tk := range full.Tasks {
			if i%every == 0 {
				known[tk.ID] = true
			} else {
				want.Tasks = append(want.Tasks, tk)
			}
		}
		for i, e := range full.Evidence {
			if (i+1)%every == 0 {
				known[e.ID] = true
			} else {
				want.Evidence = append(want.Evidence, e)
			}
		}
		got, err := s.NeighbourhoodShape(ctxOf(t), sid, set, func(id string) bool { return known[id] })
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Edges, full.Edges) && !(len(got.Edges) == 0 && len(full.Edges) == 0) {
			t.Fatalf("NeighbourhoodShape(%v) with %d known: edges differ:\n got  %+v\n want %+v", set, len(known), got.Edges, full.Edges)
		}
		if len(got.Tasks)+len(want.Tasks) > 0 && !reflect.DeepEqual(got.Tasks, want.Tasks) {
			t.Fatalf("NeighbourhoodShape(%v) with %d known: tasks\n got  %v\n want %v", set, len(known), shapeOf(got).Tasks, shapeOf(want).Tasks)
		}
		if len(got.Evidence)+len(want.Evidence) > 0 && !reflect.DeepEqual(got.Evidence, want.Evidence) {
			t.Fatalf("NeighbourhoodShape(%v) with %d known: evidence\n got  %v\n want %v", set, len(known), shapeOf(got).Evidence, shapeOf(want).Evidence)
		}
	}
}

// oneHop is the reference: the full reads, filtered.
func oneHop(t *testing.T, s graph.Store, sid string, ids []string) graph.Neighbourhood {
	t.Helper()
	ctx := ctxOf(t)
	allEdges, err := s.Edges(ctx, sid)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	var out graph.Neighbourhood
	keep := map[string]bool{}
	for _, e := range allEdges {
		if want[e.From] || want[e.To] {
			out.Edges = append(out.Edges, e)
			keep[e.From], keep[e.To] = true, true
		}
	}
	for _, tk := range mustTasks(t, s, sid) {
		if keep[tk.ID] || want[tk.ID] {
			out.Tasks = append(out.Tasks, tk)
		}
	}
	for _, e := range evidence(t, s, sid, "") {
		if keep[e.ID] || want[e.ID] {
			out.Evidence = append(out.Evidence, e)
		}
	}
	return out
}

func mustTasks(t *testing.T, s graph.Store, sid string) []graph.Task {
	t.Helper()
	ts, err := s.Tasks(ctxOf(t), sid)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

type nbShape struct {
	Tasks, Evidence []string
	Edges           []graph.Edge
}

// walkShapeOf is shapeOf with what NeighbourhoodShape leaves out of the
// edges: the weight and label of SIMILAR_TO.
func walkShapeOf(n graph.Neighbourhood) nbShape {
	sh := shapeOf(n)
	for i, e := range sh.Edges {
		if e.Kind == graph.SimilarTo {
			sh.Edges[i].Weight, sh.Edges[i].Label = 0, ""
		}
	}
	return sh
}

func shapeOf(n graph.Neighbourhood) nbShape {
	var sh nbShape
	for _, t := range n.Tasks {
		sh.Tasks = append(sh.Tasks, t.ID)
	}
	for _, e := range n.Evidence {
		sh.Evidence = append(sh.Evidence, e.ID)
	}
	sh.Edges = slices.Clone(n.Edges)
	return sh
}
