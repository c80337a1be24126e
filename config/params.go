package config

import "time"

// Kind is the type of a parameter's value.
type Kind int

const (
	Int Kind = iota
	Float
	String
	Bool
	Duration
)

// Param declares one parameter: its key, default, range and why it is set
// the way it is. The table below is the single source of every threshold the
// service uses; README's configuration section is checked against it.
type Param struct {
	Key     string
	Kind    Kind
	Default any
	Min     float64 // numeric kinds (durations in seconds); ignored when Min == Max == 0
	Max     float64
	Reason  string
}

func p(key string, kind Kind, def any, lo, hi float64, reason string) Param {
	return Param{Key: key, Kind: kind, Default: def, Min: lo, Max: hi, Reason: reason}
}

// Params is the parameter table. Order is the order of the README table.
var params = []Param{
	// session input
	p("session.goal_max_chars", Int, 4000, 16, 100000, "a goal is a question, not a document; bounds prompt size"),
	p("session.instructions_max_chars", Int, 4000, 0, 100000, "formatting guidance for assembly stays short"),

	// budget manager (seed 000 "Budget Management")
	p("budget.max_iterations", Int, 24, 1, 100000, "iteration resource; bottleneck max with wall clock"),
	p("budget.min_iterations", Int, 3, 1, 1000, "iter_readiness gate: no convergence stop before this"),
	p("budget.max_wall_clock", Duration, 30*time.Minute, 1, 7*24*3600, "wall-clock resource of one session"),
	p("budget.oom_cap", Float, 2.0, 1, 10, "hard stop at this multiple of max_wall_clock (seed: 2.0x)"),
	p("budget.max_tokens", Int, 4000000, 1000, 1e10, "hard token limit over every model call of the session (reasoning, composition, verification, research embeddings); tokens are not a pressure source (seed 000)"),
	p("budget.token_reserve", Float, 0.1, 0, 0.9, "share of max_tokens the loop leaves for assembly; composition past the limit falls back to the extractive report"),
	p("budget.alpha", Float, 4.0, 0.1, 20, "budget_horizon steepness (TerminationConfig.budget_alpha)"),
	p("budget.psi_threshold", Float, 0.82, 0.01, 1, "agent loop terminates when psi exceeds this"),
	p("budget.zero_yield_step", Float, 0.08, 0, 1, "convergence boost per consecutive iteration whose searches found nothing (seed 000 Zero-Yield Tracking: three add 0.24)"),
	// termination potential psi, both loops (seed 000 "Termination Potential")
	p("budget.psi_quality_threshold", Float, 0.15, 0, 1, "convergence quality (convergence x plateau) above which pressure acts at near-full strength; 0 = no quality gate"),
	p("budget.psi_readiness_temperature", Float, 4.0, 0.1, 100, "soft-gate temperature of iteration readiness around min_iterations - 0.5 (seed: T=4)"),
	p("budget.psi_pressure_center", Float, 0.85, 0, 1, "pressure at which pressure urgency is one half (seed: soft_gate(pressure, 0.85, T=8))"),
	p("budget.psi_pressure_temperature", Float, 8.0, 0.1, 100, "soft-gate temperature of pressure urgency (seed: T=8)"),
	p("budget.psi_resource_center", Float, 0.95, 0, 1, "resource progress at which resource urgency is one half (seed: soft_gate(resource_progress, 0.95, T=12))"),
	p("budget.psi_resource_temperature", Float, 12.0, 0.1, 100, "soft-gate temperature of resource urgency (seed: T=12)"),

	// agent loop guards (docs/loop-semantics.md)
	p("loop.noop_limit", Int, 2, 0, 1000, "consecutive iterations whose answer changed nothing before the session stops with no_progress: one warned retry, then stop (0 = warn and rotate only)"),
	p("loop.view_ready", Int, 32, 2, 1000, "ready tasks that cross into the workflow each iteration, best rank first: selection takes the first, the no-op rotation the second; the rest only fill history"),
	p("loop.view_neighbour", Int, 24, 1, 1000, "tasks per relation of the focus (children, siblings, dependencies, ancestors) in the DIN-Read and its payload: a small model reads two dozen lines; bounds every payload whatever the tree's size"),

	// thinking budget (seed 000 step 7)
	p("thinking.min_tokens", Int, 6144, 0, 1000000, "late, pressured iterations: terse synthesis"),
	p("thinking.max_tokens", Int, 12288, 0, 1000000, "early, novel iterations: room to reason"),
	p("thinking.output_tokens", Int, 4096, 64, 1000000, "answer tokens allowed on top of the thinking budget"),

	// LLM
	p("llm.base_url", String, "http://127.0.0.1:8080", 0, 0, "OpenAI-compatible chat server (llama.cpp default port)"),
	p("llm.model", String, "", 0, 0, "model name sent with each request; empty lets the server choose"),
	p("llm.api_key", String, "", 0, 0, "bearer token for hosted APIs"),
	p("llm.timeout", Duration, 10*time.Minute, 1, 24*3600, "one completion with a full thinking budget on a local GPU"),
	p("llm.json_schema", Bool, false, 0, 0, "send the DIN schema as response_format when the server supports it"),
	p("llm.json_schema_loose", Bool, false, 0, 0, "optional DIN fields left out of required (llama.cpp grammars enforce required literally); false = OpenAI strict form"),
	p("llm.seed", Int, 0, 0, 2147483647, "sampling seed sent with every call, 0 = none; fixed, a local model's session is reproducible"),
	p("llm.thinking_field", String, "", 0, 0, "request field carrying the thinking budget, empty when unsupported"),
	p("llm.stream", Bool, true, 0, 0, "stream tokens so the Reason activity can heartbeat"),
	p("llm.temperature", Float, 0.6, 0, 2, "reasoning models degrade at greedy decoding"),
	p("llm.max_repair_attempts", Int, 2, 0, 10, "repair calls (halved thinking) before the task goes back to PENDING"),
	p("llm.compose_tokens", Int, 4096, 256, 1000000, "output tokens of one assembly composition call"),
	p("llm.outage_tolerance", Duration, 30*time.Minute, 1, 30*24*3600, "how long a session waits out an unreachable, overloaded or timing-out model server before it assembles what it has"),
	p("llm.outage_max_backoff", Duration, 30*time.Second, 1, 3600, "longest pause between two tries of a model server that is down"),
	p("llm.price_prompt_per_mtok", Float, 0.0, 0, 10000, "price of a million prompt tokens (a local model costs nothing); gives the session's cost"),
	p("llm.price_completion_per_mtok", Float, 0.0, 0, 10000, "price of a million completion tokens"),

	// embeddings
	p("embed.base_url", String, "http://127.0.0.1:8081", 0, 0, "OpenAI-compatible embeddings server"),
	p("embed.model", String, "", 0, 0, "embedding model name"),
	p("embed.api_key", String, "", 0, 0, "bearer token for hosted APIs"),
	p("embed.timeout", Duration, 2*time.Minute, 1, 3600, "one embedding batch"),
	p("embed.price_per_mtok", Float, 0.0, 0, 10000, "price of a million embedded tokens"),
	p("embed.batch_size", Int, 32, 1, 4096, "texts per embeddings request"),
	p("embed.query_prefix", String, "Instruct: Given a research goal, retrieve relevant passages\nQuery: ", 0, 0, "instruction prefix of query embeddings (Qwen3-Embedding style)"),
	p("embed.doc_prefix", String, "", 0, 0, "prefix of document embeddings"),

	// embedding algebra (seed 003)
	p("algebra.svd_k", Int, 16, 1, 256, "rank of the evidence subspace (SharedSVD)"),
	p("algebra.min_evidence", Int, 3, 1, 1000, "fewer evidence rows give EMPTY_SVD"),
	p("algebra.ema_alpha", Float, 0.3, 0.01, 1, "EMA trackers' smoothing (seed 003)"),
	p("algebra.max_warp_angle", Float, 0.5, 0, 1.5707963, "geodesic warp angle at full pressure, radians"),
	p("algebra.task_dedup_threshold", Float, 0.95, 0.5, 1, "semantic_dedup_threshold: a new task this close maps onto an existing one"),
	p("algebra.similar_threshold", Float, 0.85, 0.3, 1, "cosine above which evidence gets a SIMILAR_TO edge"),
	p("algebra.similar_max_per_node", Int, 8, 0, 1000, "SIMILAR_TO degree cap per evidence item, strongest edges kept (0 = none): bounds PPR fan-out"),
	p("algebra.similar_nli", Bool, false, 0, 0, "label SIMILAR_TO pairs SUPPORTS/CONTRADICTS/NEUTRAL with the chat model (strength corroboration boost, contradiction penalty); off by default: docs/nli.md"),
	p("algebra.similar_nli_batch", Int, 8, 1, 256, "evidence pairs per NLI classification call: a small model keeps eight pairs apart, and a bad answer loses one batch"),
	p("algebra.similar_nli_max_pairs", Int, 16, 0, 100000, "new pairs classified per SIMILAR_TO sync, strongest first, the rest in later syncs: bounds an iteration's NLI calls (0 = no bound)"),
	// lane ann (#14): the bounded SIMILAR_TO cascade (docs/similarity-index.md)
	p("algebra.similar_exact_max", Int, 2000, 0, 1e9, "sessions up to this many evidence items sync SIMILAR_TO exactly (cascade to its end, else the full sync); past it the cascade is bounded and approximate (0 = always exact)"),
	p("algebra.similar_cascade_items", Int, 64, 0, 1e6, "displaced items one bounded SIMILAR_TO sync re-queries past similar_exact_max: bounds a sync's index queries to new + this; measured edge recall in docs/similarity-index.md"),
	p("algebra.similar_nli_chars", Int, 600, 50, 100000, "characters of each passage shown to the NLI classifier: about half an evidence chunk, the claim, not the page"),
	p("algebra.plateau_tol", Float, 0.05, 0.0001, 1, "convergence change below which the score counts as a plateau (seed 003 plateau indicator)"),
	p("algebra.agent_weight_ga", Float, 0.40, 0, 1, "agent convergence weight of goal alignment: is the evidence about the goal"),
	p("algebra.agent_weight_temporal", Float, 0.35, 0, 1, "agent convergence weight of state stability: has the focus settled"),
	p("algebra.agent_weight_coverage", Float, 0.25, 0, 1, "agent convergence weight of SVD coverage, noisy while the evidence matrix is small"),
	p("algebra.research_weight_ga", Float, 0.30, 0, 1, "research convergence weight of goal alignment"),
	p("algebra.research_weight_temporal", Float, 0.50, 0, 1, "research convergence weight of information-gain saturation, its primary stopping signal"),
	p("algebra.research_weight_coverage", Float, 0.20, 0, 1, "research convergence weight of coverage"),
	p("algebra.attention_k", Int, 10, 1, 1000, "evidence items the agent loop's evidence GA attends to, best-aligned first"),
	p("algebra.attention_tau", Float, 0.1, 0.001, 10, "softmax temperature of the evidence GA (both loops): a GA difference of tau is a factor e in weight"),
	p("algebra.corroboration_boost", Float, 0.30, 0, 1, "share of its headroom an item's strength gains when entailed by evidence from other sources (saturating in the edge weights)"),
	p("algebra.contradiction_penalty", Float, 0.10, 0, 1, "share of its strength an item loses when contradicted by evidence from other sources; smaller than the boost: a contradiction label is less reliable"),
	p("algebra.state_recency", Float, 2.0, 0, 20, "recency exponent of the state embedding: the newest evidence weighs e^r times the oldest (r=2: 7.4)"),
	p("algebra.state_weight_evidence", Float, 0.5, 0, 1, "state embedding weight of the evidence centroid: the focus is mostly what was found"),
	p("algebra.state_weight_task", Float, 0.3, 0, 1, "state embedding weight of the current task"),
	p("algebra.state_weight_active", Float, 0.2, 0, 1, "state embedding weight of the other ACTIVE tasks"),
	p("algebra.novelty_weight_distance", Float, 0.5, 0, 1, "share of novelty (thinking budget) from the evidence subspace's turn; the rest is the new evidence's information gain"),
	// incremental signals (docs/incremental-signals.md)
	p("algebra.signals_keep", Int, 4, 2, 100000, "signals blobs (~300 KB each) kept per session: the last one feeds the next Observe and ReadState, the rest spare a cold recompute after a retry or a short reset"),
	p("algebra.signals_recompute_every", Int, 20, 1, 100000, "Observe recomputes its aggregates from all evidence every this many iterations, bounding the incremental SVD's truncation drift and strengths refined since; 1 = every iteration (batch)"),
	p("algebra.novelty_window", Int, 4, 1, 100000, "iterations of earlier evidence the new evidence's information gain compares with: a bounded read, and what the session read lately is what makes a find redundant"),

	// context composition (DESIGN.md §6)
	p("context.token_budget", Int, 6000, 256, 1000000, "tokens of packed context in one DIN-Read"),
	p("context.max_candidates", Int, 64, 4, 2000, "PPR candidates returned by Expand (payload stays small)"),
	p("context.ppr_alpha", Float, 0.15, 0.01, 0.99, "PPR teleport probability"),
	p("context.ppr_tol", Float, 1e-6, 1e-12, 0.1, "PPR stops when the L1 change is below this"),
	p("context.ppr_max_iter", Int, 50, 1, 1000, "PPR power-iteration cap"),
	p("context.ppr_push_tol", Float, 1e-5, 1e-12, 0.1, "Expand's local PPR pushes a node while its residual is at least this times its weighted degree: each score is then within this times its node's degree of exact PPR (docs/local-ppr.md)"),
	p("context.ppr_max_nodes", Int, 20000, 1, 10000000, "nodes whose edges Expand's local PPR reads at most: bounds the read on a huge session; the residual left is logged as the error bound"),
	p("context.ppr_max_pushes", Int, 1000000, 1, 1000000000, "pushes of Expand's local PPR at most: bounds its CPU; the residual left is logged as the error bound"),
	p("context.ga_weight_low", Float, 0.3, 0, 1, "GA weight w0 at zero pressure"),
	p("context.ga_weight_high", Float, 0.8, 0, 1, "GA weight w1 at full pressure (shifted with p^2)"),
	p("context.beta_min", Float, 0.5, 0, 1, "AdaGReS redundancy weight of a diverse candidate pool (mean pairwise cosine 0): cosines have a baseline, half strength suffices"),
	p("context.beta_max", Float, 1.0, 0, 1, "AdaGReS redundancy weight of a redundant pool (mean cosine 1): an exact duplicate gains nothing; above 1 gains could turn negative"),

	// research (DESIGN.md §7)
	p("research.corpus_dir", String, "", 0, 0, "local corpus directory (HTML/Markdown/text) searched offline"),
	p("research.searxng_url", String, "", 0, 0, "SearXNG base URL; empty disables web search"),
	p("research.query_dedup_threshold", Float, 0.92, 0.5, 1, "a query this close to an earlier one of the same task is skipped"),
	p("research.max_searches", Int, 120, 1, 100000, "web searches (each a paid query and a research run of up to max_pages fetches) one session may start, seed included: 24 iterations at four each with room for the seed; a model asked to search 30 phrasings cannot spend more"),
	p("research.max_searches_per_iteration", Int, 6, 1, 1000, "web searches one model answer (or the seed: the goal and seed_queries) may start; the rest of its calls are dropped and counted in searches_over_budget"),
	p("research.psi_threshold", Float, 0.70, 0.01, 1, "research loop terminates when its psi exceeds this"),
	p("research.min_batches", Int, 1, 1, 100, "research psi's readiness gate: no convergence stop before this many batches"),
	p("research.attention_k", Int, 8, 1, 1000, "evidence items of one ingested batch its GA attends to: a batch is a few pages, fewer items than a session"),
	p("research.strength_goal_weight", Float, 0.6, 0, 1, "evidence strength weight of goal alignment: about the goal first"),
	p("research.strength_gain_weight", Float, 0.4, 0, 1, "evidence strength weight of information gain against evidence already held: new content second"),
	p("research.prior_pdf", Float, 1.0, 0, 1, "strength factor of PDFs (papers, reports)"),
	p("research.prior_html", Float, 0.95, 0, 1, "strength factor of web pages"),
	p("research.prior_text", Float, 0.95, 0, 1, "strength factor of plain text and Markdown"),
	p("research.prior_transcript", Float, 0.9, 0, 1, "strength factor of transcripts: speech-to-text noise"),
	p("research.prior_llm", Float, 0.8, 0, 1, "strength factor of model-written text scored by the strength formula"),
	p("research.prior_other", Float, 0.9, 0, 1, "strength factor of evidence of an unknown kind"),
	p("research.llm_evidence_strength", Float, 0.5, 0.01, 1, "strength of evidence the model writes in an evidence op: its own knowledge, not a page it read"),
	p("research.discover_limit", Int, 10, 1, 100, "URLs asked from a provider per query"),
	p("research.batch_size", Int, 3, 1, 32, "pages fetched per Fetch activity"),
	p("research.max_pages", Int, 12, 1, 1000, "pages per research run"),
	p("research.seed_search", Bool, true, 0, 0, "the session first searches its goal itself, before the model's first turn: the model reasons from evidence, and a model that never asks for a search still reads what single-shot retrieval would (docs/eval.md)"),
	p("research.seed_queries", Int, 3, 0, 8, "search queries one planning call adds to the seed search (0 = the goal only): a question with two parts is searched for each, as the loop baseline's plan reaches both hops of a multihop question (docs/seed-search.md)"),
	p("research.follow_depth", Int, 1, 0, 3, "links followed from fetched pages, in hops from a search result (0 = none): one hop reaches the pages a result points to, each further hop multiplies the queue by the page's link count"),
	p("research.follow_links", Int, 10, 0, 100, "followed links per fetched batch that enter the queue, best goal cosine first: bounds the embedding calls and the history payload"),
	p("research.min_time", Duration, 20*time.Second, 1, 3600, "research time budget at full pressure"),
	p("research.max_time", Duration, 5*time.Minute, 1, 24*3600, "research time budget at zero pressure"),
	p("research.max_page_bytes", Int, 4<<20, 1024, 1<<30, "response size cap per page"),
	p("research.chunk_chars", Int, 1200, 100, 100000, "target size of an evidence chunk (paragraph group)"),
	p("research.max_chunks_per_page", Int, 12, 1, 1000, "evidence items kept per page, best information gain first"),
	p("research.max_chunks_embedded", Int, 48, 1, 10000, "chunks of one page embedded, best lexical match to the query first: a 4 MiB page is thousands of chunks"),
	p("research.corpus_dense", Int, 40, 0, 1000, "passages nearest the query over the whole corpus added to BM25's candidates (the worker's dense stage, every passage embedded; 0 = BM25's candidates only): the search's top five held every gold string of 10 of the 16 paraphrase questions with it, 6 without (docs/research.md)"),
	p("research.corpus_dense_max", Int, 20000, 1, 10000000, "a corpus of more passages has no dense stage: about 30 MB of 384-d vectors and an hour of CPU embedding at the first build"),
	p("research.corpus_dense_wait", Duration, 30*time.Second, 0, 600, "how long a search waits for a dense stage being built before it searches without: a small corpus is searched the same way by a worker just (re)started, a large one holds no search longer than this"),
	p("research.corpus_dedup", Float, 0.5, 0, 1, "share of a passage's five-word sequences found in passages ranked above it at which a corpus search leaves it out (0 = keep all): the Debian Reference as HTML and PDF put 19% near-duplicates in BM25's top ten (docs/research.md)"),
	p("research.corpus_index_dir", String, "", 0, 0, "corpus passage index (bleve) and its embedding cache; empty: corpus-index next to graph.path"),
	p("research.corpus_candidates", Int, 40, 1, 1000, "BM25 passages the embedding model reranks per corpus search: reaches answers BM25 ranks low; a cold query embeds them in about a second"),
	p("research.corpus_rrf_k", Float, 10.0, 1, 1000, "reciprocal rank fusion constant of BM25 and embedding ranks: 10 let the top ranks of either list weigh more than Cormack et al.'s 60 and held the answer more often on both halves of the question set (docs/research.md)"),
	p("research.ingest_lambda", Float, 0.7, 0.5, 1, "Ingest keeps chunks by MMR: relevance weight λ vs novelty 1-λ; below 0.5 novelty would outweigh relevance"),
	p("research.ingest_max_chars", Int, 4800, 200, 1000000, "characters of evidence one Ingest keeps, most relevant first: about four passages, no more than BM25 top-5 (docs/research.md)"),
	// lane retrieval (issue #13): Ingest keeps the search's hits in its order and cuts the one that overflows.
	p("research.ingest_hits_in_order", Bool, true, 0, 0, "Ingest keeps a batch's search hits first in the run's ranking (hybrid: lexical and semantic), not re-judged by the embedding alone (docs/research.md)"),
	p("research.ingest_min_trim", Int, 200, 0, 1000000, "the chunk that overflows ingest_max_chars is cut to its best window for the query when at least this many characters are left (0: dropped)"),
	p("research.max_title_chars", Int, 300, 16, 10000, "a page's title is a label; a hostile page's title would be copied onto each of its evidence items"),
	p("research.max_url_bytes", Int, 2048, 64, 65536, "longest URL kept or fetched; longer ones are page-controlled noise"),
	p("research.max_text_bytes", Int, 2<<20, 1024, 1<<30, "text kept from one page, PDF or transcript; pdftotext is killed past it"),
	p("research.child_memory_bytes", Int, 1<<30, 64<<20, 1<<40, "address-space limit of pdftotext and ffmpeg child processes"),
	p("research.proxy_idle_timeout", Duration, time.Minute, 1, 3600, "egress-proxy tunnel closed after this long without traffic either way"),
	p("research.searxng_engines", String, "", 0, 0, "comma-separated SearXNG engines; empty uses the instance's defaults"),
	p("research.searxng_categories", String, "general", 0, 0, "comma-separated SearXNG categories"),
	p("research.searxng_language", String, "en", 0, 0, "SearXNG search language (en, de, all, ...)"),
	p("research.searxng_pages", Int, 2, 1, 10, "result pages asked per query until discover_limit hits are found"),
	p("research.searxng_timeout", Duration, 20*time.Second, 1, 600, "one SearXNG request (SearXNG waits for its slowest engine)"),
	p("research.searxng_retries", Int, 3, 0, 10, "retries after 429 or 5xx, exponential backoff honouring Retry-After"),
	// search providers (issue #13): the fallback chain is a session parameter;
	// URLs, keys and rates belong to the worker (keys never enter history)
	p("research.providers", String, "auto", 0, 0, "comma-separated search providers tried in order until one answers (corpus, searxng, wikipedia, arxiv, tavily, brave); auto = corpus if corpus_dir is set, then searxng if searxng_url is set: no query leaves the host unless configured"),
	p("research.search_attempts", Int, 3, 1, 10, "tries of one provider (429 after its Retry-After, 5xx, network) before the next provider is asked"),
	p("research.search_max_retry_after", Duration, time.Minute, 1, 3600, "a provider that asks to wait longer than this (Retry-After) is skipped for the next one at once"),
	p("research.search_wait", Duration, 5*time.Minute, 1, 24*3600, "longest a Discover call waits in its provider's rate-limited queue before the next provider is asked"),
	p("research.search_timeout", Duration, 20*time.Second, 1, 600, "one request to the Wikipedia, arXiv, Tavily or Brave API"),
	p("research.wikipedia_url", String, "", 0, 0, "MediaWiki base URL (BASE/w/api.php, BASE/wiki/Title); empty = https://<wikipedia_language>.wikipedia.org"),
	p("research.wikipedia_language", String, "en", 0, 0, "Wikipedia language edition (and Brave's search_lang)"),
	p("research.arxiv_url", String, "", 0, 0, "arXiv API base URL (BASE/api/query); empty = https://export.arxiv.org"),
	p("research.tavily_url", String, "", 0, 0, "Tavily API base URL (POST BASE/search); empty = https://api.tavily.com"),
	p("research.tavily_api_key", String, "", 0, 0, "Tavily API key (worker config only, never in history); needed when tavily is in research.providers"),
	p("research.brave_url", String, "", 0, 0, "Brave Search API base URL (BASE/res/v1/web/search); empty = https://api.search.brave.com"),
	p("research.brave_api_key", String, "", 0, 0, "Brave Search subscription token (worker config only, never in history); needed when brave is in research.providers"),
	p("research.rate.searxng", Float, 2.0, 0.01, 10000, "Discover calls per second on the SearXNG queue (TaskQueueActivitiesPerSecond): public instances ban bursts"),
	p("research.rate.wikipedia", Float, 5.0, 0.01, 10000, "Discover calls per second on the Wikipedia queue: Wikimedia asks API clients to keep a modest, serial rate"),
	p("research.rate.arxiv", Float, 0.33, 0.01, 10000, "Discover calls per second on the arXiv queue: arXiv asks for at most one request every 3 s"),
	p("research.rate.tavily", Float, 1.0, 0.01, 10000, "Discover calls per second on the Tavily queue: the development key's limit is 100 per minute"),
	p("research.rate.brave", Float, 1.0, 0.01, 10000, "Discover calls per second on the Brave queue: the free plan allows 1 request per second"),
	p("research.browser_path", String, "", 0, 0, "Chromium executable; empty searches PATH (chromium, chromium-browser, google-chrome); off = plain HTTP"),
	p("research.browser_tabs", Int, 2, 1, 16, "tabs fetching in parallel within one Fetch batch (one renderer each)"),
	p("research.page_timeout", Duration, 20*time.Second, 1, 600, "one page in the browser: navigation, load and JavaScript settle"),
	p("research.browser_run_idle", Duration, time.Minute, 1, 3600, "a research run's browser context and tabs are kept this long after its last batch for the next one (reuse saves a tab per page); then closed"),
	p("research.allow_loopback", Bool, false, 0, 0, "let fetchers reach loopback addresses (tests, a site on this host); off in production"),
	p("research.allow_private", Bool, false, 0, 0, "let fetchers reach private addresses (RFC 1918, CGNAT, ULA), e.g. an intranet; never cloud metadata addresses nor the worker's own service endpoints (docs/security.md)"),
	p("research.allowed_ports", String, "80,443", 0, 0, "comma-separated TCP ports fetchers may connect to (checked at dial time; * = any): a page must not aim the worker at SSH, databases or admin ports"),
	p("research.media_dir", String, "", 0, 0, "where captured media files are kept until transcribed; empty = <tmp>/lethe-media; must be a directory of the worker's user that no one else can write to (checked before each save)"),
	p("research.media_min_bytes", Int, 50<<10, 0, 1<<30, "media responses smaller than this are ignored (icons, UI sounds)"),
	p("research.max_media_bytes", Int, 64<<20, 1024, 1<<34, "size cap of one captured media file"),
	p("research.max_media_per_page", Int, 4, 0, 100, "media files of one page sent to transcription, largest first"),
	p("research.pdftotext_path", String, "pdftotext", 0, 0, "poppler's pdftotext turns PDFs into text; empty disables PDFs"),
	p("research.pdf_max_pages", Int, 200, 1, 100000, "pages of one PDF turned into text"),
	p("research.whisper_url", String, "", 0, 0, "whisper.cpp server base URL (POST /inference); empty disables transcription"),
	p("research.whisper_timeout", Duration, 10*time.Minute, 1, 24*3600, "one transcription request (whisper on a CPU is slower than real time)"),
	p("research.whisper_translate", Bool, true, 0, 0, "whisper translate mode: speech becomes English text, the language evidence is embedded in"),
	p("research.ffmpeg_path", String, "ffmpeg", 0, 0, "ffmpeg converts media to 16 kHz mono WAV for whisper"),
	p("research.max_media_duration", Duration, 30*time.Minute, 1, 24*3600, "audio beyond this is cut before transcription"),

	// assembly (DESIGN.md §8)
	p("assembly.group_tokens", Int, 6000, 256, 1000000, "section tokens per composition call (group_by_budget)"),
	p("assembly.mmr_lambda", Float, 0.7, 0, 1, "MMR relevance/diversity trade-off"),
	p("assembly.done_evidence", Int, 5, 0, 100, "[Source data] items appended to a DONE task's result"),
	p("assembly.done_evidence_chars", Int, 400, 50, 100000, "chars per [Source data] item"),
	p("assembly.leaf_evidence", Int, 20, 0, 1000, "evidence items of a leaf task without result"),
	p("assembly.leaf_evidence_chars", Int, 600, 50, 100000, "chars per leaf evidence item"),
	p("assembly.verify_citations", Bool, true, 0, 0, "judge every cited (sentence, source) pair against the source's evidence; remove unsupported citations (docs/citations.md)"),
	p("assembly.verify_batch_tokens", Int, 1200, 200, 1000000, "prompt tokens per verification call: a CPU model reads 1,200 tokens in about 20 s"),
	p("assembly.synthesis", Bool, true, 0, 0, "outline, one prose paragraph per section from its extracted evidence sentences, closing summary (docs/citations.md); false = one composition per group"),
	p("assembly.section_facts", Int, 6, 1, 100, "evidence sentences a section's paragraph is written from: six fit a 1,500-token context with room for the answer"),
	p("assembly.fact_follow", Int, 3, 0, 5, "sentences after each picked evidence sentence that join it (within 400 characters): the answer often follows the sentence that names the subject; 3 held the most gold strings on both halves of the question set (docs/research.md, Fact recall)"),
	p("assembly.summary_chars", Int, 3000, 200, 1000000, "chars of the sections the summary call reads (about 750 tokens)"),
	p("assembly.summary_facts", Int, 4, 0, 20, "evidence sentences for the goal itself the summary reads beside the sections (0 = the sections only): it answers the question when no section's facts hold the answer, as a single-shot answer from the same passages would (docs/citations.md)"),
	p("assembly.summary_passages", Int, 5, 0, 20, "whole passages of the root's evidence, ranked for the goal (embedding and BM25, fused by reciprocal rank), the summary answers from in place of the goal's facts (0 = the facts): a small model answers from whole passages where the same passages cut to sentences lost the answer (docs/citations.md)"),
	p("assembly.summary_evidence", Int, 32, 1, 1000, "the root's evidence items nearest the goal that the summary's facts are picked from, beside the sections': bounds the assembly blob in a long session"),
	p("assembly.recite_read", Bool, true, 0, 0, "a sentence left with no supported citation is judged, in one more call per batch, against the passage of another source the session read that shares the most words with it, and cited there when supported: the composer often cites a neighbouring fact's source for a paraphrase that no text rule proves (docs/citations.md)"),
	p("assembly.verify_source_chars", Int, 600, 100, 100000, "evidence chars of the cited source shown per pair (the passages nearest the sentence)"),

	// DIN limits
	p("din.max_ops", Int, 32, 1, 1000, "operations accepted in one answer"),
	p("din.keep_cut_ops", Bool, true, 0, 0, "an answer the output limit cut inside its ops list keeps the ops written whole before the cut, when they are valid, instead of a repair call that a small model answers with the same cut list (docs/cut-answers.md)"),
	p("din.max_string_chars", Int, 8000, 64, 1000000, "longest text field the graph accepts"),

	// graph store
	p("graph.backend", String, "embedded", 0, 0, "embedded (single file) or neo4j"),
	p("graph.path", String, "lethe-data/graph.db", 0, 0, "embedded store file"),
	// lane ann (#14): the embedded store's HNSW index (worker-level: an in-memory structure of the store, like a Neo4j vector index's settings)
	p("graph.ann_min_items", Int, 2048, 0, 1e9, "embedded store: sessions from this many evidence items answer nearest-neighbour queries through the HNSW index, smaller ones by an exact scan (0 = always exact)"),
	p("graph.ann_m", Int, 16, 2, 256, "embedded store HNSW links per node (2x on layer 0): 16 found every pair over 0.8 on paged 64- and 384-dim data"),
	p("graph.ann_ef_construction", Int, 100, 1, 10000, "embedded store HNSW candidate list per insertion: build time against graph quality"),
	p("graph.ann_ef_search", Int, 64, 1, 10000, "embedded store HNSW candidate list of a nearest-cosine query (Ingest's novelty)"),
	p("graph.ann_threshold_k", Int, 16, 1, 4096, "embedded store: a threshold query (the SIMILAR_TO sync) first asks the HNSW index for this many nearest with a candidate list as long, widened fourfold while all are over the threshold; 16 costs half of 64 at 100k items for one point of pair recall (docs/similarity-index.md)"),
	p("graph.cache_mib", Int, 2048, 0, 1000000, "embedded store: MiB of session embeddings and HNSW indexes kept in memory between calls; past it the least recently used sessions are dropped and rebuilt from the file when next used (0 = no bound)"),
	p("graph.neo4j_uri", String, "bolt://127.0.0.1:7687", 0, 0, "Neo4j Bolt URI"),
	p("graph.neo4j_user", String, "neo4j", 0, 0, "Neo4j user"),
	p("graph.neo4j_password", String, "", 0, 0, "Neo4j password"),
	p("graph.neo4j_database", String, "neo4j", 0, 0, "Neo4j database"),
	p("graph.neo4j_walk_cache_mib", Int, 128, 0, 1000000, "Neo4j store: MiB of large tasks' evidence shapes (tasks of 256 items or more; about 2 KB an item at 384 dimensions) the worker keeps for Expand's walk, checked against each task's count on every use; a 6,000-item parent read whole was two thirds of the walk at 100k (docs/neo4j.md; 0 = off)"),
	p("graph.neo4j_vector_statements", Int, 2, 1, 64, "Neo4j store: read transactions at once a SIMILAR_TO sync splits its vector-index queries into; the server answers one statement's queries on one thread, ten at 100k items in 40 ms as one statement and 21 ms as two on a 2-core server (docs/neo4j.md)"),
	p("graph.neo4j_label_batch", Int, 256, 1, 1024, "Neo4j store: a session's new evidence items that wait outside the vector index, compared exactly by every call, before one call adds them; each addition is a write and a segment every query then searches (docs/neo4j.md, \"Labels in batches\"; 1 = every call)"),

	// temporal
	p("temporal.host_port", String, "127.0.0.1:7233", 0, 0, "Temporal frontend"),
	p("temporal.namespace", String, "default", 0, 0, "Temporal namespace"),
	p("temporal.task_queue", String, "lethe", 0, 0, "workflow and default activity task queue"),
	p("temporal.llm_queue", String, "", 0, 0, "task queue of LLM activities; empty = task_queue"),
	p("temporal.research_queue", String, "", 0, 0, "task queue of Fetch/Transcribe; empty = task_queue"),
	p("temporal.continue_every", Int, 50, 1, 100000, "continue-as-new after this many iterations in one run"),
	p("temporal.activity_timeout", Duration, 2*time.Minute, 1, 3600, "start-to-close of store and embedding activities: how long a dead worker holds one"),
	p("temporal.heartbeat_timeout", Duration, 10*time.Second, 1, 3600, "every activity heartbeats on a timer: a killed worker's activity is retried elsewhere after this"),
	p("temporal.max_payload_bytes", Int, 256<<10, 4096, 2<<20, "largest activity result or workflow payload; Temporal warns at 512 KiB and refuses 2 MiB"),
	p("temporal.search_attributes", Bool, true, 0, 0, "upsert LetheStatus etc. each iteration (register them on the namespace first)"),
	p("temporal.max_concurrent_activities", Int, 8, 1, 1000, "activities one worker runs at once on the default queue"),
	p("temporal.max_concurrent_llm", Int, 3, 1, 1000, "LLM calls one worker runs at once on temporal.llm_queue (unset queue: they share max_concurrent_activities): the local chat server decodes 3 prompts in one batch"),
	p("temporal.max_concurrent_research", Int, 2, 1, 1000, "Fetch/Transcribe activities one worker runs at once (each drives a browser)"),
	p("temporal.max_concurrent_workflow_tasks", Int, 16, 1, 1000, "workflow tasks one worker runs at once"),
	// lane load (docs/scaling.md): poller counts per worker and queue
	p("temporal.workflow_task_pollers", Int, 2, 1, 100, "long polls a worker keeps open for workflow tasks (the SDK's default 2)"),
	p("temporal.activity_task_pollers", Int, 2, 1, 100, "long polls a worker keeps open for activity tasks on each queue (the SDK's default 2)"),
	p("temporal.heartbeat_throttle", Float, 1.0/3, 0.05, 0.8, "share of temporal.heartbeat_timeout the worker may hold a heartbeat back before sending it: the SDK's own 0.8 left 2 s of a 10 s timeout for the round trip, and a loaded server timed live calls out; each heartbeat sent is a server write (a billed action on Temporal Cloud)"),
	p("temporal.grpc_gzip", Bool, true, 0, 0, "gzip the worker's gRPC requests to Temporal (the SDK's default); off saves worker and server CPU where the link is fast (docs/scaling.md)"),

	// control and telemetry
	p("control.max_extend_iterations", Int, 1000, 1, 100000, "largest extension one extend request may grant"),
	p("control.max_extend_wall_clock", Duration, 24*time.Hour, 1, 30*24*3600, "largest wall-clock extension one extend request may grant"),
	p("control.max_guide_chars", Int, 500, 1, 10000, "a guide note is a short steer, not a second prompt"),
	p("control.max_guides", Int, 8, 1, 100, "guide notes kept; the oldest is dropped beyond this"),
	p("telemetry.metrics_addr", String, "127.0.0.1:9464", 0, 0, "Prometheus /metrics listen address of the worker; empty disables"),

	// evaluation (docs/eval.md): the Evaluation workflow, its baselines and its judge
	p("eval.judge_base_url", String, "", 0, 0, "OpenAI-compatible server of the judge; empty = llm.base_url (the model under test judges)"),
	p("eval.judge_model", String, "", 0, 0, "judge model name; empty = llm.model"),
	p("eval.judge_api_key", String, "", 0, 0, "bearer token of the judge server; empty = llm.api_key"),
	p("eval.judge_batch", Int, 6, 1, 64, "cited sentences per entailment call: fewer calls, while a small judge still keeps the claims apart"),
	p("eval.judge_evidence_chars", Int, 1500, 100, 100000, "characters of a cited source the entailment judge reads (the window that best matches the sentence)"),
	p("eval.judge_answer_chars", Int, 6000, 200, 200000, "characters of an answer the correctness judge reads"),
	p("eval.top_k", Int, 8, 1, 100, "chunks the rag baseline answers from"),
	p("eval.loop_queries", Int, 3, 1, 10, "sub-queries the loop baseline plans (GPT-Researcher's default)"),
	p("eval.loop_k", Int, 3, 1, 100, "chunks the loop baseline keeps per sub-query"),
	p("eval.search_docs", Int, 5, 1, 100, "corpus documents a baseline query reads and chunks"),
	p("eval.chunk_chars", Int, 1000, 200, 20000, "chunk size of the baselines (research.Chunk target)"),
	p("eval.answer_tokens", Int, 1024, 64, 100000, "output tokens of a baseline answer call"),
	p("eval.parallelism", Int, 1, 1, 64, "questions in flight at once (each runs its systems side by side); 1 suits one local model server"),
	p("eval.continue_every", Int, 10, 1, 10000, "questions per workflow run before continue-as-new keeps history small"),
	p("eval.evidence_max_chars", Int, 2000000, 1000, 100000000, "characters of a session's evidence the Score activity reads for evidence recall and citations"),
	p("eval.record_answer_chars", Int, 4000, 0, 100000, "characters of each answer kept in the record (history and JSONL)"),
	p("eval.out_dir", String, "lethe-data/eval", 0, 0, "directory of the table, JSONL and plot (one subdirectory per evaluation)"),
	p("eval.outputs_wait", Duration, 24*time.Hour, 0, 30*24*3600, "how long an evaluation whose outputs cannot be written waits for the retry-outputs signal before it ends with the table in its result and no files; 0 = end at once"),
}

// Params returns a copy of the parameter table.
func Params() []Param { return append([]Param(nil), params...) }
