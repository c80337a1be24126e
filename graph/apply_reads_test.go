package graph

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// TestApplyReads plans random requests twice: on the tasks as they are,
// and on the rows ApplyReads says a backend loads. The plans (and errors)
// must be the same. Two controls show the requests exercise what each
// part of the reads protects: leaving out the dedup candidates, or
// reading the named tasks alone where All asks for every row, must each
// change some plans.
func TestApplyReads(t *testing.T) {
	const sid = "s"
	rng := rand.New(rand.NewPCG(7, 58))
	var partial, all, noCands, noAll int
	for c := range 4000 {
		existing := readsFixture(rng, sid)
		req := readsRequest(rng, sid, existing)
		reads := ReadsFor(req)
		whole, errWhole := PlanApply(existing, nil, req)
		got, errGot := PlanApply(reads.Rows(existing), nil, req)
		if fmt.Sprint(errWhole) != fmt.Sprint(errGot) || !reflect.DeepEqual(whole, got) {
			t.Fatalf("case %d: request %+v, reads %+v:\nwhole %+v (%v)\nread %+v (%v)", c, req, reads, whole, errWhole, got, errGot)
		}
		if reads.All {
			all++
		} else {
			partial++
		}
		differs := func(r ApplyReads) bool {
			p, err := PlanApply(r.Rows(existing), nil, req)
			return fmt.Sprint(errWhole) != fmt.Sprint(err) || !reflect.DeepEqual(whole, p)
		}
		if len(reads.Dedup) > 0 && differs(ApplyReads{All: reads.All, Named: reads.Named}) {
			noCands++
		}
		if reads.All && differs(ApplyReads{Named: reads.Named, Dedup: reads.Dedup, Threshold: reads.Threshold}) {
			noAll++
		}
	}
	if partial < 1000 || all < 1000 || noCands < 100 || noAll < 25 {
		t.Fatalf("coverage: %d partial reads, %d of every row, %d plans that need the dedup candidates, %d that need every row", partial, all, noCands, noAll)
	}
	t.Logf("%d partial reads, %d of every row; controls: %d, %d", partial, all, noCands, noAll)
}

func TestReadsFor(t *testing.T) {
	emb := []float32{1, 0}
	cases := []struct {
		name  string
		req   ApplyRequest
		all   bool
		names []string
		dedup int
	}{
		{"no ops", ApplyRequest{ActiveTask: "a"}, false, []string{"a"}, 0},
		{"targets sorted once", ApplyRequest{ActiveTask: "b", Ops: []Op{{Kind: OpUpdate, Task: "c"}, {Kind: OpComplete, Task: "b"}, {Kind: OpEvidence, Task: "a"}}}, false, []string{"a", "b", "c"}, 0},
		{"create without dedup", ApplyRequest{ActiveTask: "a", Ops: []Op{{Kind: OpCreate, Task: "n", Embedding: emb}}}, false, []string{"a", "n"}, 0},
		{"create without embedding", ApplyRequest{DedupThreshold: 0.9, Ops: []Op{{Kind: OpCreate, Task: "n", Parent: "p"}}}, false, []string{"n", "p"}, 0},
		{"create with a zero embedding", ApplyRequest{DedupThreshold: 0.9, Ops: []Op{{Kind: OpCreate, Task: "n", Parent: "p", Embedding: []float32{0, 0}}}}, false, []string{"n", "p"}, 0},
		{"create that may be deduplicated", ApplyRequest{DedupThreshold: 0.9, ActiveTask: "a", Ops: []Op{{Kind: OpUpdate, Task: "a"}, {Kind: OpCreate, Task: "n", Embedding: emb}}}, false, []string{"a", "n"}, 1},
		{"create with prerequisites", ApplyRequest{ActiveTask: "a", Ops: []Op{{Kind: OpCreate, Task: "n", DependsOn: []string{"d", "c"}}}}, true, []string{"a", "c", "d", "n"}, 0},
		{"create under a create", ApplyRequest{ActiveTask: "a", Ops: []Op{{Kind: OpCreate, Task: "n", Parent: "m"}, {Kind: OpCreate, Task: "m"}}}, true, []string{"a", "m", "n"}, 0},
		{"active task created", ApplyRequest{ActiveTask: "n", Ops: []Op{{Kind: OpCreate, Task: "n", Parent: "a"}, {Kind: OpCreate, Task: "m"}}}, true, []string{"a", "m", "n"}, 0},
		{"depend", ApplyRequest{Ops: []Op{{Kind: OpDepend, Task: "a", On: "b"}}}, true, []string{"a", "b"}, 0},
	}
	for _, tc := range cases {
		r := ReadsFor(tc.req)
		if r.All != tc.all || !slices.Equal(r.Named, tc.names) || len(r.Dedup) != tc.dedup {
			t.Errorf("%s: got %v %v %d, want %v %v %d", tc.name, r.All, r.Named, len(r.Dedup), tc.all, tc.names, tc.dedup)
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
			// Prerequisites point at earlier tasks, as parents do: the
			// stored graph has no cycle.
			if j := rng.IntN(i + 2); j < i && rng.IntN(3) == 0 {
				ts[i].DependsOn = []string{ts[j].ID}
			}
		}
	}
	return ts
}

func readsRequest(rng *rand.Rand, sid string, existing []Task) ApplyRequest {
	pick := func() string {
		if rng.IntN(30) == 0 {
			return "unknown"
		}
		return existing[rng.IntN(len(existing))].ShortID
	}
	kinds := []OpKind{OpCreate, OpCreate, OpUpdate, OpDepend, OpComplete, OpFail, OpContinue, OpEvidence}
	req := ApplyRequest{SessionID: sid, Iteration: 9, ActiveTask: pick(), DedupThreshold: []float64{0, 0.95}[rng.IntN(2)]}
	ops := 1 + rng.IntN(4)
	created := func() string { return fmt.Sprintf("n%d", rng.IntN(ops)) }
	for i := range ops {
		op := Op{Kind: kinds[rng.IntN(len(kinds))], Task: pick(), Embedding: readsPool[rng.IntN(len(readsPool))]}
		switch op.Kind {
		case OpCreate:
			op.Task = fmt.Sprintf("n%d", i)
			if rng.IntN(25) == 0 {
				op.Task = pick() // an existing short id: an error
			}
			switch rng.IntN(6) {
			case 0:
				op.Parent = "" // the active task
			case 1:
				op.Parent = created()
			default:
				op.Parent = pick()
			}
			if rng.IntN(5) == 0 {
				op.DependsOn = []string{[]string{pick(), created()}[rng.IntN(2)]}
			}
		case OpUpdate:
			op.Description = []string{"", "d", "e"}[rng.IntN(3)]
		case OpDepend:
			op.On = []string{pick(), pick(), created()}[rng.IntN(3)]
			if rng.IntN(2) == 0 {
				// The root is every task's ancestor: a depend on one of
				// them closes a cycle, often through tasks no op names.
				op.Task = RootShortID
			}
		case OpComplete:
			op.Result = []string{"", "r"}[rng.IntN(2)]
		case OpEvidence:
			op.Content = fmt.Sprintf("claim %d", rng.IntN(3))
		}
		req.Ops = append(req.Ops, op)
	}
	return req
}
