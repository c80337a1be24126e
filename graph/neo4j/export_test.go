package neo4j

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
