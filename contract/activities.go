package contract

import (
	"time"

	"github.com/lethe-research/lethe/algebra"
)

// Payloads below are everything that crosses the workflow boundary: ids,
// scalars and texts for the prompt; embedding vectors never do. Workflow
// code names each activity by method value on a nil *Activities (stubs.go);
// the registered name is the method's.

// Error types of non-retryable application errors.
const (
	ErrInvalidInput = "InvalidInput"
	ErrUnhealthy    = "ServiceUnavailable"
	ErrConfig       = "InvalidConfig"
	ErrLLM          = "LLMError"
	// ErrSearchFailed: a search provider refused the request (bad key,
	// bad query, malformed answer) or asked to wait past
	// research.search_max_retry_after; the next provider is asked.
	ErrSearchFailed = "SearchFailed"
	// ErrRateLimited: a search provider answered 429; retried after its
	// Retry-After (NextRetryDelay), then the next provider is asked.
	ErrRateLimited = "SearchRateLimited"
)

// ResolveConfigInput asks the worker to resolve its parameter tree with the
// session's overrides (for sessions started without a resolved config), or
// to check a config given in the input (Config) and fill in the worker's
// endpoints, credentials and paths (config.WorkerOnly).
type ResolveConfigInput struct {
	Params map[string]string `json:"params,omitempty"`
	Config *Config           `json:"config,omitempty"`
	// Input names what the parameters came from in an error ("a session
	// parameter", "an evaluation's config").
	Input string `json:"input,omitempty"`
}

// HealthInput names the session whose bootstrap probes the services.
type HealthInput struct {
	SessionID string `json:"session_id"`
	// Providers is the session's search chain (research.providers,
	// resolved): each is probed too. Empty in inputs recorded before.
	Providers []string `json:"providers,omitempty"`
}

// HealthResult lists what the probe found wrong that does not stop the
// session: search providers that do not answer or that this worker cannot
// serve (the chain falls back past them at search time).
type HealthResult struct {
	Warnings []string `json:"warnings,omitempty"`
}

// BootstrapInput creates (or resets and recreates) a session's graph.
type BootstrapInput struct {
	SessionID string `json:"session_id"`
	Goal      string `json:"goal"`
}

// BootstrapResult reports the embedding dimension the model answered with.
type BootstrapResult struct {
	Dim         int    `json:"dim"`
	RootShortID string `json:"root"`
	ChatModel   string `json:"chat_model,omitempty"`
	EmbedModel  string `json:"embed_model,omitempty"`
}

// ReadStateInput is Tx1: the state selection needs at iteration Iteration.
type ReadStateInput struct {
	SessionID string `json:"session_id"`
	Iteration int    `json:"iteration"`
	// View asks for the bounded view (contract/view.go): no task list.
	View *ViewParams `json:"view,omitempty"`
}

// TaskInfo is a task as the workflow sees it: no vectors.
type TaskInfo struct {
	ShortID     string     `json:"id"`
	Description string     `json:"d"`
	Status      TaskStatus `json:"s"`
	Depth       int        `json:"depth,omitempty"`
	NProductive int        `json:"np,omitempty"`
	Parent      string     `json:"p,omitempty"`
	DependsOn   []string   `json:"dep,omitempty"`
	Evidence    int        `json:"ev,omitempty"`
	Result      string     `json:"r,omitempty"` // truncated result summary or fail reason
}

// ReadyTask carries the three cosines of the closed-form warp and the
// task's evidence coverage, so ranking needs no vectors.
type ReadyTask struct {
	ShortID  string  `json:"id"`
	CosGoal  float64 `json:"cg"` // task · goal (query prefix)
	CosGap   float64 `json:"cd"` // task · gap direction
	Coverage float64 `json:"cov"`
	// Depth and NProductive travel here in the bounded view, which has no
	// task list to look them up in.
	Depth       int `json:"depth,omitempty"`
	NProductive int `json:"np,omitempty"`
}

// ReadStateResult is the state of the graph at the start of an iteration.
type ReadStateResult struct {
	Tasks      []TaskInfo  `json:"tasks"`
	Ready      []ReadyTask `json:"ready"`
	GapGoalCos float64     `json:"gap_goal"` // gap direction · goal
	Evidence   int         `json:"evidence"`
	// The bounded view (ReadStateInput.View): status counts, the root's
	// status, and how many tasks were ready before the cap.
	Counts     map[string]int `json:"counts,omitempty"`
	RootDone   bool           `json:"root_done,omitempty"`
	ReadyTotal int            `json:"ready_total,omitempty"`
}

// StatusInput moves one task between statuses.
type StatusInput struct {
	SessionID string       `json:"session_id"`
	Task      string       `json:"task"`
	From      []TaskStatus `json:"from,omitempty"`
	To        TaskStatus   `json:"to"`
}

// SyncSimilarInput runs the SIMILAR_TO sync of one session.
type SyncSimilarInput struct {
	SessionID string        `json:"session_id"`
	Iteration int           `json:"iteration"`
	Similar   SimilarParams `json:"similar"`
}

// SimilarParams are the session's SIMILAR_TO parameters. Refine (the
// strength refinement) is nil in an input from workflow code older than
// algebra.corroboration_boost: the defaults apply then.
type SimilarParams struct {
	Threshold  float64     `json:"threshold"`
	MaxPerNode int         `json:"max_per_node"`
	Refine     *Refinement `json:"refine,omitempty"`
	// NLI labels new pairs with the chat model (algebra.similar_nli); nil
	// is no classifier (the parameter off, or older workflow code).
	NLI *NLIParams `json:"nli,omitempty"`
	// ExactMax and CascadeItems are algebra.similar_exact_max and
	// algebra.similar_cascade_items; 0 in an input from older workflow
	// code: every sync exact, as before.
	ExactMax     int `json:"exact_max,omitempty"`
	CascadeItems int `json:"cascade_items,omitempty"`
}

// NLIParams are the session's NLI parameters (algebra.similar_nli_*): the
// SIMILAR_TO sync labels new pairs with the chat model when they are set.
// Schema and SchemaLoose are llm.json_schema and llm.json_schema_loose, as
// for Reason.
type NLIParams struct {
	Batch       int  `json:"batch"`
	MaxPairs    int  `json:"max_pairs"`
	Chars       int  `json:"chars"`
	Schema      bool `json:"schema,omitempty"`
	SchemaLoose bool `json:"schema_loose,omitempty"`
}

// SimilarOf is the SIMILAR_TO part of a session's config.
func SimilarOf(c Algebra) SimilarParams {
	return SimilarParams{Threshold: c.SimilarThreshold, MaxPerNode: c.SimilarMaxPerNode,
		Refine:   &Refinement{Boost: c.CorroborationBoost, Penalty: c.ContradictionPen},
		ExactMax: c.SimilarExactMax, CascadeItems: c.SimilarCascade}
}

// SimilarFor is SimilarOf with the NLI parameters when algebra.similar_nli
// is on (nil otherwise: no classifier).
func SimilarFor(c Config) SimilarParams {
	p := SimilarOf(c.Algebra)
	if c.Algebra.SimilarNLI {
		p.NLI = &NLIParams{Batch: c.Algebra.SimilarNLIBatch, MaxPairs: c.Algebra.SimilarNLIMaxPairs, Chars: c.Algebra.SimilarNLIChars,
			Schema: c.LLM.JSONSchema, SchemaLoose: c.LLM.JSONSchemaLoose}
	}
	return p
}

// SyncSimilarResult counts what the sync did.
type SyncSimilarResult struct {
	Edges    int `json:"edges"`
	Compared int `json:"compared"`
	// NLI: pairs classified now, labels taken from the cache, pairs left
	// for later syncs, and why classification stopped (empty: it did not).
	Classified int    `json:"classified,omitempty"`
	Cached     int    `json:"cached,omitempty"`
	Deferred   int    `json:"deferred,omitempty"`
	NLIError   string `json:"nli_error,omitempty"`
}

// FocusInput marks the selected task ACTIVE, syncs SIMILAR_TO and expands
// the context from the task, in one activity.
type FocusInput struct {
	SessionID  string        `json:"session_id"`
	Iteration  int           `json:"iteration"`
	Task       string        `json:"task"`
	Similar    SimilarParams `json:"similar"`
	Context    Context       `json:"context"`
	ChunkChars int           `json:"chunk_chars"`
}

// ExpandInput runs PPR from the selected task.
type ExpandInput struct {
	SessionID string  `json:"session_id"`
	Task      string  `json:"task"`
	Context   Context `json:"context"`
	// ChunkChars bounds a candidate's text at twice the session's chunk size.
	ChunkChars int `json:"chunk_chars"`
}

// Candidate is one evidence item PPR reached, with what packing needs.
type Candidate struct {
	Ref     string  `json:"ref"` // evidence id
	Task    string  `json:"task"`
	Text    string  `json:"text"`
	Source  string  `json:"src,omitempty"`
	Title   string  `json:"title,omitempty"`
	Tokens  int     `json:"tok"`
	PPR     float64 `json:"ppr"`
	CosGoal float64 `json:"cg"`
}

// ExpandResult holds the candidates and their pairwise cosines.
type ExpandResult struct {
	Candidates []Candidate      `json:"cands"`
	Sims       algebra.PairSims `json:"sims"`
}

// ReasonInput is one LLM call.
type ReasonInput struct {
	SessionID      string `json:"session_id"`
	Iteration      int    `json:"iteration"`
	Attempt        int    `json:"attempt"` // 0 = first call, n = n-th repair
	System         string `json:"system"`
	User           string `json:"user"`
	ThinkingBudget int    `json:"thinking"`
	MaxTokens      int    `json:"max_tokens"`
	NoThink        bool   `json:"no_think,omitempty"`
	Schema         bool   `json:"schema,omitempty"`       // send the DIN schema as response_format
	SchemaLoose    bool   `json:"schema_loose,omitempty"` // in llama.cpp's loose form (llm.json_schema_loose)
	// PlanQueries > 0 makes the call a planning call for that many
	// queries: with Schema, its answer schema is din.PlanSchema instead of
	// the DIN ops schema.
	PlanQueries int `json:"plan_queries,omitempty"`
}

// ReasonResult is the model's answer, thinking stripped (it is logged, never
// fed back: it would make calls depend on earlier monologue).
type ReasonResult struct {
	Content          string `json:"content"`
	ThinkingChars    int    `json:"thinking_chars"`
	PromptTokens     int    `json:"prompt_tokens"`
	CompletionTokens int    `json:"completion_tokens"`
	LatencyMS        int64  `json:"latency_ms"`
	Model            string `json:"model,omitempty"`
	// Cut: the answer ended on the output limit (finish_reason "length"),
	// so it may stop inside its ops list (din.CutOps).
	Cut bool `json:"cut,omitempty"`
}

// ApplyInput is Tx2: the validated ops of one iteration.
type ApplyInput struct {
	SessionID      string  `json:"session_id"`
	Iteration      int     `json:"iteration"`
	ActiveTask     string  `json:"active"`
	Ops            []Op    `json:"ops"`
	DedupThreshold float64 `json:"dedup"`
	// EvidenceStrength is research.llm_evidence_strength (0 in an input from
	// older workflow code: graph.LLMEvidenceStrength).
	EvidenceStrength float64 `json:"evidence_strength,omitempty"`
	// Rename: the model saw a bounded view, so a create may name an id that
	// exists outside it; such an id is renamed (in the whole answer) rather
	// than failing the write (docs/bounded-view.md).
	Rename bool `json:"rename,omitempty"`
}

// ToolCall is a call op resolved to its task after the write committed.
type ToolCall struct {
	Index int    `json:"i"`
	Task  string `json:"task"`
	Tool  string `json:"tool"`
	Query string `json:"query"`
}

// ApplyOutput is what the write did and which calls to run.
type ApplyOutput struct {
	Result   ApplyResult `json:"result"`
	Calls    []ToolCall  `json:"calls,omitempty"`
	RootDone bool        `json:"root_done,omitempty"`
	Summary  []string    `json:"summary,omitempty"` // one line per op, for progress
}

// CheckQueryInput asks whether a tool call repeats an earlier query.
type CheckQueryInput struct {
	SessionID string   `json:"session_id"`
	Iteration int      `json:"iteration"`
	Call      ToolCall `json:"call"`
	Threshold float64  `json:"threshold"`
}

// CheckQueryResult is the dedup decision; it is recorded so a retry gives
// the same answer.
type CheckQueryResult struct {
	Duplicate bool   `json:"dup"`
	Reason    string `json:"reason,omitempty"`
}

// ObserveInput computes the raw signals after iteration Iteration.
type ObserveInput struct {
	SessionID   string `json:"session_id"`
	Iteration   int    `json:"iteration"`
	Task        string `json:"task"`
	NewEvidence int    `json:"new_evidence"` // unused: Observe finds the new rows itself (activities.newRows)
	SVDK        int    `json:"svd_k"`
	MinEvidence int    `json:"min_evidence"`
	// Signals are the session's signal parameters (attention, state
	// embedding, novelty); nil in an input from workflow code older than
	// them: the defaults apply then.
	Signals *algebra.SignalParams `json:"signals,omitempty"`
}

// Observation is the scalar part of algebra.SignalObservation.
type Observation struct {
	NEvidence        int     `json:"n"`
	GA               float64 `json:"ga"`
	Coverage         float64 `json:"coverage"`
	Stability        float64 `json:"stability"`
	StabilityConf    float64 `json:"stability_conf"`
	Residual         float64 `json:"residual"`
	ResidualConf     float64 `json:"residual_conf"`
	Eigengap         float64 `json:"eigengap"`
	SVDConf          float64 `json:"svd_conf"`
	SubspaceDistance float64 `json:"distance"`
	Novelty          float64 `json:"novelty"`
}

// CollectInput gathers the report's sections after the loop.
type CollectInput struct {
	SessionID string   `json:"session_id"`
	Assembly  Assembly `json:"assembly"`
}

// SectionInfo is one section as the workflow sees it; its text stays in the
// graph store (blob) and Compose reads it back.
type SectionInfo struct {
	Title  string `json:"title"`
	Tokens int    `json:"tokens"`
}

// Source is one numbered entry of the report's source list.
type Source struct {
	N     int    `json:"n"`
	URL   string `json:"url"`
	Title string `json:"title,omitempty"`
}

// CollectResult lists the ordered sections and the numbered sources.
type CollectResult struct {
	RootDone bool `json:"root_done"`
	// RootResult is the root's result with its citations checked like a
	// composed part's: invalid ones removed (RootRemoved), valid ones
	// listed (RootCited).
	RootResult  string        `json:"root_result,omitempty"`
	RootRemoved int           `json:"root_removed,omitempty"`
	RootCited   []int         `json:"root_cited,omitempty"`
	Sections    []SectionInfo `json:"sections"`
	Sources     []Source      `json:"sources"`
}

// ComposeInput composes one group of sections.
type ComposeInput struct {
	SessionID    string `json:"session_id"`
	Goal         string `json:"goal"`
	Instructions string `json:"instructions,omitempty"`
	Sections     []int  `json:"sections"`
	Part         int    `json:"part"`
	Parts        int    `json:"parts"`
	MaxTokens    int    `json:"max_tokens,omitempty"` // llm.compose_tokens
	// Synthesis writes the section as prose from the sentences of its
	// evidence nearest to it (at most Facts of them; docs/citations.md).
	Synthesis bool `json:"synthesis,omitempty"`
	Facts     int  `json:"facts,omitempty"` // assembly.section_facts
	// FactFollow is how many following sentences join each picked one
	// (assembly.fact_follow; 0, a session recorded before it, joins none).
	FactFollow int `json:"fact_follow,omitempty"`
}

// SummarizeInput asks for the report's closing summary.
type SummarizeInput struct {
	SessionID string `json:"session_id"`
	Goal      string `json:"goal"`
	Report    string `json:"report"` // the sections, bounded by the workflow
	MaxTokens int    `json:"max_tokens,omitempty"`
	// Facts is how many evidence sentences for the goal the summary
	// reads beside the report (assembly.summary_facts; 0 = none), each
	// joined by FactFollow following sentences.
	Facts      int `json:"facts,omitempty"`
	FactFollow int `json:"fact_follow,omitempty"`
	// Passages is how many whole passages of the root's evidence, ranked
	// for the goal, the summary answers from in place of the facts
	// (assembly.summary_passages; 0 = the facts).
	Passages int `json:"passages,omitempty"`
}

// VerifyInput is one batch of cited (sentence, source) pairs to judge
// against the sources' stored evidence (docs/citations.md).
type VerifyInput struct {
	SessionID string       `json:"session_id"`
	Batch     int          `json:"batch"` // 1-based, for logs and the stored verdicts
	Items     []VerifyItem `json:"items"`
	// SourceChars bounds the evidence shown per pair (assembly.verify_source_chars).
	SourceChars int `json:"source_chars"`
	MaxTokens   int `json:"max_tokens,omitempty"` // llm.compose_tokens
	// Schema sends the verdicts' JSON schema (llm.json_schema), in the
	// non-strict form when SchemaLoose (llm.json_schema_loose).
	Schema      bool `json:"schema,omitempty"`
	SchemaLoose bool `json:"schema_loose,omitempty"`
	// Sources are the report's numbered sources: an unsupported item's
	// sentence is looked for in the others, by its text (Moved). Absent
	// in inputs recorded before re-citing existed: nothing is moved.
	Sources []VerifySource `json:"sources,omitempty"`
	// Recite asks the model, for an item left unsupported and not moved,
	// about the passage of another source the session read that shares
	// the most words with its sentence (assembly.recite_read); a
	// supported one is moved there (Moved, or MovedURL for a source the
	// report does not list yet).
	Recite bool `json:"recite,omitempty"`
}

// VerifySource is one numbered source of the report.
type VerifySource struct {
	N   int    `json:"n"`
	URL string `json:"url"`
}

// VerifyItem is one pair: the sentence and the source it cites.
type VerifyItem struct {
	I        int    `json:"i"` // the pair's index in the report
	Sentence string `json:"sentence"`
	N        int    `json:"n"`
	URL      string `json:"url"`
}

// VerifyVerdict is the judgement of one pair: Supported (the model said so
// and its quote occurs in the source), Unsupported, or Unchecked.
type VerifyVerdict struct {
	I      int    `json:"i"`
	Status string `json:"status"`
	Quote  string `json:"quote,omitempty"`
	// Via is how a judged verdict was reached: ViaContainment (the
	// sentence or its quoted span is in the source; no model call),
	// ViaCoverage (a few consecutive source sentences hold it; no model
	// call) or ViaModel. Empty in verdicts recorded before containment
	// existed.
	Via string `json:"via,omitempty"`
	// Moved is, for an unsupported item, the number of another source of
	// the report whose text contains or covers the sentence (the first in
	// number order; 0: none). Its quote is then the span that holds it.
	Moved int `json:"moved,omitempty"`
	// MovedURL and MovedTitle name the source the session read, not yet
	// one of the report's, that the model found supports the sentence
	// (VerifyInput.Recite); the workflow numbers it. Quote is then the
	// model's quote from it.
	MovedURL   string `json:"moved_url,omitempty"`
	MovedTitle string `json:"moved_title,omitempty"`
}

// VerifyResult is a batch's verdicts, one per item, with the calls' accounting.
type VerifyResult struct {
	Verdicts         []VerifyVerdict `json:"verdicts"`
	Calls            int             `json:"calls"`
	RepairCalls      int             `json:"repairs,omitempty"`
	Tokens           int             `json:"tokens"`
	PromptTokens     int             `json:"prompt_tokens,omitempty"`
	CompletionTokens int             `json:"completion_tokens,omitempty"`
	LatencyMS        int64           `json:"latency_ms,omitempty"`
}

// ComposeResult is one part of the report with its citation audit.
type ComposeResult struct {
	Markdown         string `json:"markdown"`
	Cited            []int  `json:"cited"`
	RemovedCitations int    `json:"removed"`
	RepairCalls      int    `json:"repairs"`
	Tokens           int    `json:"tokens"`
	// The calls' accounting, repair included, for the session's Stats.
	PromptTokens     int   `json:"prompt_tokens,omitempty"`
	CompletionTokens int   `json:"completion_tokens,omitempty"`
	LatencyMS        int64 `json:"latency_ms,omitempty"`
	// NoCall: the part was written without the model (a synthesis
	// section with no source evidence), so no call is counted.
	NoCall bool `json:"no_call,omitempty"`
}

// FinalizeInput closes a session's graph.
type FinalizeInput struct {
	SessionID string `json:"session_id"`
	// SkipEmbeddings closes the graph without filling missing result
	// embeddings: the embedding server stayed down past the tolerance.
	SkipEmbeddings bool          `json:"skip_embeddings,omitempty"`
	Similar        SimilarParams `json:"similar"`
}

// FinalizeResult counts the final graph.
type FinalizeResult struct {
	Tasks    int `json:"tasks"`
	Done     int `json:"done"`
	Failed   int `json:"failed"`
	Evidence int `json:"evidence"`
}

// DiscoverInput asks the providers for URLs.
type DiscoverInput struct {
	SessionID string `json:"session_id"`
	Query     string `json:"query"`
	Limit     int    `json:"limit"`
	// Provider names the one provider to ask (research.providers; the
	// workflow walks the fallback chain, each call on its provider's
	// rate-limited queue). Empty: every configured provider, merged (the
	// shape of sessions started before the chain existed).
	Provider string `json:"provider,omitempty"`
	// MaxRetryAfter: a provider that asks to wait longer than this is
	// reported as unavailable (non-retryable: the next provider is asked);
	// 0 means one minute (research.search_max_retry_after).
	MaxRetryAfter time.Duration `json:"max_retry_after,omitempty"`
	// CorpusCandidates and CorpusRRFK are the corpus search's rerank
	// candidates and fusion constant from the session's recorded config
	// (research.corpus_candidates, research.corpus_rrf_k); 0: the worker's
	// (sessions recorded before the fields existed).
	CorpusCandidates int     `json:"corpus_candidates,omitempty"`
	CorpusRRFK       float64 `json:"corpus_rrf_k,omitempty"`
}

// DiscoverResult lists candidate URLs with their goal cosines.
type DiscoverResult struct {
	Candidates []URLCandidate `json:"candidates"`
	// EmbedTokens estimates the tokens embedded (llm.EstimateAll): the
	// session's token budget counts research. It includes the corpus
	// search's query and the passages it embedded (not those its vector
	// cache held).
	EmbedTokens int `json:"embed_tokens,omitempty"`
	// Provider is the provider that answered (empty for the merged shape).
	Provider string `json:"provider,omitempty"`
}

// FetchInput fetches one batch of URLs; the page texts are staged in the
// graph store under Key so that they never travel through history.
type FetchInput struct {
	SessionID string   `json:"session_id"`
	Key       string   `json:"key"`
	URLs      []string `json:"urls"`
}

// PageRef describes a staged page.
type PageRef struct {
	URL   string       `json:"url"`
	Title string       `json:"title,omitempty"`
	Kind  EvidenceKind `json:"kind,omitempty"`
	Chars int          `json:"chars"`
	Media string       `json:"media,omitempty"` // staged media reference for Transcribe
	Error string       `json:"error,omitempty"`
}

// FetchResult lists the staged pages of a batch.
type FetchResult struct {
	Pages []PageRef `json:"pages"`
}

// IngestInput turns a staged batch into evidence for a task.
type IngestInput struct {
	SessionID string `json:"session_id"`
	Key       string `json:"key"` // the Fetch key; also the evidence idempotency key
	Task      string `json:"task"`
	Iteration int    `json:"iteration"`
	// Query is the research query: chunks are pre-selected against it
	// (and the task's description) before any is embedded.
	Query  string       `json:"query,omitempty"`
	Params IngestParams `json:"params"`
	// LinkDepth[i] is the depth the links found on page i of the batch get
	// (its own depth + 1); 0 (or a short slice) = its links are not
	// followed. At most MaxLinks links of the batch, best goal cosine
	// first, come back in IngestResult.Links (docs/research.md
	// "Following links").
	LinkDepth []int `json:"link_depth,omitempty"`
	MaxLinks  int   `json:"max_links,omitempty"`
}

// IngestParams are the session's parameters Ingest decides with. The
// fields after MinEvidence are zero (nil) in an input from workflow code
// older than them; WithDefaults fills them.
type IngestParams struct {
	ChunkChars        int `json:"chunk_chars"`
	MaxChunksPerPage  int `json:"max_chunks_per_page"`
	MaxChunksEmbedded int `json:"max_chunks_embedded"`
	SVDK              int `json:"svd_k"`
	MinEvidence       int `json:"min_evidence"`
	// AttentionK and AttentionTau are the batch GA's attention
	// (research.attention_k, algebra.attention_tau).
	AttentionK   int     `json:"attention_k,omitempty"`
	AttentionTau float64 `json:"attention_tau,omitempty"`
	// Strength scores the new evidence (research.strength_*, research.prior_*).
	Strength *StrengthParams `json:"strength,omitempty"`
	// Lambda weighs relevance against novelty in the MMR selection of the
	// chunks kept (research.ingest_lambda); MaxChars bounds their characters
	// (research.ingest_max_chars).
	Lambda   float64 `json:"ingest_lambda,omitempty"`
	MaxChars int     `json:"ingest_max_chars,omitempty"`
	// HitsInOrder keeps the batch's search hits first in page order
	// (research.ingest_hits_in_order); MinTrim cuts the chunk that
	// overflows MaxChars to its best window when at least that many
	// characters are left (research.ingest_min_trim). Both are zero in an
	// input built from a config recorded before them: the selection then
	// runs as it did (hits re-judged, an overflowing chunk dropped).
	HitsInOrder bool `json:"ingest_hits_in_order,omitempty"`
	MinTrim     int  `json:"ingest_min_trim,omitempty"`
}

// IngestParamsOf is the Ingest part of a session's config.
func IngestParamsOf(c Config) IngestParams {
	sp := StrengthOf(c.Research)
	return IngestParams{ChunkChars: c.Research.ChunkChars, MaxChunksPerPage: c.Research.MaxChunksPerPage,
		MaxChunksEmbedded: c.Research.MaxChunksEmbedded, SVDK: c.Algebra.SVDK, MinEvidence: c.Algebra.MinEvidence,
		AttentionK: c.Research.AttentionK, AttentionTau: c.Algebra.AttentionTau, Strength: &sp,
		Lambda: c.Research.IngestLambda, MaxChars: c.Research.IngestMaxChars,
		HitsInOrder: c.Research.IngestHitsInOrder, MinTrim: c.Research.IngestMinTrim}
}

// StrengthOf is the evidence-strength part of a session's config.
func StrengthOf(r Research) StrengthParams {
	return StrengthParams{GoalWeight: r.StrengthGoalWeight, GainWeight: r.StrengthGainWeight, Priors: KindPriors{
		PDF: r.PriorPDF, HTML: r.PriorHTML, Text: r.PriorText, Transcript: r.PriorTranscript, LLM: r.PriorLLM, Other: r.PriorOther,
	}}
}

// withDefaults is p with the defaults in place of what an input from older
// workflow code lacks: everything when it carries no parameters at all, the
// newer fields when it carries only the older ones.
func (p IngestParams) WithDefaults() IngestParams {
	def := IngestParamsOf(Defaults())
	if p == (IngestParams{}) {
		return def
	}
	if p.AttentionK == 0 {
		p.AttentionK = def.AttentionK
	}
	if p.AttentionTau == 0 {
		p.AttentionTau = def.AttentionTau
	}
	if p.Lambda == 0 {
		p.Lambda = def.Lambda
	}
	if p.MaxChars == 0 {
		p.MaxChars = def.MaxChars
	}
	if p.Strength == nil {
		p.Strength = def.Strength
	}
	return p
}

// IngestResult is scalars only.
type IngestResult struct {
	New        int     `json:"new"`
	Linked     int     `json:"linked,omitempty"` // evidence held for other tasks, now supporting this one too
	Duplicates int     `json:"dup"`
	Chunks     int     `json:"chunks"`
	MeanIG     float64 `json:"mean_ig"`
	GA         float64 `json:"ga"`
	Coverage   float64 `json:"coverage"`
	// EmbedTokens estimates the tokens embedded (llm.EstimateAll).
	EmbedTokens int `json:"embed_tokens,omitempty"`
	// Links found on the batch's pages for the research queue, with the
	// goal cosine of their anchor text and URL words (IngestInput.LinkDepth).
	Links []URLCandidate `json:"links,omitempty"`
}

// ResearchInput starts a WebResearch child workflow.
type ResearchInput struct {
	SessionID string   `json:"session_id"`
	Iteration int      `json:"iteration"`
	Call      ToolCall `json:"call"`
	Pressure  float64  `json:"pressure"`
	TimeLeftS float64  `json:"time_left_s"`
	Config    Config   `json:"config"`
}

// ResearchResult is what a research run returns to the session.
type ResearchResult struct {
	NewEvidence int     `json:"new_evidence"`
	Pages       int     `json:"pages"`
	Batches     int     `json:"batches"`
	Psi         float64 `json:"psi"`
	StopReason  string  `json:"stop_reason"`
	// ModelWaitMS is how long the run waited out model outages; the
	// session keeps it off its wall-clock budget.
	ModelWaitMS int64 `json:"model_wait_ms,omitempty"`
	// ModelGaveUp: a model server stayed down past llm.outage_tolerance.
	ModelGaveUp bool `json:"model_gave_up,omitempty"`
	// EmbedTokens is what the run's Discover and Ingest calls embedded;
	// the session counts it against budget.max_tokens.
	EmbedTokens int `json:"embed_tokens,omitempty"`
	// Provider is the search provider whose answer the run researched
	// (research.providers); empty when none answered. Skipped lists the
	// providers asked before it that failed or found nothing.
	Provider string   `json:"provider,omitempty"`
	Skipped  []string `json:"skipped_providers,omitempty"`
}

// TranscribeInput transcribes the media of one staged page: Page is the
// index of the page in the Fetch batch Key (FetchResult.Pages order).
type TranscribeInput struct {
	SessionID string `json:"session_id"`
	Key       string `json:"key"`
	Page      int    `json:"page"`
	URL       string `json:"url,omitempty"` // the page's URL, for logs and the history
}

// TranscribeResult counts what happened to the page's media. Failures are
// counted, never returned: a page whose audio cannot be transcribed still
// has its text.
type TranscribeResult struct {
	Media       int `json:"media"`
	Transcribed int `json:"transcribed"`
	Failed      int `json:"failed,omitempty"`
	Skipped     int `json:"skipped,omitempty"` // no STT configured on the worker, or over max_media_per_page
	Chars       int `json:"chars"`
}
