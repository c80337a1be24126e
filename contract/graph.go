package contract

// TaskStatus is a task's lifecycle state (graph.Status is an alias). FAILED
// is terminal and immutable.
type TaskStatus string

const (
	TaskPending TaskStatus = "PENDING"
	TaskActive  TaskStatus = "ACTIVE"
	TaskDone    TaskStatus = "DONE"
	TaskFailed  TaskStatus = "FAILED"
)

// Valid reports whether s is one of the four known statuses.
func (s TaskStatus) Valid() bool {
	switch s {
	case TaskPending, TaskActive, TaskDone, TaskFailed:
		return true
	}
	return false
}

// EvidenceKind says where a piece of evidence came from (graph.EvidenceKind
// is an alias).
type EvidenceKind string

const (
	KindHTML       EvidenceKind = "html"
	KindPDF        EvidenceKind = "pdf"
	KindText       EvidenceKind = "text"
	KindTranscript EvidenceKind = "transcript"
	KindLLM        EvidenceKind = "llm"
)

// RootShortID is the short id of every session's root task.
const RootShortID = "root"

// ApplyResult reports what one Tx2 write did (graph.ApplyResult is an
// alias).
type ApplyResult struct {
	Applied    int               // ops that changed the graph
	Created    []string          // short ids of tasks created
	Mapped     map[string]string // new short id -> existing short id, for creates deduplicated onto an existing task
	Evidence   int               // evidence items added by evidence ops
	RolledBack bool              // the write was discarded as a whole (cycle)
	Reason     string            // why it rolled back
	Replayed   bool              // the key had been applied before; nothing changed now
}
