package activities

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"

	"github.com/lethe-research/lethe/algebra"
	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/llm"
	"github.com/lethe-research/lethe/research"
	"github.com/lethe-research/lethe/research/queue"
)

// denseWait is research.corpus_dense_wait for research.CorpusConfig,
// where 0 means its default: a configured 0 is no wait.
func denseWait(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// CorpusConfig is the local corpus of the worker's config: HTML, Markdown
// and text always; PDF when pdftotext is available; audio and video when a
// whisper server is configured (their text is the transcript). Its passage
// index lives in research.corpus_index_dir, by default corpus-index next to
// graph.path; passages are cut as Ingest cuts chunks. The caller sets the
// Embedder that reranks.
func CorpusConfig(cfg config.Config) research.CorpusConfig {
	r := cfg.Research
	cc := research.CorpusConfig{Root: r.CorpusDir, Extensions: research.DefaultCorpusExtensions(), Extractors: map[string]research.Extractor{},
		MaxMediaBytes: int64(r.MaxMediaBytes), Limits: researchLimits(cfg),
		// The index is the worker's and serves every session, so its passages
		// are cut at a fixed size, not at a session's research.chunk_chars
		// (which Ingest applies to what it reads): two workers with different
		// config files build the same index (docs/parameters.md).
		IndexDir: CorpusIndexDir(cfg), Chunk: research.IngestChunkConfig(research.DefaultChunkTarget),
		Candidates: r.CorpusCandidates, RRFK: r.CorpusRRFK, EmbedModel: cfg.Embed.Model, Dense: r.CorpusDense, DenseMax: r.CorpusDenseMax, DenseWait: denseWait(r.CorpusDenseWait),
		Dedup: corpusDedup(r.CorpusDedup)}
	if pdf := pdfConverter(cfg); pdf != nil {
		cc.Extensions = append(cc.Extensions, ".pdf")
		cc.Extractors[".pdf"] = pdf.Extractor()
	}
	if r.WhisperURL != "" {
		for ext, fn := range research.MediaExtractors() {
			cc.Extractors[ext] = fn
		}
		cc.Extensions = append(cc.Extensions, research.MediaExtensions()...)
	}
	return cc
}

// corpusDedup is research.corpus_dedup as CorpusConfig.Dedup takes it,
// where 0 is the default: the parameter's 0 keeps all passages.
func corpusDedup(share float64) float64 {
	if share == 0 {
		return -1
	}
	return share
}

// CorpusIndexDir is where the worker keeps its corpus index:
// research.corpus_index_dir, or corpus-index next to the graph file.
func CorpusIndexDir(cfg config.Config) string {
	if d := cfg.Research.CorpusIndexDir; d != "" {
		return d
	}
	return filepath.Join(filepath.Dir(cfg.Graph.Path), "corpus-index")
}

// researchLimits are the bounds on what a page controls (title, URL, text).
func researchLimits(cfg config.Config) research.Limits {
	r := cfg.Research
	return research.Limits{MaxTitleChars: r.MaxTitleChars, MaxURLBytes: r.MaxURLBytes, MaxTextBytes: r.MaxTextBytes}
}

func pdfConverter(cfg config.Config) *research.PDFConverter {
	r := cfg.Research
	if r.PdftotextPath == "" {
		return nil
	}
	pc := &research.PDFConverter{Path: r.PdftotextPath, MaxPages: r.PDFMaxPages, Limits: researchLimits(cfg), MemoryBytes: int64(r.ChildMemoryBytes)}
	if pc.Available() != nil {
		return nil
	}
	return pc
}

func mediaDir(cfg config.Config) string {
	if cfg.Research.MediaDir != "" {
		return cfg.Research.MediaDir
	}
	return filepath.Join(os.TempDir(), "lethe-media")
}

// staleMedia is the age past which a captured media file in media_dir is
// an orphan (its page was transcribed on another worker, or this worker was
// killed before Transcribe ran): far longer than a research run.
const staleMedia = 6 * time.Hour

// InitResearch builds a's research clients from the worker's config: the
// URL policy's allowances and URL cap, the policy-enforcing HTTP fetcher
// (PDFs, media, pages without a browser), the browser (unless
// research.browser_path is "off"; when it is empty and no Chromium is
// installed, pages are fetched by plain HTTP and Fetch says so in its log),
// the SearXNG provider and the STT pipeline. Media is captured only when a
// whisper server is configured: without one nothing would read it. A
// configured service that cannot work (a bad SearXNG URL, a named browser
// that does not exist) is an error. (A function, not a method: methods of
// Activities are registered as activities.)
func InitResearch(a *Activities) error {
	r := a.Cfg.Research
	lim := researchLimits(a.Cfg)
	if err := initPolicy(a); err != nil {
		return err
	}
	a.Web = research.NewHTTPFetcher(research.HTTPFetcherConfig{
		Policy: a.Policy, MaxPageBytes: int64(r.MaxPageBytes), MaxMediaBytes: int64(r.MaxMediaBytes),
		PDF: pdfConverter(a.Cfg), MediaDir: mediaDir(a.Cfg), Limits: lim, SkipMedia: r.WhisperURL == "",
	})
	a.Web.SweepMedia(staleMedia) // best effort: orphans of earlier runs
	if err := initBrowser(a, lim); err != nil {
		return err
	}
	if r.SearxngURL != "" {
		s, err := research.NewSearXNG(research.SearXNGConfig{
			BaseURL: r.SearxngURL, Engines: splitList(r.SearxngEngines), Categories: splitList(r.SearxngCategories),
			Language: r.SearxngLanguage, Pages: r.SearxngPages, Timeout: r.SearxngTimeout, Retries: r.SearxngRetries, Limits: lim,
		})
		if err != nil {
			return fmt.Errorf("research.searxng_url: %w", err)
		}
		a.Search = s
	}
	if err := initWebSearch(a, lim); err != nil {
		return err
	}
	if r.WhisperURL != "" {
		a.STT = &research.Transcriber{
			Whisper:     &research.WhisperClient{BaseURL: r.WhisperURL, Translate: r.WhisperTranslate, Timeout: r.WhisperTimeout},
			FFmpeg:      r.FFmpegPath,
			MaxDuration: r.MaxMediaDuration,
			MemoryBytes: int64(r.ChildMemoryBytes),
			Limits:      lim,
		}
	}
	return nil
}

// initPolicy sets the URL policy's allowances, URL cap and allowed ports,
// and, when loopback or private addresses are allowed, the worker's own
// service endpoints it refuses all the same: the allowance is for an
// intranet or a test site, not for the model server, the graph store or
// Temporal. A service whose address cannot be resolved then is an error,
// since the policy could not keep fetchers off it.
func initPolicy(a *Activities) error {
	r := a.Cfg.Research
	a.Policy.AllowLoopback = r.AllowLoopback
	a.Policy.AllowPrivate = r.AllowPrivate
	a.Policy.MaxURLBytes = r.MaxURLBytes
	ports, err := r.Ports()
	if err != nil {
		return err
	}
	a.Policy.AllowedPorts = ports
	if !r.AllowLoopback && !r.AllowPrivate {
		return nil // only non-global addresses are denied, and none is allowed
	}
	c := a.Cfg
	denied, skipped := research.ServiceEndpoints(context.Background(), nil, []string{
		c.LLM.BaseURL, c.Embed.BaseURL, c.Eval.JudgeBaseURL, c.Temporal.HostPort, c.Graph.Neo4jURI,
		r.SearxngURL, r.WhisperURL, c.Telemetry.MetricsAddr,
	})
	if len(skipped) > 0 {
		return fmt.Errorf("research.allow_loopback/allow_private: cannot tell the addresses of the worker's own services to keep fetchers off them: %s", config.RedactText(strings.Join(skipped, "; ")))
	}
	a.Policy.Denied = denied
	return nil
}

// initWebSearch builds the web search providers this worker can serve:
// SearXNG when its URL is set, Wikipedia and arXiv always (keyless; no
// request is sent unless a session names them in research.providers),
// Tavily and Brave when their keys are set. A configured URL that is not
// http(s) is an error.
func initWebSearch(a *Activities, lim research.Limits) error {
	r := a.Cfg.Research
	a.WebSearch = map[string]research.Provider{}
	if a.Search != nil {
		a.WebSearch[config.ProviderSearXNG] = a.Search
	}
	cfg := func(base, key string) research.WebSearchConfig {
		return research.WebSearchConfig{BaseURL: base, APIKey: key, Language: r.WikipediaLanguage, Timeout: r.SearchTimeout, Limits: lim}
	}
	type mk func(research.WebSearchConfig) (research.Provider, error)
	build := []struct {
		name, base, key string
		keyed           bool
		new             mk
	}{
		{config.ProviderWikipedia, r.WikipediaURL, "", false, func(c research.WebSearchConfig) (research.Provider, error) { return research.NewWikipedia(c) }},
		{config.ProviderArxiv, r.ArxivURL, "", false, func(c research.WebSearchConfig) (research.Provider, error) { return research.NewArxiv(c) }},
		{config.ProviderTavily, r.TavilyURL, r.TavilyAPIKey, true, func(c research.WebSearchConfig) (research.Provider, error) { return research.NewTavily(c) }},
		{config.ProviderBrave, r.BraveURL, r.BraveAPIKey, true, func(c research.WebSearchConfig) (research.Provider, error) { return research.NewBrave(c) }},
	}
	for _, b := range build {
		if b.keyed && b.key == "" {
			continue
		}
		p, err := b.new(cfg(b.base, b.key))
		if err != nil {
			return fmt.Errorf("research.%s_url: %w", b.name, err)
		}
		a.WebSearch[b.name] = p
	}
	return nil
}

// initBrowser starts nothing: it configures a.Browser (Chromium starts on
// the first Fetch). Media capture is off without a whisper server.
func initBrowser(a *Activities, lim research.Limits) error {
	r := a.Cfg.Research
	if r.BrowserPath == "off" {
		return nil
	}
	perPage := r.MaxMediaPerPage
	if perPage == 0 || r.WhisperURL == "" {
		perPage = -1 // BrowserConfig: negative = capture none (0 is its default)
	}
	b, err := research.NewBrowser(research.BrowserConfig{
		ExecPath: r.BrowserPath, Tabs: r.BrowserTabs, PageTimeout: r.PageTimeout, MaxPageBytes: int64(r.MaxPageBytes),
		MediaMinBytes: int64(r.MediaMinBytes), MaxMediaPerPage: perPage, HTTP: a.Web, Limits: lim, ProxyIdleTimeout: r.ProxyIdleTimeout,
		RunIdle: r.BrowserRunIdle,
	})
	switch {
	case err == nil:
		a.Browser = b
	case r.BrowserPath != "":
		return fmt.Errorf("research.browser_path: %w", err)
	}
	return nil
}

// CloseResearch stops the browser (if one was started) and closes the
// corpus index (releasing its slot for the next worker).
func (a *Activities) CloseResearch() {
	if a.Browser != nil {
		a.Browser.Close()
	}
	if a.Corpus != nil {
		_ = a.Corpus.Close()
	}
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// Discover asks the configured providers (the local corpus and/or SearXNG)
// for URLs and scores each title and snippet against the goal, so the
// workflow ranks its queue without vectors. A provider that fails is logged
// and skipped while another answers; when every provider fails the
// activity fails (and is retried).
func (a *Activities) Discover(ctx context.Context, in DiscoverInput) (DiscoverResult, error) {
	lg := logger(ctx, in.SessionID)
	// SearXNG's backoff and the embedding call can outlast a heartbeat
	// timeout; both are bounded by their own timeouts.
	stop := heartbeatWhile(ctx, func() any { return nil })
	defer stop()
	s, err := a.Store.GetSession(ctx, in.SessionID)
	if err != nil {
		return DiscoverResult{}, fmt.Errorf("discover session: %w", err)
	}
	var hits []research.Hit
	var searchTokens int // the corpus search's own embeddings
	if in.Provider == "" {
		hits, searchTokens, err = a.searchAll(ctx, lg, in)
	} else {
		hits, searchTokens, err = a.searchOne(ctx, lg, in)
	}
	if err != nil {
		return DiscoverResult{}, err
	}
	// The providers bound their hits; again here, before they reach the
	// embedder and history.
	hits = researchLimits(a.Cfg).Hits(hits)
	if len(hits) == 0 {
		return DiscoverResult{Provider: in.Provider, EmbedTokens: searchTokens}, nil
	}
	texts := make([]string, len(hits))
	for i, h := range hits {
		texts[i] = strings.TrimSpace(h.Title + "\n" + truncate(h.Snippet, 300))
	}
	embs, err := a.Embed.Embed(ctx, llm.Document, texts)
	if err != nil {
		return DiscoverResult{}, fmt.Errorf("discover embed: %w", err)
	}
	held, err := a.heldSources(ctx, in.SessionID, hits)
	if err != nil {
		return DiscoverResult{}, err
	}
	out := DiscoverResult{EmbedTokens: searchTokens + llm.EstimateAll(texts), Provider: in.Provider}
	for i, h := range hits {
		out.Candidates = append(out.Candidates, research.Candidate{
			URL: h.URL, Title: h.Title, Snippet: truncate(h.Snippet, 300), Provider: h.Provider,
			GoalCos: algebra.Cosine32(embs[i], s.GoalQueryEmb), Held: held[h.URL],
		})
	}
	if len(held) > 0 {
		lg.Info("discover: sources the session already holds", "query", in.Query, "held", len(held), "candidates", len(hits))
	}
	return out, nil
}

// heldSources is the set of hit URLs the session already holds evidence
// from, found as the provider gave them or as the queue normalizes them
// before Fetch (the evidence records the fetched URL).
func (a *Activities) heldSources(ctx context.Context, sessionID string, hits []research.Hit) (map[string]bool, error) {
	urls := make([]string, 0, 2*len(hits))
	for _, h := range hits {
		urls = append(urls, h.URL, queue.NormalizeURL(h.URL))
	}
	got, err := a.Store.FetchedSources(ctx, sessionID, urls)
	if err != nil {
		return nil, fmt.Errorf("discover held sources: %w", err)
	}
	held := map[string]bool{}
	for _, h := range hits {
		if got[h.URL] || got[queue.NormalizeURL(h.URL)] {
			held[h.URL] = true
		}
	}
	return held, nil
}

// searchAll asks every configured provider; nil hits and no error when
// none is configured, an error only when all of them fail.
func (a *Activities) searchAll(ctx context.Context, lg log.Logger, in DiscoverInput) ([]research.Hit, int, error) {
	var providers []research.Provider
	if a.Corpus != nil {
		providers = append(providers, a.Corpus)
	}
	if a.Search != nil {
		providers = append(providers, a.Search)
	}
	if len(providers) == 0 {
		lg.Warn("discover: no provider configured (research.corpus_dir, research.searxng_url)", "query", in.Query)
		return nil, 0, nil
	}
	var hits []research.Hit
	var errs []error
	tokens := 0
	for _, p := range providers {
		h, n, err := a.search(ctx, p, in)
		tokens += n
		if err != nil {
			if ctx.Err() != nil {
				return nil, tokens, ctx.Err()
			}
			lg.Warn("discover: provider failed", "provider", p.Name(), "query", in.Query, "error", err)
			errs = append(errs, fmt.Errorf("%s: %w", p.Name(), err))
			continue
		}
		hits = append(hits, h...)
	}
	if len(errs) == len(providers) {
		return nil, tokens, fmt.Errorf("discover %q: %w", in.Query, errors.Join(errs...))
	}
	return hits, tokens, nil
}

// search asks one provider; the corpus with the session's rerank settings,
// returning the tokens its rerank embedded.
func (a *Activities) search(ctx context.Context, p research.Provider, in DiscoverInput) ([]research.Hit, int, error) {
	if c, ok := p.(*research.Corpus); ok {
		return c.SearchWith(ctx, in.Query, in.Limit, research.SearchOptions{Candidates: in.CorpusCandidates, RRFK: in.CorpusRRFK})
	}
	h, err := p.Search(ctx, in.Query, in.Limit)
	return h, 0, err
}

// searchOne asks the one provider the workflow named. Its failure is
// classified for the workflow's fallback: a 429 is retried after the
// provider's Retry-After (NextRetryDelay) unless that is longer than
// in.MaxRetryAfter; a refused request (bad key, bad query, malformed
// answer) or a provider this worker cannot serve is non-retryable, so the
// next provider is asked at once; network errors and 5xx are retried by
// the activity's retry policy.
func (a *Activities) searchOne(ctx context.Context, lg log.Logger, in DiscoverInput) ([]research.Hit, int, error) {
	var p research.Provider
	if in.Provider == config.ProviderCorpus {
		if a.Corpus != nil {
			p = a.Corpus
		}
	} else if wp, ok := a.WebSearch[in.Provider]; ok {
		p = wp
	}
	if p == nil {
		err := fmt.Errorf("discover: provider %q is not configured on this worker (research.corpus_dir, research.searxng_url, research.tavily_api_key, research.brave_api_key)", in.Provider)
		return nil, 0, nonRetryable(ErrSearchFailed, err)
	}
	hits, tokens, err := a.search(ctx, p, in)
	if err == nil {
		lg.Info("discover", "provider", in.Provider, "query", in.Query, "hits", len(hits), "embed_tokens", tokens)
		return hits, tokens, nil
	}
	if ctx.Err() != nil {
		return nil, tokens, ctx.Err()
	}
	lg.Warn("discover: provider failed", "provider", in.Provider, "query", in.Query, "error", err)
	return nil, tokens, searchFailure(fmt.Errorf("discover %q on %s: %w", in.Query, in.Provider, err), in.MaxRetryAfter)
}

// searchFailure maps a provider's error to what the Discover retry policy
// and the workflow's fallback act on.
func searchFailure(err error, maxWait time.Duration) error {
	if maxWait <= 0 {
		maxWait = time.Minute
	}
	var se *research.SearchError
	if !errors.As(err, &se) {
		return err // not the provider's answer (e.g. the store): retried
	}
	switch {
	case se.RateLimited() && se.RetryAfter > maxWait:
		return nonRetryable(ErrSearchFailed, fmt.Errorf("%w (asks to wait %s, longer than research.search_max_retry_after %s)", err, se.RetryAfter, maxWait))
	case se.RateLimited():
		return temporal.NewApplicationErrorWithOptions(err.Error(), ErrRateLimited, temporal.ApplicationErrorOptions{
			Cause: err, NextRetryDelay: se.RetryAfter, // 0: the retry policy's backoff
		})
	case se.Retryable:
		return err
	}
	return nonRetryable(ErrSearchFailed, err)
}

func pagesKey(key string) string { return "pages/" + key }

func transcriptsKey(key string, page int) string { return fmt.Sprintf("transcripts/%s/%d", key, page) }

// heartbeatWhile records a heartbeat with the value of progress() every
// interval (a third of the heartbeat timeout, at most 10 s) until stop is
// called. Per-page heartbeats alone could be too far apart when a page
// runs close to its timeout; a stuck page is bounded by the page timeout,
// so these heartbeats never hide a hang for longer than that.
func heartbeatWhile(ctx context.Context, progress func() any) (stop func()) {
	every := 10 * time.Second
	if hb := activity.GetInfo(ctx).HeartbeatTimeout; hb > 0 {
		every = min(every, max(hb/3, 200*time.Millisecond))
	}
	return heartbeatEvery(ctx, every, progress)
}

// Fetch reads one batch of URLs and stages the documents in the graph store
// (never in history), one per URL in input order (a failed page stages an
// empty document). corpus:/// URLs are opened from the local corpus;
// http(s) URLs go through headless Chromium (PDFs and media by direct
// HTTP), or plain HTTP on a worker without a browser. It heartbeats per
// page and is cancellable: a cancelled batch stages nothing. A page that
// fails is reported and skipped, never fatal to the batch.
func (a *Activities) Fetch(ctx context.Context, in FetchInput) (FetchResult, error) {
	lg := logger(ctx, in.SessionID)
	docs := make([]research.Document, len(in.URLs))
	errs := make([]error, len(in.URLs))
	staged := false
	defer func() {
		if !staged { // cancelled, failed or panicked: nothing will transcribe the media
			for _, d := range docs {
				a.removeCaptured(d.Media)
			}
		}
	}()
	a.fetchBatch(ctx, lg, browserRunKey(in), in.URLs, docs, errs)
	if err := ctx.Err(); err != nil {
		return FetchResult{}, err
	}
	for _, err := range errs {
		if errors.Is(err, research.ErrBrowserStart) {
			// The browser, not the pages, failed: retry the batch (on this
			// worker with a fresh Chromium, or on another).
			return FetchResult{}, fmt.Errorf("fetch %s: %w", in.Key, err)
		}
	}
	out, failed := pageRefs(lg, in.URLs, docs, errs)
	if err := putBlob(ctx, a.Store, in.SessionID, pagesKey(in.Key), docs); err != nil {
		return FetchResult{}, err
	}
	staged = true
	m := activity.GetMetricsHandler(ctx)
	m.Counter("lethe_research_pages_total").Inc(int64(len(out.Pages) - failed))
	m.Counter("lethe_research_page_errors_total").Inc(int64(failed))
	return out, nil
}

// fetchBatch fills docs and errs for urls: corpus URLs from the corpus,
// the rest by the browser (or plain HTTP), heartbeating per page and on a
// timer.
func (a *Activities) fetchBatch(ctx context.Context, lg log.Logger, run string, urls []string, docs []research.Document, errs []error) {
	var web []int
	for i, u := range urls {
		if !strings.HasPrefix(u, research.CorpusScheme+":") {
			web = append(web, i)
			continue
		}
		if a.Corpus == nil {
			errs[i] = fmt.Errorf("%s: no local corpus configured", u)
			continue
		}
		docs[i], errs[i] = a.Corpus.Open(u)
	}
	var done atomic.Int64
	done.Store(int64(len(urls) - len(web)))
	activity.RecordHeartbeat(ctx, done.Load())
	stop := heartbeatWhile(ctx, func() any { return done.Load() })
	defer stop()
	page := func(j int, d research.Document, err error) {
		docs[web[j]], errs[web[j]] = d, err
		activity.RecordHeartbeat(ctx, done.Add(1))
	}
	webURLs := make([]string, len(web))
	for j, i := range web {
		webURLs[j] = urls[i]
	}
	switch {
	case len(web) == 0:
	case a.Browser != nil:
		a.Browser.FetchRun(ctx, run, webURLs, func(j int, r research.PageResult) { page(j, r.Doc, r.Err) })
	case a.Web != nil:
		lg.Warn("fetch: no browser on this worker; pages are read by plain HTTP (JavaScript is not run)")
		for j, u := range webURLs {
			if ctx.Err() != nil {
				break
			}
			d, err := a.Web.Fetch(ctx, u)
			page(j, d, err)
		}
	default:
		for _, i := range web {
			errs[i] = errors.New("no web fetcher configured on this worker")
		}
	}
}

// browserRunKey names the research run a Fetch batch belongs to: its
// session and its key without the batch number (research/<iteration>/
// <call>/<batch>), so that the run's batches share a browser context and
// its tabs, and no two runs do.
func browserRunKey(in FetchInput) string {
	key := in.Key
	if i := strings.LastIndexByte(key, '/'); i > 0 {
		key = key[:i]
	}
	return in.SessionID + "\x00" + key
}

// pageRefs describes the fetched pages for history (titles and URLs are
// bounded by the fetchers); a failed page's document is replaced by an
// empty one.
func pageRefs(lg log.Logger, urls []string, docs []research.Document, errs []error) (out FetchResult, failed int) {
	for i, u := range urls {
		ref := PageRef{URL: u}
		if err := errs[i]; err != nil {
			ref.Error = truncate(err.Error(), 300)
			lg.Warn("fetch failed", "url", u, "error", err)
			docs[i] = research.Document{URL: u}
			failed++
		} else {
			d := docs[i]
			ref.Title, ref.Kind, ref.Chars = d.Title, d.Kind, len(d.Text)
			if len(d.Media) > 0 {
				ref.Media = d.Media[0].URL
			}
		}
		out.Pages = append(out.Pages, ref)
	}
	return out, failed
}

// Transcribe turns the media of one staged page into transcript documents
// (media → 16 kHz mono WAV → whisper.cpp), staged next to the page for
// Ingest. A media file that cannot be transcribed is logged and skipped;
// the activity fails only when the staged batch cannot be read or written
// (or it is cancelled). The captured file on the Fetch worker's disk is
// used when it is there; otherwise (another worker fetched the page) the
// media is downloaded again from its URL under the same URL policy.
func (a *Activities) Transcribe(ctx context.Context, in TranscribeInput) (TranscribeResult, error) {
	lg := logger(ctx, in.SessionID)
	var docs []research.Document
	ok, err := getBlob(ctx, a.Store, in.SessionID, pagesKey(in.Key), &docs)
	if err != nil {
		return TranscribeResult{}, err
	}
	if !ok || in.Page < 0 || in.Page >= len(docs) {
		return TranscribeResult{}, nonRetryable(ErrInvalidInput, fmt.Errorf("transcribe: no staged page %d in batch %s", in.Page, in.Key))
	}
	d := docs[in.Page]
	// The captured files are handled once this returns, whatever the
	// outcome; a retry downloads the media again.
	defer a.removeCaptured(d.Media)
	res := TranscribeResult{Media: len(d.Media)}
	if len(d.Media) == 0 {
		return res, nil
	}
	if a.STT == nil {
		lg.Warn("transcribe: no whisper server configured (research.whisper_url); media skipped", "page", d.URL, "media", len(d.Media))
		res.Skipped = len(d.Media)
		return res, nil
	}
	media := d.Media
	if limit := a.Cfg.Research.MaxMediaPerPage; len(media) > limit {
		res.Skipped = len(media) - limit
		media = media[:limit]
	}
	var step atomic.Int64
	stop := heartbeatWhile(ctx, func() any { return step.Load() })
	defer stop()
	lim := researchLimits(a.Cfg)
	var out []research.Document
	for j, m := range media {
		step.Store(int64(j))
		activity.RecordHeartbeat(ctx, j)
		text, err := a.transcribeOne(ctx, in.SessionID, m)
		if err != nil {
			if ctx.Err() != nil {
				return TranscribeResult{}, ctx.Err()
			}
			lg.Warn("transcription failed; skipped", "page", d.URL, "media", m.URL, "error", err)
			res.Failed++
			continue
		}
		title := d.Title
		if title == "" {
			title = m.URL
		}
		out = append(out, research.Document{URL: m.URL, Title: lim.Title(title + " (transcript)"), Text: text, Kind: graph.KindTranscript, Bytes: int(m.Bytes)})
		res.Transcribed++
		res.Chars += len(text)
	}
	if err := putBlob(ctx, a.Store, in.SessionID, transcriptsKey(in.Key, in.Page), out); err != nil {
		return TranscribeResult{}, err
	}
	return res, nil
}

// removeCaptured deletes the captured media files of a page. Only files in
// this worker's media_dir are touched (never a corpus file).
func (a *Activities) removeCaptured(media []research.MediaRef) {
	dir, err := filepath.Abs(mediaDir(a.Cfg))
	if err != nil {
		return
	}
	for _, m := range media {
		if m.Path == "" {
			continue
		}
		p, err := filepath.Abs(m.Path)
		if err == nil && filepath.Dir(p) == dir {
			os.Remove(p)
		}
	}
}

// transcriptKey names the session's cached transcript of one media URL:
// pages that embed the same file (a site-wide podcast player) are
// transcribed once.
func transcriptKey(mediaURL string) string {
	return "transcript/" + graph.ContentHash(research.NormalizeURL(mediaURL))
}

func (a *Activities) transcribeOne(ctx context.Context, session string, m research.MediaRef) (string, error) {
	var cached string
	if ok, err := getBlob(ctx, a.Store, session, transcriptKey(m.URL), &cached); err != nil {
		return "", err
	} else if ok {
		return cached, nil
	}
	text, err := a.transcribeFile(ctx, m)
	if err != nil {
		return "", err
	}
	if err := putBlob(ctx, a.Store, session, transcriptKey(m.URL), text); err != nil {
		return "", err
	}
	return text, nil
}

func (a *Activities) transcribeFile(ctx context.Context, m research.MediaRef) (string, error) {
	path := m.Path
	if path != "" {
		if _, err := os.Stat(path); err != nil {
			path = ""
		}
	}
	switch {
	case path != "":
	case strings.HasPrefix(m.URL, research.CorpusScheme+":"):
		if a.Corpus == nil {
			return "", fmt.Errorf("%s: no local corpus configured", m.URL)
		}
		p, err := a.Corpus.LocalPath(m.URL)
		if err != nil {
			return "", err
		}
		path = p
	case a.Web != nil:
		ref, err := a.Web.DownloadMedia(ctx, m.URL, 0)
		if err != nil {
			return "", err
		}
		defer os.Remove(ref.Path) // a fresh download, used once
		path = ref.Path
	default:
		return "", errors.New("no web fetcher to download the media")
	}
	return a.STT.Transcribe(ctx, path)
}

// Ingest chunks the staged pages into paragraph groups, picks at most
// research.max_chunks_embedded of each page by a lexical match to the
// research query and task (research.SelectChunks), embeds those with the
// document prefix and keeps the batch's chunks by relevance to the query
// and task first and novelty against the evidence held second, MMR-style
// (research.SelectRelevant: research.ingest_lambda, at most
// research.max_chunks_per_page per page and research.ingest_max_chars in
// all); it scores their strength and persists them idempotently under the
// batch key. Titles and URLs are bounded again here (a page whose URL is
// over the cap is dropped). It heartbeats while it works and returns
// scalars only.
func (a *Activities) Ingest(ctx context.Context, in IngestInput) (IngestResult, error) {
	var done atomic.Int64
	activity.RecordHeartbeat(ctx, 0)
	stop := heartbeatWhile(ctx, func() any { return done.Load() })
	defer stop()
	docs, err := a.ingestDocs(ctx, in)
	if err != nil {
		return IngestResult{}, err
	}
	s, err := a.Store.GetSession(ctx, in.SessionID)
	if err != nil {
		return IngestResult{}, fmt.Errorf("ingest session: %w", err)
	}
	st := &ingestState{goal: algebra.ToFloat64(s.GoalQueryEmb), query: a.ingestQuery(ctx, in, s.Goal)}
	p := in.Params.WithDefaults()
	for i, d := range docs {
		if err := a.embedDoc(ctx, p, i, d, st); err != nil {
			return IngestResult{}, err
		}
		done.Store(int64(i + 1))
	}
	if err := a.judgeNovelty(ctx, in.SessionID, st); err != nil {
		return IngestResult{}, err
	}
	res := st.res
	if res.Chunks > 0 {
		res.MeanIG = st.igSum / float64(res.Chunks)
		if err := a.keepRelevant(ctx, in, p, docs, st); err != nil {
			return IngestResult{}, err
		}
	}
	if len(st.items) > 0 {
		ar, err := a.Store.AddEvidence(ctx, in.SessionID, "ingest/"+in.Key, in.Task, st.items)
		if err != nil {
			return IngestResult{}, fmt.Errorf("ingest persist %s: %w", in.Key, err)
		}
		res.New, res.Linked, res.Duplicates = ar.Added, ar.Linked, ar.Duplicates
		res.GA = algebra.GoalAlignment(0, algebra.AttentionGA(st.cos, st.strengths, p.AttentionK, p.AttentionTau), len(st.items))
	}
	if res.Coverage, err = a.taskCoverage(ctx, in.SessionID, in.Task, st.goal, p); err != nil {
		return IngestResult{}, err
	}
	var linkTokens int
	if res.Links, linkTokens, err = a.followLinks(ctx, in, s.GoalQueryEmb); err != nil {
		return IngestResult{}, err
	}
	res.EmbedTokens += linkTokens
	return res, nil
}

// followLinks returns the links of the staged pages that in.LinkDepth
// follows, scored like Discover's hits: the goal cosine of the embedding
// of their anchor text and URL words (research.LinkText). Links to pages
// of the batch, duplicates and links over the URL cap are left out, and
// so are corpus links on web pages; at most 8 × MaxLinks links are
// embedded (in page order) and the MaxLinks best are returned. The URL
// policy is not applied here: a followed link is fetched by Fetch like
// any discovered URL, under the same policy checks, before any connection.
func (a *Activities) followLinks(ctx context.Context, in IngestInput, goal []float32) (links []research.Candidate, embedTokens int, err error) {
	if in.MaxLinks <= 0 || len(in.LinkDepth) == 0 {
		return nil, 0, nil
	}
	var docs []research.Document
	if _, err := getBlob(ctx, a.Store, in.SessionID, pagesKey(in.Key), &docs); err != nil {
		return nil, 0, err
	}
	lim := researchLimits(a.Cfg)
	seen := map[string]bool{}
	for _, d := range docs {
		seen[research.NormalizeURL(d.URL)] = true
	}
	var cands []research.Candidate
	var texts []string
	for i, d := range docs {
		if i >= len(in.LinkDepth) || in.LinkDepth[i] <= 0 {
			continue
		}
		for _, l := range d.Links {
			key := research.NormalizeURL(l)
			if len(cands) >= 8*in.MaxLinks || seen[key] || !lim.URLOK(l) || !followable(d.URL, l) {
				continue
			}
			seen[key] = true
			anchor := d.LinkText[l]
			cands = append(cands, research.Candidate{URL: l, Title: lim.Title(anchor), Provider: "link", Depth: in.LinkDepth[i]})
			texts = append(texts, research.LinkText(anchor, l))
		}
	}
	if len(cands) == 0 {
		return nil, 0, nil
	}
	embs, err := a.Embed.Embed(ctx, llm.Document, texts)
	if err != nil {
		return nil, 0, fmt.Errorf("ingest: embed links: %w", err)
	}
	for i := range cands {
		cands[i].GoalCos = algebra.Cosine32(embs[i], goal)
	}
	cands = research.RankCandidates(cands, nil)
	return cands[:min(len(cands), in.MaxLinks)], llm.EstimateAll(texts), nil
}

// followable: http(s) links from any page; corpus links only from corpus
// pages (a web page cannot point the run into the local corpus).
func followable(page, link string) bool {
	switch {
	case strings.HasPrefix(link, "http://"), strings.HasPrefix(link, "https://"):
		return true
	case strings.HasPrefix(link, research.CorpusScheme+":"):
		return strings.HasPrefix(page, research.CorpusScheme+":")
	}
	return false
}

// ingestState accumulates one Ingest call.
type ingestState struct {
	goal      []float64
	query     string
	res       IngestResult
	cands     []ingestChunk
	items     []graph.Evidence
	igSum     float64
	cos       []float64
	strengths []float64
}

// ingestChunk is one embedded chunk of the batch.
type ingestChunk struct {
	page, order int  // page in the batch, chunk position in the page
	hit         bool // part of the search hit of a passage window (research.Document.Hit)
	text        string
	emb         []float32
	v           []float64
	ig, cg      float64 // information gain, goal cosine
	held        float64 // largest cosine with the evidence held before the batch (floored at 0)
}

// ingestDocs reads the staged pages of the batch and the transcripts of
// their media (absent when there was no media, no STT, or transcription
// failed), bounded again (defence in depth: the staged documents were
// bounded by the fetchers): titles cut, text cut, documents whose URL is
// over the cap dropped.
func (a *Activities) ingestDocs(ctx context.Context, in IngestInput) ([]research.Document, error) {
	var docs []research.Document
	if _, err := getBlob(ctx, a.Store, in.SessionID, pagesKey(in.Key), &docs); err != nil {
		return nil, err
	}
	for i, n := 0, len(docs); i < n; i++ {
		if len(docs[i].Media) == 0 {
			continue
		}
		var tr []research.Document
		if _, err := getBlob(ctx, a.Store, in.SessionID, transcriptsKey(in.Key, i), &tr); err != nil {
			return nil, err
		}
		docs = append(docs, tr...)
	}
	lim := researchLimits(a.Cfg)
	out := docs[:0]
	for _, d := range docs {
		if !lim.URLOK(d.URL) {
			logger(ctx, in.SessionID).Warn("ingest: page URL over research.max_url_bytes; dropped", "bytes", len(d.URL))
			continue
		}
		d.Title = lim.Title(d.Title)
		d.Text, _ = lim.Text(d.Text)
		out = append(out, d)
	}
	return out, nil
}

// ingestQuery is what chunks are selected against: the research query
// and the description of the task the research serves; the session goal
// when neither is known.
func (a *Activities) ingestQuery(ctx context.Context, in IngestInput, goal string) string {
	var parts []string
	if in.Query != "" {
		parts = append(parts, in.Query)
	}
	if tasks, err := a.Store.TasksByIDs(ctx, in.SessionID, []string{in.Task}); err == nil {
		for _, t := range tasks {
			parts = append(parts, t.Description)
		}
	}
	if strings.TrimSpace(strings.Join(parts, "")) == "" {
		parts = append(parts, goal)
	}
	return strings.Join(parts, "\n")
}

// embedDoc chunks one document (the chunker the corpus index uses), embeds
// its best lexical matches and adds them to st's candidates (judgeNovelty
// then scores them against what is held).
func (a *Activities) embedDoc(ctx context.Context, r IngestParams, page int, d research.Document, st *ingestState) error {
	// The hit mark of a passage window (d.Hit) is used with HitsInOrder
	// only: hits re-judged by the embedding alone measured worse than
	// relevance over the whole window (docs/research.md, "Retrieval").
	wd := research.Document{Text: d.Text}
	if r.HitsInOrder {
		wd.Hit = d.Hit
	}
	all, hit := research.WindowChunks(wd, research.IngestChunkConfig(r.ChunkChars))
	if len(all) == 0 {
		return nil
	}
	keep := research.WithHits(research.SelectChunks(all, st.query, r.MaxChunksEmbedded), hit)
	if len(keep) == 0 {
		return nil
	}
	chunks := make([]string, len(keep))
	for j, i := range keep {
		chunks[j] = all[i]
	}
	activity.RecordHeartbeat(ctx, st.res.Chunks)
	embs, err := a.Embed.Embed(ctx, llm.Document, chunks)
	if err != nil {
		return fmt.Errorf("ingest embed %s: %w", d.URL, err)
	}
	st.res.EmbedTokens += llm.EstimateAll(chunks)
	for j, e := range embs {
		v := algebra.ToFloat64(e)
		st.cands = append(st.cands, ingestChunk{page: page, order: keep[j], hit: hit[keep[j]], text: chunks[j], emb: e, v: v,
			cg: algebra.Cosine(v, st.goal)})
	}
	st.res.Chunks += len(chunks)
	return nil
}

// judgeNovelty gives each candidate its largest cosine with the evidence
// held (Store.NearestCosine: one read through the store's vector index,
// where Ingest used to read every evidence row of the session and compare
// each chunk with all of them, seconds per page at 100k evidence) and its
// information gain, the research loop's temporal signal: 1 − the largest
// cosine with the evidence held and the batch's earlier chunks, so that
// near-duplicates inside the batch count once. (A chunk repeated across
// the batch, from overlapping passage windows or mirrored pages, is
// judged each time: its gain is near 0 and the store deduplicates it by
// content hash.)
func (a *Activities) judgeNovelty(ctx context.Context, sid string, st *ingestState) error {
	if len(st.cands) == 0 {
		return nil
	}
	q := make([][]float32, len(st.cands))
	for i, c := range st.cands {
		q[i] = c.emb
	}
	held, err := a.Store.NearestCosine(ctx, sid, q)
	if err != nil {
		return fmt.Errorf("ingest novelty: %w", err)
	}
	for i := range st.cands {
		c := &st.cands[i]
		c.held = held[i]
		if algebra.Norm(c.v) == 0 {
			continue // no direction: no information, as algebra.InformationGain
		}
		best := held[i]
		for _, prev := range st.cands[:i] {
			best = max(best, algebra.Cosine(c.v, prev.v))
		}
		c.ig = 1 - algebra.Clamp01(best)
		st.igSum += c.ig
	}
	return nil
}

// keepRelevant selects the batch's chunks (research.SelectRelevant) and
// turns them into evidence items in page order.
func (a *Activities) keepRelevant(ctx context.Context, in IngestInput, p IngestParams, docs []research.Document, st *ingestState) error {
	qe, err := a.Embed.Embed(ctx, llm.Query, []string{st.query})
	if err != nil {
		return fmt.Errorf("ingest embed query: %w", err)
	}
	st.res.EmbedTokens += llm.EstimateAll([]string{st.query})
	q := algebra.ToFloat64(qe[0])
	cc := make([]research.ChunkCandidate, len(st.cands))
	for i, c := range st.cands {
		cc[i] = research.ChunkCandidate{Page: c.page, Chars: utf8.RuneCountInString(c.text), Relevance: algebra.Cosine(c.v, q), Held: c.held, Hit: c.hit}
	}
	sim := func(i, j int) float64 { return algebra.Cosine(st.cands[i].v, st.cands[j].v) }
	picks := research.SelectEvidence(cc, sim, research.SelectOptions{Lambda: p.Lambda, MaxPerPage: p.MaxChunksPerPage,
		MaxChars: p.MaxChars, HitsInOrder: p.HitsInOrder, MinTrim: p.MinTrim})
	picked := make([]int, len(picks))
	for k, pk := range picks {
		picked[k] = pk.Index
		if pk.Chars > 0 {
			if err := a.trimChunk(ctx, st, pk); err != nil {
				return err
			}
		}
	}
	sort.Slice(picked, func(x, y int) bool {
		a, b := st.cands[picked[x]], st.cands[picked[y]]
		return a.page < b.page || (a.page == b.page && a.order < b.order)
	})
	for _, i := range picked {
		c, d := st.cands[i], docs[st.cands[i].page]
		strength := p.Strength.Strength(c.cg, c.ig, d.Kind)
		st.items = append(st.items, graph.Evidence{
			SessionID: in.SessionID, Content: c.text, SourceURL: d.URL, Title: d.Title, Kind: d.Kind,
			Strength: strength, Embedding: c.emb, CreatedIter: in.Iteration,
		})
		st.cos, st.strengths = append(st.cos, c.cg), append(st.strengths, strength)
	}
	logger(ctx, in.SessionID).Debug("ingest: kept by relevance", "candidates", len(cc), "kept", len(picked))
	return nil
}

// trimChunk cuts the chunk of pk to its best window of pk.Chars characters
// for the query (research.BestWindow) and embeds what is kept, so that the
// evidence's vector and goal cosine are those of its text.
func (a *Activities) trimChunk(ctx context.Context, st *ingestState, pk research.Pick) error {
	c := &st.cands[pk.Index]
	text := research.BestWindow(c.text, st.query, pk.Chars)
	if text == "" || text == c.text {
		return nil
	}
	embs, err := a.Embed.Embed(ctx, llm.Document, []string{text})
	if err != nil {
		return fmt.Errorf("ingest embed trimmed chunk: %w", err)
	}
	st.res.EmbedTokens += llm.EstimateAll([]string{text})
	c.text, c.emb, c.v = text, embs[0], algebra.ToFloat64(embs[0])
	c.cg = algebra.Cosine(c.v, st.goal)
	return nil
}

// taskCoverage is how much of the goal the task's evidence subspace spans.
func (a *Activities) taskCoverage(ctx context.Context, session, task string, goal []float64, p IngestParams) (float64, error) {
	ev, err := a.Store.Evidence(ctx, session, task)
	if err != nil {
		return 0, fmt.Errorf("task coverage: %w", err)
	}
	rows := make([][]float64, len(ev))
	for i, e := range ev {
		rows[i] = algebra.ToFloat64(e.Embedding)
	}
	svd := algebra.ComputeSVD(rows, p.SVDK, p.MinEvidence, nil, 1) // seed 1: fixed for determinism, not a parameter
	return svd.Coverage(goal), nil
}
