package neo4j

// WalkCacheSize is how many tasks and evidence shapes the store's walk
// cache holds, for the external tests.
func WalkCacheSize(s *Store) (tasks, items int) { return s.walk.size() }
