package main

import (
	"context"
	"fmt"
	"time"

	"github.com/lethe-research/lethe/graph"
)

// fillBatchPages is how many pages one AddEvidence call writes, in one
// transaction: 256 pages are 2,048 items (a few MB over Bolt).
const fillBatchPages = 256

// session is the state of the benchmark's one long session in one store.
type session struct {
	id       string
	gen      generator
	tasks    int         // generated tasks so far (the root included)
	taskEmb  [][]float64 // by generated task index
	pages    int         // pages written so far
	iter     int         // last iteration run
	evidence int         // evidence items written so far
	similar  similarConfig
	phases   map[string]time.Duration // fill time by store call, for the log
}

type similarConfig struct {
	threshold float64
	maxPer    int
}

// create stores the session and its root task.
func (s *session) create(ctx context.Context, st graph.Store) error {
	goal := s.gen.goal()
	s.taskEmb = [][]float64{perturb(s.gen.rng(streamTask, 0), goal, taskNoise)}
	s.tasks = 1
	err := st.CreateSession(ctx, graph.Session{ID: s.id, Goal: "How do solid-state batteries fail?", GoalDocEmb: to32(goal), GoalQueryEmb: to32(goal), Dim: s.gen.dim},
		graph.Task{Description: "How do solid-state batteries fail?", Embedding: to32(s.taskEmb[0])})
	if err != nil {
		return fmt.Errorf("create session: %w", err)
	}
	return nil
}

// growTasks creates generated tasks up to want, 100 per Apply, two in
// three of them completed in the same write.
func (s *session) growTasks(ctx context.Context, st graph.Store, want int) error {
	for s.tasks < want {
		first := s.tasks
		var ops, done []graph.Op
		for k := first; k < want && k < first+100; k++ {
			op := s.gen.task(k)
			ops = append(ops, op)
			s.taskEmb = append(s.taskEmb, float64s(op.Embedding))
			if taskDone(k) {
				r := fmt.Sprintf("Answered: %s", op.Description)
				done = append(done, graph.Op{Kind: graph.OpComplete, Task: op.Task, Result: r, EmbedText: r, Embedding: op.Embedding})
			}
		}
		created := len(ops)
		t0 := time.Now()
		res, err := st.Apply(ctx, graph.ApplyRequest{SessionID: s.id, Key: fmt.Sprintf("fill/tasks/%d", first), Iteration: s.iter,
			ActiveTask: graph.RootShortID, Ops: append(ops, done...)})
		s.lap("Apply", t0)
		if err != nil {
			return fmt.Errorf("fill tasks from %d: %w", first, err)
		}
		if res.RolledBack || len(res.Created) != created {
			return fmt.Errorf("fill tasks from %d: %d of %d created (rolled back %v)", first, len(res.Created), created, res.RolledBack)
		}
		s.tasks = first + created
	}
	return nil
}

// growEvidence writes pages until the session holds at least n evidence
// items: one AddEvidence per batch of pages of one task, then the batch's
// SIMILAR_TO edges with one ReplaceSimilar (the store's batched writes).
func (s *session) growEvidence(ctx context.Context, st graph.Store, n int) error {
	for s.evidence < n {
		first := s.pages
		task := s.gen.pageTask(first, s.tasks)
		var items []graph.Evidence
		for p := first; p < first+fillBatchPages && s.evidence+len(items) < n; p++ {
			// Stamped with the coming iteration, as content ingested during
			// it: an incremental Observe folds what is newer than the last
			// observation, and must see the fill.
			items = append(items, s.gen.page(p, s.taskEmb[task], s.iter+1)...)
			s.pages = p + 1
		}
		if err := s.addPages(ctx, st, fmt.Sprintf("fill/evidence/%d", first), task, items); err != nil {
			return err
		}
	}
	return nil
}

// addPages stores items for a generated task and links them by SIMILAR_TO.
func (s *session) addPages(ctx context.Context, st graph.Store, key string, task int, items []graph.Evidence) error {
	t0 := time.Now()
	res, err := st.AddEvidence(ctx, s.id, key, taskShort(task), items)
	if err != nil {
		return fmt.Errorf("add evidence %s: %w", key, err)
	}
	s.lap("AddEvidence", t0)
	s.evidence += res.Added
	prepared := make([]graph.Evidence, len(items))
	scope := make([]string, len(items))
	for i, it := range items {
		if prepared[i], err = graph.PrepareEvidence(s.id, graph.TaskID(s.id, taskShort(task)), it); err != nil {
			return fmt.Errorf("prepare evidence %s: %w", key, err)
		}
		scope[i] = prepared[i].ID
	}
	// Pairs are compared within pages (28 per page instead of 2 million per
	// batch): chunks of two pages are at cosine ≈ 0.65 ± 0.05 (gen.go), so
	// the few such pairs over the threshold are left to the first sync
	// after the fill, which the first-iteration column pays for.
	var edges []graph.Edge
	for i := 0; i < len(prepared); i += pageChunks {
		edges = append(edges, similarEdges(prepared[i:min(i+pageChunks, len(prepared))], s.similar.threshold, s.similar.maxPer)...)
	}
	t0 = time.Now()
	if err := st.ReplaceSimilar(ctx, s.id, scope, edges); err != nil {
		return fmt.Errorf("similar edges %s: %w", key, err)
	}
	s.lap("ReplaceSimilar", t0)
	return nil
}

// grow brings the session to n evidence items and the task tree to its
// size at n, and says how long that took.
func (s *session) grow(ctx context.Context, st graph.Store, n int) (time.Duration, error) {
	start := time.Now()
	if err := s.growTasks(ctx, st, taskCount(n)); err != nil {
		return 0, err
	}
	if err := s.growEvidence(ctx, st, n); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

func float64s(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// lap adds the time since t0 to the fill phase named.
func (s *session) lap(name string, t0 time.Time) {
	if s.phases == nil {
		s.phases = map[string]time.Duration{}
	}
	s.phases[name] += time.Since(t0)
}
