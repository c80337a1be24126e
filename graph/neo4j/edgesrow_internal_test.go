package neo4j

import (
	"slices"
	"strings"
	"testing"

	driver "github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/lethe-research/lethe/graph"
)

// edgesRec is a rowEdges row of the items ns, as the hop returns it: the
// ends are internal ids, here the index of each id in nodes.
func edgesRec(ns []any, to, kind, out [][]any) *driver.Record {
	lists := func(l [][]any) []any {
		o := make([]any, len(l))
		for i := range l {
			o[i] = l[i]
		}
		return o
	}
	nid := func(v any) any { return int64(slices.Index(nodes, v.(string))) }
	nn := make([]any, len(ns))
	for i, v := range ns {
		nn[i] = nid(v)
	}
	ends := make([][]any, len(to))
	for i, l := range to {
		for _, v := range l {
			ends[i] = append(ends[i], nid(v))
		}
	}
	return &driver.Record{Values: []any{nil, nil, rowEdges, nil, nil, map[string]any{
		"n": ns, "nid": nn, "to": lists(ends), "kind": lists(kind), "out": lists(out), "weight": []any{}, "label": []any{},
	}}}
}

// nodes are the test's node ids; a node's internal id is its index.
var nodes = []string{
	graph.EvidenceID("s", "a"), graph.EvidenceID("s", "b"), graph.EvidenceID("s", "c"),
	graph.TaskID("s", "t1"), graph.TaskID("s", "t2"), graph.EvidenceID("s", "d"),
}

// TestEdgesRow keeps each edge of the wanted items once: an edge between
// two wanted items from its start, an edge to an item not wanted from
// either end (with its direction), no SUPPORTS edge to a wanted task; and
// refuses a row whose lists do not line up, item or edge, with an error
// that says so, never fewer edges.
func TestEdgesRow(t *testing.T) {
	sid := "s"
	a, b, c := graph.EvidenceID(sid, "a"), graph.EvidenceID(sid, "b"), graph.EvidenceID(sid, "c")
	task, other := graph.TaskID(sid, "t1"), graph.TaskID(sid, "t2")
	newRound := func() *hopRound {
		r := &hopRound{sid: sid, nt: map[string]bool{task: true}, ne: map[string]bool{a: true, b: true},
			shapes: map[string]graph.Evidence{}, wantT: map[string]bool{task: true}, wantE: map[string]bool{a: true, b: true}}
		// The ends the rows do not name, as resolveEnds would (d is unknown).
		for _, id := range []string{c, task, other} {
			r.name(int64(slices.Index(nodes, id)), id)
		}
		return r
	}
	r := newRound()
	rec := edgesRec([]any{a, b},
		[][]any{{b, c, task, other}, {a, c}},
		[][]any{{"SIMILAR_TO", "SIMILAR_TO", "SUPPORTS", "SUPPORTS"}, {"SIMILAR_TO", "SIMILAR_TO"}},
		[][]any{{true, false, true, true}, {false, true}})
	if err := r.edgesRow(rec); err != nil {
		t.Fatal(err)
	}
	if err := r.addItems(); err != nil {
		t.Fatal(err)
	}
	graph.SortEdges(r.edges)
	want := []graph.Edge{
		{From: a, To: b, Kind: graph.SimilarTo},
		{From: a, To: other, Kind: graph.Supports},
		{From: b, To: c, Kind: graph.SimilarTo},
		{From: c, To: a, Kind: graph.SimilarTo},
	}
	graph.SortEdges(want)
	if !slices.Equal(r.edges, want) {
		t.Fatalf("edges %v, want %v", r.edges, want)
	}
	if !r.ne[c] || !r.nt[other] {
		t.Fatalf("the ends c and t2 are not in the round: %v %v", r.ne, r.nt)
	}
	for name, rec := range map[string]*driver.Record{
		"an item without its kinds": edgesRec([]any{a, b}, [][]any{{b}, {a}}, [][]any{{"SIMILAR_TO"}}, [][]any{{true}, {false}}),
		"an edge without its kind":  edgesRec([]any{a}, [][]any{{b, c}}, [][]any{{"SIMILAR_TO"}}, [][]any{{true, false}}),
		"an edge without its side":  edgesRec([]any{a}, [][]any{{b, c}}, [][]any{{"SIMILAR_TO", "SIMILAR_TO"}}, [][]any{{true}}),
		"an end nobody named":       edgesRec([]any{a}, [][]any{{graph.EvidenceID(sid, "d")}}, [][]any{{"SIMILAR_TO"}}, [][]any{{true}}),
	} {
		r := newRound()
		err := r.edgesRow(rec)
		if err == nil {
			err = r.addItems()
		}
		if err == nil || !strings.Contains(err.Error(), "edges") {
			t.Errorf("%s: %v, want an error about the edges", name, err)
		}
	}
}
