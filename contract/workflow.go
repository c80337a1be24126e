package contract

import (
	"time"

	"github.com/lethe-research/lethe/algebra"
)

// Workflow type names and query/signal names, as users type them with the
// temporal CLI.
const (
	SessionWorkflow  = "ResearchSession"
	ResearchWorkflow = "WebResearch"
	QueryProgress    = "progress"
	QueryTree        = "tree"
	QueryState       = "state"
	QueryReport      = "report" // the whole report, also when the result carries a cut one
	SignalStop       = "stop"
	UpdateExtend     = "extend"
	UpdateGuide      = "guide"
)

// Stop reasons.
const (
	StopRootDone      = "root_done"
	StopConverged     = "converged"
	StopNoReadyTasks  = "no_ready_tasks"
	StopMaxIterations = "max_iterations"
	StopWallClockCap  = "wall_clock_cap"
	StopRequested     = "stop_requested"
	StopCancelled     = "cancelled"
	// StopModelUnavailable: a model server stayed down past
	// llm.outage_tolerance; the session assembles what it has.
	StopModelUnavailable = "model_unavailable"
	// StopComposeFailed: composition failed past the tolerance; the report
	// is extractive (the evidence each section would have been written from).
	StopComposeFailed = "compose_failed"
	// StopTokenBudget: the next iteration could have crossed
	// budget.max_tokens less the assembly reserve.
	StopTokenBudget = "token_budget"
	// StopNoProgress: loop.noop_limit iterations in a row whose answers
	// changed nothing (docs/loop-semantics.md); the session assembles what
	// it has.
	StopNoProgress = "no_progress"
)

// SessionInput starts a session. Only Goal is required: a session started
// from the temporal CLI with {"goal": "..."} has its configuration resolved
// by the worker (ResolveConfig) and recorded in history.
type SessionInput struct {
	Goal         string            `json:"goal"`
	Instructions string            `json:"instructions,omitempty"`
	Params       map[string]string `json:"params,omitempty"`
	Config       *Config           `json:"config,omitempty"`
	State        *SessionState     `json:"state,omitempty"` // carried by continue-as-new
}

// Signals are the previous iteration's scalars the next one decides with.
type Signals struct {
	Observed    bool    `json:"observed"`
	GA          float64 `json:"ga"`
	Coverage    float64 `json:"coverage"`
	Novelty     float64 `json:"novelty"`
	Convergence float64 `json:"convergence"`
	Plateau     float64 `json:"plateau"` // has the convergence score stopped moving?
	NEvidence   int     `json:"n_evidence"`
}

// SessionState is everything the loop carries between iterations and across
// continue-as-new. It is rebuilt on replay from activity results.
type SessionState struct {
	Bootstrapped     bool              `json:"bootstrapped"`
	Dim              int               `json:"dim"`
	StartedAt        time.Time         `json:"started_at"`
	Iteration        int               `json:"iteration"` // iterations completed
	RunIterations    int               `json:"run_iterations"`
	Tokens           int               `json:"tokens"`
	Trackers         algebra.Trackers  `json:"trackers"`
	Prev             Signals           `json:"prev"`
	ZeroYield        int               `json:"zero_yield"`
	ThinkingBudget   int               `json:"thinking_budget"`
	Pressure         float64           `json:"pressure"`
	ResourceProgress float64           `json:"resource_progress"`
	Psi              float64           `json:"psi"`
	RootDone         bool              `json:"root_done"`
	StopRequested    bool              `json:"stop_requested"`
	Stats            Stats             `json:"stats"`
	Current          string            `json:"current,omitempty"`
	LastOps          []string          `json:"last_ops,omitempty"`
	Counts           map[string]int    `json:"counts,omitempty"`
	Evidence         int               `json:"evidence"`
	Models           map[string]string `json:"models,omitempty"`
	ExtraIterations  int               `json:"extra_iterations,omitempty"` // granted by extend
	ExtraWallClock   time.Duration     `json:"extra_wall_clock,omitempty"` // granted by extend
	Guides           []string          `json:"guides,omitempty"`           // user notes for the next DIN-Read
	Tasks            []TaskInfo        `json:"tasks,omitempty"`            // the task tree as last read
	Runs             int               `json:"runs,omitempty"`             // continue-as-new count
	// ModelWaited is the time spent waiting out model outages; the
	// wall-clock budget does not count it.
	ModelWaited time.Duration `json:"model_waited,omitempty"`
	// ModelGaveUp: a model server stayed down past llm.outage_tolerance;
	// later outages are not waited out again.
	ModelGaveUp bool `json:"model_gave_up,omitempty"`
	// EmbedTokens estimates what research runs embedded; with Tokens (chat
	// calls) it is what budget.max_tokens limits.
	EmbedTokens int `json:"embed_tokens,omitempty"`
	// IterTokens is what the last iteration spent: the estimate of the
	// next one that the token budget checks before it starts.
	IterTokens int `json:"iter_tokens,omitempty"`
	// NoOps counts the iterations in a row whose answer changed nothing
	// (workflows.changedNothing); NoOpTask is the task of the last one.
	NoOps    int    `json:"no_ops,omitempty"`
	NoOpTask string `json:"no_op_task,omitempty"`
	// Seeded: the seed search of the goal has run (workflows.seedSearch).
	Seeded bool `json:"seeded,omitempty"`
	// SearchKeys are the din.SearchKey of every search the session started,
	// in order: the dedup across tasks and, by its length, the count
	// research.max_searches limits. State, so the budget holds across
	// replay and continue-as-new; bounded by research.max_searches.
	SearchKeys []string `json:"search_keys,omitempty"`
}

// TokensUsed is what budget.max_tokens limits: chat tokens of every call
// (reasoning, composition, verification) and the tokens research embedded.
func (st *SessionState) TokensUsed() int { return st.Tokens + st.EmbedTokens }

// MaxIterations is the iteration budget including extensions.
func (st *SessionState) MaxIterations(base int) int { return base + st.ExtraIterations }

// MaxWallClock is the wall-clock budget including extensions.
func (st *SessionState) MaxWallClock(base time.Duration) time.Duration {
	return base + st.ExtraWallClock
}

// Stats counts work for the result and for progress.
type Stats struct {
	LLMCalls       int `json:"llm_calls"`
	RepairCalls    int `json:"repair_calls"`
	FailedCalls    int `json:"failed_calls"`
	InvalidAnswers int `json:"invalid_answers"`
	AppliedOps     int `json:"applied_ops"`
	RolledBack     int `json:"rolled_back"`
	WebSearches    int `json:"web_searches"`
	DuplicateCalls int `json:"duplicate_calls"`
	// SearchesOverBudget counts web_search calls dropped because the
	// iteration or the session had used its search budget
	// (research.max_searches_per_iteration, research.max_searches).
	SearchesOverBudget int `json:"searches_over_budget,omitempty"`
	NewEvidence        int `json:"new_evidence"`
	// NoOpIterations counts iterations whose applied answer changed nothing.
	NoOpIterations int `json:"noop_iterations,omitempty"`
	// CutAnswers counts answers cut by the output limit whose ops before
	// the cut were kept (din.CutOps); each saved a repair call.
	CutAnswers int `json:"cut_answers,omitempty"`
	// RestatedCreates counts creates of existing tasks dropped from
	// applied answers (din.ParseCounted, docs/din-guards.md).
	RestatedCreates int `json:"restated_creates,omitempty"`
	// LLMLatencyMS sums the latency of every chat call, reasoning and
	// composition; the parts of an assembly run in parallel, so the sum can
	// exceed their wall time.
	LLMLatencyMS    int64 `json:"llm_latency_ms"`
	PromptTokens    int   `json:"prompt_tokens"`
	CompletionToken int   `json:"completion_tokens"`
}

// Progress is the answer of the progress query.
type Progress struct {
	SessionID     string         `json:"session_id"`
	Goal          string         `json:"goal"`
	Phase         string         `json:"phase"`
	Iteration     int            `json:"iteration"`
	MaxIterations int            `json:"max_iterations"`
	MaxWallClock  string         `json:"max_wall_clock"`
	Runs          int            `json:"runs"`
	Guides        []string       `json:"pending_guides,omitempty"`
	CurrentTask   string         `json:"current_task,omitempty"`
	Pressure      float64        `json:"pressure"`
	Psi           float64        `json:"psi"`
	Tasks         map[string]int `json:"tasks,omitempty"`
	Evidence      int            `json:"evidence"`
	LastOps       []string       `json:"last_ops,omitempty"`
	StopReason    string         `json:"stop_reason,omitempty"`
	Stats         Stats          `json:"stats"`
	// Waiting is set while a model server is down and the session waits.
	Waiting     *ModelWait `json:"waiting,omitempty"`
	ModelWaited string     `json:"model_waited,omitempty"`
}

// SessionResult is the workflow's result.
type SessionResult struct {
	SessionID        string            `json:"session_id"`
	Report           string            `json:"report"`
	StopReason       string            `json:"stop_reason"`
	Iterations       int               `json:"iterations"`
	Psi              float64           `json:"psi"`
	Tasks            int               `json:"tasks"`
	TasksDone        int               `json:"tasks_done"`
	TasksFailed      int               `json:"tasks_failed"`
	Evidence         int               `json:"evidence"`
	Sources          []Source          `json:"sources"`
	Citations        int               `json:"citations"`
	RemovedCitations int               `json:"removed_citations"`
	Stats            Stats             `json:"stats"`
	Models           map[string]string `json:"models,omitempty"`
	// Tokens is what budget.max_tokens counted: chat tokens of every call
	// and the tokens research embedded (estimated).
	Tokens      int `json:"tokens"`
	EmbedTokens int `json:"embed_tokens,omitempty"`
	// CostUSD prices the tokens at llm.price_*_per_mtok and
	// embed.price_per_mtok (0 for a local model).
	CostUSD float64 `json:"cost_usd"`
	// CitationPrecision is the share of the judged (sentence, source)
	// pairs of the report that their source supports (docs/citations.md);
	// absent when none was judged (verification off, or no verdict).
	CitationPrecision  *float64 `json:"citation_precision,omitempty"`
	CitationsSupported int      `json:"citations_supported,omitempty"`
	// Of CitationsSupported: proved by containment in the source (no
	// model call), and judged supported by the model.
	CitationsContained   int `json:"citations_contained,omitempty"`
	CitationsByModel     int `json:"citations_by_model,omitempty"`
	CitationsUnsupported int `json:"citations_unsupported,omitempty"` // removed from the report
	CitationsUnchecked   int `json:"citations_unchecked,omitempty"`   // no usable verdict: left as written
	SentencesMarked      int `json:"sentences_marked,omitempty"`      // lost every citation: marked [unverified]
	SentencesRecited     int `json:"sentences_recited,omitempty"`     // lost every citation: cite another source that holds them
	// ModelWaitedS is how long the session waited out model outages.
	ModelWaitedS float64 `json:"model_waited_s,omitempty"`
	// Error says why the report is not what the session meant to write
	// (compose_failed); empty otherwise.
	Error string `json:"error,omitempty"`
}

// ExtendRequest grants more budget to a running session, e.g.
// temporal workflow update execute --name extend --input '{"iterations":10}'.
type ExtendRequest struct {
	Iterations int    `json:"iterations,omitempty"`
	WallClock  string `json:"wall_clock,omitempty"` // Go duration, e.g. "30m"
}

// ExtendResult is the budget after the extension.
type ExtendResult struct {
	MaxIterations int    `json:"max_iterations"`
	MaxWallClock  string `json:"max_wall_clock"`
}

// GuideRequest is a short note from the user, shown to the model in the next
// DIN-Read as a warn line.
type GuideRequest struct {
	Note string `json:"note"`
}

// TreeNode is one task of the tree query.
type TreeNode struct {
	ID          string     `json:"id"`
	Status      string     `json:"status"`
	Description string     `json:"description"`
	Evidence    int        `json:"evidence,omitempty"`
	Result      string     `json:"result,omitempty"`
	Children    []TreeNode `json:"children,omitempty"`
}

// ModelWait is what a session shows while a model server is down: which
// server, since when, and how many tries have failed.
type ModelWait struct {
	Service string    `json:"service"`
	URL     string    `json:"url"`
	Since   time.Time `json:"since"`
	Attempt int       `json:"attempt"`
	Error   string    `json:"error,omitempty"`
}

// Research stop reasons.
const (
	ResearchConverged  = "converged"
	ResearchEmptyQueue = "empty_queue"
	ResearchTimeBudget = "time_budget"
	ResearchPageBudget = "page_budget"
)

// Session statuses of LetheStatus.
const (
	StatusRunning    = "running"
	StatusAssembling = "assembling"
	StatusDone       = "done"
	StatusCancelled  = "cancelled"
	StatusFailed     = "failed"
	// StatusWaiting: a model server is down and the session waits for it,
	// spending no iteration and no budget.
	StatusWaiting = "waiting_for_model"
)

// Search attributes the session upserts every iteration, so that
// temporal workflow list --query 'LetheStatus="running"' works (values of
// LetheStatus: the Status* constants). workflows builds the SDK's typed
// keys from these names.
const (
	AttrNameStatus    = "LetheStatus"    // Keyword
	AttrNameIteration = "LetheIteration" // Int
	AttrNamePressure  = "LethePressure"  // Double
	AttrNamePsi       = "LethePsi"       // Double
	AttrNameTasksDone = "LetheTasksDone" // Int
	AttrNameEvidence  = "LetheEvidence"  // Int
	// LetheTokens is what budget.max_tokens counts. A Double because SQL
	// visibility stores (the dev server's SQLite among them) allow three
	// Int and three Double attributes per namespace; it took the slot of
	// LetheTasksTotal (docs/operations.md). Queries compare it like an
	// Int: 'LetheTokens > 1000000'.
	AttrNameTokens = "LetheTokens" // Double
)

// SearchAttributes lists every attribute with its type, in the form
// `temporal operator search-attribute create` and start-dev take.
func SearchAttributes() []string {
	return []string{AttrNameStatus + "=Keyword", AttrNameIteration + "=Int", AttrNamePressure + "=Double", AttrNamePsi + "=Double",
		AttrNameTasksDone + "=Int", AttrNameEvidence + "=Int", AttrNameTokens + "=Double"}
}
