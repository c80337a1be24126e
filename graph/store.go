package graph

import (
	"context"
	"errors"
	"fmt"

	"github.com/lethe-research/lethe/contract"
)

// ErrNotFound is returned when a session, task or blob does not exist.
var ErrNotFound = errors.New("graph: not found")

// ErrImmutable is returned when a write targets a FAILED task.
var ErrImmutable = errors.New("graph: task is FAILED and immutable")

// ErrNoPairs is SimilarPairsOf's answer from a store that does not keep
// the sync's pairs (Store.KeepsPairs), and Commit's to Writes.Pairs there.
var ErrNoPairs = errors.New("graph: the store keeps no SIMILAR_TO pairs")

// OpKind names a graph mutation. They mirror the DIN-Write operations that
// change the graph; tool calls never reach the store.
type OpKind string

const (
	OpCreate   OpKind = "create"
	OpUpdate   OpKind = "update"
	OpDepend   OpKind = "depend"
	OpComplete OpKind = "complete"
	OpFail     OpKind = "fail"
	OpContinue OpKind = "continue"
	OpEvidence OpKind = "evidence"
)

// Op is one validated mutation with its embedding already computed.
// Task fields hold short ids; the store resolves them within the session.
type Op struct {
	Kind        OpKind
	Task        string    // target short id (create: the new short id)
	Description string    // create, update
	EmbedText   string    // create, update, complete, evidence
	Embedding   []float32 // embedding of EmbedText
	Parent      string    // create: parent short id ("" = the request's active task)
	DependsOn   []string  // create: prerequisite short ids
	On          string    // depend: prerequisite short id
	Result      string    // complete
	Reason      string    // fail
	Content     string    // evidence
	Source      string    // evidence: optional source URL
}

// ApplyRequest is one Tx2 write: all ops of one iteration, atomically.
type ApplyRequest struct {
	SessionID      string
	Key            string // idempotency key, e.g. "apply/7"; a second Apply with the same key returns the first result
	Iteration      int
	ActiveTask     string // short id of the task selected this iteration
	Ops            []Op
	DedupThreshold float64 // a create whose embedding has cosine > this with an existing task maps onto it; <= 0 disables dedup
	// EvidenceStrength is the strength of evidence written by an evidence op
	// (the session's research.llm_evidence_strength); <= 0 means
	// LLMEvidenceStrength.
	EvidenceStrength float64
}

// ApplyResult says what a write did; the workflow reads it, so it lives in
// contract.
type ApplyResult = contract.ApplyResult

// A rolled-back result has Applied == 0, Evidence == 0 and no Created or
// Mapped entries: nothing of the write is visible.

// AddEvidenceResult says what an evidence ingest did.
type AddEvidenceResult struct {
	Added      int // new evidence nodes
	Linked     int // content the session held for other tasks, now also supporting this one
	Duplicates int // content already supporting this task, or repeated in the call
	Replayed   bool
}

// Store is the graph memory of every session. Every method is scoped to one
// session; sessions never see each other's nodes. Writes are idempotent: a
// call repeated after it committed (an activity retried) changes nothing.
//
// Common rules (checked by graphtest):
//   - every method but CreateSession and ResetSession returns an error
//     wrapping ErrNotFound for a session that does not exist, and so do the
//     methods naming a task, evidence id or blob that does not exist;
//   - idempotency keys are scoped per session and per method (an Apply key
//     and an AddEvidence key never collide); an empty key disables the
//     idempotency record;
//   - every write is atomic: on error nothing of it is visible;
//   - implementations are safe for concurrent use.
type Store interface {
	// Ping checks that the backend answers.
	Ping(ctx context.Context) error
	Close() error

	// ResetSession removes every node, edge, blob and idempotency record of
	// one session; other sessions are untouched. A missing session is no error.
	ResetSession(ctx context.Context, sessionID string) error
	// CreateSession stores the session node and its root task (short id
	// RootShortID, PENDING, depth 0). It is a no-op if the session exists.
	CreateSession(ctx context.Context, s Session, root Task) error
	GetSession(ctx context.Context, sessionID string) (Session, error)

	// Tasks returns all tasks of the session ordered by (CreatedIter, ShortID),
	// with Parent and DependsOn filled.
	Tasks(ctx context.Context, sessionID string) ([]Task, error)
	// ReadySet returns the PENDING tasks whose DEPENDS_ON targets are all DONE,
	// in the order of Tasks.
	ReadySet(ctx context.Context, sessionID string) ([]Task, error)
	// SetStatus moves a task to status `to` if its current status is one of
	// `from` (empty from = any but FAILED). Returns ErrImmutable for FAILED
	// tasks and reports whether the status changed.
	SetStatus(ctx context.Context, sessionID, shortID string, from []Status, to Status) (bool, error)
	// SetResultEmbedding fills a task's result embedding (finalize);
	// ErrImmutable for FAILED tasks.
	SetResultEmbedding(ctx context.Context, sessionID, shortID string, emb []float32) error

	// Apply runs one iteration's mutations in a single transaction: creates
	// (with semantic dedup), updates, depends, completes (n_productive of the
	// active task counts when at least one op applied), fails, continues and
	// LLM evidence; a cycle in SUBTASK_OF ∪ DEPENDS_ON rolls everything back.
	// The detailed rules are those of PlanApply. Ops naming a FAILED task
	// directly, or an unknown short id, make Apply return an error (wrapping
	// ErrImmutable / ErrNotFound) and write nothing, not even the key: the
	// caller validated the ops, so this is a bug, not a model mistake. A
	// cycle is a model mistake: the result (RolledBack) is recorded under
	// the key like any other, so a retry gets the same answer. A repeated
	// key returns the first result with Replayed set.
	Apply(ctx context.Context, req ApplyRequest) (ApplyResult, error)

	// AddEvidence persists evidence for a task (SUPPORTS edge). Content the
	// session already holds is not stored twice: when it supports other tasks
	// only, it gets a SUPPORTS edge to this task too (Linked; the node keeps
	// its first task as TaskID and lists this one in Also), and when it
	// supports this task already, or an earlier item of the call has the same
	// content, nothing changes (Duplicates). Items are
	// completed by PrepareEvidence (hash, id, kind). The task may have any
	// status, FAILED included (research started before the task failed is
	// kept). Idempotent per key: a repeated key returns the first result with
	// Replayed set.
	AddEvidence(ctx context.Context, sessionID, key, taskShortID string, items []Evidence) (AddEvidenceResult, error)
	// Evidence returns the session's evidence ordered by (CreatedIter, ID);
	// taskShortID != "" restricts it to the evidence with a SUPPORTS edge to
	// that task (as TaskID or in Also).
	Evidence(ctx context.Context, sessionID, taskShortID string) ([]Evidence, error)
	// EvidenceRows returns the session's evidence in Evidence order, each
	// item carrying ID, SessionID, ContentHash, Kind, Strength, Embedding
	// and CreatedIter only (no content, source, title or SUPPORTS
	// targets): what Observe's recompute from all evidence reads, without
	// decoding every content. Embeddings may be shared with the store's
	// caches: read-only.
	EvidenceRows(ctx context.Context, sessionID string) ([]Evidence, error)
	// SetStrengths updates evidence strengths by evidence id.
	SetStrengths(ctx context.Context, sessionID string, strengths map[string]float64) error

	// Edges returns every edge of the session: SUBTASK_OF (child -> parent),
	// DEPENDS_ON (task -> prerequisite), SUPPORTS (evidence -> task) and
	// SIMILAR_TO (From < To), in SortEdges order.
	Edges(ctx context.Context, sessionID string) ([]Edge, error)
	// ReplaceSimilar replaces the session's SIMILAR_TO edges among the given
	// evidence ids: edges with both endpoints in scope are deleted, the given
	// edges are stored (normalised to From < To, self loops dropped, a
	// repeated pair keeps the last). Edges touching evidence outside the
	// scope are kept. Every scope id and edge endpoint must be evidence of the
	// session, and endpoints must be in scope (else ErrNotFound).
	ReplaceSimilar(ctx context.Context, sessionID string, scope []string, edges []Edge) error

	// PutBlob and GetBlob keep small per-session documents (SVD basis of an
	// iteration, query history, staged pages). Put overwrites.
	PutBlob(ctx context.Context, sessionID, key string, data []byte) error
	GetBlob(ctx context.Context, sessionID, key string) ([]byte, error) // ErrNotFound if absent
	// GetBlobs reads several documents in one round trip; a missing key is
	// absent from the map (no error), a missing session is ErrNotFound.
	GetBlobs(ctx context.Context, sessionID string, keys []string) (map[string][]byte, error)
	// PutBlobs writes several documents in one transaction: all or none.
	PutBlobs(ctx context.Context, sessionID string, blobs map[string][]byte) error

	// Commit performs the writes of w in one transaction, all or none:
	// the SIMILAR_TO replacement as ReplaceSimilar, then the strengths as
	// SetStrengths, the blobs as PutBlobs and the deletions as DeleteBlob,
	// with their rules and errors. A sync and an observation each end in
	// one commit instead of three or two (docs/commits.md). A key both put
	// and deleted is an error; empty Writes write nothing (a missing
	// session is still ErrNotFound).
	Commit(ctx context.Context, sessionID string, w Writes) error

	// Lane observe (incremental signals, docs/incremental-signals.md).
	//
	// EvidenceSince returns the session's evidence with CreatedIter >= iter,
	// ordered like Evidence: what Observe has not folded into its running
	// aggregates yet, without reading the rest.
	EvidenceSince(ctx context.Context, sessionID string, iter int) ([]Evidence, error)
	// DeleteBlob removes a per-session document; a missing blob is no error
	// (pruning is repeated after a retry), a missing session is.
	DeleteBlob(ctx context.Context, sessionID, key string) error

	// Lane expand (#14): local reads for Expand's push PPR.

	// Neighbourhood returns one hop around the given node ids (task or
	// evidence ids): every edge with an endpoint among ids (any kind, any
	// direction, in SortEdges order), and the nodes of ids and of those
	// edges' other endpoints, with embeddings (tasks in Tasks order with
	// Parent and DependsOn filled, evidence in Evidence order with TaskID
	// and Also filled). Ids that are not nodes of the session are ignored
	// (a stale id reads nothing); a session that does not exist is
	// ErrNotFound.
	Neighbourhood(ctx context.Context, sessionID string, ids []string) (Neighbourhood, error)
	// NeighbourhoodShape is Neighbourhood reduced to what a walk over the
	// graph needs: the same nodes and edges, each evidence node carrying
	// ID, SessionID, Embedding, CreatedIter and ContentHash only (its
	// SUPPORTS targets are in Edges; TaskID, Also, Content, SourceURL,
	// Title, Kind and Strength are zero), and SIMILAR_TO edges without
	// Weight and Label (a walk weighs an edge by its endpoints'
	// embeddings). Expand's push reaches tens of thousands of nodes of a
	// large session and shows 64 of them, so it reads the records of those
	// with EvidenceByIDs. Embeddings may be shared with the store's
	// caches: read-only. known (nil: none) names the nodes the caller
	// holds already: they are left out of Tasks and Evidence (Edges still
	// name them). A push reads its frontier round after round, and two
	// thirds of the nodes a round reaches were returned by an earlier one;
	// on Neo4j each is an embedding of a few kilobytes on the wire.
	NeighbourhoodShape(ctx context.Context, sessionID string, ids []string, known func(id string) bool) (Neighbourhood, error)

	// Lane payloads (#14): reads that answer without loading evidence rows.

	// EvidenceCounts returns, per task short id, how many evidence nodes
	// have a SUPPORTS edge to the task (as TaskID or in Also). Tasks
	// without evidence are absent from the map. It reads no evidence
	// content or embedding. The session's total is EvidenceCount: an
	// evidence item may support several tasks, and on Neo4j the total
	// costs a count over the session's index (9 ms at 100k items) that
	// the callers of the per-task counts did not use.
	EvidenceCounts(ctx context.Context, sessionID string) (perTask map[string]int, err error)

	// Lane "similar" (#14): what the incremental SIMILAR_TO sync reads
	// instead of the whole session (docs/similarity-index.md).

	// EvidenceCount is the number of evidence items of the session (with
	// EvidenceSince, it tells whether an item arrived late, with an older
	// CreatedIter than the sync's watermark).
	EvidenceCount(ctx context.Context, sessionID string) (int, error)
	// EvidenceByIDs returns the named evidence, in Evidence order; an id
	// that is not evidence of the session is ErrNotFound.
	EvidenceByIDs(ctx context.Context, sessionID string, ids []string) ([]Evidence, error)
	// NearestEvidence returns, for each query vector, the session's
	// evidence whose embedding (of the query's dimension) has cosine >=
	// threshold with it, strongest first (ties by id). Backends answer
	// through a vector index and may miss items written moments before
	// (the index is eventually consistent); callers compare those exactly.
	NearestEvidence(ctx context.Context, sessionID string, queries [][]float32, threshold float64) ([][]Neighbor, error)
	// NearestCosine returns, for each query vector, the largest cosine
	// between it and the session's evidence embeddings of its dimension,
	// floored at 0 (0 when there is none, or the query has no direction):
	// what Ingest's information gain and novelty need, without reading
	// the session. Like NearestEvidence it may answer through a vector
	// index, so a large session's answer can miss the true nearest item
	// and come out lower (docs/similarity-index.md, "Nearest cosine").
	NearestCosine(ctx context.Context, sessionID string, queries [][]float32) ([]float64, error)
	// SimilarEdges returns the session's SIMILAR_TO edges only, in
	// SortEdges order.
	SimilarEdges(ctx context.Context, sessionID string) ([]Edge, error)
	// SimilarEdgesOf returns the SIMILAR_TO edges with an endpoint among
	// ids, each once, in SortEdges order; ids that are not evidence of the
	// session read nothing. It costs what it returns: the incremental sync
	// reads the stored edges around the new evidence with it, not all.
	SimilarEdgesOf(ctx context.Context, sessionID string, ids []string) ([]Edge, error)
	// KeepsPairs says whether the store keeps the SIMILAR_TO sync's pairs
	// (Writes.Pairs) and answers SimilarPairsOf: where a sync's index
	// query costs a server round trip (Neo4j), a displaced item's pairs
	// are read back instead of asked of the index again.
	KeepsPairs() bool
	// SimilarPairsOf returns the kept pairs (Writes.Pairs) with an
	// endpoint among ids, each once with From < To, in SortEdges order;
	// ErrNoPairs from a store that keeps none.
	SimilarPairsOf(ctx context.Context, sessionID string, ids []string) ([]Edge, error)

	// Lane fullreads (#14): what the end-of-session activities (Finalize,
	// CollectSections) and the tail of ApplyOps read instead of Tasks.

	// TaskOutline returns every task of the session without its texts and
	// embeddings (the tree's shape and each task's status), in Tasks order.
	TaskOutline(ctx context.Context, sessionID string) ([]TaskNode, error)
	// TasksByIDs returns the named tasks (short ids) in Tasks order, with
	// Parent and DependsOn filled; ids that name no task of the session are
	// skipped (callers probe for free ids with it).
	TasksByIDs(ctx context.Context, sessionID string, shortIDs []string) ([]Task, error)
	// TaskStatusCounts returns how many tasks of the session have each
	// status (a status no task has is absent) and the root task's status:
	// what the loop's view shows of the tree. On Neo4j the counts come
	// from the (session_id, status) index, without a row per task; the
	// outline's rows grow with the tree (5,000 tasks in a long session).
	TaskStatusCounts(ctx context.Context, sessionID string) (StatusCounts, error)
	// TasksWithStatus returns the session's tasks that have the status,
	// in Tasks order, with Parent and DependsOn filled.
	TasksWithStatus(ctx context.Context, sessionID string, status Status) ([]Task, error)
	// SetStatusWhere moves every task whose status is in from to `to` in
	// one write and returns how many moved. from must be non-empty and must
	// not hold FAILED (FAILED tasks are immutable: ErrImmutable).
	SetStatusWhere(ctx context.Context, sessionID string, from []Status, to Status) (int, error)
	// SetResultEmbeddings fills the result embeddings of several tasks (by
	// short id) in one write; an unknown task is ErrNotFound and a FAILED
	// one ErrImmutable, and then nothing is written.
	SetResultEmbeddings(ctx context.Context, sessionID string, embs map[string][]float32) error
	// EvidenceOfTasks returns the evidence with a SUPPORTS edge to any of
	// the named tasks (as TaskID or in Also), in Evidence order, in one
	// read; ids that name no task are skipped.
	EvidenceOfTasks(ctx context.Context, sessionID string, shortIDs []string) ([]Evidence, error)
	// FetchedSources returns which of urls are the SourceURL of evidence
	// of the session that the research fetched (Kind other than llm): what
	// ApplyOps checks a model's cited source against, without reading the
	// session's evidence. A missing session is ErrNotFound.
	FetchedSources(ctx context.Context, sessionID string, urls []string) (map[string]bool, error)
}

// Writes is what one Commit writes. SimilarScope and Similar are
// ReplaceSimilar's arguments (nothing replaced when SimilarScope is
// empty); Strengths, Blobs and DeleteBlobs those of SetStrengths,
// PutBlobs and DeleteBlob.
type Writes struct {
	SimilarScope []string
	Similar      []Edge
	Strengths    map[string]float64
	Blobs        map[string][]byte
	DeleteBlobs  []string
	// Pairs are pairs over the SIMILAR_TO threshold that the sync found,
	// kept or not by the degree cap, added to the store's pairs (a pair
	// already there takes the new weight); ResetPairs deletes the
	// session's pairs first. Only a store that KeepsPairs takes them.
	Pairs      []Edge
	ResetPairs bool
	// RecountEvidence sets the store's count of the session's evidence
	// (EvidenceCount) from the evidence itself. A full SIMILAR_TO sync
	// asks for it: on Neo4j the count is a counter, which an older binary
	// that writes evidence during a rolling upgrade does not keep; a
	// backend whose count cannot drift does nothing.
	RecountEvidence bool
}

// Empty says whether w writes nothing.
func (w Writes) Empty() bool {
	return len(w.SimilarScope) == 0 && len(w.Similar) == 0 && len(w.Strengths) == 0 && len(w.Blobs) == 0 && len(w.DeleteBlobs) == 0 &&
		!w.RecountEvidence && len(w.Pairs) == 0 && !w.ResetPairs
}

// Check rejects what no backend may write: an empty blob key, or a key
// both put and deleted (which of the two was meant is unknowable).
func (w Writes) Check() error {
	for k := range w.Blobs {
		if k == "" {
			return errors.New("empty blob key")
		}
	}
	for _, k := range w.DeleteBlobs {
		if k == "" {
			return errors.New("empty blob key")
		}
		if _, ok := w.Blobs[k]; ok {
			return fmt.Errorf("blob %q is both written and deleted", k)
		}
	}
	return nil
}

// Neighbourhood is what Store.Neighbourhood read (lane expand).
type Neighbourhood struct {
	Tasks    []Task
	Evidence []Evidence
	Edges    []Edge
}

// StatusCounts is Store.TaskStatusCounts' answer.
type StatusCounts struct {
	Count map[Status]int
	Root  Status
}

// TaskNode is one row of Store.TaskOutline (lane fullreads): a task
// without its texts and embeddings.
type TaskNode struct {
	ShortID        string
	Parent         string // short id of the SUBTASK_OF target, "" for the root
	Status         Status
	CreatedIter    int
	ResultEmbedded bool // the task has a result embedding
}

// Neighbor is one answer of Store.NearestEvidence.
type Neighbor struct {
	ID     string
	Cosine float64
}
