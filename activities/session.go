package activities

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/config/load"
	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/llm"
	"github.com/lethe-research/lethe/research"
)

// ResolveConfig resolves the worker's parameter tree with a session's
// overrides. Its result is recorded in history: the session keeps the
// parameters it started with even if the worker's configuration changes.
// A parameter or a given config that sets a worker-only value (a
// credential, an endpoint or a path on the worker) is refused: the worker
// would send its keys there or write there.
func (a *Activities) ResolveConfig(ctx context.Context, in ResolveConfigInput) (config.Config, error) {
	where := firstNonEmpty(in.Input, "a session parameter")
	if in.Config != nil {
		if bad := in.Config.WorkerOnlyConflicts(a.Cfg); len(bad) > 0 {
			return config.Config{}, nonRetryable(ErrConfig, config.WorkerOnlyError(where, bad))
		}
		return in.Config.WithWorkerOnly(a.Cfg).Redacted(), nil // recorded in history
	}
	if err := load.CheckSessionParams(where, in.Params); err != nil {
		return config.Config{}, nonRetryable(ErrConfig, err)
	}
	src := a.Sources
	src.Overrides = in.Params
	c, err := load.Load(src)
	if err != nil {
		// The detail says whether this worker registered the search
		// attributes at its start: the session, which has no config to
		// ask, can then still show LetheStatus=failed.
		return config.Config{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrConfig, err, a.Cfg.Temporal.SearchAttributes)
	}
	return c.Redacted(), nil // recorded in history
}

// maxProbeWait bounds the wait for a rate-limited health probe: a longer
// one belongs to the workflow's outage wait, not to the probe's one try.
const maxProbeWait = 10 * time.Second

// probeRateLimited runs a health probe, and once more after the wait a
// rate-limited answer (429 with Retry-After) asked for when that wait is
// short: a hosted API that limits its model list must not fail a session
// at its start.
func probeRateLimited(ctx context.Context, probe func(context.Context) error) error {
	err := probe(ctx)
	d := llm.RetryAfterOf(err)
	if d <= 0 || d > maxProbeWait {
		return err
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return err
	case <-t.C:
	}
	return probe(ctx)
}

// HealthCheck probes every service a session needs. A failure of the chat
// or embedding server or the graph store is final and names the service
// and its URL. The search providers of in.Providers are probed too
// (providerWarnings); one that does not answer, or that this worker cannot
// serve, is a warning in the result and the worker's log, not a failure:
// the chain falls back past it at search time, and a keyless web provider
// on a machine without internet must not stop a session that has other
// sources (the corpus, the model's own knowledge).
func (a *Activities) HealthCheck(ctx context.Context, in HealthInput) (HealthResult, error) {
	var errs []error
	// The clients' own probes: they send the key, which a hosted API
	// wants on every path.
	if err := probeRateLimited(ctx, a.Chat.Health); err != nil {
		errs = append(errs, fmt.Errorf("chat model server (llm.base_url = %s): %w", config.RedactURL(a.Chat.Config().BaseURL), err))
	}
	if err := probeRateLimited(ctx, a.Embed.Health); err != nil {
		errs = append(errs, fmt.Errorf("embedding server (embed.base_url = %s): %w", config.RedactURL(a.Embed.Config().BaseURL), err))
	}
	if err := a.Store.Ping(ctx); err != nil {
		errs = append(errs, fmt.Errorf("graph store (%s): %w", a.Cfg.Graph.Backend, err))
	}
	if len(errs) > 0 {
		return HealthResult{}, nonRetryable(ErrUnhealthy, errors.Join(errs...))
	}
	res := HealthResult{Warnings: a.providerWarnings(ctx, in.Providers)}
	for _, w := range res.Warnings {
		logger(ctx, in.SessionID).Warn("health: search provider", "warning", w)
	}
	return res, nil
}

// providerWarnings probes the providers of a session's chain in parallel
// (research.Prober, research.ProbeTimeout each) and describes each that
// cannot serve; when none can, a last line says what web_search will do.
func (a *Activities) providerWarnings(ctx context.Context, providers []string) []string {
	out := make([]string, len(providers))
	var wg sync.WaitGroup
	for i, name := range providers {
		if name == config.ProviderCorpus {
			if a.Corpus == nil {
				out[i] = "corpus: research.corpus_dir is not set on this worker"
			}
			continue
		}
		p, ok := a.WebSearch[name]
		if !ok {
			out[i] = fmt.Sprintf("%s: not configured on this worker (research.searxng_url, research.tavily_api_key, research.brave_api_key)", name)
			continue
		}
		pr, ok := p.(research.Prober)
		if !ok {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := pr.Probe(ctx); err != nil {
				out[i] = config.RedactText(fmt.Sprintf("%s (%s) does not answer: %v; web_search skips it for the next provider", name, pr.BaseURL(), err))
			}
		}()
	}
	wg.Wait()
	var warn []string
	for _, w := range out {
		if w != "" {
			warn = append(warn, w)
		}
	}
	if len(providers) > 0 && len(warn) == len(providers) {
		warn = append(warn, "no search provider of research.providers answers: web_search finds nothing until one does")
	}
	return warn
}

// Bootstrap clears the session's previous graph, embeds the goal with both
// prefixes (the fixed reference points of goal alignment) and creates the
// root task. The embedding dimension is the model's, not an assumption.
func (a *Activities) Bootstrap(ctx context.Context, in BootstrapInput) (BootstrapResult, error) {
	lg := logger(ctx, in.SessionID)
	docs, err := a.Embed.Embed(ctx, llm.Document, []string{in.Goal})
	if err != nil {
		return BootstrapResult{}, fmt.Errorf("bootstrap embed goal: %w", err)
	}
	queries, err := a.Embed.Embed(ctx, llm.Query, []string{in.Goal})
	if err != nil {
		return BootstrapResult{}, fmt.Errorf("bootstrap embed goal query: %w", err)
	}
	if err := a.Store.ResetSession(ctx, in.SessionID); err != nil {
		return BootstrapResult{}, fmt.Errorf("bootstrap reset: %w", err)
	}
	s := graph.Session{ID: in.SessionID, Goal: in.Goal, GoalDocEmb: docs[0], GoalQueryEmb: queries[0], Dim: len(docs[0])}
	root := graph.Task{
		ID: graph.TaskID(in.SessionID, graph.RootShortID), SessionID: in.SessionID, ShortID: graph.RootShortID,
		Description: in.Goal, EmbedText: in.Goal, Embedding: docs[0], Status: graph.Pending,
	}
	if err := a.Store.CreateSession(ctx, s, root); err != nil {
		return BootstrapResult{}, fmt.Errorf("bootstrap create session: %w", err)
	}
	res := BootstrapResult{Dim: s.Dim, RootShortID: graph.RootShortID, ChatModel: a.Cfg.LLM.Model, EmbedModel: a.Cfg.Embed.Model}
	lg.Info("session created", "dim", res.Dim, "chat_url", a.Cfg.LLM.BaseURL, "embed_url", a.Cfg.Embed.BaseURL)
	return res, nil
}
