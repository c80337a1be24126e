// Package config is the frozen parameter tree of the service: its types, the
// parameter table (params.go: every threshold used anywhere, with default,
// range and reason), the defaults, validation, and JSON decoding over the
// defaults. It is pure data (stdlib and algebra only), so that workflow code
// may link it; config/load reads the YAML file and LETHE_* environment.
package config

import (
	"time"

	"github.com/lethe-research/lethe/algebra"
)

// Config is the resolved parameter tree. It is plain data (JSON-serializable)
// because it travels in workflow input and is recorded in history.
type Config struct {
	Session   Session   `mapstructure:"session" json:"session"`
	Budget    Budget    `mapstructure:"budget" json:"budget"`
	Thinking  Thinking  `mapstructure:"thinking" json:"thinking"`
	LLM       LLM       `mapstructure:"llm" json:"llm"`
	Embed     Embed     `mapstructure:"embed" json:"embed"`
	Algebra   Algebra   `mapstructure:"algebra" json:"algebra"`
	Context   Context   `mapstructure:"context" json:"context"`
	Research  Research  `mapstructure:"research" json:"research"`
	Assembly  Assembly  `mapstructure:"assembly" json:"assembly"`
	DIN       DIN       `mapstructure:"din" json:"din"`
	Graph     Graph     `mapstructure:"graph" json:"graph"`
	Temporal  Temporal  `mapstructure:"temporal" json:"temporal"`
	Control   Control   `mapstructure:"control" json:"control"`
	Telemetry Telemetry `mapstructure:"telemetry" json:"telemetry"`
	Loop      Loop      `mapstructure:"loop" json:"loop"`
	Eval      Eval      `mapstructure:"eval" json:"eval"`
}

// Loop holds the agent loop's guards where the seeds are silent
// (docs/loop-semantics.md).
type Loop struct {
	NoopLimit int `mapstructure:"noop_limit" json:"noop_limit"`
	// The bounded task view (docs/bounded-view.md): how many ready tasks,
	// best first, and how many tasks per relation of the focus cross into
	// the workflow each iteration.
	ViewReady     int `mapstructure:"view_ready" json:"view_ready"`
	ViewNeighbour int `mapstructure:"view_neighbour" json:"view_neighbour"`
}

type Control struct {
	MaxExtendIterations int           `mapstructure:"max_extend_iterations" json:"max_extend_iterations"`
	MaxExtendWallClock  time.Duration `mapstructure:"max_extend_wall_clock" json:"max_extend_wall_clock"`
	MaxGuideChars       int           `mapstructure:"max_guide_chars" json:"max_guide_chars"`
	MaxGuides           int           `mapstructure:"max_guides" json:"max_guides"`
}

type Telemetry struct {
	MetricsAddr string `mapstructure:"metrics_addr" json:"metrics_addr"`
}

// Eval configures the Evaluation workflow (docs/eval.md).
type Eval struct {
	JudgeBaseURL       string `mapstructure:"judge_base_url" json:"judge_base_url"`
	JudgeModel         string `mapstructure:"judge_model" json:"judge_model"`
	JudgeAPIKey        string `mapstructure:"judge_api_key" json:"-"`
	JudgeBatch         int    `mapstructure:"judge_batch" json:"judge_batch"`
	JudgeEvidenceChars int    `mapstructure:"judge_evidence_chars" json:"judge_evidence_chars"`
	JudgeAnswerChars   int    `mapstructure:"judge_answer_chars" json:"judge_answer_chars"`
	TopK               int    `mapstructure:"top_k" json:"top_k"`
	LoopQueries        int    `mapstructure:"loop_queries" json:"loop_queries"`
	LoopK              int    `mapstructure:"loop_k" json:"loop_k"`
	SearchDocs         int    `mapstructure:"search_docs" json:"search_docs"`
	ChunkChars         int    `mapstructure:"chunk_chars" json:"chunk_chars"`
	AnswerTokens       int    `mapstructure:"answer_tokens" json:"answer_tokens"`
	Parallelism        int    `mapstructure:"parallelism" json:"parallelism"`
	ContinueEvery      int    `mapstructure:"continue_every" json:"continue_every"`
	EvidenceMaxChars   int    `mapstructure:"evidence_max_chars" json:"evidence_max_chars"`
	RecordAnswerChars  int    `mapstructure:"record_answer_chars" json:"record_answer_chars"`
	OutDir             string `mapstructure:"out_dir" json:"out_dir"`

	OutputsWait time.Duration `mapstructure:"outputs_wait" json:"outputs_wait"`
}

type Session struct {
	GoalMaxChars         int `mapstructure:"goal_max_chars" json:"goal_max_chars"`
	InstructionsMaxChars int `mapstructure:"instructions_max_chars" json:"instructions_max_chars"`
}

type Budget struct {
	MaxIterations int           `mapstructure:"max_iterations" json:"max_iterations"`
	MinIterations int           `mapstructure:"min_iterations" json:"min_iterations"`
	MaxWallClock  time.Duration `mapstructure:"max_wall_clock" json:"max_wall_clock"`
	OOMCap        float64       `mapstructure:"oom_cap" json:"oom_cap"`
	MaxTokens     int           `mapstructure:"max_tokens" json:"max_tokens"`
	TokenReserve  float64       `mapstructure:"token_reserve" json:"token_reserve"`
	Alpha         float64       `mapstructure:"alpha" json:"alpha"`
	PsiThreshold  float64       `mapstructure:"psi_threshold" json:"psi_threshold"`
	ZeroYieldStep float64       `mapstructure:"zero_yield_step" json:"zero_yield_step"`
	// The termination potential's gates (both loops).
	PsiQualityThreshold     float64 `mapstructure:"psi_quality_threshold" json:"psi_quality_threshold"`
	PsiReadinessTemperature float64 `mapstructure:"psi_readiness_temperature" json:"psi_readiness_temperature"`
	PsiPressureCenter       float64 `mapstructure:"psi_pressure_center" json:"psi_pressure_center"`
	PsiPressureTemperature  float64 `mapstructure:"psi_pressure_temperature" json:"psi_pressure_temperature"`
	PsiResourceCenter       float64 `mapstructure:"psi_resource_center" json:"psi_resource_center"`
	PsiResourceTemperature  float64 `mapstructure:"psi_resource_temperature" json:"psi_resource_temperature"`
}

// PsiParams are the termination potential's gates, for both loops.
func (b Budget) PsiParams() algebra.PsiParams {
	return algebra.PsiParams{
		MinIters:            float64(b.MinIterations),
		QualityThreshold:    b.PsiQualityThreshold,
		IterTemperature:     b.PsiReadinessTemperature,
		PressureCenter:      b.PsiPressureCenter,
		PressureTemperature: b.PsiPressureTemperature,
		ResourceCenter:      b.PsiResourceCenter,
		ResourceTemperature: b.PsiResourceTemperature,
	}
}

type Thinking struct {
	MinTokens    int `mapstructure:"min_tokens" json:"min_tokens"`
	MaxTokens    int `mapstructure:"max_tokens" json:"max_tokens"`
	OutputTokens int `mapstructure:"output_tokens" json:"output_tokens"`
}

type LLM struct {
	BaseURL           string        `mapstructure:"base_url" json:"base_url"`
	Model             string        `mapstructure:"model" json:"model"`
	APIKey            string        `mapstructure:"api_key" json:"-"`
	Timeout           time.Duration `mapstructure:"timeout" json:"timeout"`
	JSONSchema        bool          `mapstructure:"json_schema" json:"json_schema"`
	JSONSchemaLoose   bool          `mapstructure:"json_schema_loose" json:"json_schema_loose"`
	Seed              int           `mapstructure:"seed" json:"seed"`
	ThinkingField     string        `mapstructure:"thinking_field" json:"thinking_field"`
	Stream            bool          `mapstructure:"stream" json:"stream"`
	Temperature       float64       `mapstructure:"temperature" json:"temperature"`
	MaxRepairAttempts int           `mapstructure:"max_repair_attempts" json:"max_repair_attempts"`
	ComposeTokens     int           `mapstructure:"compose_tokens" json:"compose_tokens"`
	OutageTolerance   time.Duration `mapstructure:"outage_tolerance" json:"outage_tolerance"`
	OutageMaxBackoff  time.Duration `mapstructure:"outage_max_backoff" json:"outage_max_backoff"`
	PricePrompt       float64       `mapstructure:"price_prompt_per_mtok" json:"price_prompt_per_mtok"`
	PriceCompletion   float64       `mapstructure:"price_completion_per_mtok" json:"price_completion_per_mtok"`
}

type Embed struct {
	BaseURL      string        `mapstructure:"base_url" json:"base_url"`
	Model        string        `mapstructure:"model" json:"model"`
	APIKey       string        `mapstructure:"api_key" json:"-"`
	Timeout      time.Duration `mapstructure:"timeout" json:"timeout"`
	BatchSize    int           `mapstructure:"batch_size" json:"batch_size"`
	QueryPrefix  string        `mapstructure:"query_prefix" json:"query_prefix"`
	DocPrefix    string        `mapstructure:"doc_prefix" json:"doc_prefix"`
	PricePerMTok float64       `mapstructure:"price_per_mtok" json:"price_per_mtok"`
}

type Algebra struct {
	SVDK               int     `mapstructure:"svd_k" json:"svd_k"`
	MinEvidence        int     `mapstructure:"min_evidence" json:"min_evidence"`
	EMAAlpha           float64 `mapstructure:"ema_alpha" json:"ema_alpha"`
	MaxWarpAngle       float64 `mapstructure:"max_warp_angle" json:"max_warp_angle"`
	TaskDedupThreshold float64 `mapstructure:"task_dedup_threshold" json:"task_dedup_threshold"`
	SimilarThreshold   float64 `mapstructure:"similar_threshold" json:"similar_threshold"`
	SimilarMaxPerNode  int     `mapstructure:"similar_max_per_node" json:"similar_max_per_node"`
	SimilarNLI         bool    `mapstructure:"similar_nli" json:"similar_nli"`
	SimilarNLIBatch    int     `mapstructure:"similar_nli_batch" json:"similar_nli_batch"`
	SimilarNLIMaxPairs int     `mapstructure:"similar_nli_max_pairs" json:"similar_nli_max_pairs"`
	SimilarNLIChars    int     `mapstructure:"similar_nli_chars" json:"similar_nli_chars"`
	SimilarExactMax    int     `mapstructure:"similar_exact_max" json:"similar_exact_max"`
	SimilarCascade     int     `mapstructure:"similar_cascade_items" json:"similar_cascade_items"`
	PlateauTol         float64 `mapstructure:"plateau_tol" json:"plateau_tol"`
	AgentWeightGA      float64 `mapstructure:"agent_weight_ga" json:"agent_weight_ga"`
	AgentWeightTemp    float64 `mapstructure:"agent_weight_temporal" json:"agent_weight_temporal"`
	AgentWeightCov     float64 `mapstructure:"agent_weight_coverage" json:"agent_weight_coverage"`
	ResearchWeightGA   float64 `mapstructure:"research_weight_ga" json:"research_weight_ga"`
	ResearchWeightTemp float64 `mapstructure:"research_weight_temporal" json:"research_weight_temporal"`
	ResearchWeightCov  float64 `mapstructure:"research_weight_coverage" json:"research_weight_coverage"`
	AttentionK         int     `mapstructure:"attention_k" json:"attention_k"`
	AttentionTau       float64 `mapstructure:"attention_tau" json:"attention_tau"`
	CorroborationBoost float64 `mapstructure:"corroboration_boost" json:"corroboration_boost"`
	ContradictionPen   float64 `mapstructure:"contradiction_penalty" json:"contradiction_penalty"`
	StateRecency       float64 `mapstructure:"state_recency" json:"state_recency"`
	StateWeightEv      float64 `mapstructure:"state_weight_evidence" json:"state_weight_evidence"`
	StateWeightTask    float64 `mapstructure:"state_weight_task" json:"state_weight_task"`
	StateWeightActive  float64 `mapstructure:"state_weight_active" json:"state_weight_active"`
	NoveltyWeightDist  float64 `mapstructure:"novelty_weight_distance" json:"novelty_weight_distance"`
	SignalsKeep        int     `mapstructure:"signals_keep" json:"signals_keep"`
	SignalsRecompute   int     `mapstructure:"signals_recompute_every" json:"signals_recompute_every"`
	NoveltyWindow      int     `mapstructure:"novelty_window" json:"novelty_window"`
}

// SignalParams are the agent loop's signal parameters (Observe).
func (a Algebra) SignalParams() algebra.SignalParams {
	return algebra.SignalParams{
		AttentionK: a.AttentionK, AttentionTau: a.AttentionTau, StateRecency: a.StateRecency,
		StateWeights:          algebra.StateWeights{Evidence: a.StateWeightEv, Task: a.StateWeightTask, Active: a.StateWeightActive},
		NoveltyDistanceWeight: a.NoveltyWeightDist,
		Incremental:           algebra.IncrementalParams{Keep: a.SignalsKeep, RecomputeEvery: a.SignalsRecompute, NoveltyWindow: a.NoveltyWindow},
	}
}

// AgentWeights are the agent loop's convergence weights.
func (a Algebra) AgentWeights() algebra.ConvergenceWeights {
	return algebra.ConvergenceWeights{GA: a.AgentWeightGA, Temporal: a.AgentWeightTemp, Coverage: a.AgentWeightCov}
}

// ResearchWeights are the research loop's convergence weights.
func (a Algebra) ResearchWeights() algebra.ConvergenceWeights {
	return algebra.ConvergenceWeights{GA: a.ResearchWeightGA, Temporal: a.ResearchWeightTemp, Coverage: a.ResearchWeightCov}
}

type Context struct {
	TokenBudget   int     `mapstructure:"token_budget" json:"token_budget"`
	MaxCandidates int     `mapstructure:"max_candidates" json:"max_candidates"`
	PPRAlpha      float64 `mapstructure:"ppr_alpha" json:"ppr_alpha"`
	PPRTol        float64 `mapstructure:"ppr_tol" json:"ppr_tol"`
	PPRMaxIter    int     `mapstructure:"ppr_max_iter" json:"ppr_max_iter"`
	// lane expand (#14): the local push of Expand
	PPRPushTol   float64 `mapstructure:"ppr_push_tol" json:"ppr_push_tol"`
	PPRMaxNodes  int     `mapstructure:"ppr_max_nodes" json:"ppr_max_nodes"`
	PPRMaxPushes int     `mapstructure:"ppr_max_pushes" json:"ppr_max_pushes"`
	GAWeightLow  float64 `mapstructure:"ga_weight_low" json:"ga_weight_low"`
	GAWeightHigh float64 `mapstructure:"ga_weight_high" json:"ga_weight_high"`
	BetaMin      float64 `mapstructure:"beta_min" json:"beta_min"`
	BetaMax      float64 `mapstructure:"beta_max" json:"beta_max"`
}

type Research struct {
	CorpusDir           string        `mapstructure:"corpus_dir" json:"corpus_dir"`
	SearxngURL          string        `mapstructure:"searxng_url" json:"searxng_url"`
	QueryDedupThreshold float64       `mapstructure:"query_dedup_threshold" json:"query_dedup_threshold"`
	MaxSearches         int           `mapstructure:"max_searches" json:"max_searches"`
	MaxSearchesPerIter  int           `mapstructure:"max_searches_per_iteration" json:"max_searches_per_iteration"`
	PsiThreshold        float64       `mapstructure:"psi_threshold" json:"psi_threshold"`
	MinBatches          int           `mapstructure:"min_batches" json:"min_batches"`
	AttentionK          int           `mapstructure:"attention_k" json:"attention_k"`
	StrengthGoalWeight  float64       `mapstructure:"strength_goal_weight" json:"strength_goal_weight"`
	StrengthGainWeight  float64       `mapstructure:"strength_gain_weight" json:"strength_gain_weight"`
	PriorPDF            float64       `mapstructure:"prior_pdf" json:"prior_pdf"`
	PriorHTML           float64       `mapstructure:"prior_html" json:"prior_html"`
	PriorText           float64       `mapstructure:"prior_text" json:"prior_text"`
	PriorTranscript     float64       `mapstructure:"prior_transcript" json:"prior_transcript"`
	PriorLLM            float64       `mapstructure:"prior_llm" json:"prior_llm"`
	PriorOther          float64       `mapstructure:"prior_other" json:"prior_other"`
	LLMEvidenceStrength float64       `mapstructure:"llm_evidence_strength" json:"llm_evidence_strength"`
	DiscoverLimit       int           `mapstructure:"discover_limit" json:"discover_limit"`
	BatchSize           int           `mapstructure:"batch_size" json:"batch_size"`
	MaxPages            int           `mapstructure:"max_pages" json:"max_pages"`
	SeedSearch          bool          `mapstructure:"seed_search" json:"seed_search"`
	SeedQueries         int           `mapstructure:"seed_queries" json:"seed_queries"`
	FollowDepth         int           `mapstructure:"follow_depth" json:"follow_depth"`
	FollowLinks         int           `mapstructure:"follow_links" json:"follow_links"`
	MinTime             time.Duration `mapstructure:"min_time" json:"min_time"`
	MaxTime             time.Duration `mapstructure:"max_time" json:"max_time"`
	MaxPageBytes        int           `mapstructure:"max_page_bytes" json:"max_page_bytes"`
	ChunkChars          int           `mapstructure:"chunk_chars" json:"chunk_chars"`
	MaxChunksPerPage    int           `mapstructure:"max_chunks_per_page" json:"max_chunks_per_page"`
	MaxChunksEmbedded   int           `mapstructure:"max_chunks_embedded" json:"max_chunks_embedded"`
	CorpusIndexDir      string        `mapstructure:"corpus_index_dir" json:"corpus_index_dir"`
	CorpusCandidates    int           `mapstructure:"corpus_candidates" json:"corpus_candidates"`
	CorpusRRFK          float64       `mapstructure:"corpus_rrf_k" json:"corpus_rrf_k"`
	CorpusDense         int           `mapstructure:"corpus_dense" json:"corpus_dense"`
	CorpusDenseMax      int           `mapstructure:"corpus_dense_max" json:"corpus_dense_max"`
	CorpusDenseWait     time.Duration `mapstructure:"corpus_dense_wait" json:"corpus_dense_wait"`
	CorpusDedup         float64       `mapstructure:"corpus_dedup" json:"corpus_dedup"`
	IngestLambda        float64       `mapstructure:"ingest_lambda" json:"ingest_lambda"`
	IngestMaxChars      int           `mapstructure:"ingest_max_chars" json:"ingest_max_chars"`
	IngestHitsInOrder   bool          `mapstructure:"ingest_hits_in_order" json:"ingest_hits_in_order"`
	IngestMinTrim       int           `mapstructure:"ingest_min_trim" json:"ingest_min_trim"`
	MaxTitleChars       int           `mapstructure:"max_title_chars" json:"max_title_chars"`
	MaxURLBytes         int           `mapstructure:"max_url_bytes" json:"max_url_bytes"`
	MaxTextBytes        int           `mapstructure:"max_text_bytes" json:"max_text_bytes"`
	ChildMemoryBytes    int           `mapstructure:"child_memory_bytes" json:"child_memory_bytes"`
	ProxyIdleTimeout    time.Duration `mapstructure:"proxy_idle_timeout" json:"proxy_idle_timeout"`
	SearxngEngines      string        `mapstructure:"searxng_engines" json:"searxng_engines"`
	SearxngCategories   string        `mapstructure:"searxng_categories" json:"searxng_categories"`
	SearxngLanguage     string        `mapstructure:"searxng_language" json:"searxng_language"`
	SearxngPages        int           `mapstructure:"searxng_pages" json:"searxng_pages"`
	SearxngTimeout      time.Duration `mapstructure:"searxng_timeout" json:"searxng_timeout"`
	SearxngRetries      int           `mapstructure:"searxng_retries" json:"searxng_retries"`
	Providers           string        `mapstructure:"providers" json:"providers"`
	SearchAttempts      int           `mapstructure:"search_attempts" json:"search_attempts"`
	SearchMaxRetryAfter time.Duration `mapstructure:"search_max_retry_after" json:"search_max_retry_after"`
	SearchWait          time.Duration `mapstructure:"search_wait" json:"search_wait"`
	SearchTimeout       time.Duration `mapstructure:"search_timeout" json:"search_timeout"`
	WikipediaURL        string        `mapstructure:"wikipedia_url" json:"wikipedia_url"`
	WikipediaLanguage   string        `mapstructure:"wikipedia_language" json:"wikipedia_language"`
	ArxivURL            string        `mapstructure:"arxiv_url" json:"arxiv_url"`
	TavilyURL           string        `mapstructure:"tavily_url" json:"tavily_url"`
	TavilyAPIKey        string        `mapstructure:"tavily_api_key" json:"-"`
	BraveURL            string        `mapstructure:"brave_url" json:"brave_url"`
	BraveAPIKey         string        `mapstructure:"brave_api_key" json:"-"`
	// Rate is per provider family: Discover calls per second on its task
	// queue, a worker-side limit (TaskQueueActivitiesPerSecond).
	Rate             ProviderRates `mapstructure:"rate" json:"rate"`
	BrowserPath      string        `mapstructure:"browser_path" json:"browser_path"`
	BrowserTabs      int           `mapstructure:"browser_tabs" json:"browser_tabs"`
	PageTimeout      time.Duration `mapstructure:"page_timeout" json:"page_timeout"`
	BrowserRunIdle   time.Duration `mapstructure:"browser_run_idle" json:"browser_run_idle"`
	AllowLoopback    bool          `mapstructure:"allow_loopback" json:"allow_loopback"`
	AllowPrivate     bool          `mapstructure:"allow_private" json:"allow_private"`
	AllowedPorts     string        `mapstructure:"allowed_ports" json:"allowed_ports"`
	MediaDir         string        `mapstructure:"media_dir" json:"media_dir"`
	MediaMinBytes    int           `mapstructure:"media_min_bytes" json:"media_min_bytes"`
	MaxMediaBytes    int           `mapstructure:"max_media_bytes" json:"max_media_bytes"`
	MaxMediaPerPage  int           `mapstructure:"max_media_per_page" json:"max_media_per_page"`
	PdftotextPath    string        `mapstructure:"pdftotext_path" json:"pdftotext_path"`
	PDFMaxPages      int           `mapstructure:"pdf_max_pages" json:"pdf_max_pages"`
	WhisperURL       string        `mapstructure:"whisper_url" json:"whisper_url"`
	WhisperTimeout   time.Duration `mapstructure:"whisper_timeout" json:"whisper_timeout"`
	WhisperTranslate bool          `mapstructure:"whisper_translate" json:"whisper_translate"`
	FFmpegPath       string        `mapstructure:"ffmpeg_path" json:"ffmpeg_path"`
	MaxMediaDuration time.Duration `mapstructure:"max_media_duration" json:"max_media_duration"`
}

// ProviderRates are the Discover rates of the web provider families.
type ProviderRates struct {
	SearXNG   float64 `mapstructure:"searxng" json:"searxng"`
	Wikipedia float64 `mapstructure:"wikipedia" json:"wikipedia"`
	Arxiv     float64 `mapstructure:"arxiv" json:"arxiv"`
	Tavily    float64 `mapstructure:"tavily" json:"tavily"`
	Brave     float64 `mapstructure:"brave" json:"brave"`
}

type Assembly struct {
	GroupTokens       int     `mapstructure:"group_tokens" json:"group_tokens"`
	MMRLambda         float64 `mapstructure:"mmr_lambda" json:"mmr_lambda"`
	DoneEvidence      int     `mapstructure:"done_evidence" json:"done_evidence"`
	DoneEvidenceChars int     `mapstructure:"done_evidence_chars" json:"done_evidence_chars"`
	LeafEvidence      int     `mapstructure:"leaf_evidence" json:"leaf_evidence"`
	LeafEvidenceChars int     `mapstructure:"leaf_evidence_chars" json:"leaf_evidence_chars"`
	VerifyCitations   bool    `mapstructure:"verify_citations" json:"verify_citations"`
	VerifyBatchTokens int     `mapstructure:"verify_batch_tokens" json:"verify_batch_tokens"`
	VerifySourceChars int     `mapstructure:"verify_source_chars" json:"verify_source_chars"`
	ReciteRead        bool    `mapstructure:"recite_read" json:"recite_read"`
	Synthesis         bool    `mapstructure:"synthesis" json:"synthesis"`
	SectionFacts      int     `mapstructure:"section_facts" json:"section_facts"`
	FactFollow        int     `mapstructure:"fact_follow" json:"fact_follow"`
	SummaryChars      int     `mapstructure:"summary_chars" json:"summary_chars"`
	SummaryFacts      int     `mapstructure:"summary_facts" json:"summary_facts"`
	SummaryEvidence   int     `mapstructure:"summary_evidence" json:"summary_evidence"`
	SummaryPassages   int     `mapstructure:"summary_passages" json:"summary_passages"`
}

type DIN struct {
	MaxOps         int  `mapstructure:"max_ops" json:"max_ops"`
	MaxStringChars int  `mapstructure:"max_string_chars" json:"max_string_chars"`
	KeepCutOps     bool `mapstructure:"keep_cut_ops" json:"keep_cut_ops"`
}

type Graph struct {
	Backend  string `mapstructure:"backend" json:"backend"`
	Path     string `mapstructure:"path" json:"path"`
	Neo4jURI string `mapstructure:"neo4j_uri" json:"neo4j_uri"`
	// lane ann: the embedded store's HNSW index
	ANNMinItems       int    `mapstructure:"ann_min_items" json:"ann_min_items"`
	ANNM              int    `mapstructure:"ann_m" json:"ann_m"`
	ANNEfConstruction int    `mapstructure:"ann_ef_construction" json:"ann_ef_construction"`
	ANNEfSearch       int    `mapstructure:"ann_ef_search" json:"ann_ef_search"`
	ANNThresholdK     int    `mapstructure:"ann_threshold_k" json:"ann_threshold_k"`
	CacheMiB          int    `mapstructure:"cache_mib" json:"cache_mib"`
	Neo4jUser         string `mapstructure:"neo4j_user" json:"neo4j_user"`
	Neo4jPassword     string `mapstructure:"neo4j_password" json:"-"`
	Neo4jDatabase     string `mapstructure:"neo4j_database" json:"neo4j_database"`
	// lane ann (#14): the Neo4j store's walk cache
	Neo4jWalkCacheMiB int `mapstructure:"neo4j_walk_cache_mib" json:"neo4j_walk_cache_mib"`
	// the Neo4j store's concurrent vector statements
	Neo4jVectorStatements int `mapstructure:"neo4j_vector_statements" json:"neo4j_vector_statements"`
	// the Neo4j store's new items waiting outside the vector index
	Neo4jLabelBatch int `mapstructure:"neo4j_label_batch" json:"neo4j_label_batch"`
}

type Temporal struct {
	HostPort                   string        `mapstructure:"host_port" json:"host_port"`
	Namespace                  string        `mapstructure:"namespace" json:"namespace"`
	TaskQueue                  string        `mapstructure:"task_queue" json:"task_queue"`
	LLMQueue                   string        `mapstructure:"llm_queue" json:"llm_queue"`
	ResearchQueue              string        `mapstructure:"research_queue" json:"research_queue"`
	ContinueEvery              int           `mapstructure:"continue_every" json:"continue_every"`
	ActivityTimeout            time.Duration `mapstructure:"activity_timeout" json:"activity_timeout"`
	HeartbeatTimeout           time.Duration `mapstructure:"heartbeat_timeout" json:"heartbeat_timeout"`
	MaxPayloadBytes            int           `mapstructure:"max_payload_bytes" json:"max_payload_bytes"`
	SearchAttributes           bool          `mapstructure:"search_attributes" json:"search_attributes"`
	MaxConcurrentActivities    int           `mapstructure:"max_concurrent_activities" json:"max_concurrent_activities"`
	MaxConcurrentLLM           int           `mapstructure:"max_concurrent_llm" json:"max_concurrent_llm"`
	MaxConcurrentResearch      int           `mapstructure:"max_concurrent_research" json:"max_concurrent_research"`
	MaxConcurrentWorkflowTasks int           `mapstructure:"max_concurrent_workflow_tasks" json:"max_concurrent_workflow_tasks"`
	WorkflowTaskPollers        int           `mapstructure:"workflow_task_pollers" json:"workflow_task_pollers"`
	ActivityTaskPollers        int           `mapstructure:"activity_task_pollers" json:"activity_task_pollers"`
	GRPCGzip                   bool          `mapstructure:"grpc_gzip" json:"grpc_gzip"`
	HeartbeatThrottle          float64       `mapstructure:"heartbeat_throttle" json:"heartbeat_throttle"`
}

// QueueLLM is the task queue of LLM activities.
func (t Temporal) QueueLLM() string { return orDefault(t.LLMQueue, t.TaskQueue) }

// QueueResearch is the task queue of Fetch and Transcribe.
func (t Temporal) QueueResearch() string { return orDefault(t.ResearchQueue, t.TaskQueue) }

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
