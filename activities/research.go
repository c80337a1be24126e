package activities

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/lethe-research/lethe/algebra"
	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/llm"
	"github.com/lethe-research/lethe/research"
)

// CorpusConfig is the local corpus of the worker's config: HTML, Markdown
// and text always; PDF when pdftotext is available; audio and video when a
// whisper server is configured (their text is the transcript).
func CorpusConfig(cfg config.Config) research.CorpusConfig {
	r := cfg.Research
	cc := research.CorpusConfig{Root: r.CorpusDir, Extensions: research.DefaultCorpusExtensions(), Extractors: map[string]research.Extractor{},
		MaxMediaBytes: int64(r.MaxMediaBytes)}
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

func pdfConverter(cfg config.Config) *research.PDFConverter {
	r := cfg.Research
	if r.PdftotextPath == "" {
		return nil
	}
	pc := &research.PDFConverter{Path: r.PdftotextPath, MaxPages: r.PDFMaxPages}
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

// InitResearch builds a's research clients from the worker's config: the
// URL policy's allowances, the policy-enforcing HTTP fetcher (PDFs, media,
// pages without a browser), the browser (unless research.browser_path is
// "off"; when it is empty and no Chromium is installed, pages are fetched
// by plain HTTP and Fetch says so in its log), the SearXNG provider and the
// STT pipeline. A configured service that cannot work (a bad SearXNG URL,
// a named browser that does not exist) is an error. (A function, not a
// method: methods of Activities are registered as activities.)
func InitResearch(a *Activities) error {
	r := a.Cfg.Research
	a.Policy.AllowLoopback = r.AllowLoopback
	a.Policy.AllowPrivate = r.AllowPrivate
	a.Web = research.NewHTTPFetcher(research.HTTPFetcherConfig{
		Policy: a.Policy, MaxPageBytes: int64(r.MaxPageBytes), MaxMediaBytes: int64(r.MaxMediaBytes),
		PDF: pdfConverter(a.Cfg), MediaDir: mediaDir(a.Cfg),
	})
	if r.BrowserPath != "off" {
		perPage := r.MaxMediaPerPage
		if perPage == 0 {
			perPage = -1 // BrowserConfig: negative = capture none (0 is its default)
		}
		b, err := research.NewBrowser(research.BrowserConfig{
			ExecPath: r.BrowserPath, Tabs: r.BrowserTabs, PageTimeout: r.PageTimeout, MaxPageBytes: int64(r.MaxPageBytes),
			MediaMinBytes: int64(r.MediaMinBytes), MaxMediaPerPage: perPage, HTTP: a.Web,
		})
		switch {
		case err == nil:
			a.Browser = b
		case r.BrowserPath != "":
			return fmt.Errorf("research.browser_path: %w", err)
		}
	}
	if r.SearxngURL != "" {
		s, err := research.NewSearXNG(research.SearXNGConfig{
			BaseURL: r.SearxngURL, Engines: splitList(r.SearxngEngines), Categories: splitList(r.SearxngCategories),
			Language: r.SearxngLanguage, Pages: r.SearxngPages, Timeout: r.SearxngTimeout, Retries: r.SearxngRetries,
		})
		if err != nil {
			return fmt.Errorf("research.searxng_url: %w", err)
		}
		a.Search = s
	}
	if r.WhisperURL != "" {
		a.STT = &research.Transcriber{
			Whisper:     &research.WhisperClient{BaseURL: r.WhisperURL, Translate: r.WhisperTranslate, Timeout: r.WhisperTimeout},
			FFmpeg:      r.FFmpegPath,
			MaxDuration: r.MaxMediaDuration,
		}
	}
	return nil
}

// CloseResearch stops the browser (if one was started).
func (a *Activities) CloseResearch() {
	if a.Browser != nil {
		a.Browser.Close()
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
	s, err := a.Store.GetSession(ctx, in.SessionID)
	if err != nil {
		return DiscoverResult{}, fmt.Errorf("discover session: %w", err)
	}
	var providers []research.Provider
	if a.Corpus != nil {
		providers = append(providers, a.Corpus)
	}
	if a.Search != nil {
		providers = append(providers, a.Search)
	}
	if len(providers) == 0 {
		lg.Warn("discover: no provider configured (research.corpus_dir, research.searxng_url)", "query", in.Query)
		return DiscoverResult{}, nil
	}
	var hits []research.Hit
	var errs []error
	for _, p := range providers {
		h, err := p.Search(ctx, in.Query, in.Limit)
		if err != nil {
			if ctx.Err() != nil {
				return DiscoverResult{}, ctx.Err()
			}
			lg.Warn("discover: provider failed", "provider", p.Name(), "query", in.Query, "error", err)
			errs = append(errs, fmt.Errorf("%s: %w", p.Name(), err))
			continue
		}
		hits = append(hits, h...)
	}
	if len(errs) == len(providers) {
		return DiscoverResult{}, fmt.Errorf("discover %q: %w", in.Query, errors.Join(errs...))
	}
	if len(hits) == 0 {
		return DiscoverResult{}, nil
	}
	texts := make([]string, len(hits))
	for i, h := range hits {
		texts[i] = strings.TrimSpace(h.Title + "\n" + h.Snippet)
	}
	embs, err := a.Embed.Embed(ctx, llm.Document, texts)
	if err != nil {
		return DiscoverResult{}, fmt.Errorf("discover embed: %w", err)
	}
	out := DiscoverResult{}
	for i, h := range hits {
		out.Candidates = append(out.Candidates, research.Candidate{
			URL: h.URL, Title: h.Title, Snippet: truncate(h.Snippet, 300), Provider: h.Provider,
			GoalCos: algebra.Cosine32(embs[i], s.GoalQueryEmb),
		})
	}
	return out, nil
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
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx, progress())
			}
		}
	}()
	return func() { close(done); wg.Wait() }
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
	var web []int
	for i, u := range in.URLs {
		if strings.HasPrefix(u, research.CorpusScheme+":") {
			if a.Corpus == nil {
				errs[i] = fmt.Errorf("%s: no local corpus configured", u)
				continue
			}
			docs[i], errs[i] = a.Corpus.Open(u)
			continue
		}
		web = append(web, i)
	}
	var done atomic.Int64
	done.Store(int64(len(in.URLs) - len(web)))
	activity.RecordHeartbeat(ctx, done.Load())
	stop := heartbeatWhile(ctx, func() any { return done.Load() })
	if len(web) > 0 {
		urls := make([]string, len(web))
		for j, i := range web {
			urls[j] = in.URLs[i]
		}
		switch {
		case a.Browser != nil:
			a.Browser.FetchAll(ctx, urls, func(j int, r research.PageResult) {
				docs[web[j]], errs[web[j]] = r.Doc, r.Err
				activity.RecordHeartbeat(ctx, done.Add(1))
			})
		case a.Web != nil:
			lg.Warn("fetch: no browser on this worker; pages are read by plain HTTP (JavaScript is not run)")
			for j, u := range urls {
				if ctx.Err() != nil {
					break
				}
				docs[web[j]], errs[web[j]] = a.Web.Fetch(ctx, u)
				activity.RecordHeartbeat(ctx, done.Add(1))
			}
		default:
			for _, i := range web {
				errs[i] = errors.New("no web fetcher configured on this worker")
			}
		}
	}
	stop()
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
	var out FetchResult
	for i, u := range in.URLs {
		ref := PageRef{URL: u}
		if err := errs[i]; err != nil {
			ref.Error = truncate(err.Error(), 300)
			lg.Warn("fetch failed", "url", u, "error", err)
			docs[i] = research.Document{URL: u}
		} else {
			d := docs[i]
			ref.Title, ref.Kind, ref.Chars = d.Title, d.Kind, len(d.Text)
			if len(d.Media) > 0 {
				ref.Media = d.Media[0].URL
			}
		}
		out.Pages = append(out.Pages, ref)
	}
	if err := putBlob(ctx, a.Store, in.SessionID, pagesKey(in.Key), docs); err != nil {
		return FetchResult{}, err
	}
	failed := 0
	for _, p := range out.Pages {
		if p.Error != "" {
			failed++
		}
	}
	m := activity.GetMetricsHandler(ctx)
	m.Counter("lethe_research_pages_total").Inc(int64(len(out.Pages) - failed))
	m.Counter("lethe_research_page_errors_total").Inc(int64(failed))
	return out, nil
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
		out = append(out, research.Document{URL: m.URL, Title: title + " (transcript)", Text: text, Kind: graph.KindTranscript, Bytes: int(m.Bytes)})
		res.Transcribed++
		res.Chars += len(text)
	}
	if err := putBlob(ctx, a.Store, in.SessionID, transcriptsKey(in.Key, in.Page), out); err != nil {
		return TranscribeResult{}, err
	}
	return res, nil
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
		path = ref.Path
	default:
		return "", errors.New("no web fetcher to download the media")
	}
	downloaded := path != m.Path && !strings.HasPrefix(m.URL, research.CorpusScheme+":")
	text, err := a.STT.Transcribe(ctx, path)
	if downloaded || (err == nil && path == m.Path) {
		os.Remove(path) // transcribed (or a fresh download): the file is no longer needed
	}
	return text, err
}

// Ingest chunks the staged pages into paragraph groups, embeds them with the
// document prefix, keeps each page's most informative chunks, scores their
// strength and persists them idempotently under the batch key. It returns
// scalars only.
func (a *Activities) Ingest(ctx context.Context, in IngestInput) (IngestResult, error) {
	var docs []research.Document
	if _, err := getBlob(ctx, a.Store, in.SessionID, pagesKey(in.Key), &docs); err != nil {
		return IngestResult{}, err
	}
	// Transcripts of the pages' media, staged by Transcribe (absent when
	// there was no media, no STT, or transcription failed).
	for i, n := 0, len(docs); i < n; i++ {
		if len(docs[i].Media) == 0 {
			continue
		}
		var tr []research.Document
		if _, err := getBlob(ctx, a.Store, in.SessionID, transcriptsKey(in.Key, i), &tr); err != nil {
			return IngestResult{}, err
		}
		docs = append(docs, tr...)
	}
	s, err := a.Store.GetSession(ctx, in.SessionID)
	if err != nil {
		return IngestResult{}, fmt.Errorf("ingest session: %w", err)
	}
	held, err := a.Store.Evidence(ctx, in.SessionID, "")
	if err != nil {
		return IngestResult{}, fmt.Errorf("ingest evidence: %w", err)
	}
	heldVecs := make([][]float64, 0, len(held))
	for _, e := range held {
		heldVecs = append(heldVecs, algebra.ToFloat64(e.Embedding))
	}
	goal := algebra.ToFloat64(s.GoalQueryEmb)
	cc := research.ChunkConfig{TargetChars: a.Cfg.Research.ChunkChars, MaxChars: 2 * a.Cfg.Research.ChunkChars, MinChars: a.Cfg.Research.ChunkChars / 6}
	var res IngestResult
	var items []graph.Evidence
	var igSum float64
	var cos, strengths []float64
	for _, d := range docs {
		chunks := research.Chunk(d.Text, cc)
		if len(chunks) == 0 {
			continue
		}
		embs, err := a.Embed.Embed(ctx, llm.Document, chunks)
		if err != nil {
			return IngestResult{}, fmt.Errorf("ingest embed %s: %w", d.URL, err)
		}
		type scored struct {
			i      int
			ig, cg float64
		}
		sc := make([]scored, len(chunks))
		for i, e := range embs {
			v := algebra.ToFloat64(e)
			sc[i] = scored{i, algebra.InformationGain(v, heldVecs), algebra.Cosine(v, goal)}
			igSum += sc[i].ig
			heldVecs = append(heldVecs, v) // later chunks are judged against earlier ones too
		}
		res.Chunks += len(chunks)
		sort.SliceStable(sc, func(x, y int) bool { return sc[x].ig > sc[y].ig })
		if len(sc) > a.Cfg.Research.MaxChunksPerPage {
			sc = sc[:a.Cfg.Research.MaxChunksPerPage]
		}
		sort.SliceStable(sc, func(x, y int) bool { return sc[x].i < sc[y].i }) // page order
		for _, c := range sc {
			st := research.Strength(c.cg, c.ig, d.Kind)
			items = append(items, graph.Evidence{
				SessionID: in.SessionID, Content: chunks[c.i], SourceURL: d.URL, Title: d.Title, Kind: d.Kind,
				Strength: st, Embedding: embs[c.i], CreatedIter: in.Iteration,
			})
			cos, strengths = append(cos, c.cg), append(strengths, st)
		}
	}
	if res.Chunks > 0 {
		res.MeanIG = igSum / float64(res.Chunks)
	}
	if len(items) > 0 {
		ar, err := a.Store.AddEvidence(ctx, in.SessionID, "ingest/"+in.Key, in.Task, items)
		if err != nil {
			return IngestResult{}, fmt.Errorf("ingest persist %s: %w", in.Key, err)
		}
		res.New, res.Linked, res.Duplicates = ar.Added, ar.Linked, ar.Duplicates
		res.GA = algebra.GoalAlignment(0, algebra.AttentionGA(cos, strengths, 8, 0.1), len(items))
	}
	if res.Coverage, err = a.taskCoverage(ctx, in.SessionID, in.Task, goal); err != nil {
		return IngestResult{}, err
	}
	return res, nil
}

// taskCoverage is how much of the goal the task's evidence subspace spans.
func (a *Activities) taskCoverage(ctx context.Context, session, task string, goal []float64) (float64, error) {
	ev, err := a.Store.Evidence(ctx, session, task)
	if err != nil {
		return 0, fmt.Errorf("task coverage: %w", err)
	}
	rows := make([][]float64, len(ev))
	for i, e := range ev {
		rows[i] = algebra.ToFloat64(e.Embedding)
	}
	svd := algebra.ComputeSVD(rows, a.Cfg.Algebra.SVDK, a.Cfg.Algebra.MinEvidence, nil, 1)
	return svd.Coverage(goal), nil
}
