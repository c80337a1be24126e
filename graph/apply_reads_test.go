package graph

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// TestEmbeddingReads plans random requests twice: on the tasks as they are,
// and on the tasks with every embedding left out except those
// EmbeddingReads names. The plans (and errors) must be the same. As a
// control, leaving out every embedding must change some plans, or the
// requests would not exercise what EmbeddingReads protects.
func TestEmbeddingReads(t *testing.T) {
	const sid = "s"
	rng := rand.New(rand.NewPCG(7, 58))
	var same, partial, control int
	for c := range 3000 {
		existing := readsFixture(rng, sid)
		req := readsRequest(rng, sid, existing)
		all, named := EmbeddingReads(req)
		whole, errWhole := PlanApply(existing, nil, req)
		if all {
			same++
			continue
		}
		partial++
		got, errGot := PlanApply(stripEmbeddings(existing, named), nil, req)
		if fmt.Sprint(errWhole) != fmt.Sprint(errGot) || !reflect.DeepEqual(whole, got) {
			t.Fatalf("case %d: request %+v, reads %v:\nwhole %+v (%v)\npartial %+v (%v)", c, req, named, whole, errWhole, got, errGot)
		}
		none, errNone := PlanApply(stripEmbeddings(existing, nil), nil, req)
		if fmt.Sprint(errWhole) != fmt.Sprint(errNone) || !reflect.DeepEqual(whole, none) {
			control++
		}
	}
	if partial < 1000 || same < 100 || control < 100 {
		t.Fatalf("coverage: %d partial reads, %d whole, %d plans that need the named embeddings", partial, same, control)
	}
}

func TestEmbeddingReadsNames(t *testing.T) {
	emb := []float32{1, 0}
	cases := []struct {
		name  string
		req   ApplyRequest
		all   bool
		names []string
	}{
		{"no ops", ApplyRequest{ActiveTask: "a"}, false, []string{"a"}},
		{"targets sorted once", ApplyRequest{ActiveTask: "b", Ops: []Op{{Kind: OpUpdate, Task: "c"}, {Kind: OpComplete, Task: "b"}, {Kind: OpEvidence, Task: "a"}}}, false, []string{"a", "b", "c"}},
		{"create without dedup", ApplyRequest{Ops: []Op{{Kind: OpCreate, Task: "n", Embedding: emb}}}, false, []string{"n"}},
		{"create without embedding", ApplyRequest{DedupThreshold: 0.9, Ops: []Op{{Kind: OpCreate, Task: "n"}}}, false, []string{"n"}},
		{"create that may be deduplicated", ApplyRequest{DedupThreshold: 0.9, Ops: []Op{{Kind: OpUpdate, Task: "a"}, {Kind: OpCreate, Task: "n", Embedding: emb}}}, true, nil},
	}
	for _, tc := range cases {
		all, names := EmbeddingReads(tc.req)
		if all != tc.all || !slices.Equal(names, tc.names) {
			t.Errorf("%s: got %v %v, want %v %v", tc.name, all, names, tc.all, tc.names)
		}
	}
}

// readsPool holds few vectors so that ops often repeat a task's own.
var readsPool = [][]float32{nil, {1, 0, 0}, {0, 1, 0}, {0.6, 0.8, 0}}

func readsFixture(rng *rand.Rand, sid string) []Task {
	statuses := []Status{Pending, Active, Done, Failed}
	n := 2 + rng.IntN(8)
	ts := make([]Task, n)
	for i := range ts {
		short := fmt.Sprintf("t%d", i)
		if i == 0 {
			short = RootShortID
		}
		ts[i] = Task{ID: TaskID(sid, short), SessionID: sid, ShortID: short, Description: "d", Status: statuses[rng.IntN(len(statuses))],
			Embedding: readsPool[rng.IntN(len(readsPool))], ResultEmbedding: readsPool[rng.IntN(len(readsPool))], ResultSummary: []string{"", "r"}[rng.IntN(2)]}
		if i > 0 {
			p := ts[rng.IntN(i)]
			ts[i].Parent, ts[i].Depth = p.ID, p.Depth+1
		}
	}
	return ts
}

func readsRequest(rng *rand.Rand, sid string, existing []Task) ApplyRequest {
	pick := func() string { return existing[rng.IntN(len(existing))].ShortID }
	kinds := []OpKind{OpCreate, OpUpdate, OpDepend, OpComplete, OpFail, OpContinue, OpEvidence}
	req := ApplyRequest{SessionID: sid, Iteration: 9, ActiveTask: pick(), DedupThreshold: []float64{0, 0.95}[rng.IntN(2)]}
	for i := range 1 + rng.IntN(4) {
		op := Op{Kind: kinds[rng.IntN(len(kinds))], Task: pick(), Embedding: readsPool[rng.IntN(len(readsPool))]}
		switch op.Kind {
		case OpCreate:
			op.Task, op.Parent = fmt.Sprintf("n%d", i), pick()
		case OpUpdate:
			op.Description = []string{"", "d", "e"}[rng.IntN(3)]
		case OpDepend:
			op.On = pick()
		case OpComplete:
			op.Result = []string{"", "r"}[rng.IntN(2)]
		case OpEvidence:
			op.Content = fmt.Sprintf("claim %d", rng.IntN(3))
		}
		req.Ops = append(req.Ops, op)
	}
	return req
}

// stripEmbeddings is tasks as a backend loads them for a partial read:
// the embeddings of the named tasks only.
func stripEmbeddings(ts []Task, keep []string) []Task {
	out := slices.Clone(ts)
	for i := range out {
		if !slices.Contains(keep, out[i].ShortID) {
			out[i].Embedding, out[i].ResultEmbedding = nil, nil
		}
	}
	return out
}
