package embedded

import (
	"fmt"
	"testing"

	"github.com/lethe-research/lethe/graph"
)

// TestThresholdKRecall: threshold queries through the index, from the
// default first k and from 64 (the start before ThresholdK), against the
// exact scan, on 384-dim items in pages of eight (cosine about 0.93
// within a page) crowded by 64 topics (about 0.64 between pages of a
// topic). Every pair the index returns is an exact pair with the exact
// cosine; what a short first list costs is recall, measured at 100k in
// docs/similarity-index.md ("Where a threshold query starts").
func TestThresholdKRecall(t *testing.T) {
	const n, probes, threshold = 12000, 200, 0.85
	sv := &sessVecs{row: map[string]int{}}
	for i, v := range hnswVectors(n) {
		h := fmt.Sprintf("%08d", i)
		sv.row[h] = len(sv.hash)
		sv.hash = append(sv.hash, h)
		sv.iter = append(sv.iter, 1)
		sv.emb = append(sv.emb, v)
		sv.inv = append(sv.inv, invNorm(v))
	}
	o := DefaultANNOptions()
	sv.ann = newANN("s", o)
	sv.ann.extend(sv)
	exact := make([][]graph.Neighbor, probes)
	for p := range exact {
		exact[p] = sv.scan("s", graph.UnitVector(sv.emb[(p*7919)%n]), threshold)
	}
	for _, k := range []int{o.ThresholdK, 64} {
		o.ThresholdK = k
		want, got := 0, 0
		for p := range exact {
			q := sv.emb[(p*7919)%n]
			cos := map[string]float64{}
			for _, nb := range exact[p] {
				cos[nb.ID] = nb.Cosine
			}
			want += len(exact[p])
			for _, nb := range sv.nearestANN("s", q, graph.UnitVector(q), threshold, o) {
				if c, ok := cos[nb.ID]; !ok || c != nb.Cosine {
					t.Fatalf("first k %d, probe %d: %s at %v is not an exact pair", k, p, nb.ID, nb.Cosine)
				}
				got++
			}
		}
		r := float64(got) / float64(want)
		t.Logf("first k %d: %d of %d exact pairs (recall %.4f)", k, got, want, r)
		if want < 7*probes || r < 0.97 {
			t.Errorf("first k %d: %d of %d exact pairs (recall %.4f), want at least %d pairs and recall >= 0.97", k, got, want, r, 7*probes)
		}
	}
}
