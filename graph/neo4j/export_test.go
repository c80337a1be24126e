package neo4j

// WalkCacheSize is how many tasks and evidence shapes the store's walk
// cache holds, for the external tests.
func WalkCacheSize(s *Store) (tasks, items int) {
	tasks, items, _ = s.walk.held()
	return tasks, items
}
