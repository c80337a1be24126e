package activities

import (
	"context"
	"errors"
	"fmt"

	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/config/load"
	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/llm"
)

// ResolveConfig resolves the worker's parameter tree with a session's
// overrides. Its result is recorded in history: the session keeps the
// parameters it started with even if the worker's configuration changes.
func (a *Activities) ResolveConfig(ctx context.Context, in ResolveConfigInput) (config.Config, error) {
	src := a.Sources
	src.Overrides = in.Params
	c, err := load.Load(src)
	if err != nil {
		return config.Config{}, nonRetryable(ErrConfig, err)
	}
	return c, nil
}

// HealthCheck probes every service a session needs. A failure is final and
// names the service and its URL.
func (a *Activities) HealthCheck(ctx context.Context, in HealthInput) error {
	var errs []error
	if err := llm.Health(ctx, a.HTTP, a.Cfg.LLM.BaseURL); err != nil {
		errs = append(errs, fmt.Errorf("chat model server (llm.base_url = %s): %w", a.Cfg.LLM.BaseURL, err))
	}
	if err := llm.Health(ctx, a.HTTP, a.Cfg.Embed.BaseURL); err != nil {
		errs = append(errs, fmt.Errorf("embedding server (embed.base_url = %s): %w", a.Cfg.Embed.BaseURL, err))
	}
	if err := a.Store.Ping(ctx); err != nil {
		errs = append(errs, fmt.Errorf("graph store (%s): %w", a.Cfg.Graph.Backend, err))
	}
	if len(errs) > 0 {
		return nonRetryable(ErrUnhealthy, errors.Join(errs...))
	}
	return nil
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
