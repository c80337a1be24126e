package neo4j_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestNearestEvidenceStatements: a store that splits a sync's queries
// into several read transactions at once answers each query with its own
// neighbours, in the queries' order, as one statement does; fewer queries
// than statements and a count that does not divide evenly included. A
// cancelled call fails whole.
func TestNearestEvidenceStatements(t *testing.T) {
	cfg := serverConfig(t)
	one := open(t, cfg)
	cfg.VectorStatements = 3
	split := open(t, cfg)
	ctx := t.Context()
	const dim = 26 // an index of its own
	rng := rand.New(rand.NewPCG(5, 9))
	bases := make([][]float64, 10)
	for i := range bases {
		bases[i] = clusterUnit(rng, dim, nil, 0)
	}
	item := func(j int) []float32 { return toF32(clusterUnit(rng, dim, bases[j%len(bases)], 0.05)) }
	sid, embs := clusterSession(t, one, "statements", 400, item)
	if _, err := one.NearestEvidence(ctx, sid, [][]float32{item(0)}, 0.9); err != nil { // labels (and scans)
		t.Fatal(err)
	}
	ids := evidenceIDs(t, one, sid)
	for _, n := range []int{1, 2, 7} {
		queries := make([][]float32, n)
		for i := range queries {
			queries[i] = item(i)
		}
		got, err := split.NearestEvidence(ctx, sid, queries, 0.9)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != n {
			t.Fatalf("%d queries: %d answers", n, len(got))
		}
		for i, q := range queries {
			want, _ := exactAmong(q, embs, ids, 0.9)
			if len(want) == 0 {
				t.Fatalf("query %d has no neighbour over 0.9: the test compares nothing", i)
			}
			checkNeighbours(t, fmt.Sprintf("%d queries, query %d", n, i), neighbourIDs(got[i]), want, false)
		}
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if got, err := split.NearestEvidence(cancelled, sid, [][]float32{item(1), item(2), item(3)}, 0.9); err == nil {
		t.Fatalf("a cancelled call answered %d lists and no error", len(got))
	}
}
