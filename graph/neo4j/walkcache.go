package neo4j

import (
	"container/list"
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	driver "github.com/neo4j/neo4j-go-driver/v5/neo4j"

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
	// hits, caught and reread count the copies used as they were, brought
	// up to date, and read again whole (for the tests and the log).
	hits, caught, reread atomic.Int64
	mu                   sync.Mutex
	max                  int64
	bytes                int64
	order                *list.List               // of *walkEntry, most recently used first
	byID                 map[string]*list.Element // task id -> its element
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

// lookup returns the task's copy, current or not (current says).
func (c *walkCache) lookup(task string) *walkEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byID[task]; ok {
		return el.Value.(*walkEntry)
	}
	return nil
}

// current says whether e is the task's SUPPORTS side in a session of
// generation gen whose task has n SUPPORTS edges.
func (e *walkEntry) current(gen string, n int) bool {
	return e != nil && gen != "" && e.gen == gen && len(e.edges) == n
}

// touch marks the task's copy as just used.
func (c *walkCache) touch(task string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byID[task]; ok {
		c.order.MoveToFront(el)
	}
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

// walkRound is the walk cache's part of one shape read (hopRound): the
// copies of wanted tasks it holds (not yet checked), what the hop said of
// them (check rows: the session's generation, each held task's count),
// and the new copies of the large tasks read whole.
type walkRound struct {
	check  bool
	held   map[string]*walkEntry
	gen    string
	counts map[string]int
	fresh  []*walkEntry // copies of tasks read whole (copyFor), gen set by fills
	caught []*walkEntry // copies brought up to date (catchUp), to keep
}

// walkRow is one SUPPORTS row of the catch-up (hopDelta), its shape as
// the statement returned it.
type walkRow struct {
	e     graph.Edge
	shape map[string]any
}

// useCache turns the cache on for this round: the copies of the wanted
// tasks are looked up, to be checked by the hop's own rows.
func (r *hopRound) useCache(c *walkCache, tids []string) {
	if c.max <= 0 {
		return
	}
	r.check, r.held, r.counts = true, map[string]*walkEntry{}, map[string]int{}
	for _, id := range tids {
		if e := c.lookup(id); e != nil {
			r.held[id] = e
		}
	}
}

// checkRow takes a check row of the hop (rowGen or rowCount).
func (r *hopRound) checkRow(kind string, rec *driver.Record) error {
	if kind == rowGen {
		r.gen, _ = rec.Values[4].(string)
		return nil
	}
	id, _ := rec.Values[1].(string)
	n, ok := rec.Values[3].(int64)
	if !ok {
		return fmt.Errorf("walk cache check of %s: count is %T", id, rec.Values[3])
	}
	r.counts[id] = int(n)
	return nil
}

// copyFor is the new copy to fill from the SUPPORTS side of a wanted
// task read whole with n items, or nil when none is wanted: the cache is
// off, the task is held, or it is too small (the session's generation,
// which the cache also needs, is checked in fills: its row comes last).
func (r *hopRound) copyFor(task string, n int) *walkEntry {
	if !r.check || r.held[task] != nil || n < walkCacheMin {
		return nil
	}
	e := &walkEntry{sid: r.sid, task: task, edges: make([]graph.Edge, 0, n), shapes: make([]graph.Evidence, 0, n)}
	r.fresh = append(r.fresh, e)
	return e
}

// settle uses the held copies the hop found current; a copy that is short
// of items only (same generation, more SUPPORTS edges now) is brought up
// to date from the items created since its newest one (hopDelta), when
// those make up the whole difference; the other stale copies are read
// whole (hopSupports). Each takes one statement, only when needed.
func (r *hopRound) settle(ctx context.Context, tx driver.ManagedTransaction, c *walkCache) ([]graph.Edge, error) {
	var stale []string
	var short []*walkEntry
	for id, e := range r.held {
		n := r.counts[id]
		switch {
		case e.current(r.gen, n):
			c.touch(id)
			c.hits.Add(1)
			r.use(e)
		case r.gen != "" && e.gen == r.gen && n > len(e.edges):
			short = append(short, e)
		default:
			stale = append(stale, id)
		}
		delete(r.held, id)
	}
	if len(short) > 0 {
		more, err := r.catchUp(ctx, tx, short)
		if err != nil {
			return nil, err
		}
		c.caught.Add(int64(len(short) - len(more)))
		stale = append(stale, more...)
	}
	if len(stale) == 0 {
		return r.edges, nil
	}
	c.reread.Add(int64(len(stale)))
	err := each(ctx, tx, hopSupports, map[string]any{"sid": r.sid, "tids": stale, "shapes": r.shapes != nil}, r.row)
	return r.edges, err
}

// use adds a current copy's SUPPORTS edges to the round's, and the shapes
// of their evidence that the walk does not know.
func (r *hopRound) use(e *walkEntry) {
	r.edges = append(r.edges, e.edges...)
	for i, x := range e.edges {
		r.ne[x.From] = true
		if !r.has(x.From) {
			r.shapes[x.From] = e.shapes[i]
		}
	}
}

// hopDelta reads, per task, the SUPPORTS edges from items created at or
// after the iteration of the copy's newest item (the (session_id,
// created_iter) index), at most walkDeltaMax items per task: a task that
// gained a page since the walk last read it gets that page, not its
// thousands of items again.
const hopDelta = `UNWIND $rows AS row
CALL {
  WITH row
  MATCH (m:Evidence) USING INDEX m:Evidence(session_id, created_iter)
  WHERE m.session_id = $sid AND m.created_iter >= row.iter
  WITH m, row LIMIT $limit
  MATCH (m)-[:SUPPORTS]->(n:Task {id: row.tid})
  RETURN m, n
}
RETURN m.id AS from, n.id AS to, 'SUPPORTS' AS kind, null AS weight, null AS label, ` + hopShape + ` AS shape`

// walkDeltaMax is the most items hopDelta reads per task: a few pages of
// research; past it the task is read whole anyway.
const walkDeltaMax = 2048

// catchUp brings the short copies up to date (see settle): the items
// hopDelta finds that a copy lacks are added when, with them, the copy
// has as many edges as the task (SUPPORTS edges are only added, so the
// copy and the new ones are then all of them); the tasks where they do
// not (an older item linked to the task, an item stamped late, more new
// items than the delta reads) are returned to be read whole.
func (r *hopRound) catchUp(ctx context.Context, tx driver.ManagedTransaction, short []*walkEntry) ([]string, error) {
	rows := make([]any, len(short))
	for i, e := range short {
		rows[i] = map[string]any{"tid": e.task, "iter": int64(e.newest())}
	}
	found := map[string][]walkRow{}
	err := each(ctx, tx, hopDelta, map[string]any{"sid": r.sid, "rows": rows, "limit": int64(walkDeltaMax)}, func(rec *driver.Record) error {
		e := graph.Edge{Kind: graph.Supports}
		e.From, _ = rec.Values[0].(string)
		e.To, _ = rec.Values[1].(string)
		m, _ := rec.Values[5].(map[string]any)
		found[e.To] = append(found[e.To], walkRow{e, m})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("walk cache delta: %w", err)
	}
	var whole []string
	for _, old := range short {
		e, ok := old.with(found[old.task], r.counts[old.task])
		if !ok {
			whole = append(whole, old.task)
			continue
		}
		r.use(e)
		r.caught = append(r.caught, e)
	}
	return whole, nil
}

// newest is the highest CreatedIter of the copy's items.
func (e *walkEntry) newest() int {
	n := 0
	for _, sh := range e.shapes {
		n = max(n, sh.CreatedIter)
	}
	return n
}

// with is a new copy: e and the rows it lacks, when that makes n edges.
func (e *walkEntry) with(rows []walkRow, n int) (*walkEntry, bool) {
	have := make(map[string]bool, len(e.edges))
	for _, x := range e.edges {
		have[x.From] = true
	}
	out := &walkEntry{sid: e.sid, task: e.task, gen: e.gen, edges: slices.Clone(e.edges), shapes: slices.Clone(e.shapes)}
	for _, row := range rows {
		if have[row.e.From] {
			continue
		}
		sh, err := evidenceShape(row.shape)
		if err != nil {
			return nil, false
		}
		have[row.e.From] = true
		out.edges, out.shapes = append(out.edges, row.e), append(out.shapes, sh)
	}
	return out, len(out.edges) == n
}

// fills are the copies to keep: those brought up to date, and the new
// ones of the large tasks read whole, when the session has a generation.
func (r *hopRound) fills(c *walkCache) []*walkEntry {
	out := slices.Clone(r.caught)
	for _, e := range r.fresh {
		if e.gen = r.gen; c.worth(e.gen, len(e.edges)) {
			out = append(out, e)
		}
	}
	return out
}
