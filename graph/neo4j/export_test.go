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

// WalkSought is how many items reads sought by the walk cache's internal ids.
func WalkSought(s *Store) int64 { return s.walk.sought.Load() }

// WalkNodeIDs is how many of ids the walk cache holds an internal id for.
func WalkNodeIDs(s *Store, sid string, ids []string) int {
	return len(s.walk.nodeIDs(sid, setOf(ids)))
}

// RewriteWalkNodeIDs replaces the internal ids the walk cache holds for
// the session's items with f's, as a node deleted and its id reused
// would leave them.
func RewriteWalkNodeIDs(s *Store, sid string, f func(id string, nid int64) int64) {
	s.walk.mu.Lock()
	defer s.walk.mu.Unlock()
	for el := s.walk.order.Front(); el != nil; el = el.Next() {
		if e := el.Value.(*walkEntry); e.sid == sid {
			for i := range e.nids {
				e.nids[i] = f(e.shapes[i].ID, e.nids[i])
			}
		}
	}
}
