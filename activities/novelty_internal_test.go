package activities

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/lethe-research/lethe/algebra"
	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/graph/embedded"
)

// TestJudgeNoveltyMatchesWholeRead: the information gain and the held
// cosine Ingest gives each chunk from one NearestCosine read equal what
// the former whole-session read computed (algebra.InformationGain against
// every evidence row and the batch's earlier chunks; the largest cosine
// with the rows), with held evidence of another dimension, a chunk
// repeated in the batch, a copy of a held item and a zero vector.
func TestJudgeNoveltyMatchesWholeRead(t *testing.T) {
	st, err := embedded.Open(filepath.Join(t.TempDir(), "graph.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	ctx := t.Context()
	const sid, dim = "novelty", 16
	rng := rand.New(rand.NewPCG(7, 8))
	vec := func(d int) []float32 {
		v := make([]float32, d)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	if err := st.CreateSession(ctx, graph.Session{ID: sid, Goal: "g"}, graph.Task{Description: "g", Embedding: vec(dim)}); err != nil {
		t.Fatal(err)
	}
	var held []graph.Evidence
	for i := range 300 {
		d := dim
		if i%50 == 0 {
			d = 8 // another embedding model: never compared
		}
		held = append(held, graph.Evidence{Content: fmt.Sprint("held ", i), Strength: 0.5, Embedding: vec(d), CreatedIter: 1})
	}
	if _, err := st.AddEvidence(ctx, sid, "held", graph.RootShortID, held); err != nil {
		t.Fatal(err)
	}
	s := &ingestState{}
	for i := range 40 {
		e := vec(dim)
		switch i {
		case 5:
			e = held[3].Embedding
		case 9:
			e = s.cands[2].emb
		case 12:
			e = make([]float32, dim)
		}
		s.cands = append(s.cands, ingestChunk{emb: e, v: algebra.ToFloat64(e)})
	}
	a := &Activities{Store: st}
	if err := a.judgeNovelty(ctx, sid, s); err != nil {
		t.Fatal(err)
	}
	var rows [][]float64
	for _, e := range held {
		rows = append(rows, algebra.ToFloat64(e.Embedding))
	}
	sum := 0.0
	for i, c := range s.cands {
		wantIG := algebra.InformationGain(c.v, rows)
		wantHeld := 0.0
		for _, r := range rows[:len(held)] {
			if len(r) == dim {
				wantHeld = max(wantHeld, algebra.Cosine(c.v, r))
			}
		}
		rows = append(rows, c.v)
		sum += wantIG
		if math.Abs(c.ig-wantIG) > 1e-9 || math.Abs(c.held-wantHeld) > 1e-9 {
			t.Fatalf("chunk %d: ig %v held %v, want %v and %v", i, c.ig, c.held, wantIG, wantHeld)
		}
	}
	if math.Abs(s.igSum-sum) > 1e-9 {
		t.Fatalf("ig sum %v, want %v", s.igSum, sum)
	}
	if s.cands[5].ig > 1e-9 || s.cands[9].ig > 1e-9 || s.cands[12].ig != 0 {
		t.Fatalf("a held copy, a repeat and a zero vector gain %v, %v, %v; want 0", s.cands[5].ig, s.cands[9].ig, s.cands[12].ig)
	}
}
