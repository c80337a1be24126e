package graph

import (
	"errors"
	"math"
	"slices"
	"testing"
)

func TestContentHashNormalises(t *testing.T) {
	a := ContentHash("Solid  electrolytes\tCRACK\n")
	if a != ContentHash("solid electrolytes crack") {
		t.Fatal("whitespace/case variants hash differently")
	}
	if a == ContentHash("solid electrolytes cracks") {
		t.Fatal("different texts hash alike")
	}
	if len(a) != 64 {
		t.Fatalf("hash %q is not hex sha256", a)
	}
}

func TestFindCycle(t *testing.T) {
	if c := FindCycle(map[string][]string{"a": {"b"}, "b": {"c"}, "c": nil, "d": {"b", "x"}}); c != nil {
		t.Fatalf("acyclic graph reported cycle %v", c)
	}
	c := FindCycle(map[string][]string{"a": {"b"}, "b": {"c"}, "c": {"a"}, "z": {"z"}})
	if !slices.Equal(c, []string{"a", "b", "c", "a"}) {
		t.Fatalf("cycle = %v", c)
	}
	if c := FindCycle(map[string][]string{"z": {"z"}}); !slices.Equal(c, []string{"z", "z"}) {
		t.Fatalf("self loop = %v", c)
	}
}

func TestRefineStrengthShape(t *testing.T) {
	if RefineStrength(0.5, 0, 0) != 0.5 {
		t.Fatal("no corroboration changed the strength")
	}
	prev := 0.5
	for _, s := range []float64{0.5, 1, 2, 4, 8} {
		v := RefineStrength(0.5, s, 0)
		if v <= prev-1e-15 || v > 0.5+0.5*StrengthBoost {
			t.Fatalf("boost(%v) = %v not monotone/bounded", s, v)
		}
		prev = v
	}
	if v := RefineStrength(1, 5, 0); v != 1 {
		t.Fatalf("strength 1 boosted to %v", v)
	}
	if v := RefineStrength(0.5, 0, 100); v < 0.5*(1-StrengthPenalty)-1e-12 || v >= 0.5 {
		t.Fatalf("penalty = %v", v)
	}
	if v := RefineStrength(-0.2, 0, 0); v != 0 {
		t.Fatalf("not clamped: %v", v)
	}
}

// ringRows puts n unit vectors evenly on a great circle: each item's
// near-duplicates are its neighbours along the ring, so every cluster
// boundary cuts near-duplicate pairs.
func ringRows(n int) unit {
	var u unit
	for i := range n {
		th := 2 * math.Pi * float64(i) / float64(n)
		v := make([]float64, 16)
		v[3], v[7] = math.Cos(th), math.Sin(th)
		u.vec = append(u.vec, v)
		u.idx = append(u.idx, i)
	}
	return u
}

func TestPrefilterFindsPairsAcrossClusterBoundaries(t *testing.T) {
	u := ringRows(400)
	thr := math.Cos(2.5 * 2 * math.Pi / 400) // neighbours at distance 1 and 2
	exact, k1, all := similarPairs(u, SimilarParams{Threshold: thr, Probes: 1000})
	if k1 != 1 || all != 400*399/2 || len(exact) != 800 {
		t.Fatalf("exhaustive: %d clusters, %d compared, %d pairs", k1, all, len(exact))
	}
	got, k, compared := similarPairs(u, SimilarParams{Threshold: thr})
	if k != 20 || compared > all/4 {
		t.Fatalf("pre-filter: %d clusters, %d of %d pairs compared", k, compared, all)
	}
	if !slices.Equal(got, exact) {
		t.Fatalf("pre-filter found %d of %d pairs", len(got), len(exact))
	}
	// One probe (own cluster only) loses the boundary pairs: the second
	// probe is what makes the pre-filter exact here.
	own, _, _ := similarPairs(u, SimilarParams{Threshold: thr, Probes: 1})
	if len(own) >= len(exact) {
		t.Fatalf("single probe found %d of %d pairs; the test data has no boundary pairs", len(own), len(exact))
	}
	// Deterministic.
	again, _, _ := similarPairs(u, SimilarParams{Threshold: thr})
	if !slices.Equal(again, got) {
		t.Fatal("pre-filter is not deterministic")
	}
}

func TestCapPairs(t *testing.T) {
	c := []idPair{{"a", "b", 0.9}, {"a", "c", 0.95}, {"b", "c", 0.99}, {"c", "d", 0.8}}
	if got, want := capPairs(c, 1), []idPair{{"b", "c", 0.99}}; !slices.Equal(got, want) {
		t.Fatalf("cap 1 = %v", got)
	}
	if got := capPairs(c, 0); len(got) != 4 {
		t.Fatalf("no cap = %v", got)
	}
	// Equal weights: the smaller pair wins, whatever the input order.
	tie := []idPair{{"b", "c", 0.9}, {"a", "c", 0.9}, {"a", "b", 0.9}}
	if got, want := capPairs(tie, 1), []idPair{{"a", "b", 0.9}}; !slices.Equal(got, want) {
		t.Fatalf("tie = %v", got)
	}
	// The cascade the incremental sync must follow: c-d displaces b-c,
	// which frees b for a-b.
	chain := []idPair{{"a", "b", 0.85}, {"b", "c", 0.9}, {"c", "d", 0.95}}
	if got, want := capPairs(chain, 1), []idPair{{"a", "b", 0.85}, {"c", "d", 0.95}}; !slices.Equal(got, want) {
		t.Fatalf("chain = %v", got)
	}
}

func TestPlanApplyDropsChainsBelowFailedMapping(t *testing.T) {
	const sid = "s"
	root := Task{ID: TaskID(sid, RootShortID), ShortID: RootShortID, SessionID: sid, Status: Active, Embedding: []float32{1, 0, 0, 0}}
	dead := Task{ID: TaskID(sid, "dead"), ShortID: "dead", SessionID: sid, Status: Failed, Depth: 1, Parent: root.ID, Embedding: []float32{0, 1, 0, 0}}
	plan, err := PlanApply([]Task{root, dead}, nil, ApplyRequest{
		SessionID: sid, Iteration: 2, ActiveTask: RootShortID, DedupThreshold: 0.95,
		Ops: []Op{
			{Kind: OpCreate, Task: "c2", Parent: "c1", Embedding: []float32{0, 0, 0, 1}}, // below c1, forward reference
			{Kind: OpCreate, Task: "c1", Parent: "d2", Embedding: []float32{0, 0, 1, 0}},
			{Kind: OpCreate, Task: "d2", Embedding: []float32{0, 1, 0.01, 0}}, // maps onto dead
			{Kind: OpCreate, Task: "c1b", Embedding: []float32{0, 0, 1, 0}},   // would map onto c1, which is dropped
			{Kind: OpComplete, Task: "c2", Result: "r"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Result.Applied != 0 || len(plan.Tasks) != 0 || plan.Result.Mapped["d2"] != "dead" || len(plan.Result.Mapped) != 1 {
		t.Fatalf("plan = %+v", plan)
	}
	// A FAILED task named directly is an error wrapping ErrImmutable.
	_, err = PlanApply([]Task{root, dead}, nil, ApplyRequest{SessionID: sid, ActiveTask: RootShortID, Ops: []Op{{Kind: OpContinue, Task: "dead"}}})
	if !errors.Is(err, ErrImmutable) {
		t.Fatalf("direct FAILED target: %v", err)
	}
}
