package neo4j

import (
	"context"
	"fmt"
	"slices"

	driver "github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/lethe-research/lethe/graph"
)

// Lane fullreads (#14): the reads and writes Finalize, CollectSections and
// ApplyOps use instead of loading every task with its embeddings. Each is
// one query on the session's indexes; none returns an embedding it was not
// asked for.

// TaskOutline returns every task's shape and status, in Tasks order.
// Whether a task has a result embedding is whether it has the property
// (an empty embedding is never stored: packF32): reading the property,
// even for "IS NOT NULL", loaded every task's 384 values, half of the
// statement's time at 100k evidence (10 against 5 ms for 332 tasks,
// docs/long-session.md, "The walk's rounds split, and a cheaper outline").
// The rows come as one record (taskReturn).
func (s *Store) TaskOutline(ctx context.Context, sessionID string) ([]graph.TaskNode, error) {
	var out []graph.TaskNode
	err := s.read(ctx, "task outline", func(ctx context.Context, tx driver.ManagedTransaction) error {
		out = nil
		const q = `MATCH (t:Task {session_id: $sid})
OPTIONAL MATCH (t)-[:SUBTASK_OF]->(p:Task)
RETURN collect([t.short_id, p.short_id, t.status, t.created_iter, 'result_embedding' IN keys(t)])`
		err := eachPacked(ctx, tx, q, map[string]any{"sid": sessionID}, func(r *driver.Record) error {
			short, _ := r.Values[0].(string)
			parent, _ := r.Values[1].(string)
			status, _ := r.Values[2].(string)
			iter, _ := r.Values[3].(int64)
			res, _ := r.Values[4].(bool)
			out = append(out, graph.TaskNode{ShortID: short, Parent: parent, Status: graph.Status(status), CreatedIter: int(iter), ResultEmbedded: res})
			return nil
		})
		if err != nil {
			return err
		}
		return requireSessionUnless(ctx, tx, sessionID, len(out) > 0)
	})
	if err != nil {
		return nil, err
	}
	graph.SortTaskNodes(out)
	return out, nil
}

// TasksByIDs returns the named tasks that exist, in Tasks order.
func (s *Store) TasksByIDs(ctx context.Context, sessionID string, shortIDs []string) ([]graph.Task, error) {
	var out []graph.Task
	err := s.read(ctx, "tasks by ids", func(ctx context.Context, tx driver.ManagedTransaction) error {
		ids := make([]any, 0, len(shortIDs))
		for _, id := range shortIDs {
			ids = append(ids, graph.TaskID(sessionID, id))
		}
		var err error
		out, err = loadTasks(ctx, tx, "MATCH (t:Task) USING INDEX t:Task(id) WHERE t.id IN $ids AND t.session_id = $sid",
			map[string]any{"ids": ids, "sid": sessionID})
		if err != nil {
			return err
		}
		return requireSessionUnless(ctx, tx, sessionID, len(out) > 0)
	})
	return out, err
}

// SetStatusWhere moves every task in one of the from statuses to `to`, on
// the (session_id, status) index.
func (s *Store) SetStatusWhere(ctx context.Context, sessionID string, from []graph.Status, to graph.Status) (int, error) {
	if err := graph.CheckStatusWhere(from, to); err != nil {
		return 0, err
	}
	fs := make([]any, len(from))
	for i, f := range from {
		fs[i] = string(f)
	}
	n := 0
	err := s.write(ctx, "set status where", func(ctx context.Context, tx driver.ManagedTransaction) error {
		n = 0
		if err := lockSession(ctx, tx, sessionID); err != nil {
			return err
		}
		rec, err := single(ctx, tx, `MATCH (t:Task {session_id: $sid}) WHERE t.status IN $from AND t.status <> $to
SET t.status = $to RETURN count(t)`, map[string]any{"sid": sessionID, "from": fs, "to": string(to)})
		if err != nil {
			return err
		}
		c, _ := rec.Values[0].(int64)
		n = int(c)
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// SetResultEmbeddings fills several result embeddings in one transaction,
// after checking every task (so an error writes nothing).
func (s *Store) SetResultEmbeddings(ctx context.Context, sessionID string, embs map[string][]float32) error {
	ids := make([]string, 0, len(embs))
	for id := range embs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return s.write(ctx, "set result embeddings", func(ctx context.Context, tx driver.ManagedTransaction) error {
		if err := lockSession(ctx, tx, sessionID); err != nil {
			return err
		}
		rows := make([]any, 0, len(ids))
		status := map[string]string{}
		keys := make([]any, len(ids))
		for i, id := range ids {
			keys[i] = graph.TaskID(sessionID, id)
		}
		err := each(ctx, tx, "MATCH (t:Task) USING INDEX t:Task(id) WHERE t.id IN $ids AND t.session_id = $sid RETURN t.short_id, t.status",
			map[string]any{"ids": keys, "sid": sessionID}, func(r *driver.Record) error {
				short, _ := r.Values[0].(string)
				st, _ := r.Values[1].(string)
				status[short] = st
				return nil
			})
		if err != nil {
			return err
		}
		for _, id := range ids {
			switch st, ok := status[id]; {
			case !ok:
				return fmt.Errorf("task %q: %w", id, graph.ErrNotFound)
			case graph.Status(st) == graph.Failed:
				return fmt.Errorf("task %q: %w", id, graph.ErrImmutable)
			}
			rows = append(rows, map[string]any{"id": graph.TaskID(sessionID, id), "emb": packF32(embs[id])})
		}
		return run(ctx, tx, "UNWIND $rows AS row MATCH (t:Task {id: row.id}) SET t.result_embedding = row.emb", map[string]any{"rows": rows})
	})
}

// EvidenceOfTasks reads the evidence supporting any of the named tasks,
// from the tasks over their SUPPORTS edges.
func (s *Store) EvidenceOfTasks(ctx context.Context, sessionID string, shortIDs []string) ([]graph.Evidence, error) {
	ids := make([]any, len(shortIDs))
	for i, id := range shortIDs {
		ids[i] = graph.TaskID(sessionID, id)
	}
	return s.evidenceWhere(ctx, "evidence of tasks", sessionID,
		`MATCH (e:Evidence)-[:SUPPORTS]->(x:Task) USING INDEX x:Task(id) WHERE x.id IN $ids AND e.session_id = $sid
WITH DISTINCT e`, map[string]any{"ids": ids},
		func(ctx context.Context, tx driver.ManagedTransaction, found []graph.Evidence) error {
			return requireSessionUnless(ctx, tx, sessionID, len(found) > 0)
		})
}

// statusCounts are the session's tasks counted by status on the
// (session_id, status) index, and the root's status: a session always has
// its root, so no root row means no session.
const statusCounts = `MATCH (r:Task {id: $root}) WHERE r.session_id = $sid RETURN r.status AS status, -1 AS n
UNION ALL
MATCH (t:Task {session_id: $sid}) RETURN t.status AS status, count(*) AS n`

// TaskStatusCounts counts the session's tasks by status (see graph.Store).
func (s *Store) TaskStatusCounts(ctx context.Context, sessionID string) (graph.StatusCounts, error) {
	var out graph.StatusCounts
	if err := checkSessionID(sessionID); err != nil {
		return out, err
	}
	err := s.read(ctx, "task status counts", func(ctx context.Context, tx driver.ManagedTransaction) error {
		out = graph.StatusCounts{Count: map[graph.Status]int{}}
		root := false
		p := map[string]any{"sid": sessionID, "root": graph.TaskID(sessionID, graph.RootShortID)}
		err := each(ctx, tx, statusCounts, p, func(r *driver.Record) error {
			st, _ := r.Values[0].(string)
			n, _ := r.Values[1].(int64)
			if n < 0 {
				out.Root, root = graph.Status(st), true
			} else if n > 0 {
				out.Count[graph.Status(st)] = int(n)
			}
			return nil
		})
		if err == nil && !root {
			err = fmt.Errorf("session %q: %w", sessionID, graph.ErrNotFound)
		}
		return err
	})
	if err != nil {
		return graph.StatusCounts{}, err
	}
	return out, nil
}

// TasksWithStatus reads the session's tasks of one status through the
// (session_id, status) index (see graph.Store).
func (s *Store) TasksWithStatus(ctx context.Context, sessionID string, status graph.Status) ([]graph.Task, error) {
	var out []graph.Task
	err := s.read(ctx, "tasks with status", func(ctx context.Context, tx driver.ManagedTransaction) error {
		var err error
		out, err = loadTasks(ctx, tx, "MATCH (t:Task {session_id: $sid, status: $status})",
			map[string]any{"sid": sessionID, "status": string(status)})
		if err != nil {
			return err
		}
		return requireSessionUnless(ctx, tx, sessionID, len(out) > 0)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
