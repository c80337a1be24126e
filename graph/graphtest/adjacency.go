package graphtest

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/lethe-research/lethe/graph"
)

// Lane storecost (#14): the per-iteration reads answered from indexes
// (Neighbourhood, EvidenceCounts, EvidenceCount) must follow every write
// that changes what they read: creates with parents and prerequisites,
// depend ops, a write rolled back by a cycle, evidence ops, evidence
// linked to a second task, and SIMILAR_TO edges replaced in overlapping
// scopes. After each round of writes they are checked against the full
// reads (Tasks, Evidence, Edges) of the same moment.

func testAdjacencyFollowsWrites(t *testing.T, s graph.Store) {
	ctx := ctxOf(t)
	sid := newSession(t, s)
	rng := rand.New(rand.NewPCG(14, 7))
	names := []string{graph.RootShortID}
	var contents []string
	for round := 1; round <= 5; round++ {
		a, b := fmt.Sprintf("r%da", round), fmt.Sprintf("r%db", round)
		parent, on := names[rng.IntN(len(names))], names[rng.IntN(len(names))]
		ops := []graph.Op{
			{Kind: graph.OpCreate, Task: a, Parent: parent, Description: "task " + a, EmbedText: a, Embedding: Blend(2*round, 2*round+1, 0.6)},
			{Kind: graph.OpCreate, Task: b, Description: "task " + b, EmbedText: b, Embedding: Blend(2*round+1, 2*round+6, 0.9), DependsOn: []string{on}},
			{Kind: graph.OpEvidence, Task: a, Content: "model finding " + a, EmbedText: a, Embedding: Blend(round, round+3, 0.7)},
		}
		if round > 1 {
			ops = append(ops, graph.Op{Kind: graph.OpDepend, Task: names[len(names)-1], On: names[1]})
		}
		mustApply(t, s, graph.ApplyRequest{SessionID: sid, Key: fmt.Sprint("apply/", round), Iteration: round, ActiveTask: parent, Ops: ops})
		names = append(names, a, b)
		if round == 3 { // a cycle: rolled back, nothing of it may show
			res := mustApply(t, s, graph.ApplyRequest{SessionID: sid, Key: "cycle", Iteration: round, ActiveTask: graph.RootShortID, Ops: []graph.Op{
				{Kind: graph.OpCreate, Task: "ghost", Description: "ghost", EmbedText: "ghost", Embedding: Unit(15), DependsOn: []string{"r3a"}},
				{Kind: graph.OpDepend, Task: "r3a", On: "ghost"},
			}})
			if !res.RolledBack {
				t.Fatalf("cycle write not rolled back: %+v", res)
			}
		}
		for k, task := range []string{a, names[rng.IntN(len(names))]} {
			var items []graph.Evidence
			for j := range 3 {
				c := fmt.Sprintf("page %d.%d.%d", round, k, j)
				if len(contents) > 0 && j == 0 { // content the session holds: linked, or a duplicate
					c = contents[rng.IntN(len(contents))]
				}
				items = append(items, graph.Evidence{Content: c, Strength: 0.5, Embedding: Blend(round+j, round+j+5, 0.8), CreatedIter: round})
				contents = append(contents, c)
			}
			if _, err := s.AddEvidence(ctx, sid, fmt.Sprintf("ev/%d/%d", round, k), task, items); err != nil {
				t.Fatal(err)
			}
		}
		replaceRandomSimilar(t, s, sid, rng)
		checkIndexedReads(t, s, sid, fmt.Sprint("round ", round))
	}
}

// replaceRandomSimilar replaces the SIMILAR_TO edges within a random half
// of the evidence with random edges inside it.
func replaceRandomSimilar(t *testing.T, s graph.Store, sid string, rng *rand.Rand) {
	t.Helper()
	var scope []string
	for _, e := range evidence(t, s, sid, "") {
		if rng.IntN(2) == 0 {
			scope = append(scope, e.ID)
		}
	}
	var es []graph.Edge
	for range len(scope) {
		i, j := rng.IntN(len(scope)), rng.IntN(len(scope))
		es = append(es, graph.Edge{From: scope[i], To: scope[j], Weight: 0.8 + 0.01*float64(i%10), Label: []string{"", graph.LabelEntailment}[j%2]})
	}
	if err := s.ReplaceSimilar(ctxOf(t), sid, scope, es); err != nil {
		t.Fatal(err)
	}
}

// checkIndexedReads compares Neighbourhood (each node alone, and groups),
// EvidenceCounts and EvidenceCount with the full reads.
func checkIndexedReads(t *testing.T, s graph.Store, sid, when string) {
	t.Helper()
	ctx := ctxOf(t)
	ts, ev := mustTasks(t, s, sid), evidence(t, s, sid, "")
	var ids []string
	for _, x := range ts {
		ids = append(ids, x.ID)
	}
	for _, e := range ev {
		ids = append(ids, e.ID)
	}
	sets := [][]string{ids[:len(ts)], ids[len(ts):], ids}
	for _, id := range ids {
		sets = append(sets, []string{id})
	}
	full := fullReads{tasks: ts, ev: ev, edges: edges(t, s, sid, "")}
	for _, set := range sets {
		got, err := s.Neighbourhood(ctx, sid, set)
		if err != nil {
			t.Fatal(err)
		}
		want := full.oneHop(set)
		if !reflect.DeepEqual(shapeOf(got), shapeOf(want)) {
			t.Fatalf("%s: Neighbourhood(%v)\n got  %+v\n want %+v", when, set, shapeOf(got), shapeOf(want))
		}
		if !sameSlice(got.Tasks, want.Tasks) || !sameSlice(got.Evidence, want.Evidence) {
			t.Fatalf("%s: Neighbourhood(%v) nodes differ from the full reads", when, set)
		}
	}
	per, err := s.EvidenceCounts(ctx, sid)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range ts {
		eq(t, when+": EvidenceCounts of "+x.ShortID, per[x.ShortID], len(evidence(t, s, sid, x.ShortID)))
	}
	n, err := s.EvidenceCount(ctx, sid)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, when+": EvidenceCount", n, len(ev))
}

// fullReads is a session as the full reads show it.
type fullReads struct {
	tasks []graph.Task
	ev    []graph.Evidence
	edges []graph.Edge
}

// oneHop is Neighbourhood's contract applied to the full reads (as the
// package's oneHop, without reading the store again for every set).
func (f fullReads) oneHop(ids []string) graph.Neighbourhood {
	want, keep := map[string]bool{}, map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	var out graph.Neighbourhood
	for _, e := range f.edges {
		if want[e.From] || want[e.To] {
			out.Edges = append(out.Edges, e)
			keep[e.From], keep[e.To] = true, true
		}
	}
	for _, x := range f.tasks {
		if keep[x.ID] || want[x.ID] {
			out.Tasks = append(out.Tasks, x)
		}
	}
	for _, e := range f.ev {
		if keep[e.ID] || want[e.ID] {
			out.Evidence = append(out.Evidence, e)
		}
	}
	return out
}

// sameSlice is reflect.DeepEqual with nil and empty alike.
func sameSlice[T any](a, b []T) bool {
	return len(a) == 0 && len(b) == 0 || reflect.DeepEqual(a, b)
}
