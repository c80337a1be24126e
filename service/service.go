// Package service wires the worker: clients from configuration, the
// activities struct, and the registration of workflows and activities.
// worker/main.go and the end-to-end tests share it.
package service

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"go.uber.org/zap"

	"github.com/lethe-research/lethe/activities"
	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/config/load"
	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/graph/embedded"
	neo4jstore "github.com/lethe-research/lethe/graph/neo4j"
	"github.com/lethe-research/lethe/llm"
	"github.com/lethe-research/lethe/research"
	"github.com/lethe-research/lethe/workflows"
)

// OpenStore opens the configured graph backend.
func OpenStore(cfg config.Config) (graph.Store, error) {
	switch cfg.Graph.Backend {
	case "embedded":
		if dir := filepath.Dir(cfg.Graph.Path); dir != "" {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, fmt.Errorf("graph store directory: %w", err)
			}
		}
		s, err := embedded.OpenWith(cfg.Graph.Path, embedded.ANNOptions{MinItems: cfg.Graph.ANNMinItems, M: cfg.Graph.ANNM,
			EfConstruction: cfg.Graph.ANNEfConstruction, EfSearch: cfg.Graph.ANNEfSearch, ThresholdK: cfg.Graph.ANNThresholdK, CacheMiB: cfg.Graph.CacheMiB})
		if err != nil {
			return nil, fmt.Errorf("open embedded graph %s: %w", cfg.Graph.Path, err)
		}
		return s, nil
	case "neo4j":
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		s, err := neo4jstore.Open(ctx, neo4jstore.Config{
			URI: cfg.Graph.Neo4jURI, User: cfg.Graph.Neo4jUser, Password: cfg.Graph.Neo4jPassword, Database: cfg.Graph.Neo4jDatabase,
			WalkCacheMiB: cfg.Graph.Neo4jWalkCacheMiB, VectorStatements: cfg.Graph.Neo4jVectorStatements,
			LabelBatch: cfg.Graph.Neo4jLabelBatch,
		})
		if err != nil {
			return nil, fmt.Errorf("open neo4j graph: %w", err)
		}
		return s, nil
	}
	return nil, fmt.Errorf("unknown graph backend %q", cfg.Graph.Backend)
}

// NewActivities builds the activities' clients from the worker's config,
// which was loaded from src.
func NewActivities(cfg config.Config, src load.Sources, store graph.Store, log *zap.Logger) (*activities.Activities, error) {
	hc := &http.Client{}
	a := &activities.Activities{
		Cfg:     cfg,
		Sources: src,
		Store:   store,
		HTTP:    hc,
		Chat: llm.NewChatClient(llm.ChatConfig{
			BaseURL: cfg.LLM.BaseURL, Model: cfg.LLM.Model, APIKey: cfg.LLM.APIKey, KeySetting: load.Setting("llm.api_key"), Timeout: cfg.LLM.Timeout,
			JSONSchema: cfg.LLM.JSONSchema, ThinkingField: cfg.LLM.ThinkingField, Stream: cfg.LLM.Stream,
			Temperature: cfg.LLM.Temperature, Seed: cfg.LLM.Seed,
		}, hc),
		Embed: llm.NewEmbedClient(llm.EmbedConfig{
			BaseURL: cfg.Embed.BaseURL, Model: cfg.Embed.Model, APIKey: cfg.Embed.APIKey, KeySetting: load.Setting("embed.api_key"), Timeout: cfg.Embed.Timeout,
			BatchSize: cfg.Embed.BatchSize, QueryPrefix: cfg.Embed.QueryPrefix, DocPrefix: cfg.Embed.DocPrefix,
		}, hc),
		Policy: research.URLPolicy{CorpusRoot: cfg.Research.CorpusDir},
	}
	if err := activities.InitResearch(a); err != nil {
		return nil, fmt.Errorf("research clients: %w", err)
	}
	if cfg.Research.CorpusDir != "" {
		cc := activities.CorpusConfig(cfg)
		cc.Embedder = a.Embed
		if log != nil {
			cc.OnUpdate = func(st research.IndexStats) { logIndexUpdate(log, st) }
		}
		c, err := research.NewCorpus(cc)
		if err != nil {
			return nil, fmt.Errorf("research corpus: %w", err)
		}
		a.Corpus = c
	}
	return a, nil
}

// Register registers both workflows and every activity under the names the
// workflows call them by.
func Register(r worker.Registry, a *activities.Activities) {
	RegisterWorkflows(r)
	RegisterActivities(r, a)
}

// RegisterWorkflows registers ResearchSession, WebResearch and Evaluation.
func RegisterWorkflows(r worker.WorkflowRegistry) {
	r.RegisterWorkflowWithOptions(workflows.ResearchSession, workflow.RegisterOptions{Name: workflows.SessionWorkflow})
	r.RegisterWorkflowWithOptions(workflows.WebResearch, workflow.RegisterOptions{Name: workflows.ResearchWorkflow})
	r.RegisterWorkflowWithOptions(workflows.Evaluation, workflow.RegisterOptions{Name: workflows.EvaluationWorkflow})
}

// RegisterActivities registers every activity method of a.
func RegisterActivities(r worker.ActivityRegistry, a *activities.Activities) {
	r.RegisterActivityWithOptions(a, activity.RegisterOptions{SkipInvalidStructFunctions: true})
}

// logIndexUpdate logs an update of the corpus index: the files extracted
// and, after an upgrade that changed what extraction makes of a file (or
// a damaged index), why the whole index was rebuilt.
func logIndexUpdate(log *zap.Logger, st research.IndexStats) {
	fields := []zap.Field{zap.String("root", st.Root), zap.Int("files", st.Files), zap.Int("extracted", st.Extracted),
		zap.Int("changed", st.Changed), zap.Int("passages", st.Passages), zap.Int("skipped", len(st.Skipped)), zap.Duration("took", st.Duration)}
	if st.Rebuilt != "" {
		log.Info("corpus index rebuilt", append(fields, zap.String("why", st.Rebuilt))...)
		return
	}
	log.Info("corpus index updated", fields...)
}
