package embedded

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	bolt "go.etcd.io/bbolt"

	"github.com/lethe-research/lethe/graph"
)

// Issue #14: every iteration reads all of a session's tasks three or four
// times (the bounded view, the focus's neighbourhood, Observe, Apply), and
// a task record is JSON with two base64 embeddings, so at a few hundred
// tasks the decoding alone cost more than the rest of the iteration's store
// work. taskCache keeps each task decoded beside the bytes it was decoded
// from: a read walks the bucket as before and decodes only a record whose
// bytes changed. Keyed by content, it is right whatever wrote the record
// (any write path, a rolled-back transaction, another process), with no
// version to keep in step.

// taskCacheSessions and taskCacheBytes bound what is kept: a worker
// serves many sessions over its life, and one that ended is evicted, least
// recently read first, when either bound is passed. The bytes are the
// records' (a decoded task holds about as much again): 256 MiB holds
// about 50,000 tasks of 384-dim embeddings, a hundred sessions of
// hundreds of tasks or a few of thousands.
const (
	taskCacheSessions = 256
	taskCacheBytes    = 256 << 20
)

type taskCache struct {
	mu       sync.Mutex
	sess     map[string]*sessTasks
	tick     uint64
	bytes    int // sum of the sessions' record bytes
	maxBytes int
}

type sessTasks struct {
	raw   map[string][]byte
	task  map[string]graph.Task
	used  uint64
	bytes int
}

func newTaskCache() *taskCache {
	return &taskCache{sess: map[string]*sessTasks{}, maxBytes: taskCacheBytes}
}

func (c *taskCache) drop(sessionID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.remove(sessionID)
}

func (c *taskCache) remove(sessionID string) {
	if st := c.sess[sessionID]; st != nil {
		c.bytes -= st.bytes
		delete(c.sess, sessionID)
	}
}

// trim evicts the least recently read sessions other than keep while the
// cache holds more than its bytes.
func (c *taskCache) trim(keep string) {
	for c.bytes > c.maxBytes && len(c.sess) > 1 {
		c.evict(keep)
	}
}

// load returns the tasks of the session bucket sb ordered by (CreatedIter,
// ShortID), each a copy the caller may change.
func (c *taskCache) load(sb *bolt.Bucket, sessionID string) ([]graph.Task, error) {
	return c.read(sessionID, func(add func(k, v []byte) error) error {
		return sb.Bucket(bktTasks).ForEach(add)
	})
}

// byIDs returns the named tasks (short ids) of the session bucket sb in
// Tasks order, each a copy the caller may change; a missing one is an
// error (the caller found it in an index).
func (c *taskCache) byIDs(sb *bolt.Bucket, sessionID string, shorts map[string]bool) ([]graph.Task, error) {
	tb := sb.Bucket(bktTasks)
	return c.read(sessionID, func(add func(k, v []byte) error) error {
		for short := range shorts {
			v := tb.Get([]byte(short))
			if v == nil {
				return fmt.Errorf("task %q: %w", short, graph.ErrNotFound)
			}
			if err := add([]byte(short), v); err != nil {
				return err
			}
		}
		return nil
	})
}

// outline is load reduced to the tree's shape and statuses, in Tasks
// order, without copying any text or vector.
func (c *taskCache) outline(sb *bolt.Bucket, sessionID string) ([]graph.TaskNode, error) {
	var out []graph.TaskNode
	err := c.view(sb, sessionID, func(ts []graph.Task) {
		out = make([]graph.TaskNode, len(ts))
		for i, t := range ts {
			out[i] = graph.TaskNode{ShortID: t.ShortID, Parent: graph.ShortIDOf(t.Parent), Status: t.Status,
				CreatedIter: t.CreatedIter, ResultEmbedded: len(t.ResultEmbedding) > 0}
		}
	})
	return out, err
}

// ready is graph.ReadyTasks over the session's tasks, copying only the
// ready ones (load copies every task, vectors and all).
func (c *taskCache) ready(sb *bolt.Bucket, sessionID string) ([]graph.Task, error) {
	var out []graph.Task
	err := c.view(sb, sessionID, func(ts []graph.Task) {
		out = graph.ReadyTasks(ts)
		for i := range out {
			out[i] = cloneTask(out[i])
		}
	})
	return out, err
}

// view calls fn under the lock with every task of the session bucket sb
// in Tasks order, as the cache holds them: fn copies what it keeps.
func (c *taskCache) view(sb *bolt.Bucket, sessionID string, fn func([]graph.Task)) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.session(sessionID)
	defer c.trim(sessionID)
	var ts []graph.Task
	err := sb.Bucket(bktTasks).ForEach(func(k, v []byte) error {
		t, err := c.decode(st, sessionID, k, v)
		if err != nil {
			return err
		}
		ts = append(ts, t)
		return nil
	})
	if err != nil {
		return err
	}
	graph.SortTasks(ts)
	fn(ts)
	return nil
}

// read calls visit under the lock with a function that takes one task
// record, and returns copies of the tasks it was given, in Tasks order.
func (c *taskCache) read(sessionID string, visit func(add func(k, v []byte) error) error) ([]graph.Task, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.session(sessionID)
	defer c.trim(sessionID)
	var ts []graph.Task
	err := visit(func(k, v []byte) error {
		t, err := c.decode(st, sessionID, k, v)
		if err != nil {
			return err
		}
		ts = append(ts, cloneTask(t))
		return nil
	})
	if err != nil {
		return nil, err
	}
	graph.SortTasks(ts)
	return ts, nil
}

// session returns the session's entry, evicting the least recently read
// one when the cache is full. Called with c.mu held.
func (c *taskCache) session(sessionID string) *sessTasks {
	c.tick++
	st := c.sess[sessionID]
	if st == nil {
		if len(c.sess) >= taskCacheSessions {
			c.evict(sessionID)
		}
		st = &sessTasks{raw: map[string][]byte{}, task: map[string]graph.Task{}}
		c.sess[sessionID] = st
	}
	st.used = c.tick
	return st
}

// evict removes the least recently read session other than keep.
func (c *taskCache) evict(keep string) {
	oldest, at := "", uint64(0)
	for id, st := range c.sess {
		if id != keep && (oldest == "" || st.used < at) {
			oldest, at = id, st.used
		}
	}
	c.remove(oldest)
}

// decode returns the task of record (k, v) of session entry st, decoding
// it unless the bytes are those decoded last time. Called with c.mu held.
func (c *taskCache) decode(st *sessTasks, sessionID string, k, v []byte) (graph.Task, error) {
	if raw, ok := st.raw[string(k)]; ok && bytes.Equal(raw, v) {
		return st.task[string(k)], nil
	}
	var r taskRec
	if err := json.Unmarshal(v, &r); err != nil {
		return graph.Task{}, fmt.Errorf("decode task %q: %w", k, err)
	}
	t, err := recToTask(sessionID, string(k), r)
	if err != nil {
		return graph.Task{}, fmt.Errorf("decode task %q: %w", k, err)
	}
	d := len(v) - len(st.raw[string(k)])
	st.raw[string(k)] = bytes.Clone(v) // v lives only as long as the transaction
	st.task[string(k)] = t
	st.bytes += d
	c.bytes += d
	return t, nil
}

// cloneTask copies the slices a caller could change in place (Apply edits
// the tasks it loads), so the cached task stays the record's.
func cloneTask(t graph.Task) graph.Task {
	t.Embedding = slices.Clone(t.Embedding)
	t.ResultEmbedding = slices.Clone(t.ResultEmbedding)
	t.DependsOn = slices.Clone(t.DependsOn)
	return t
}
