// Package graph holds the schema of the research graph (sessions, tasks,
// evidence and the edges between them) and the Store interface that every
// backend implements. Backends live in sub-packages (embedded, neo4j); the
// shared conformance suite lives in graphtest.
package graph

import (
	"strings"

	"github.com/lethe-research/lethe/contract"
)

// Status is a task's lifecycle state. FAILED is terminal and immutable.
// It crosses the workflow boundary, so it lives in contract.
type Status = contract.TaskStatus

const (
	Pending = contract.TaskPending
	Active  = contract.TaskActive
	Done    = contract.TaskDone
	Failed  = contract.TaskFailed
)

// EvidenceKind says where a piece of evidence came from (contract).
type EvidenceKind = contract.EvidenceKind

const (
	KindHTML       = contract.KindHTML
	KindPDF        = contract.KindPDF
	KindText       = contract.KindText
	KindTranscript = contract.KindTranscript
	KindLLM        = contract.KindLLM
)

// EdgeKind names a relationship type.
type EdgeKind string

const (
	SubtaskOf EdgeKind = "SUBTASK_OF" // task -> parent task
	DependsOn EdgeKind = "DEPENDS_ON" // task -> prerequisite task
	Supports  EdgeKind = "SUPPORTS"   // evidence -> task
	SimilarTo EdgeKind = "SIMILAR_TO" // evidence <-> evidence (stored once, From < To)
)

// RootShortID is the short id of every session's root task.
const RootShortID = contract.RootShortID

// Session is the per-session anchor node: the goal and its two embeddings
// (document and query prefix), which are the fixed reference points of all
// goal-alignment computations.
type Session struct {
	ID           string
	Goal         string
	GoalDocEmb   []float32
	GoalQueryEmb []float32
	Dim          int
}

// Task is a node of the task tree.
type Task struct {
	ID              string // globally unique: TaskID(session, short id)
	SessionID       string
	ShortID         string // unique within the session, what the LLM sees
	Description     string
	EmbedText       string
	Embedding       []float32
	Status          Status
	Depth           int // BFS distance from the root over SUBTASK_OF
	NProductive     int // iterations in which the task produced at least one applied op
	ResultSummary   string
	ResultEmbedding []float32
	CreatedIter     int
	Parent          string   // task ID of the SUBTASK_OF target, "" for the root
	DependsOn       []string // task IDs of DEPENDS_ON targets, sorted
}

// Evidence is a piece of content supporting a task.
type Evidence struct {
	ID          string // EvidenceID(session, content hash)
	SessionID   string
	TaskID      string   // SUPPORTS target: the task the content was first found for
	Also        []string // task IDs of further SUPPORTS targets (the same content found for them later), in link order
	Content     string
	SourceURL   string
	Title       string
	Kind        EvidenceKind
	Strength    float64
	Embedding   []float32
	CreatedIter int
	ContentHash string
}

// Edge is a typed relationship between two node ids of one session.
type Edge struct {
	From   string
	To     string
	Kind   EdgeKind
	Weight float64 // SIMILAR_TO only: cosine of the endpoints
	Label  string  // SIMILAR_TO only: NLI label when known
}

// TaskID is the global id of the task with the given short id in a session.
// Deterministic ids make every write idempotent across retries.
func TaskID(sessionID, shortID string) string { return sessionID + "/t/" + shortID }

// EvidenceID is the global id of evidence with the given content hash.
func EvidenceID(sessionID, contentHash string) string { return sessionID + "/e/" + contentHash }

// ShortIDOf returns the short id part of a task id.
func ShortIDOf(taskID string) string {
	if i := strings.LastIndex(taskID, "/t/"); i >= 0 {
		return taskID[i+3:]
	}
	return taskID
}
