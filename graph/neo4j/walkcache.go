package neo4j

import (
	"container/list"
	"sync"

	"github.com/lethe-research/lethe/graph"
)

// The walk cache (#14): the SUPPORTS side of large tasks, as a walk's
// shape read returns it. Expand's push reads the focus's neighbour tasks
// every iteration, and at 100k evidence one of them (the parent) holds
// 2,000 to 6,000 items: reading its edges and their shapes was two thirds
// of the walk (docs/long-session.md). What makes a copy safe to keep:
//
//   - a SUPPORTS edge is never removed, and an evidence item's embedding is
//     never rewritten (only ResetSession deletes them, with the session);
//   - so a task's SUPPORTS set at n edges is the set it had when it last
//     had n: the count, which Neo4j answers from the node's degree without
//     reading the edges, says whether a copy is current;
//   - a session reset and created again under the same id gets a new
//     generation (the session node's gen, set on create), so a copy of the
//     old session is never taken for the new one, even one read by another
//     process. A session created before gen existed is never cached.
//
// Everything is checked against the store in the read that uses the copy,
// so a copy is an optimisation only: a stale one is read again.

// walkCacheMin is the fewest SUPPORTS edges a task needs to be kept: a
// smaller task's edges come back in a few milliseconds with the round's
// other rows, and keeping it would spend memory for nothing.
const walkCacheMin = 256

// walkCache keeps, per task, its SUPPORTS edges and their evidence shapes,
// at most max bytes of them in all (walkEntry.size), the least recently
// used task dropped first. It is safe for concurrent use; max ≤ 0 keeps
// nothing.
type walkCache struct {
	mu    sync.Mutex
	max   int64
	bytes int64
	order *list.List               // of *walkEntry, most recently used first
	byID  map[string]*list.Element // task id -> its element
}

// walkEntry is one task's SUPPORTS side: edges[i] runs from shapes[i].
type walkEntry struct {
	sid, task, gen string
	edges          []graph.Edge
	shapes         []graph.Evidence
	bytes          int64
}

// size is about what the entry holds in memory: each item's embedding,
// and its ids, hash and edge with their headers.
func (e *walkEntry) size() int64 {
	var n int64
	for i, sh := range e.shapes {
		n += int64(4*len(sh.Embedding)+len(sh.ID)+len(sh.SessionID)+len(sh.ContentHash)+len(e.edges[i].From)+len(e.edges[i].To)) + walkItemOverhead
	}
	return n
}

// walkItemOverhead is an item's fixed cost in bytes: the Evidence and Edge
// structs and the string and slice headers they hold.
const walkItemOverhead = 300

func newWalkCache(maxBytes int64) *walkCache {
	return &walkCache{max: maxBytes, order: list.New(), byID: map[string]*list.Element{}}
}

// get returns the task's copy when it was read in generation gen with n
// SUPPORTS edges.
func (c *walkCache) get(task, gen string, n int) (*walkEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byID[task]
	if !ok {
		return nil, false
	}
	e := el.Value.(*walkEntry)
	if e.gen != gen || len(e.edges) != n {
		return nil, false
	}
	c.order.MoveToFront(el)
	return e, true
}

// worth says whether a task with n SUPPORTS edges of generation gen would
// be kept (if it fits: put).
func (c *walkCache) worth(gen string, n int) bool {
	return c.max > 0 && gen != "" && n >= walkCacheMin
}

// put keeps e in place of the task's older copy, and drops the least
// recently used copies past max. A task larger than the whole cache is
// not kept.
func (c *walkCache) put(e *walkEntry) {
	if !c.worth(e.gen, len(e.edges)) || len(e.shapes) != len(e.edges) {
		return
	}
	if e.bytes = e.size(); e.bytes > c.max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byID[e.task]; ok {
		c.remove(el)
	}
	c.byID[e.task] = c.order.PushFront(e)
	c.bytes += e.bytes
	for c.bytes > c.max {
		c.remove(c.order.Back())
	}
}

// dropSession forgets the session's copies (its reset, in this process).
func (c *walkCache) dropSession(sid string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for el := c.order.Front(); el != nil; {
		next := el.Next()
		if el.Value.(*walkEntry).sid == sid {
			c.remove(el)
		}
		el = next
	}
}

func (c *walkCache) remove(el *list.Element) {
	e := c.order.Remove(el).(*walkEntry)
	delete(c.byID, e.task)
	c.bytes -= e.bytes
}

// held is how many tasks and evidence shapes are kept, and their bytes
// (for tests).
func (c *walkCache) held() (tasks, items int, bytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for el := c.order.Front(); el != nil; el = el.Next() {
		items += len(el.Value.(*walkEntry).edges)
	}
	return c.order.Len(), items, c.bytes
}
