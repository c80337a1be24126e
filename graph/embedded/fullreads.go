package embedded

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	bolt "go.etcd.io/bbolt"

	"github.com/lethe-research/lethe/graph"
)

// Lane fullreads (#14): the reads and writes Finalize, CollectSections and
// ApplyOps use instead of loading every task with its embeddings.

// outlineRec is the part of a task record SetStatusWhere reads: the
// decoder skips the texts and the embedding without allocating them.
type outlineRec struct {
	Status          string          `json:"status"`
	ResultEmbedding json.RawMessage `json:"result_embedding,omitempty"`
	CreatedIter     int             `json:"created_iter"`
	Parent          string          `json:"parent,omitempty"`
}

// TaskOutline returns every task's shape and status, in Tasks order. It
// goes through the task cache, as Tasks does: the loop reads the outline
// every iteration (ReadState, FocusView, Observe), and decoding each
// record's JSON again would cost more than the cache's byte comparison.
func (s *Store) TaskOutline(ctx context.Context, sessionID string) ([]graph.TaskNode, error) {
	var out []graph.TaskNode
	err := s.view(ctx, "task outline", func(tx *bolt.Tx) error {
		sb, err := session(tx, sessionID)
		if err != nil {
			return err
		}
		out, err = s.tasks.outline(sb, sessionID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// TasksByIDs returns the named tasks that exist, in Tasks order.
func (s *Store) TasksByIDs(ctx context.Context, sessionID string, shortIDs []string) ([]graph.Task, error) {
	var out []graph.Task
	err := s.view(ctx, "tasks by ids", func(tx *bolt.Tx) error {
		sb, err := session(tx, sessionID)
		if err != nil {
			return err
		}
		want := map[string]bool{}
		for _, id := range shortIDs {
			if id != "" && sb.Bucket(bktTasks).Get([]byte(id)) != nil {
				want[id] = true
			}
		}
		out, err = s.tasks.byIDs(sb, sessionID, want)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// SetStatusWhere moves every task in one of the from statuses to `to`.
func (s *Store) SetStatusWhere(ctx context.Context, sessionID string, from []graph.Status, to graph.Status) (int, error) {
	if err := graph.CheckStatusWhere(from, to); err != nil {
		return 0, err
	}
	n := 0
	err := s.update(ctx, "set status where", func(tx *bolt.Tx) error {
		n = 0
		sb, err := session(tx, sessionID)
		if err != nil {
			return err
		}
		var move []string
		err = sb.Bucket(bktTasks).ForEach(func(k, v []byte) error {
			var r outlineRec
			if err := json.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("decode task %q: %w", k, err)
			}
			if st := graph.Status(r.Status); st != to && slices.Contains(from, st) {
				move = append(move, string(k)) // bbolt forbids writes inside ForEach
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, id := range move {
			t, err := getTask(sb, sessionID, id)
			if err != nil {
				return err
			}
			t.Status = to
			if err := putTask(sb, t); err != nil {
				return fmt.Errorf("write task %q: %w", id, err)
			}
		}
		n = len(move)
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// SetResultEmbeddings fills several result embeddings in one transaction.
func (s *Store) SetResultEmbeddings(ctx context.Context, sessionID string, embs map[string][]float32) error {
	return s.update(ctx, "set result embeddings", func(tx *bolt.Tx) error {
		sb, err := session(tx, sessionID)
		if err != nil {
			return err
		}
		ids := make([]string, 0, len(embs))
		for id := range embs {
			ids = append(ids, id)
		}
		slices.Sort(ids) // the first error named is the same on every run
		for _, id := range ids {
			t, err := getTask(sb, sessionID, id)
			if err != nil {
				return err
			}
			if t.Status == graph.Failed {
				return fmt.Errorf("task %q: %w", id, graph.ErrImmutable)
			}
			t.ResultEmbedding = slices.Clone(embs[id])
			if err := putTask(sb, t); err != nil {
				return fmt.Errorf("write task %q: %w", id, err)
			}
		}
		return nil
	})
}

// EvidenceOfTasks finds the items through the supports index and decodes
// only those.
func (s *Store) EvidenceOfTasks(ctx context.Context, sessionID string, shortIDs []string) ([]graph.Evidence, error) {
	var out []graph.Evidence
	err := s.view(ctx, "evidence of tasks", func(tx *bolt.Tx) error {
		sb, err := session(tx, sessionID)
		if err != nil {
			return err
		}
		out, err = evidenceOf(sb, sessionID, shortIDs)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// evidenceOf is the evidence with a SUPPORTS edge to any of the tasks, in
// Evidence order: the supports index names the items (as first target or
// in Also), so the cost follows the tasks' evidence, not the session's.
func evidenceOf(sb *bolt.Bucket, sid string, tasks []string) ([]graph.Evidence, error) {
	hashes := map[string]bool{}
	for _, t := range tasks {
		err := prefixed(sb.Bucket(bktSupports), t, func(rest []byte) error {
			hashes[string(rest)] = true
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	evb := sb.Bucket(bktEvidence)
	var out []graph.Evidence // nil when none, as the other reads give it
	for h := range hashes {
		var r evidenceRec
		if err := getJSON(evb, []byte(h), &r); err != nil {
			return nil, fmt.Errorf("evidence %q: %w", h, err)
		}
		e, err := recToEvidence(sid, h, r)
		if err != nil {
			return nil, fmt.Errorf("decode evidence %q: %w", h, err)
		}
		out = append(out, e)
	}
	graph.SortEvidence(out)
	return out, nil
}

// TaskStatusCounts counts the session's tasks by status (see graph.Store),
// from the task cache's outline.
func (s *Store) TaskStatusCounts(ctx context.Context, sessionID string) (graph.StatusCounts, error) {
	out := graph.StatusCounts{Count: map[graph.Status]int{}}
	err := s.view(ctx, "task status counts", func(tx *bolt.Tx) error {
		sb, err := session(tx, sessionID)
		if err != nil {
			return err
		}
		outline, err := s.tasks.outline(sb, sessionID)
		for _, t := range outline {
			out.Count[t.Status]++
			if t.ShortID == graph.RootShortID {
				out.Root = t.Status
			}
		}
		return err
	})
	if err != nil {
		return graph.StatusCounts{}, err
	}
	return out, nil
}

// TasksWithStatus returns the session's tasks of one status (see
// graph.Store).
func (s *Store) TasksWithStatus(ctx context.Context, sessionID string, status graph.Status) ([]graph.Task, error) {
	var out []graph.Task
	err := s.view(ctx, "tasks with status", func(tx *bolt.Tx) error {
		sb, err := session(tx, sessionID)
		if err != nil {
			return err
		}
		outline, err := s.tasks.outline(sb, sessionID)
		if err != nil {
			return err
		}
		want := map[string]bool{}
		for _, t := range outline {
			if t.Status == status {
				want[t.ShortID] = true
			}
		}
		if len(want) > 0 {
			out, err = s.tasks.byIDs(sb, sessionID, want)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
