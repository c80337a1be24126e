package neo4j

import (
	"context"

	driver "github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/lethe-research/lethe/graph"
)

// WalkCacheSize is how many tasks and evidence shapes the store's walk
// cache holds, for the external tests.
// WalkCacheUses is how many held copies the store's walk cache used as
// they were, brought up to date, and read again whole.
func WalkCacheUses(s *Store) (hits, caught, reread int64) {
	return s.walk.hits.Load(), s.walk.caught.Load(), s.walk.reread.Load()
}

func WalkCacheSize(s *Store) (tasks, items int) {
	tasks, items, _ = s.walk.held()
	return tasks, items
}

// TasksForApply is the tasks Apply plans req with, read as Apply reads
// them, for the external tests.
func TasksForApply(ctx context.Context, s *Store, req graph.ApplyRequest) ([]graph.Task, error) {
	var out []graph.Task
	err := s.read(ctx, "tasks for apply", func(ctx context.Context, tx driver.ManagedTransaction) error {
		var err error
		out, err = tasksForApply(ctx, tx, req)
		return err
	})
	return out, err
}
