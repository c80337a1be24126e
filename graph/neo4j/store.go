// Package neo4j is the production graph.Store: every session's task graph
// and evidence in one Neo4j 5 database, reached over Bolt with the official
// driver (github.com/neo4j/neo4j-go-driver/v5). It has exactly the semantics
// of the embedded backend: both call graph.PlanApply inside their write
// transaction and both pass the conformance suite in graphtest.
//
// Model (every node carries session_id; every query filters by it):
//
//	(:Session {id, goal, goal_doc_emb, goal_query_emb, dim, gen, evidence_n})
//	(:Task {id, session_id, short_id, description, embed_text, embedding,
//	        status, depth, n_productive, result_summary, result_embedding,
//	        created_iter})
//	(:Evidence {id, session_id, content, source_url, title, kind, strength,
//	            embedding, created_iter, content_hash})
//	(:Blob {session_id, key, data})             data is a byte array
//	(:AppliedKey {session_id, key, result})     idempotency record, result is JSON
//	(Task)-[:SUBTASK_OF]->(Task)   (Task)-[:DEPENDS_ON]->(Task)
//	(Evidence)-[:SUPPORTS]->(Task) (Evidence)-[:SIMILAR_TO {weight, label}]->(Evidence), from id < to id
//
// Ids are deterministic (graph.TaskID, graph.EvidenceID), so retried writes
// land on the same nodes. Reads run in managed read transactions
// (ExecuteRead), writes in managed write transactions (ExecuteWrite) that the
// driver retries on transient errors. Every write transaction first takes the
// write lock of its Session node, so the writes of one session are
// serialised (as bbolt serialises the embedded backend's) while sessions run
// side by side; an Apply or AddEvidence checks and records its idempotency
// key inside that same transaction, so a retry after a commit whose
// acknowledgement was lost replays the recorded result and changes nothing.
package neo4j

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	driver "github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/lethe-research/lethe/graph"
)

// Config says which server and database to use.
type Config struct {
	URI      string // bolt://host:7687 or neo4j://host:7687 (and the +s/+ssc variants)
	User     string
	Password string
	Database string // "" = the server's default database
	// WalkCacheMiB is how much memory the walk cache may hold
	// (walkcache.go; graph.neo4j_walk_cache_mib); 0: none.
	WalkCacheMiB int
	// VectorStatements is how many read transactions at once a
	// NearestEvidence call splits its index queries into
	// (graph.neo4j_vector_statements); 0 or 1: one.
	VectorStatements int
	// LabelBatch is how many of a session's new evidence items may wait
	// outside the vector index, compared exactly by every call, before a
	// call adds them (graph.neo4j_label_batch); 0 or 1: every call.
	LabelBatch int
}

// Timeouts of the driver: a connection is made or fails within
// connectTimeout, and a managed transaction stops retrying transient errors
// after maxRetryTime, so a call against a server that is down returns an
// error well within an activity's start-to-close timeout (the activity retry
// policy then retries the call).
const (
	connectTimeout = 5 * time.Second
	maxRetryTime   = 8 * time.Second
)

// Store is a graph.Store on a Neo4j server. It is safe for concurrent use.
type Store struct {
	drv driver.DriverWithContext
	cfg Config
	// bm chains the bookmarks of every transaction of this store, so that
	// on a cluster a read sees the writes this process made before it
	// (causal consistency); on a single server it costs nothing.
	bm driver.BookmarkManager
	// vecIdx records the vector index dimensions created by this process
	// (lane similar, similar.go).
	vecIdx sync.Map
	// swept counts, per session and dimension, the labelling calls since
	// this process last swept all of the session's evidence (labelQuery).
	swept sync.Map
	// share estimates, per session and dimension, the session's items in
	// the vector index (startK).
	share sync.Map
	// walk keeps the SUPPORTS side of large tasks for Expand's walk
	// (walkcache.go).
	walk *walkCache
}

var _ graph.Store = (*Store)(nil)

// Open connects to the server, checks the credentials and sets up the
// schema (constraints and indexes, idempotent). The errors name the URI and
// say whether the server was unreachable or refused the credentials.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	if cfg.URI == "" {
		return nil, errors.New("neo4j: empty URI")
	}
	drv, err := driver.NewDriverWithContext(cfg.URI, driver.BasicAuth(cfg.User, cfg.Password, ""), func(c *driver.Config) {
		c.SocketConnectTimeout = connectTimeout
		c.ConnectionAcquisitionTimeout = connectTimeout
		c.MaxTransactionRetryTime = maxRetryTime
		c.MaxConnectionPoolSize = 50
		// Pooled connections idle for a while are checked before reuse, so a
		// server restart costs one failed ping, not a failed transaction.
		c.ConnectionLivenessCheckTimeout = 30 * time.Second
	})
	if err != nil {
		return nil, fmt.Errorf("neo4j %s: %w", cfg.URI, err)
	}
	s := &Store{drv: drv, cfg: cfg, bm: driver.NewBookmarkManager(driver.BookmarkManagerConfig{}), walk: newWalkCache(int64(cfg.WalkCacheMiB) << 20)}
	if err := s.verify(ctx); err != nil {
		_ = drv.Close(context.Background())
		return nil, err
	}
	if err := s.setupSchema(ctx); err != nil {
		_ = drv.Close(context.Background())
		return nil, err
	}
	return s, nil
}

// ErrUnauthorized is wrapped by the error of Open and Ping when the server
// rejects the credentials.
var ErrUnauthorized = errors.New("neo4j: authentication failed")

// ErrUnreachable is wrapped by the error of Open and Ping when no
// connection to the server can be made.
var ErrUnreachable = errors.New("neo4j: server unreachable")

func (s *Store) verify(ctx context.Context) error {
	err := s.drv.VerifyConnectivity(ctx)
	if err == nil {
		return nil
	}
	return s.classify("connect", err)
}

// classify turns driver errors about credentials and connectivity into
// errors that name the URI and wrap ErrUnauthorized / ErrUnreachable.
func (s *Store) classify(op string, err error) error {
	var ne *driver.Neo4jError
	var ie *driver.InvalidAuthenticationError
	switch {
	case errors.As(err, &ie), errors.As(err, &ne) && strings.HasPrefix(ne.Code, "Neo.ClientError.Security.") && ne.Code != "Neo.ClientError.Security.Forbidden":
		return fmt.Errorf("neo4j %s %s as user %q: %w: %w", op, s.cfg.URI, s.cfg.User, ErrUnauthorized, err)
	case isConnectivity(err):
		return fmt.Errorf("neo4j %s %s: %w: %w", op, s.cfg.URI, ErrUnreachable, err)
	}
	return fmt.Errorf("neo4j %s %s: %w", op, s.cfg.URI, err)
}

func isConnectivity(err error) bool {
	var ce *driver.ConnectivityError
	if errors.As(err, &ce) {
		return true
	}
	var lim *driver.TransactionExecutionLimit
	if errors.As(err, &lim) {
		for _, e := range lim.Errors {
			if isConnectivity(e) {
				return true
			}
		}
	}
	return false
}

// schema is run at Open. Every statement is idempotent.
var schema = []string{
	"CREATE CONSTRAINT lethe_session_id IF NOT EXISTS FOR (s:Session) REQUIRE s.id IS UNIQUE",
	"CREATE CONSTRAINT lethe_task_id IF NOT EXISTS FOR (t:Task) REQUIRE t.id IS UNIQUE",
	"CREATE CONSTRAINT lethe_evidence_id IF NOT EXISTS FOR (e:Evidence) REQUIRE e.id IS UNIQUE",
	"CREATE CONSTRAINT lethe_blob_key IF NOT EXISTS FOR (b:Blob) REQUIRE (b.session_id, b.key) IS UNIQUE",
	"CREATE CONSTRAINT lethe_applied_key IF NOT EXISTS FOR (a:AppliedKey) REQUIRE (a.session_id, a.key) IS UNIQUE",
	"CREATE INDEX lethe_task_session IF NOT EXISTS FOR (t:Task) ON (t.session_id)",
	"CREATE INDEX lethe_task_session_status IF NOT EXISTS FOR (t:Task) ON (t.session_id, t.status)",
	"CREATE INDEX lethe_task_session_short IF NOT EXISTS FOR (t:Task) ON (t.session_id, t.short_id)",
	"CREATE INDEX lethe_evidence_session IF NOT EXISTS FOR (e:Evidence) ON (e.session_id)",
	"CREATE INDEX lethe_evidence_hash IF NOT EXISTS FOR (e:Evidence) ON (e.content_hash)",
	"CREATE INDEX lethe_evidence_session_iter IF NOT EXISTS FOR (e:Evidence) ON (e.session_id, e.created_iter)", // EvidenceSince
	"CREATE INDEX lethe_evidence_session_source IF NOT EXISTS FOR (e:Evidence) ON (e.session_id, e.source_url)", // FetchedSources
	// labelQuery: a session's pending nodes, not every session's (the
	// pending nodes of sessions that never query similarity stay marked).
	"CREATE INDEX lethe_vec_pending_session IF NOT EXISTS FOR (e:LetheVecPending) ON (e.session_id)",
}

func (s *Store) setupSchema(ctx context.Context) error {
	sess := s.session(ctx, driver.AccessModeWrite)
	defer sess.Close(context.Background())
	for _, q := range schema {
		_, err := sess.ExecuteWrite(ctx, func(tx driver.ManagedTransaction) (any, error) {
			r, err := tx.Run(ctx, q, nil)
			if err != nil {
				return nil, err
			}
			_, err = r.Consume(ctx)
			return nil, err
		})
		var ne *driver.Neo4jError
		if errors.As(err, &ne) && strings.Contains(ne.Code, "EquivalentSchemaRuleAlreadyExists") {
			err = nil // a concurrent Open created it first
		}
		if err != nil {
			return s.classify("schema setup", fmt.Errorf("%s: %w", q, err))
		}
	}
	_, err := sess.ExecuteRead(ctx, func(tx driver.ManagedTransaction) (any, error) {
		r, err := tx.Run(ctx, "CALL db.awaitIndexes(60)", nil)
		if err != nil {
			return nil, err
		}
		_, err = r.Consume(ctx)
		return nil, err
	})
	if err != nil {
		return s.classify("schema setup: await indexes", err)
	}
	return nil
}

func (s *Store) session(ctx context.Context, mode driver.AccessMode) driver.SessionWithContext {
	return s.drv.NewSession(ctx, driver.SessionConfig{AccessMode: mode, DatabaseName: s.cfg.Database, BookmarkManager: s.bm})
}

// Ping checks that the server answers and accepts the credentials.
func (s *Store) Ping(ctx context.Context) error { return s.verify(ctx) }

// Close closes the driver and its connections.
func (s *Store) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.drv.Close(ctx); err != nil {
		return fmt.Errorf("neo4j close: %w", err)
	}
	return nil
}

// txn is the work of one managed transaction. It may run more than once
// (the driver retries transient errors), so it must reset what it reports.
type txn func(ctx context.Context, tx driver.ManagedTransaction) error

func (s *Store) read(ctx context.Context, op string, fn txn) error {
	return s.exec(ctx, op, driver.AccessModeRead, fn)
}

func (s *Store) write(ctx context.Context, op string, fn txn) error {
	return s.exec(ctx, op, driver.AccessModeWrite, fn)
}

func (s *Store) exec(ctx context.Context, op string, mode driver.AccessMode, fn txn) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("neo4j %s: %w", op, err)
	}
	sess := s.session(ctx, mode)
	defer sess.Close(context.Background())
	work := func(tx driver.ManagedTransaction) (any, error) { return nil, fn(ctx, tx) }
	var err error
	if mode == driver.AccessModeRead {
		_, err = sess.ExecuteRead(ctx, work)
	} else {
		_, err = sess.ExecuteWrite(ctx, work)
	}
	if err == nil {
		return nil
	}
	if isConnectivity(err) {
		return s.classify(op, err)
	}
	var ne *driver.Neo4jError
	if errors.As(err, &ne) && strings.HasPrefix(ne.Code, "Neo.ClientError.Security.") {
		return s.classify(op, err)
	}
	if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
		err = errors.Join(err, ctxErr)
	}
	return fmt.Errorf("neo4j %s: %w", op, err)
}

// run executes a statement and discards its result.
func run(ctx context.Context, tx driver.ManagedTransaction, q string, params map[string]any) error {
	r, err := tx.Run(ctx, q, params)
	if err != nil {
		return err
	}
	_, err = r.Consume(ctx)
	return err
}

// each streams the records of a statement to fn, one at a time.
func each(ctx context.Context, tx driver.ManagedTransaction, q string, params map[string]any, fn func(*driver.Record) error) error {
	r, err := tx.Run(ctx, q, params)
	if err != nil {
		return err
	}
	for r.Next(ctx) {
		if err := fn(r.Record()); err != nil {
			return err
		}
	}
	return r.Err()
}

// eachPacked runs a statement whose one record holds its rows as a list
// of lists (RETURN collect([...])), and calls fn with each row as a
// record of its own. A record per row cost 15 to 20 µs in the driver
// (taskReturn).
func eachPacked(ctx context.Context, tx driver.ManagedTransaction, q string, params map[string]any, fn func(*driver.Record) error) error {
	return each(ctx, tx, q, params, func(r *driver.Record) error {
		if len(r.Values) != 1 {
			return fmt.Errorf("packed rows: %d columns, want 1", len(r.Values))
		}
		rows, ok := r.Values[0].([]any)
		if !ok && r.Values[0] != nil {
			return fmt.Errorf("packed rows: %T, not a list", r.Values[0])
		}
		for i, row := range rows {
			vals, ok := row.([]any)
			if !ok {
				return fmt.Errorf("packed row %d: %T, not a list", i, row)
			}
			if err := fn(&driver.Record{Values: vals}); err != nil {
				return err
			}
		}
		return nil
	})
}

// single runs a statement and returns its only record, or nil when there is
// none.
func single(ctx context.Context, tx driver.ManagedTransaction, q string, params map[string]any) (*driver.Record, error) {
	var rec *driver.Record
	err := each(ctx, tx, q, params, func(r *driver.Record) error {
		if rec != nil {
			return fmt.Errorf("statement returned more than one record: %s", q)
		}
		rec = r
		return nil
	})
	return rec, err
}

// nodeProps is a node's properties, whether the row holds the node or a
// projection of it (evidenceWire).
func nodeProps(v any) (props, error) {
	switch n := v.(type) {
	case driver.Node:
		return props(n.Props), nil
	case map[string]any:
		return props(n), nil
	}
	return nil, fmt.Errorf("value is %T, not a node", v)
}

func checkSessionID(id string) error {
	if id == "" {
		return errors.New("empty session id")
	}
	return nil
}

// requireSession fails with ErrNotFound when the session does not exist.
func requireSession(ctx context.Context, tx driver.ManagedTransaction, sessionID string) error {
	return matchSession(ctx, tx, sessionID, "MATCH (s:Session {id: $sid}) RETURN s.id")
}

// requireSessionUnless is a read's session check after its statement:
// rows of the session's nodes show that it exists (a session and its
// nodes are created in one transaction and removed in one), so the check
// costs a round trip only when the read found nothing, to tell an unknown
// session (ErrNotFound) from an empty answer. The loop's reads made about
// twenty such checks an iteration, one after another; Expand's walk
// rounds already rode on their answers (shapeNodes).
func requireSessionUnless(ctx context.Context, tx driver.ManagedTransaction, sessionID string, found bool) error {
	if found {
		return nil
	}
	return requireSession(ctx, tx, sessionID)
}

// lockSession takes the write lock of the session node, which serialises
// the writes of one session, and fails with ErrNotFound when the session
// does not exist.
func lockSession(ctx context.Context, tx driver.ManagedTransaction, sessionID string) error {
	return matchSession(ctx, tx, sessionID, "MATCH (s:Session {id: $sid}) SET s.lock_ = true REMOVE s.lock_ RETURN s.id")
}

// matchSession runs a query on the session node ($sid) and fails with
// ErrNotFound when it matches nothing.
func matchSession(ctx context.Context, tx driver.ManagedTransaction, sessionID, query string) error {
	if err := checkSessionID(sessionID); err != nil {
		return err
	}
	rec, err := single(ctx, tx, query, map[string]any{"sid": sessionID})
	if err != nil {
		return err
	}
	if rec == nil {
		return fmt.Errorf("session %q: %w", sessionID, graph.ErrNotFound)
	}
	return nil
}

// ResetSession removes every node of the session (tasks, evidence, blobs,
// idempotency records, the session node) with their relationships.
func (s *Store) ResetSession(ctx context.Context, sessionID string) error {
	defer s.walk.dropSession(sessionID)
	return s.write(ctx, "reset session", func(ctx context.Context, tx driver.ManagedTransaction) error {
		if err := checkSessionID(sessionID); err != nil {
			return err
		}
		p := map[string]any{"sid": sessionID}
		// Lock first (if it exists) so that no write of the session interleaves.
		if err := run(ctx, tx, "MATCH (s:Session {id: $sid}) SET s.lock_ = true REMOVE s.lock_", p); err != nil {
			return err
		}
		for _, q := range []string{
			"MATCH (e:Evidence {session_id: $sid}) DETACH DELETE e",
			"MATCH (t:Task {session_id: $sid}) DETACH DELETE t",
			"MATCH (b:Blob {session_id: $sid}) DELETE b",
			"MATCH (a:AppliedKey {session_id: $sid}) DELETE a",
			"MATCH (s:Session {id: $sid}) DETACH DELETE s",
		} {
			if err := run(ctx, tx, q, p); err != nil {
				return err
			}
		}
		return nil
	})
}

// CreateSession stores the session node and its root task unless the
// session exists already.
func (s *Store) CreateSession(ctx context.Context, sess graph.Session, root graph.Task) error {
	return s.write(ctx, "create session", func(ctx context.Context, tx driver.ManagedTransaction) error {
		if err := checkSessionID(sess.ID); err != nil {
			return err
		}
		dim := sess.Dim
		if dim == 0 {
			dim = max(len(sess.GoalDocEmb), len(sess.GoalQueryEmb))
		}
		// MERGE on the unique id locks it: a concurrent create of the same
		// session waits for this one and then finds it.
		rec, err := single(ctx, tx, `MERGE (s:Session {id: $sid})
ON CREATE SET s.goal = $goal, s.goal_doc_emb = $doc, s.goal_query_emb = $query, s.dim = $dim, s.gen = randomUUID(), s.evidence_n = 0, s.new_ = true
WITH s, coalesce(s.new_, false) AS created
REMOVE s.new_
RETURN created`, map[string]any{
			"sid": sess.ID, "goal": sess.Goal, "doc": f32list(sess.GoalDocEmb), "query": f32list(sess.GoalQueryEmb), "dim": int64(dim),
		})
		if err != nil {
			return err
		}
		if created, _ := rec.Values[0].(bool); !created {
			return nil
		}
		root.ID = graph.TaskID(sess.ID, graph.RootShortID)
		root.SessionID = sess.ID
		root.ShortID = graph.RootShortID
		root.Status = graph.Pending
		root.Depth = 0
		root.Parent = ""
		root.DependsOn = nil
		return run(ctx, tx, "CREATE (t:Task) SET t = $props", map[string]any{"props": taskProps(root)})
	})
}

// GetSession returns the session node.
func (s *Store) GetSession(ctx context.Context, sessionID string) (graph.Session, error) {
	var out graph.Session
	err := s.read(ctx, "get session", func(ctx context.Context, tx driver.ManagedTransaction) error {
		if err := checkSessionID(sessionID); err != nil {
			return err
		}
		rec, err := single(ctx, tx, "MATCH (s:Session {id: $sid}) RETURN s", map[string]any{"sid": sessionID})
		if err != nil {
			return err
		}
		if rec == nil {
			return fmt.Errorf("session %q: %w", sessionID, graph.ErrNotFound)
		}
		p, err := nodeProps(rec.Values[0])
		if err != nil {
			return err
		}
		doc, err := p.emb("goal_doc_emb")
		if err != nil {
			return err
		}
		q, err := p.emb("goal_query_emb")
		if err != nil {
			return err
		}
		out = graph.Session{ID: sessionID, Goal: p.str("goal"), GoalDocEmb: doc, GoalQueryEmb: q, Dim: p.int("dim")}
		return nil
	})
	return out, err
}

// taskReturn returns the matched tasks (t) as one record: a list of
// [node, parent id, dependency ids] rows. The driver reads each record of
// a result as a Bolt message of its own, at 15 to 20 µs a record whatever
// it carries: the long benchmark's 390 tasks took 8 to 12 ms as rows and
// 5 to 6 as one list, ids alone 6 to 10 ms against 1.5 (docs/neo4j.md,
// "Task reads as one record").
const taskReturn = `RETURN collect([t, ` + taskEdgeCols + `])`

// taskEdgeCols are a task row's columns after the node: its parent's id
// and its dependencies' ids.
const taskEdgeCols = `[(t)-[:SUBTASK_OF]->(p:Task) | p.id], [(t)-[:DEPENDS_ON]->(d:Task) | d.id]`

// taskRecord decodes a task row: the task node (or a projection of it),
// its parent's id and its dependencies' ids.
func taskRecord(r *driver.Record) (graph.Task, error) {
	p, err := nodeProps(r.Values[0])
	if err != nil {
		return graph.Task{}, err
	}
	t, err := taskFrom(p, r.Values[1], r.Values[2])
	if err != nil {
		return graph.Task{}, fmt.Errorf("decode task %q: %w", p.str("id"), err)
	}
	return t, nil
}

// loadTasks reads the session's tasks matched by `match` (which binds t)
// in Tasks order.
func loadTasks(ctx context.Context, tx driver.ManagedTransaction, match string, params map[string]any) ([]graph.Task, error) {
	return taskRows(ctx, tx, match+"\n"+taskReturn, params)
}

// taskRows runs a statement that returns its task rows as one list
// (taskReturn) and returns its tasks in Tasks order.
func taskRows(ctx context.Context, tx driver.ManagedTransaction, q string, params map[string]any) ([]graph.Task, error) {
	var ts []graph.Task
	err := eachPacked(ctx, tx, q, params, func(r *driver.Record) error {
		t, err := taskRecord(r)
		if err != nil {
			return err
		}
		ts = append(ts, t)
		return nil
	})
	if err != nil {
		return nil, err
	}
	graph.SortTasks(ts)
	return ts, nil
}

func allTasks(ctx context.Context, tx driver.ManagedTransaction, sessionID string) ([]graph.Task, error) {
	return loadTasks(ctx, tx, "MATCH (t:Task {session_id: $sid})", map[string]any{"sid": sessionID})
}

// tasksForApply loads the session's tasks as PlanApply needs them for req
// (graph.ApplyReads): whole the named ones and those a create may be
// deduplicated onto, and, when the request may close a cycle, every other
// task without its embeddings. The dedup candidates are found here, from
// every task's embedding read as one record. Apply read every task whole
// as rows when a create could be deduplicated: 16 to 30 ms at the long
// benchmark's 390 tasks (docs/neo4j.md, "Apply reads what it plans with").
func tasksForApply(ctx context.Context, tx driver.ManagedTransaction, req graph.ApplyRequest) ([]graph.Task, error) {
	reads := graph.ReadsFor(req)
	whole := slices.Clone(reads.Named)
	var shapes []graph.Task
	if reads.All || len(reads.Dedup) > 0 {
		others, err := otherTasks(ctx, tx, req.SessionID, reads)
		if err != nil {
			return nil, err
		}
		for _, t := range others {
			if reads.Whole(t) {
				whole = append(whole, t.ShortID)
				continue
			}
			if reads.All {
				t.Embedding = nil
				shapes = append(shapes, t)
			}
		}
	}
	ids := make([]any, len(whole))
	for i, short := range whole {
		ids[i] = short
	}
	ts, err := loadTasks(ctx, tx, "MATCH (t:Task) WHERE t.session_id = $sid AND t.short_id IN $ids",
		map[string]any{"sid": req.SessionID, "ids": ids})
	if err != nil {
		return nil, err
	}
	ts = append(ts, shapes...)
	graph.SortTasks(ts)
	return ts, nil
}

// otherTasks is the session's tasks that reads does not name, each with
// its embedding when reads has creates to deduplicate, and in the shape
// PlanApply sees (parent, dependencies, no result embedding) when it
// reads every task.
func otherTasks(ctx context.Context, tx driver.ManagedTransaction, sessionID string, reads graph.ApplyReads) ([]graph.Task, error) {
	named := make([]any, len(reads.Named))
	for i, short := range reads.Named {
		named[i] = short
	}
	var out []graph.Task
	err := eachPacked(ctx, tx, `MATCH (t:Task {session_id: $sid}) WHERE NOT t.short_id IN $named
RETURN collect([CASE WHEN $all THEN `+taskShape()+` ELSE t {.id, .short_id} END, `+taskEdgeCols+`, CASE WHEN $dedup THEN t.embedding END])`,
		map[string]any{"sid": sessionID, "named": named, "all": reads.All, "dedup": len(reads.Dedup) > 0},
		func(r *driver.Record) error {
			t, err := taskRecord(r)
			if err != nil {
				return err
			}
			if t.Embedding, err = asF32(r.Values[3]); err != nil {
				return fmt.Errorf("decode task %q: %w", t.ShortID, err)
			}
			out = append(out, t)
			return nil
		})
	return out, err
}

// heldEvidence is the content hashes of req's evidence ops that the
// session holds already, read in one statement: PlanApply's lookups were a
// round trip each, an Apply of ten claims ten of them.
func heldEvidence(ctx context.Context, tx driver.ManagedTransaction, req graph.ApplyRequest) (map[string]bool, error) {
	hashOf := map[string]string{}
	var ids []any
	for _, op := range req.Ops {
		if op.Kind != graph.OpEvidence || strings.TrimSpace(op.Content) == "" {
			continue
		}
		h := graph.ContentHash(op.Content)
		id := graph.EvidenceID(req.SessionID, h)
		if _, ok := hashOf[id]; !ok {
			hashOf[id] = h
			ids = append(ids, id)
		}
	}
	held := map[string]bool{}
	if len(ids) == 0 {
		return held, nil
	}
	err := each(ctx, tx, "UNWIND $ids AS id MATCH (e:Evidence {id: id}) WHERE e.session_id = $sid RETURN e.id",
		map[string]any{"ids": ids, "sid": req.SessionID}, func(r *driver.Record) error {
			id, _ := r.Values[0].(string)
			held[hashOf[id]] = true
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("evidence lookup: %w", err)
	}
	return held, nil
}

// taskShape projects a task node without its embeddings: every property
// taskProps writes but those two, so that a property added there is read
// here too.
func taskShape() string {
	var keys []string
	for k := range taskProps(graph.Task{}) {
		if k != "embedding" && k != "result_embedding" {
			keys = append(keys, "."+k)
		}
	}
	slices.Sort(keys)
	return "t {" + strings.Join(keys, ", ") + "}"
}

// Tasks returns the session's tasks ordered by (CreatedIter, ShortID).
func (s *Store) Tasks(ctx context.Context, sessionID string) ([]graph.Task, error) {
	var out []graph.Task
	err := s.read(ctx, "tasks", func(ctx context.Context, tx driver.ManagedTransaction) error {
		var err error
		if out, err = allTasks(ctx, tx, sessionID); err != nil {
			return err
		}
		return requireSessionUnless(ctx, tx, sessionID, len(out) > 0)
	})
	return out, err
}

// ReadySet returns the PENDING tasks whose prerequisites are all DONE; the
// gating runs in the server, on the (session_id, status) index.
func (s *Store) ReadySet(ctx context.Context, sessionID string) ([]graph.Task, error) {
	var out []graph.Task
	err := s.read(ctx, "ready set", func(ctx context.Context, tx driver.ManagedTransaction) error {
		var err error
		out, err = loadTasks(ctx, tx, `MATCH (t:Task {session_id: $sid, status: 'PENDING'})
WHERE NOT EXISTS { MATCH (t)-[:DEPENDS_ON]->(d:Task) WHERE d.status <> 'DONE' }`, map[string]any{"sid": sessionID})
		if err != nil {
			return err
		}
		return requireSessionUnless(ctx, tx, sessionID, len(out) > 0)
	})
	return out, err
}

// getTask returns one task of the session (ErrNotFound if absent).
func getTask(ctx context.Context, tx driver.ManagedTransaction, sessionID, shortID string) (graph.Task, error) {
	if shortID == "" {
		return graph.Task{}, errors.New("empty task short id")
	}
	ts, err := loadTasks(ctx, tx, "MATCH (t:Task {id: $id}) WHERE t.session_id = $sid",
		map[string]any{"id": graph.TaskID(sessionID, shortID), "sid": sessionID})
	if err != nil {
		return graph.Task{}, err
	}
	if len(ts) == 0 {
		return graph.Task{}, fmt.Errorf("task %q: %w", shortID, graph.ErrNotFound)
	}
	return ts[0], nil
}

// SetStatus moves a task to `to` if its status is in `from` (empty: any but
// FAILED).
func (s *Store) SetStatus(ctx context.Context, sessionID, shortID string, from []graph.Status, to graph.Status) (bool, error) {
	changed := false
	err := s.write(ctx, "set status", func(ctx context.Context, tx driver.ManagedTransaction) error {
		changed = false
		if !to.Valid() {
			return fmt.Errorf("invalid status %q", to)
		}
		if err := lockSession(ctx, tx, sessionID); err != nil {
			return err
		}
		t, err := getTask(ctx, tx, sessionID, shortID)
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
		if err := run(ctx, tx, "MATCH (t:Task {id: $id}) SET t.status = $to", map[string]any{"id": t.ID, "to": string(to)}); err != nil {
			return err
		}
		changed = true
		return nil
	})
	if err != nil {
		return false, err
	}
	return changed, nil
}

// SetResultEmbedding fills a task's result embedding.
func (s *Store) SetResultEmbedding(ctx context.Context, sessionID, shortID string, emb []float32) error {
	return s.write(ctx, "set result embedding", func(ctx context.Context, tx driver.ManagedTransaction) error {
		if err := lockSession(ctx, tx, sessionID); err != nil {
			return err
		}
		t, err := getTask(ctx, tx, sessionID, shortID)
		if err != nil {
			return err
		}
		if t.Status == graph.Failed {
			return fmt.Errorf("task %q: %w", shortID, graph.ErrImmutable)
		}
		return run(ctx, tx, "MATCH (t:Task {id: $id}) SET t.result_embedding = $emb", map[string]any{"id": t.ID, "emb": packF32(emb)})
	})
}

const (
	appliedApply    = "apply:"
	appliedEvidence = "evidence:"
)

// recorded reads the idempotency record of key into v; it reports whether
// there was one.
func recorded(ctx context.Context, tx driver.ManagedTransaction, sessionID, key string, v any) (bool, error) {
	rec, err := single(ctx, tx, "MATCH (a:AppliedKey {session_id: $sid, key: $key}) RETURN a.result",
		map[string]any{"sid": sessionID, "key": key})
	if err != nil || rec == nil {
		return false, err
	}
	raw, _ := rec.Values[0].(string)
	if err := json.Unmarshal([]byte(raw), v); err != nil {
		return false, fmt.Errorf("decode applied %q: %w", key, err)
	}
	return true, nil
}

func record(ctx context.Context, tx driver.ManagedTransaction, sessionID, key string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return run(ctx, tx, "CREATE (a:AppliedKey {session_id: $sid, key: $key, result: $result})",
		map[string]any{"sid": sessionID, "key": key, "result": string(data)})
}

// Apply runs one iteration's ops in one write transaction: read the tasks,
// graph.PlanApply, write the plan, record the key.
func (s *Store) Apply(ctx context.Context, req graph.ApplyRequest) (graph.ApplyResult, error) {
	var res graph.ApplyResult
	err := s.write(ctx, "apply", func(ctx context.Context, tx driver.ManagedTransaction) error {
		res = graph.ApplyResult{}
		if err := lockSession(ctx, tx, req.SessionID); err != nil {
			return err
		}
		akey := appliedApply + req.Key
		if req.Key != "" {
			ok, err := recorded(ctx, tx, req.SessionID, akey, &res)
			if err != nil {
				return err
			}
			if ok {
				res.Replayed = true
				return nil
			}
		}
		ts, err := tasksForApply(ctx, tx, req)
		if err != nil {
			return err
		}
		held, err := heldEvidence(ctx, tx, req)
		if err != nil {
			return err
		}
		plan, err := graph.PlanApply(ts, func(h string) (bool, error) { return held[h], nil }, req)
		if err != nil {
			return err
		}
		if err := writeTasks(ctx, tx, plan.Tasks); err != nil {
			return err
		}
		if err := insertEvidence(ctx, tx, req.SessionID, plan.Evidence); err != nil {
			return err
		}
		res = plan.Result
		if req.Key != "" {
			return record(ctx, tx, req.SessionID, akey, res)
		}
		return nil
	})
	if err != nil {
		return graph.ApplyResult{}, err
	}
	return res, nil
}

// writeTasks stores the full new state of created or modified tasks,
// including their SUBTASK_OF and DEPENDS_ON edges.
func writeTasks(ctx context.Context, tx driver.ManagedTransaction, ts []graph.Task) error {
	if len(ts) == 0 {
		return nil
	}
	rows := make([]any, len(ts))
	for i, t := range ts {
		deps := make([]any, len(t.DependsOn))
		for k, d := range t.DependsOn {
			deps[k] = d
		}
		rows[i] = map[string]any{"id": t.ID, "props": taskProps(t), "parent": optString(t.Parent), "deps": deps}
	}
	return run(ctx, tx, writeTaskRows, map[string]any{"rows": rows})
}

// writeTaskRows writes tasks and their SUBTASK_OF and DEPENDS_ON edges in
// one statement (it was five, a round trip each in every Apply that
// creates or changes a task). The collect between the nodes and the
// edges makes every node exist before any edge is drawn: parents and
// prerequisites may be created in this write. Each row then changes
// only its own task's outgoing edges, so doing the rows one after another
// is the same as each step for all rows.
const writeTaskRows = `UNWIND $rows AS row
MERGE (t:Task {id: row.id}) SET t += row.props
WITH collect(row) AS rows
UNWIND rows AS row
MATCH (t:Task {id: row.id})
CALL {
  WITH t, row
  OPTIONAL MATCH (t)-[r:SUBTASK_OF]->(p:Task) WHERE row.parent IS NULL OR p.id <> row.parent
  DELETE r
}
CALL {
  WITH t, row
  OPTIONAL MATCH (t)-[r:DEPENDS_ON]->(d:Task) WHERE NOT d.id IN row.deps
  DELETE r
}
CALL {
  WITH t, row
  MATCH (p:Task {id: row.parent})
  MERGE (t)-[:SUBTASK_OF]->(p)
}
CALL {
  WITH t, row
  UNWIND row.deps AS dep
  MATCH (d:Task {id: dep})
  MERGE (t)-[:DEPENDS_ON]->(d)
}`

// insertEvidence creates evidence nodes (known to be new) with their
// SUPPORTS edges, and adds them to the session's counter (evidenceCount).
func insertEvidence(ctx context.Context, tx driver.ManagedTransaction, sessionID string, es []graph.Evidence) error {
	if len(es) == 0 {
		return nil
	}
	rows := make([]any, len(es))
	for i, e := range es {
		rows[i] = map[string]any{"task": e.TaskID, "props": evidenceProps(e)}
	}
	rec, err := single(ctx, tx, `UNWIND $rows AS row
MATCH (t:Task {id: row.task})
CREATE (e:Evidence:`+pendingLabel+`) SET e = row.props
CREATE (e)-[:SUPPORTS]->(t)
RETURN count(e)`, map[string]any{"rows": rows})
	if err != nil {
		return err
	}
	if n, _ := rec.Values[0].(int64); int(n) != len(es) {
		return fmt.Errorf("inserted %d of %d evidence items (SUPPORTS target missing)", n, len(es))
	}
	// A session without the counter (created by an older binary) keeps
	// none until a full sync recounts it: null + n is null.
	return run(ctx, tx, "MATCH (s:Session {id: $sid}) SET s.evidence_n = s.evidence_n + $n",
		map[string]any{"sid": sessionID, "n": int64(len(es))})
}

// linkEvidence adds SUPPORTS edges from held evidence (ids) to a task that
// they do not support yet; seq is the number of SUPPORTS edges the node had.
func linkEvidence(ctx context.Context, tx driver.ManagedTransaction, taskID string, ids []any) error {
	if len(ids) == 0 {
		return nil
	}
	rec, err := single(ctx, tx, `UNWIND $ids AS id
MATCH (e:Evidence {id: id}), (t:Task {id: $tid})
WITH e, t, COUNT { (e)-[:SUPPORTS]->() } AS n
CREATE (e)-[:SUPPORTS {seq: n}]->(t)
RETURN count(*)`, map[string]any{"ids": ids, "tid": taskID})
	if err != nil {
		return err
	}
	if n, _ := rec.Values[0].(int64); int(n) != len(ids) {
		return fmt.Errorf("linked %d of %d evidence items", n, len(ids))
	}
	return nil
}

// AddEvidence stores evidence for a task; content the session holds for
// other tasks only gets a SUPPORTS edge to this task (numbered by seq, so
// that Also keeps link order), and content already supporting it, or
// repeated within the call, is skipped.
func (s *Store) AddEvidence(ctx context.Context, sessionID, key, taskShortID string, items []graph.Evidence) (graph.AddEvidenceResult, error) {
	var res graph.AddEvidenceResult
	err := s.write(ctx, "add evidence", func(ctx context.Context, tx driver.ManagedTransaction) error {
		res = graph.AddEvidenceResult{}
		if err := lockSession(ctx, tx, sessionID); err != nil {
			return err
		}
		akey := appliedEvidence + key
		if key != "" {
			ok, err := recorded(ctx, tx, sessionID, akey, &res)
			if err != nil {
				return err
			}
			if ok {
				res.Replayed = true
				return nil
			}
		}
		task, err := getTask(ctx, tx, sessionID, taskShortID)
		if err != nil {
			return err
		}
		prepared := make([]graph.Evidence, 0, len(items))
		ids := make([]any, 0, len(items))
		for i, it := range items {
			e, err := graph.PrepareEvidence(sessionID, task.ID, it)
			if err != nil {
				return fmt.Errorf("item %d: %w", i, err)
			}
			prepared = append(prepared, e)
			ids = append(ids, e.ID)
		}
		held, mine := map[string]bool{}, map[string]bool{}
		if len(ids) > 0 {
			err := each(ctx, tx, `UNWIND $ids AS id MATCH (e:Evidence {id: id})
RETURN e.id, EXISTS { (e)-[:SUPPORTS]->(:Task {id: $tid}) }`,
				map[string]any{"ids": ids, "tid": task.ID}, func(r *driver.Record) error {
					id, _ := r.Values[0].(string)
					supports, _ := r.Values[1].(bool)
					held[id], mine[id] = true, supports
					return nil
				})
			if err != nil {
				return err
			}
		}
		var fresh []graph.Evidence
		var link []any
		for _, e := range prepared {
			switch {
			case mine[e.ID]:
				res.Duplicates++
			case held[e.ID]:
				mine[e.ID] = true
				link = append(link, e.ID)
				res.Linked++
			default:
				held[e.ID], mine[e.ID] = true, true
				fresh = append(fresh, e)
				res.Added++
			}
		}
		if err := insertEvidence(ctx, tx, sessionID, fresh); err != nil {
			return err
		}
		if err := linkEvidence(ctx, tx, task.ID, link); err != nil {
			return err
		}
		if key != "" {
			return record(ctx, tx, sessionID, akey, res)
		}
		return nil
	})
	if err != nil {
		return graph.AddEvidenceResult{}, err
	}
	return res, nil
}

// Evidence streams the session's evidence (optionally one task's) and
// returns it ordered by (CreatedIter, ID).
func (s *Store) Evidence(ctx context.Context, sessionID, taskShortID string) ([]graph.Evidence, error) {
	var out []graph.Evidence
	err := s.read(ctx, "evidence", func(ctx context.Context, tx driver.ManagedTransaction) error {
		out = nil
		if err := requireSession(ctx, tx, sessionID); err != nil {
			return err
		}
		// Every SUPPORTS target of each node, the first one (no seq) first.
		const targets = `MATCH (e)-[s:SUPPORTS]->(t:Task)
WITH e, t ORDER BY coalesce(s.seq, 0), t.id
RETURN ` + evidenceWire + `, collect(t.id)`
		q := "MATCH (e:Evidence {session_id: $sid})\n" + targets
		p := map[string]any{"sid": sessionID}
		if taskShortID != "" {
			if _, err := getTask(ctx, tx, sessionID, taskShortID); err != nil {
				return err
			}
			q = "MATCH (e:Evidence)-[:SUPPORTS]->(:Task {id: $tid}) WHERE e.session_id = $sid\n" + targets
			p["tid"] = graph.TaskID(sessionID, taskShortID)
		}
		return each(ctx, tx, q, p, func(r *driver.Record) error {
			e, err := evidenceRecord(r)
			if err != nil {
				return err
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

// missingEvidence returns the first of ids that is not evidence of the
// session, or "".
func missingEvidence(ctx context.Context, tx driver.ManagedTransaction, sessionID string, ids []string) (string, error) {
	if len(ids) == 0 {
		return "", nil
	}
	list := make([]any, len(ids))
	for i, id := range ids {
		list[i] = id
	}
	var missing string
	err := each(ctx, tx, `UNWIND range(0, size($ids) - 1) AS i
OPTIONAL MATCH (e:Evidence {id: $ids[i]}) WHERE e.session_id = $sid
WITH i, e WHERE e IS NULL
RETURN $ids[i] ORDER BY i LIMIT 1`, map[string]any{"ids": list, "sid": sessionID}, func(r *driver.Record) error {
		missing, _ = r.Values[0].(string)
		return nil
	})
	return missing, err
}

// SetStrengths updates evidence strengths by evidence id; an unknown id
// fails the whole call.
func (s *Store) SetStrengths(ctx context.Context, sessionID string, strengths map[string]float64) error {
	return s.write(ctx, "set strengths", func(ctx context.Context, tx driver.ManagedTransaction) error {
		if err := lockSession(ctx, tx, sessionID); err != nil {
			return err
		}
		return setStrengths(ctx, tx, sessionID, strengths)
	})
}

func setStrengths(ctx context.Context, tx driver.ManagedTransaction, sessionID string, strengths map[string]float64) error {
	ids := make([]string, 0, len(strengths))
	for id := range strengths {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	rows := make([]any, 0, len(ids))
	for _, id := range ids {
		v := strengths[id]
		if !finite(v) {
			return fmt.Errorf("evidence %q: strength %v", id, v)
		}
		rows = append(rows, map[string]any{"id": id, "s": v})
	}
	missing, err := missingEvidence(ctx, tx, sessionID, ids)
	if err != nil {
		return err
	}
	if missing != "" {
		return fmt.Errorf("evidence %q: %w", missing, graph.ErrNotFound)
	}
	if len(rows) == 0 {
		return nil
	}
	return run(ctx, tx, "UNWIND $rows AS row MATCH (e:Evidence {id: row.id}) SET e.strength = row.s",
		map[string]any{"rows": rows})
}

// Edges streams every edge of the session and returns them in
// graph.SortEdges order.
func (s *Store) Edges(ctx context.Context, sessionID string) ([]graph.Edge, error) {
	var out []graph.Edge
	err := s.read(ctx, "edges", func(ctx context.Context, tx driver.ManagedTransaction) error {
		out = nil
		if err := requireSession(ctx, tx, sessionID); err != nil {
			return err
		}
		return each(ctx, tx, `MATCH (a:Task {session_id: $sid})-[r:SUBTASK_OF|DEPENDS_ON]->(b:Task)
RETURN a.id AS from, b.id AS to, type(r) AS kind, null AS weight, null AS label
UNION ALL
MATCH (a:Evidence {session_id: $sid})-[r:SUPPORTS]->(b:Task)
RETURN a.id AS from, b.id AS to, type(r) AS kind, null AS weight, null AS label
UNION ALL
MATCH (a:Evidence {session_id: $sid})-[r:SIMILAR_TO]->(b:Evidence)
RETURN a.id AS from, b.id AS to, type(r) AS kind, r.weight AS weight, r.label AS label`,
			map[string]any{"sid": sessionID}, func(r *driver.Record) error {
				e := graph.Edge{}
				e.From, _ = r.Values[0].(string)
				e.To, _ = r.Values[1].(string)
				k, _ := r.Values[2].(string)
				e.Kind = graph.EdgeKind(k)
				e.Weight, _ = r.Values[3].(float64)
				e.Label, _ = r.Values[4].(string)
				out = append(out, e)
				return nil
			})
	})
	if err != nil {
		return nil, err
	}
	graph.SortEdges(out)
	return out, nil
}

// ReplaceSimilar deletes the SIMILAR_TO edges with both endpoints in scope
// and stores the given edges, whose endpoints must be evidence in scope.
func (s *Store) ReplaceSimilar(ctx context.Context, sessionID string, scope []string, edges []graph.Edge) error {
	return s.write(ctx, "replace similar", func(ctx context.Context, tx driver.ManagedTransaction) error {
		if err := lockSession(ctx, tx, sessionID); err != nil {
			return err
		}
		return replaceSimilar(ctx, tx, sessionID, scope, edges)
	})
}

func replaceSimilar(ctx context.Context, tx driver.ManagedTransaction, sessionID string, scope []string, edges []graph.Edge) error {
	missing, err := missingEvidence(ctx, tx, sessionID, scope)
	if err != nil {
		return err
	}
	if missing != "" {
		return fmt.Errorf("scope evidence %q: %w", missing, graph.ErrNotFound)
	}
	in := make(map[string]bool, len(scope))
	for _, id := range scope {
		in[id] = true
	}
	type pair struct{ a, b string }
	last := map[pair]int{}
	var rows []map[string]any
	for i, e := range edges {
		if e.Kind != "" && e.Kind != graph.SimilarTo {
			return fmt.Errorf("edge %d: kind %s is not %s", i, e.Kind, graph.SimilarTo)
		}
		if !in[e.From] || !in[e.To] {
			return fmt.Errorf("edge %d (%s -> %s): endpoints must be evidence in scope: %w", i, e.From, e.To, graph.ErrNotFound)
		}
		a, b := e.From, e.To
		if a == b {
			continue // no self loops
		}
		if a > b {
			a, b = b, a
		}
		row := map[string]any{"from": a, "to": b, "w": e.Weight, "label": optString(e.Label)}
		if k, ok := last[pair{a, b}]; ok {
			rows[k] = row // a repeated pair keeps the last
			continue
		}
		last[pair{a, b}] = len(rows)
		rows = append(rows, row)
	}
	scopeList := make([]any, len(scope))
	for i, id := range scope {
		scopeList[i] = id
	}
	if len(scopeList) > 0 {
		err := run(ctx, tx, `UNWIND $scope AS id
MATCH (a:Evidence {id: id})-[r:SIMILAR_TO]->(b:Evidence)
WHERE b.id IN $scope DELETE r`, map[string]any{"scope": scopeList})
		if err != nil {
			return err
		}
	}
	if len(rows) == 0 {
		return nil
	}
	list := make([]any, len(rows))
	for i, r := range rows {
		list[i] = r
	}
	return run(ctx, tx, `UNWIND $rows AS row
MATCH (a:Evidence {id: row.from}), (b:Evidence {id: row.to})
CREATE (a)-[r:SIMILAR_TO]->(b) SET r.weight = row.w, r.label = row.label`, map[string]any{"rows": list})
}

// PutBlob stores (overwrites) a per-session document as a byte array
// property.
func (s *Store) PutBlob(ctx context.Context, sessionID, key string, data []byte) error {
	return s.write(ctx, "put blob", func(ctx context.Context, tx driver.ManagedTransaction) error {
		if err := lockSession(ctx, tx, sessionID); err != nil {
			return err
		}
		if key == "" {
			return errors.New("empty blob key")
		}
		if data == nil {
			data = []byte{}
		}
		return run(ctx, tx, "MERGE (b:Blob {session_id: $sid, key: $key}) SET b.data = $data",
			map[string]any{"sid": sessionID, "key": key, "data": data})
	})
}

// PutBlobs stores (overwrites) several documents in one transaction.
func (s *Store) PutBlobs(ctx context.Context, sessionID string, blobs map[string][]byte) error {
	rows, err := blobRows(blobs)
	if err != nil {
		return err
	}
	return s.write(ctx, "put blobs", func(ctx context.Context, tx driver.ManagedTransaction) error {
		if err := lockSession(ctx, tx, sessionID); err != nil {
			return err
		}
		return putBlobs(ctx, tx, sessionID, rows)
	})
}

func blobRows(blobs map[string][]byte) ([]any, error) {
	rows := make([]any, 0, len(blobs))
	for k, data := range blobs {
		if k == "" {
			return nil, errors.New("empty blob key")
		}
		if data == nil {
			data = []byte{}
		}
		rows = append(rows, map[string]any{"key": k, "data": data})
	}
	return rows, nil
}

func putBlobs(ctx context.Context, tx driver.ManagedTransaction, sessionID string, rows []any) error {
	if len(rows) == 0 {
		return nil
	}
	return run(ctx, tx, "UNWIND $rows AS r MERGE (b:Blob {session_id: $sid, key: r.key}) SET b.data = r.data",
		map[string]any{"sid": sessionID, "rows": rows})
}

// Commit performs w in one transaction: one commit and one round trip of
// the driver's retry loop instead of one per write.
func (s *Store) Commit(ctx context.Context, sessionID string, w graph.Writes) error {
	if err := w.Check(); err != nil {
		return fmt.Errorf("neo4j commit: %w", err)
	}
	rows, err := blobRows(w.Blobs)
	if err != nil {
		return err
	}
	return s.write(ctx, "commit", func(ctx context.Context, tx driver.ManagedTransaction) error {
		if err := lockSession(ctx, tx, sessionID); err != nil {
			return err
		}
		if len(w.SimilarScope) > 0 || len(w.Similar) > 0 {
			if err := replaceSimilar(ctx, tx, sessionID, w.SimilarScope, w.Similar); err != nil {
				return err
			}
		}
		if len(w.Strengths) > 0 {
			if err := setStrengths(ctx, tx, sessionID, w.Strengths); err != nil {
				return err
			}
		}
		if w.ResetPairs || len(w.Pairs) > 0 {
			if err := writePairs(ctx, tx, sessionID, w.ResetPairs, w.Pairs); err != nil {
				return err
			}
		}
		if w.RecountEvidence {
			if err := run(ctx, tx, recountEvidence, map[string]any{"sid": sessionID}); err != nil {
				return err
			}
		}
		if err := putBlobs(ctx, tx, sessionID, rows); err != nil {
			return err
		}
		if len(w.DeleteBlobs) == 0 {
			return nil
		}
		return run(ctx, tx, "UNWIND $keys AS k MATCH (b:Blob {session_id: $sid, key: k}) DELETE b",
			map[string]any{"sid": sessionID, "keys": w.DeleteBlobs})
	})
}

// GetBlobs returns the named documents that exist.
func (s *Store) GetBlobs(ctx context.Context, sessionID string, keys []string) (map[string][]byte, error) {
	out := map[string][]byte{}
	err := s.read(ctx, "get blobs", func(ctx context.Context, tx driver.ManagedTransaction) error {
		clear(out)
		err := each(ctx, tx, "MATCH (b:Blob {session_id: $sid}) WHERE b.key IN $keys RETURN b.key, b.data",
			map[string]any{"sid": sessionID, "keys": keys}, func(r *driver.Record) error {
				k, _ := r.Values[0].(string)
				data, err := blobBytes(k, r.Values[1])
				out[k] = data
				return err
			})
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

// blobBytes is a Blob node's data: bytes, or an empty list or null for an
// empty document.
func blobBytes(key string, v any) ([]byte, error) {
	switch v := v.(type) {
	case []byte:
		return v, nil
	case []any: // an empty list has no element type
		if len(v) != 0 {
			return nil, fmt.Errorf("blob %q: data is a list, not bytes", key)
		}
		return []byte{}, nil
	case nil:
		return []byte{}, nil
	default:
		return nil, fmt.Errorf("blob %q: data is %T, not bytes", key, v)
	}
}

// GetBlob returns a per-session document, or ErrNotFound.
func (s *Store) GetBlob(ctx context.Context, sessionID, key string) ([]byte, error) {
	var out []byte
	err := s.read(ctx, "get blob", func(ctx context.Context, tx driver.ManagedTransaction) error {
		out = nil
		rec, err := single(ctx, tx, "MATCH (b:Blob {session_id: $sid, key: $key}) RETURN b.data",
			map[string]any{"sid": sessionID, "key": key})
		if err != nil {
			return err
		}
		if rec == nil {
			if err := requireSession(ctx, tx, sessionID); err != nil {
				return err
			}
			return fmt.Errorf("blob %q: %w", key, graph.ErrNotFound)
		}
		out, err = blobBytes(key, rec.Values[0])
		return err
	})
	return out, err
}

func sortedStrings(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	slices.Sort(s)
	return s
}

// EvidenceCounts counts SUPPORTS edges per task from the task side, with
// the degree store (no evidence property is read; lane payloads, #14):
// 2 to 2.5 ms for 332 tasks at 100k items.
func (s *Store) EvidenceCounts(ctx context.Context, sessionID string) (map[string]int, error) {
	var per map[string]int
	err := s.read(ctx, "evidence counts", func(ctx context.Context, tx driver.ManagedTransaction) error {
		per = map[string]int{}
		err := eachPacked(ctx, tx, `MATCH (t:Task {session_id: $sid})
WITH t, COUNT { (t)<-[:SUPPORTS]-() } AS n WHERE n > 0
RETURN collect([t.short_id, n])`, map[string]any{"sid": sessionID}, func(r *driver.Record) error {
			id, _ := r.Values[0].(string)
			n, _ := r.Values[1].(int64)
			per[id] = int(n)
			return nil
		})
		if err != nil {
			return err
		}
		return requireSessionUnless(ctx, tx, sessionID, len(per) > 0)
	})
	if err != nil {
		return nil, err
	}
	return per, nil
}
