// Command worker runs a Lethe worker: it registers the ResearchSession and
// WebResearch workflows and every activity, with clients wired from config.
package main

import (
	"flag"
	"fmt"
	"os"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.uber.org/zap"

	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/logging"
	"github.com/lethe-research/lethe/service"
)

func main() {
	file := flag.String("config", "", "YAML config file (default $LETHE_CONFIG)")
	level := flag.String("log-level", "info", "debug, info, warn or error")
	flag.Parse()
	if err := run(*file, *level); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(1)
	}
}

func run(file, level string) error {
	src := config.Sources{File: file}
	cfg, err := config.Load(src)
	if err != nil {
		return err
	}
	z, err := logging.New(level)
	if err != nil {
		return err
	}
	defer z.Sync()
	store, err := service.OpenStore(cfg)
	if err != nil {
		return err
	}
	defer store.Close()
	acts, err := service.NewActivities(cfg, src, store)
	if err != nil {
		return err
	}
	c, err := client.Dial(client.Options{HostPort: cfg.Temporal.HostPort, Namespace: cfg.Temporal.Namespace, Logger: logging.Temporal(z)})
	if err != nil {
		return fmt.Errorf("connect to Temporal at %s: %w", cfg.Temporal.HostPort, err)
	}
	defer c.Close()
	w := worker.New(c, cfg.Temporal.TaskQueue, worker.Options{})
	service.Register(w, acts)
	z.Info("worker starting", zap.String("task_queue", cfg.Temporal.TaskQueue), zap.String("temporal", cfg.Temporal.HostPort),
		zap.String("llm", cfg.LLM.BaseURL), zap.String("embed", cfg.Embed.BaseURL), zap.String("graph", cfg.Graph.Backend),
		zap.String("corpus", cfg.Research.CorpusDir))
	return w.Run(worker.InterruptCh())
}
