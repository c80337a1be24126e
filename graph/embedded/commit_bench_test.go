package embedded_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/lethe-research/lethe/graph"
)

// BenchmarkCommit times what a sync writes at its end, one page of new
// edges, a refined strength, a record shard and the watermark, as the
// four writes it was (ReplaceSimilar, SetStrengths, PutBlobs, PutBlob:
// one transaction each) against one Commit, on a file-backed store at 10k
// items. Each bbolt commit is two fsyncs, so the ratio is what merging
// them saves on this disk (docs/commits.md).
//
//	go test ./graph/embedded/ -run X -bench Commit -benchtime 200x -count 5
func BenchmarkCommit(b *testing.B) {
	s, sid, pages := indexedSession(b, 10000)
	ctx := context.Background()
	page := pages[len(pages)/3]
	edges := []graph.Edge{{From: page[0], To: page[1], Weight: 0.9}, {From: page[2], To: page[3], Weight: 0.85}}
	shard := map[string][]byte{"graph/similar/strength/0ab": make([]byte, 2048)}
	mark := make([]byte, 300)
	strength := func(i int) map[string]float64 { return map[string]float64{page[0]: 0.5 + float64(i%2)/4} }
	b.Run("separate", func(b *testing.B) {
		for i := range b.N {
			if err := s.ReplaceSimilar(ctx, sid, page, edges); err != nil {
				b.Fatal(err)
			}
			if err := s.SetStrengths(ctx, sid, strength(i)); err != nil {
				b.Fatal(err)
			}
			if err := s.PutBlobs(ctx, sid, shard); err != nil {
				b.Fatal(err)
			}
			if err := s.PutBlob(ctx, sid, graph.SimilarMarkBlob, mark); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("commit", func(b *testing.B) {
		for i := range b.N {
			w := graph.Writes{SimilarScope: page, Similar: edges, Strengths: strength(i),
				Blobs: map[string][]byte{graph.SimilarMarkBlob: mark}}
			for k, v := range shard {
				w.Blobs[k] = v
			}
			if err := s.Commit(ctx, sid, w); err != nil {
				b.Fatal(fmt.Errorf("commit: %w", err))
			}
		}
	})
}
