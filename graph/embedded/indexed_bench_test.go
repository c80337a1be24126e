package embedded_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/graph/embedded"
)

// BenchmarkIndexedReads times the per-iteration reads the index buckets
// answer (lane storecost, docs/store-adjacency.md) at 1k and 10k evidence
// items: one hop around a task and around an evidence item, the counts,
// and a SIMILAR_TO replace over one page. Only the graph.Store API is
// used, so the same file measures the store before the buckets.
//
//	go test ./graph/embedded/ -run X -bench IndexedReads -benchtime 20x
func BenchmarkIndexedReads(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		s, sid, pages := indexedSession(b, n)
		ctx := context.Background()
		task := graph.TaskID(sid, "t7")
		b.Run(fmt.Sprintf("Neighbourhood/task/%d", n), func(b *testing.B) {
			for range b.N {
				if _, err := s.Neighbourhood(ctx, sid, []string{task}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("Neighbourhood/evidence/%d", n), func(b *testing.B) {
			for range b.N {
				if _, err := s.Neighbourhood(ctx, sid, pages[len(pages)/2][:1]); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("EvidenceCounts/%d", n), func(b *testing.B) {
			for range b.N {
				if _, err := s.EvidenceCounts(ctx, sid); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("ReplaceSimilar/page/%d", n), func(b *testing.B) {
			page := pages[len(pages)/3]
			edges := []graph.Edge{{From: page[0], To: page[1], Weight: 0.9}, {From: page[2], To: page[3], Weight: 0.85}}
			for range b.N {
				if err := s.ReplaceSimilar(ctx, sid, page, edges); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// indexedSession writes n evidence items in pages of 8 over 40 tasks,
// with SIMILAR_TO edges within each page, and returns the page ids.
func indexedSession(b *testing.B, n int) (*embedded.Store, string, [][]string) {
	b.Helper()
	ctx := context.Background()
	s, err := embedded.Open(filepath.Join(b.TempDir(), "graph.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	const sid, dim, tasks = "bench", 384, 40
	rng := rand.New(rand.NewPCG(uint64(n), 1))
	vec := func() []float32 {
		v := make([]float32, dim)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	if err := s.CreateSession(ctx, graph.Session{ID: sid, Goal: "g", GoalQueryEmb: vec(), Dim: dim}, graph.Task{Description: "g", EmbedText: "g", Embedding: vec()}); err != nil {
		b.Fatal(err)
	}
	var ops []graph.Op
	for k := range tasks {
		ops = append(ops, graph.Op{Kind: graph.OpCreate, Task: fmt.Sprint("t", k), Description: fmt.Sprint("task ", k), EmbedText: "t", Embedding: vec()})
	}
	if _, err := s.Apply(ctx, graph.ApplyRequest{SessionID: sid, Key: "tasks", Iteration: 1, ActiveTask: graph.RootShortID, Ops: ops}); err != nil {
		b.Fatal(err)
	}
	var pages [][]string
	for p := 0; p*8 < n; p++ {
		var items []graph.Evidence
		var ids []string
		for c := range 8 {
			text := fmt.Sprintf("page %d chunk %d: %0800d", p, c, p*8+c)
			items = append(items, graph.Evidence{Content: text, Strength: 0.5, Embedding: vec(), CreatedIter: 1 + p/100})
			ids = append(ids, graph.EvidenceID(sid, graph.ContentHash(text)))
		}
		if _, err := s.AddEvidence(ctx, sid, fmt.Sprint("p", p), fmt.Sprint("t", p%tasks), items); err != nil {
			b.Fatal(err)
		}
		var edges []graph.Edge
		for c := 1; c < 8; c++ {
			edges = append(edges, graph.Edge{From: ids[c-1], To: ids[c], Weight: 0.88})
		}
		if err := s.ReplaceSimilar(ctx, sid, ids, edges); err != nil {
			b.Fatal(err)
		}
		pages = append(pages, ids)
	}
	return s, sid, pages
}
