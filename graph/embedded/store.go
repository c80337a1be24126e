// Package embedded is the zero-dependency graph.Store: one bbolt file holds
// every session. It has exactly the semantics of the Neo4j backend (both run
// the conformance suite in graphtest) and is meant for the quick start, tests
// and single-machine deployments.
//
// Layout (bucket names in /):
//
//	format                         "lethe-graph/2"
//	sessions/<session id>/meta     "session" -> session record
//	sessions/<session id>/tasks    <short id> -> task record (parent, depends_on inside)
//	sessions/<session id>/evidence <content hash> -> evidence record (SUPPORTS target inside)
//	sessions/<session id>/edges    <from hash> 0x00 <to hash> -> SIMILAR_TO record (from < to)
//	sessions/<session id>/blobs    <key> -> bytes
//	sessions/<session id>/applied  "apply:" / "evidence:" + key -> JSON result of the first call
//	sessions/<session id>/...      indexes: evidence_by_iter (since.go); task_adj, supports,
//	                               similar_adj, counts (adjacency.go)
//
// Records are JSON; embeddings are little-endian float32 bytes (base64 in
// the JSON). SUBTASK_OF and DEPENDS_ON live in the task records, SUPPORTS in
// the evidence records. Every write is one bbolt read-write transaction,
// fsynced at commit, so a crash loses nothing that was committed and nothing
// half-written is ever visible. bbolt serialises writers and lets readers run
// in parallel, so a Store is safe for concurrent use.
package embedded

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/lethe-research/lethe/graph"
)

// formatVersion 2 adds the index buckets of adjacency.go; Open migrates a
// version 1 file (formatV1) in place.
const (
	formatVersion = "lethe-graph/2"
	formatV1      = "lethe-graph/1"
)

var (
	keyFormat   = []byte("format")
	bktSessions = []byte("sessions")
	bktMeta     = []byte("meta")
	bktTasks    = []byte("tasks")
	bktEvidence = []byte("evidence")
	bktEdges    = []byte("edges")
	bktBlobs    = []byte("blobs")
	bktApplied  = []byte("applied")
	keySession  = []byte("session")

	subBuckets = [][]byte{bktMeta, bktTasks, bktEvidence, bktEdges, bktBlobs, bktApplied, bktEvIter, bktSources}
)

// Store is a graph.Store backed by one bbolt file.
type Store struct {
	db    *bolt.DB
	vecs  *vecCache  // lane similar: embeddings for NearestEvidence (similar.go)
	tasks *taskCache // decoded task records (taskcache.go)
}

var _ graph.Store = (*Store)(nil)

// Open opens (creating if needed) the store file at path. The file is locked
// for the life of the Store: a second Open of the same file, from this or
// another process, fails after a few seconds instead of corrupting it.
func Open(path string) (*Store, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 5 * time.Second})
	if errors.Is(err, bolt.ErrTimeout) {
		// Two `make run`s with one RUN_DIR met here, and "timeout" alone
		// did not say what to do.
		return nil, fmt.Errorf("embedded open %s: the file is locked by another process (a worker already running on it? give this one another graph.path, or RUN_DIR for make run): %w", path, err)
	}
	if err != nil {
		return nil, fmt.Errorf("embedded open %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		old := ""
		if v := tx.Bucket(bktMeta); v != nil {
			if f := v.Get(keyFormat); f != nil && string(f) != formatVersion && string(f) != formatV1 {
				return fmt.Errorf("file format %q, want %q", f, formatVersion)
			}
			old = string(v.Get(keyFormat))
		}
		meta, err := tx.CreateBucketIfNotExists(bktMeta)
		if err != nil {
			return err
		}
		if _, err = tx.CreateBucketIfNotExists(bktSessions); err != nil {
			return err
		}
		if old == formatV1 {
			if err := migrate(tx); err != nil {
				return fmt.Errorf("migrate %s to %s: %w", formatV1, formatVersion, err)
			}
		}
		return meta.Put(keyFormat, []byte(formatVersion))
	})
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("embedded open %s: %w", path, err)
	}
	return &Store{db: db, vecs: newVecCache(), tasks: newTaskCache()}, nil
}

// Path is the file the store lives in.
func (s *Store) Path() string { return s.db.Path() }

// Ping checks that the file is open.
func (s *Store) Ping(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.db.View(func(tx *bolt.Tx) error { return nil }); err != nil {
		return fmt.Errorf("embedded ping: %w", err)
	}
	return nil
}

// Close closes the file; later calls fail.
func (s *Store) Close() error {
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("embedded close: %w", err)
	}
	return nil
}

// session returns the bucket of an existing session.
func session(tx *bolt.Tx, id string) (*bolt.Bucket, error) {
	if id == "" {
		return nil, errors.New("empty session id")
	}
	b := tx.Bucket(bktSessions).Bucket([]byte(id))
	if b == nil {
		return nil, fmt.Errorf("session %q: %w", id, graph.ErrNotFound)
	}
	return b, nil
}

func (s *Store) view(ctx context.Context, op string, fn func(tx *bolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("embedded %s: %w", op, err)
	}
	if err := s.db.View(fn); err != nil {
		return fmt.Errorf("embedded %s: %w", op, err)
	}
	return nil
}

func (s *Store) update(ctx context.Context, op string, fn func(tx *bolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("embedded %s: %w", op, err)
	}
	if err := s.db.Update(fn); err != nil {
		return fmt.Errorf("embedded %s: %w", op, err)
	}
	return nil
}

// ResetSession removes the session and everything in it. Resetting a
// session that does not exist is not an error.
func (s *Store) ResetSession(ctx context.Context, sessionID string) error {
	defer s.vecs.drop(sessionID)
	defer s.tasks.drop(sessionID)
	return s.update(ctx, "reset session", func(tx *bolt.Tx) error {
		if sessionID == "" {
			return errors.New("empty session id")
		}
		err := tx.Bucket(bktSessions).DeleteBucket([]byte(sessionID))
		if errors.Is(err, bolt.ErrBucketNotFound) {
			return nil
		}
		return err
	})
}

// CreateSession stores the session and its root task unless the session
// exists already.
func (s *Store) CreateSession(ctx context.Context, sess graph.Session, root graph.Task) error {
	return s.update(ctx, "create session", func(tx *bolt.Tx) error {
		if sess.ID == "" {
			return errors.New("empty session id")
		}
		all := tx.Bucket(bktSessions)
		if all.Bucket([]byte(sess.ID)) != nil {
			return nil
		}
		sb, err := all.CreateBucket([]byte(sess.ID))
		if err != nil {
			return err
		}
		for _, name := range append(slices.Clone(subBuckets), indexBuckets...) {
			if _, err := sb.CreateBucket(name); err != nil {
				return err
			}
		}
		if err := sb.Bucket(bktMeta).Put(keyEvTotal, make([]byte, 8)); err != nil {
			return err
		}
		dim := sess.Dim
		if dim == 0 {
			dim = max(len(sess.GoalDocEmb), len(sess.GoalQueryEmb))
		}
		if err := putJSON(sb.Bucket(bktMeta), keySession, sessionRec{
			Goal:         sess.Goal,
			GoalDocEmb:   packF32(sess.GoalDocEmb),
			GoalQueryEmb: packF32(sess.GoalQueryEmb),
			Dim:          dim,
		}); err != nil {
			return err
		}
		root.ShortID = graph.RootShortID
		root.Status = graph.Pending
		root.Depth = 0
		root.Parent = ""
		root.DependsOn = nil
		return putJSON(sb.Bucket(bktTasks), []byte(graph.RootShortID), taskToRec(root))
	})
}

// GetSession returns the session node.
func (s *Store) GetSession(ctx context.Context, sessionID string) (graph.Session, error) {
	var out graph.Session
	err := s.view(ctx, "get session", func(tx *bolt.Tx) error {
		sb, err := session(tx, sessionID)
		if err != nil {
			return err
		}
		var r sessionRec
		if err := getJSON(sb.Bucket(bktMeta), keySession, &r); err != nil {
			return err
		}
		doc, err := unpackF32(r.GoalDocEmb)
		if err != nil {
			return err
		}
		q, err := unpackF32(r.GoalQueryEmb)
		if err != nil {
			return err
		}
		out = graph.Session{ID: sessionID, Goal: r.Goal, GoalDocEmb: doc, GoalQueryEmb: q, Dim: r.Dim}
		return nil
	})
	return out, err
}

func getTask(sb *bolt.Bucket, sessionID, shortID string) (graph.Task, error) {
	if shortID == "" {
		return graph.Task{}, errors.New("empty task short id")
	}
	var r taskRec
	if err := getJSON(sb.Bucket(bktTasks), []byte(shortID), &r); err != nil {
		return graph.Task{}, fmt.Errorf("task %q: %w", shortID, err)
	}
	return recToTask(sessionID, shortID, r)
}

func putTask(sb *bolt.Bucket, t graph.Task) error {
	return putJSON(sb.Bucket(bktTasks), []byte(t.ShortID), taskToRec(t))
}

// Tasks returns the session's tasks ordered by (CreatedIter, ShortID).
func (s *Store) Tasks(ctx context.Context, sessionID string) ([]graph.Task, error) {
	var out []graph.Task
	err := s.view(ctx, "tasks", func(tx *bolt.Tx) error {
		sb, err := session(tx, sessionID)
		if err != nil {
			return err
		}
		out, err = s.tasks.load(sb, sessionID)
		return err
	})
	return out, err
}

// ReadySet returns the PENDING tasks whose prerequisites are all DONE.
func (s *Store) ReadySet(ctx context.Context, sessionID string) ([]graph.Task, error) {
	var out []graph.Task
	err := s.view(ctx, "ready set", func(tx *bolt.Tx) error {
		sb, err := session(tx, sessionID)
		if err != nil {
			return err
		}
		out, err = s.tasks.ready(sb, sessionID)
		return err
	})
	return out, err
}

// SetStatus moves a task to `to` if its status is in `from` (empty: any but
// FAILED).
func (s *Store) SetStatus(ctx context.Context, sessionID, shortID string, from []graph.Status, to graph.Status) (bool, error) {
	changed := false
	err := s.update(ctx, "set status", func(tx *bolt.Tx) error {
		if !to.Valid() {
			return fmt.Errorf("invalid status %q", to)
		}
		sb, err := session(tx, sessionID)
		if err != nil {
			return err
		}
		t, err := getTask(sb, sessionID, shortID)
		if err != nil {
			return err
		}
		if t.Status == graph.Failed {
			return fmt.Errorf("task %q: %w", shortID, graph.ErrImmutable)
		}
		if len(from) > 0 && !slices.Contains(from, t.Status) {
			return nil
		}
		if t.Status == to {
			return nil
		}
		t.Status = to
		changed = true
		return putTask(sb, t)
	})
	if err != nil {
		return false, err
	}
	return changed, nil
}

// SetResultEmbedding fills a task's result embedding.
func (s *Store) SetResultEmbedding(ctx context.Context, sessionID, shortID string, emb []float32) error {
	return s.update(ctx, "set result embedding", func(tx *bolt.Tx) error {
		sb, err := session(tx, sessionID)
		if err != nil {
			return err
		}
		t, err := getTask(sb, sessionID, shortID)
		if err != nil {
			return err
		}
		if t.Status == graph.Failed {
			return fmt.Errorf("task %q: %w", shortID, graph.ErrImmutable)
		}
		t.ResultEmbedding = slices.Clone(emb)
		return putTask(sb, t)
	})
}

const (
	appliedApply    = "apply:"
	appliedEvidence = "evidence:"
)

// Apply runs one iteration's ops in one transaction (see graph.PlanApply
// for the rules).
func (s *Store) Apply(ctx context.Context, req graph.ApplyRequest) (graph.ApplyResult, error) {
	var res graph.ApplyResult
	err := s.update(ctx, "apply", func(tx *bolt.Tx) error {
		sb, err := session(tx, req.SessionID)
		if err != nil {
			return err
		}
		applied := sb.Bucket(bktApplied)
		akey := []byte(appliedApply + req.Key)
		if req.Key != "" {
			if v := applied.Get(akey); v != nil {
				if err := json.Unmarshal(v, &res); err != nil {
					return fmt.Errorf("decode applied %q: %w", req.Key, err)
				}
				res.Replayed = true
				return nil
			}
		}
		ts, err := s.tasks.load(sb, req.SessionID)
		if err != nil {
			return err
		}
		evb := sb.Bucket(bktEvidence)
		plan, err := graph.PlanApply(ts, func(h string) (bool, error) {
			return evb.Get([]byte(h)) != nil, nil
		}, req)
		if err != nil {
			return err
		}
		for _, t := range plan.Tasks {
			if err := putTask(sb, t); err != nil {
				return fmt.Errorf("write task %q: %w", t.ShortID, err)
			}
			if err := indexTask(sb, t.ShortID, taskToRec(t)); err != nil {
				return fmt.Errorf("index task %q: %w", t.ShortID, err)
			}
		}
		for _, e := range plan.Evidence {
			if err := putNewEvidence(sb, e.ContentHash, evidenceToRec(e)); err != nil {
				return fmt.Errorf("write evidence %s: %w", e.ID, err)
			}
		}
		res = plan.Result
		if req.Key != "" {
			return putJSON(applied, akey, res)
		}
		return nil
	})
	if err != nil {
		return graph.ApplyResult{}, err
	}
	return res, nil
}

// AddEvidence stores evidence for a task; content the session holds for
// other tasks only gets this task added to its SUPPORTS targets.
func (s *Store) AddEvidence(ctx context.Context, sessionID, key, taskShortID string, items []graph.Evidence) (graph.AddEvidenceResult, error) {
	var res graph.AddEvidenceResult
	err := s.update(ctx, "add evidence", func(tx *bolt.Tx) error {
		sb, err := session(tx, sessionID)
		if err != nil {
			return err
		}
		applied := sb.Bucket(bktApplied)
		akey := []byte(appliedEvidence + key)
		if key != "" {
			if v := applied.Get(akey); v != nil {
				if err := json.Unmarshal(v, &res); err != nil {
					return fmt.Errorf("decode applied %q: %w", key, err)
				}
				res.Replayed = true
				return nil
			}
		}
		task, err := getTask(sb, sessionID, taskShortID)
		if err != nil {
			return err
		}
		evb := sb.Bucket(bktEvidence)
		for i, it := range items {
			e, err := graph.PrepareEvidence(sessionID, task.ID, it)
			if err != nil {
				return fmt.Errorf("item %d: %w", i, err)
			}
			if v := evb.Get([]byte(e.ContentHash)); v != nil {
				var r evidenceRec
				if err := json.Unmarshal(v, &r); err != nil {
					return fmt.Errorf("decode evidence %q: %w", e.ContentHash, err)
				}
				if r.supports(taskShortID) {
					res.Duplicates++
					continue
				}
				r.Also = append(r.Also, taskShortID)
				if err := putJSON(evb, []byte(e.ContentHash), r); err != nil {
					return fmt.Errorf("item %d: %w", i, err)
				}
				if err := indexSupport(sb, taskShortID, e.ContentHash); err != nil {
					return fmt.Errorf("item %d: %w", i, err)
				}
				res.Linked++
				continue
			}
			if err := putNewEvidence(sb, e.ContentHash, evidenceToRec(e)); err != nil {
				return fmt.Errorf("item %d: %w", i, err)
			}
			res.Added++
		}
		if key != "" {
			return putJSON(applied, akey, res)
		}
		return nil
	})
	if err != nil {
		return graph.AddEvidenceResult{}, err
	}
	return res, nil
}

// Evidence returns the session's evidence ordered by (CreatedIter, ID),
// optionally only one task's.
func (s *Store) Evidence(ctx context.Context, sessionID, taskShortID string) ([]graph.Evidence, error) {
	var out []graph.Evidence
	err := s.view(ctx, "evidence", func(tx *bolt.Tx) error {
		sb, err := session(tx, sessionID)
		if err != nil {
			return err
		}
		if taskShortID != "" && sb.Bucket(bktTasks).Get([]byte(taskShortID)) == nil {
			return fmt.Errorf("task %q: %w", taskShortID, graph.ErrNotFound)
		}
		if taskShortID != "" { // through the supports index: the task's items only
			out, err = evidenceOf(sb, sessionID, []string{taskShortID})
			return err
		}
		return sb.Bucket(bktEvidence).ForEach(func(k, v []byte) error {
			var r evidenceRec
			if err := json.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("decode evidence %q: %w", k, err)
			}
			if taskShortID != "" && !r.supports(taskShortID) {
				return nil
			}
			e, err := recToEvidence(sessionID, string(k), r)
			if err != nil {
				return fmt.Errorf("decode evidence %q: %w", k, err)
			}
			out = append(out, e)
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	graph.SortEvidence(out)
	return out, nil
}

// evidenceHash returns the content hash of an evidence id of the session.
func evidenceHash(sessionID, id string) (string, bool) {
	return strings.CutPrefix(id, graph.EvidenceID(sessionID, ""))
}

// SetStrengths updates evidence strengths by evidence id; an unknown id
// fails the whole call.
func (s *Store) SetStrengths(ctx context.Context, sessionID string, strengths map[string]float64) error {
	return s.update(ctx, "set strengths", func(tx *bolt.Tx) error {
		sb, err := session(tx, sessionID)
		if err != nil {
			return err
		}
		return setStrengths(sb, sessionID, strengths)
	})
}

func setStrengths(sb *bolt.Bucket, sessionID string, strengths map[string]float64) error {
	evb := sb.Bucket(bktEvidence)
	ids := make([]string, 0, len(strengths))
	for id := range strengths {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		v := strengths[id]
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("evidence %q: strength %v", id, v)
		}
		h, ok := evidenceHash(sessionID, id)
		var r evidenceRec
		if !ok {
			return fmt.Errorf("evidence %q: %w", id, graph.ErrNotFound)
		}
		if err := getJSON(evb, []byte(h), &r); err != nil {
			return fmt.Errorf("evidence %q: %w", id, err)
		}
		if r.Strength == v {
			continue
		}
		r.Strength = v
		if err := putJSON(evb, []byte(h), r); err != nil {
			return err
		}
	}
	return nil
}

// Edges returns SUBTASK_OF, DEPENDS_ON, SUPPORTS and SIMILAR_TO edges in
// graph.SortEdges order.
func (s *Store) Edges(ctx context.Context, sessionID string) ([]graph.Edge, error) {
	var out []graph.Edge
	err := s.view(ctx, "edges", func(tx *bolt.Tx) error {
		sb, err := session(tx, sessionID)
		if err != nil {
			return err
		}
		ts, err := s.tasks.load(sb, sessionID)
		if err != nil {
			return err
		}
		for _, t := range ts {
			if t.Parent != "" {
				out = append(out, graph.Edge{From: t.ID, To: t.Parent, Kind: graph.SubtaskOf})
			}
			for _, d := range t.DependsOn {
				out = append(out, graph.Edge{From: t.ID, To: d, Kind: graph.DependsOn})
			}
		}
		err = sb.Bucket(bktEvidence).ForEach(func(k, v []byte) error {
			var r struct {
				Task string   `json:"task"`
				Also []string `json:"also"`
			}
			if err := json.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("decode evidence %q: %w", k, err)
			}
			for _, t := range append([]string{r.Task}, r.Also...) {
				out = append(out, graph.Edge{
					From: graph.EvidenceID(sessionID, string(k)),
					To:   graph.TaskID(sessionID, t),
					Kind: graph.Supports,
				})
			}
			return nil
		})
		if err != nil {
			return err
		}
		return appendSimilar(sb.Bucket(bktEdges), sessionID, &out)
	})
	if err != nil {
		return nil, err
	}
	graph.SortEdges(out)
	return out, nil
}

func edgeKey(fromHash, toHash string) []byte {
	k := make([]byte, 0, len(fromHash)+1+len(toHash))
	k = append(k, fromHash...)
	k = append(k, 0)
	return append(k, toHash...)
}

// ReplaceSimilar deletes the SIMILAR_TO edges with both endpoints in scope
// and stores the given edges, whose endpoints must be evidence in scope.
func (s *Store) ReplaceSimilar(ctx context.Context, sessionID string, scope []string, edges []graph.Edge) error {
	return s.update(ctx, "replace similar", func(tx *bolt.Tx) error {
		sb, err := session(tx, sessionID)
		if err != nil {
			return err
		}
		return replaceSimilar(sb, sessionID, scope, edges)
	})
}

func replaceSimilar(sb *bolt.Bucket, sessionID string, scope []string, edges []graph.Edge) error {
	evb := sb.Bucket(bktEvidence)
	in := make(map[string]bool, len(scope))
	for _, id := range scope {
		h, ok := evidenceHash(sessionID, id)
		if !ok || evb.Get([]byte(h)) == nil {
			return fmt.Errorf("scope evidence %q: %w", id, graph.ErrNotFound)
		}
		in[h] = true
	}
	if err := dropSimilarIn(sb, in); err != nil {
		return err
	}
	pairs, err := similarPairs(sessionID, in, edges)
	if err != nil {
		return err
	}
	return putSimilar(sb, pairs)
}

// Commit performs w in one transaction (one commit, two fsyncs, instead
// of one per write).
func (s *Store) Commit(ctx context.Context, sessionID string, w graph.Writes) error {
	if err := w.Check(); err != nil {
		return fmt.Errorf("embedded commit: %w", err)
	}
	if len(w.Pairs) > 0 || w.ResetPairs {
		return fmt.Errorf("embedded commit: %w", graph.ErrNoPairs)
	}
	return s.update(ctx, "commit", func(tx *bolt.Tx) error {
		sb, err := session(tx, sessionID)
		if err != nil {
			return err
		}
		if len(w.SimilarScope) > 0 || len(w.Similar) > 0 {
			if err := replaceSimilar(sb, sessionID, w.SimilarScope, w.Similar); err != nil {
				return err
			}
		}
		if err := setStrengths(sb, sessionID, w.Strengths); err != nil {
			return err
		}
		if err := putBlobs(sb, w.Blobs); err != nil {
			return err
		}
		b := sb.Bucket(bktBlobs)
		for _, k := range w.DeleteBlobs {
			if err := b.Delete([]byte(k)); err != nil {
				return err
			}
		}
		return nil
	})
}

// similarPair is one SIMILAR_TO edge to write, endpoints ordered (a < b).
type similarPair struct {
	a, b string
	rec  similarRec
}

// similarPairs checks the edges against the scope and orders them by key,
// the last of two edges between the same items winning, as when they were
// written one after the other.
func similarPairs(sessionID string, in map[string]bool, edges []graph.Edge) ([]similarPair, error) {
	pairs := make([]similarPair, 0, len(edges))
	for i, e := range edges {
		if e.Kind != "" && e.Kind != graph.SimilarTo {
			return nil, fmt.Errorf("edge %d: kind %s is not %s", i, e.Kind, graph.SimilarTo)
		}
		a, okA := evidenceHash(sessionID, e.From)
		b, okB := evidenceHash(sessionID, e.To)
		if !okA || !okB || !in[a] || !in[b] {
			return nil, fmt.Errorf("edge %d (%s -> %s): endpoints must be evidence in scope: %w", i, e.From, e.To, graph.ErrNotFound)
		}
		if a == b {
			continue // no self loops
		}
		pairs = append(pairs, similarPair{min(a, b), max(a, b), similarRec{Weight: e.Weight, Label: e.Label}})
	}
	slices.SortStableFunc(pairs, func(x, y similarPair) int {
		return cmp.Or(strings.Compare(x.a, y.a), strings.Compare(x.b, y.b))
	})
	out := pairs[:0]
	for i, p := range pairs {
		if i+1 < len(pairs) && pairs[i+1].a == p.a && pairs[i+1].b == p.b {
			continue // a later edge between the same items wins
		}
		out = append(out, p)
	}
	return out, nil
}

// putSimilar writes the pairs and both directions of their adjacency keys,
// each bucket's keys in ascending order. bbolt inserts a key into its leaf
// by shifting the keys after it, and a transaction's leaf only splits at
// commit, so keys in random order cost a shift of the growing leaf per
// key: quadratic in a bulk write (71% of a 10k-item fill's CPU was that
// memmove). In order, every insert is an append.
func putSimilar(sb *bolt.Bucket, pairs []similarPair) error {
	eb := sb.Bucket(bktEdges)
	for _, p := range pairs {
		if err := putJSON(eb, edgeKey(p.a, p.b), p.rec); err != nil {
			return err
		}
	}
	keys := make([][]byte, 0, 2*len(pairs))
	for _, p := range pairs {
		keys = append(keys, pairKey(p.a, p.b, 0), pairKey(p.b, p.a, 0))
	}
	slices.SortFunc(keys, bytes.Compare)
	ix := sb.Bucket(bktSimilarAdj)
	for _, k := range keys {
		if err := ix.Put(k, []byte{}); err != nil {
			return err
		}
	}
	return nil
}

// PutBlob stores (overwrites) a per-session document.
func (s *Store) PutBlob(ctx context.Context, sessionID, key string, data []byte) error {
	return s.update(ctx, "put blob", func(tx *bolt.Tx) error {
		sb, err := session(tx, sessionID)
		if err != nil {
			return err
		}
		if key == "" {
			return errors.New("empty blob key")
		}
		if data == nil {
			data = []byte{}
		}
		return sb.Bucket(bktBlobs).Put([]byte(key), data)
	})
}

// GetBlob returns a copy of a per-session document, or ErrNotFound.
func (s *Store) GetBlob(ctx context.Context, sessionID, key string) ([]byte, error) {
	var out []byte
	err := s.view(ctx, "get blob", func(tx *bolt.Tx) error {
		sb, err := session(tx, sessionID)
		if err != nil {
			return err
		}
		v := sb.Bucket(bktBlobs).Get([]byte(key))
		if v == nil {
			return fmt.Errorf("blob %q: %w", key, graph.ErrNotFound)
		}
		out = bytes.Clone(v)
		return nil
	})
	return out, err
}

// GetBlobs returns copies of the named documents that exist.
func (s *Store) GetBlobs(ctx context.Context, sessionID string, keys []string) (map[string][]byte, error) {
	out := map[string][]byte{}
	err := s.view(ctx, "get blobs", func(tx *bolt.Tx) error {
		clear(out)
		sb, err := session(tx, sessionID)
		if err != nil {
			return err
		}
		b := sb.Bucket(bktBlobs)
		for _, k := range keys {
			if v := b.Get([]byte(k)); v != nil {
				out[k] = bytes.Clone(v)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// PutBlobs stores (overwrites) several documents in one transaction.
func (s *Store) PutBlobs(ctx context.Context, sessionID string, blobs map[string][]byte) error {
	return s.update(ctx, "put blobs", func(tx *bolt.Tx) error {
		sb, err := session(tx, sessionID)
		if err != nil {
			return err
		}
		return putBlobs(sb, blobs)
	})
}

func putBlobs(sb *bolt.Bucket, blobs map[string][]byte) error {
	b := sb.Bucket(bktBlobs)
	for k, data := range blobs {
		if k == "" {
			return errors.New("empty blob key")
		}
		if data == nil {
			data = []byte{}
		}
		if err := b.Put([]byte(k), data); err != nil {
			return err
		}
	}
	return nil
}

func putJSON(b *bolt.Bucket, key []byte, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %q: %w", key, err)
	}
	return b.Put(key, data)
}

func getJSON(b *bolt.Bucket, key []byte, v any) error {
	data := b.Get(key)
	if data == nil {
		return graph.ErrNotFound
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("decode %q: %w", key, err)
	}
	return nil
}

// EvidenceCounts reads the per-task SUPPORTS counters (lane payloads,
// #14; counters: lane storecost), so its cost follows the number of tasks
// with evidence, not of evidence.
func (s *Store) EvidenceCounts(ctx context.Context, sessionID string) (map[string]int, error) {
	per := map[string]int{}
	err := s.view(ctx, "evidence counts", func(tx *bolt.Tx) error {
		sb, err := session(tx, sessionID)
		if err != nil {
			return err
		}
		return sb.Bucket(bktCounts).ForEach(func(k, v []byte) error {
			per[string(k)] = int(binary.BigEndian.Uint64(v))
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return per, nil
}
