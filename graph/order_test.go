package graph

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// randomEdges are n edges over few endpoints and kinds, so that many share
// a key; Weight numbers them in input order, which shows stability.
func randomEdges(rng *rand.Rand, n, nodes int) []Edge {
	kinds := []EdgeKind{SimilarTo, Supports, SubtaskOf, DependsOn, "OTHER"}
	es := make([]Edge, n)
	for i := range es {
		es[i] = Edge{From: fmt.Sprintf("s/ev/%04d", rng.IntN(nodes)), To: fmt.Sprintf("s/ev/%04d", rng.IntN(nodes)),
			Kind: kinds[rng.IntN(len(kinds))], Weight: float64(i)}
	}
	return es
}

func edgeOrder(a, b Edge) int {
	if c := cmp.Compare(EdgeKindRank(a.Kind), EdgeKindRank(b.Kind)); c != 0 {
		return c
	}
	if c := cmp.Compare(a.From, b.From); c != 0 {
		return c
	}
	return cmp.Compare(a.To, b.To)
}

// TestSortStableIsTheStableSort: SortEdges, SortEvidence and SortTasks give
// exactly what slices.SortStableFunc gives, ties in input order, on
// inputs with many equal keys, sorted inputs, reversed ones and the empty
// and one-element cases.
func TestSortStableIsTheStableSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct{ n, nodes int }{{0, 1}, {1, 1}, {2, 1}, {7, 2}, {100, 3}, {1000, 10}, {5000, 400}} {
		es := randomEdges(rng, c.n, c.nodes)
		want := slices.Clone(es)
		slices.SortStableFunc(want, edgeOrder)
		for name, in := range map[string][]Edge{"random": es, "sorted": slices.Clone(want), "reversed": reversed(want)} {
			exp := slices.Clone(in)
			slices.SortStableFunc(exp, edgeOrder)
			got := slices.Clone(in)
			SortEdges(got)
			if !slices.Equal(got, exp) {
				t.Fatalf("n=%d %s: SortEdges differs from the stable sort", c.n, name)
			}
		}
		ev := make([]Evidence, c.n)
		for i := range ev {
			ev[i] = Evidence{ID: es[i].From, CreatedIter: rng.IntN(3), Content: fmt.Sprint(i)}
		}
		wantEv := slices.Clone(ev)
		slices.SortStableFunc(wantEv, func(a, b Evidence) int {
			return cmp.Or(cmp.Compare(a.CreatedIter, b.CreatedIter), cmp.Compare(a.ID, b.ID))
		})
		if SortEvidence(ev); !slices.EqualFunc(ev, wantEv, func(a, b Evidence) bool { return a.ID == b.ID && a.Content == b.Content }) {
			t.Fatalf("n=%d: SortEvidence differs from the stable sort", c.n)
		}
		ts := make([]Task, c.n)
		for i := range ts {
			ts[i] = Task{ShortID: es[i].To, CreatedIter: rng.IntN(3), Description: fmt.Sprint(i)}
		}
		wantTs := slices.Clone(ts)
		slices.SortStableFunc(wantTs, func(a, b Task) int {
			return cmp.Or(cmp.Compare(a.CreatedIter, b.CreatedIter), cmp.Compare(a.ShortID, b.ShortID))
		})
		if SortTasks(ts); !slices.EqualFunc(ts, wantTs, func(a, b Task) bool { return a.ShortID == b.ShortID && a.Description == b.Description }) {
			t.Fatalf("n=%d: SortTasks differs from the stable sort", c.n)
		}
	}
}

func reversed(es []Edge) []Edge {
	out := slices.Clone(es)
	slices.Reverse(out)
	return out
}

// BenchmarkSortEdges: the permutation sort against slices.SortStableFunc
// (the baseline, in the same process) on a neighbourhood's edge count.
func BenchmarkSortEdges(b *testing.B) {
	for _, n := range []int{1000, 20000} {
		es := randomEdges(rand.New(rand.NewPCG(3, 4)), n, n/4)
		buf := make([]Edge, n)
		b.Run(fmt.Sprintf("stable/n=%d", n), func(b *testing.B) {
			for b.Loop() {
				copy(buf, es)
				slices.SortStableFunc(buf, edgeOrder)
			}
		})
		b.Run(fmt.Sprintf("permutation/n=%d", n), func(b *testing.B) {
			for b.Loop() {
				copy(buf, es)
				SortEdges(buf)
			}
		})
	}
}
