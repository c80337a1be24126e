// Command worker runs a Lethe worker: it polls the task queues it is given
// (all configured queues by default), with the ResearchSession and
// WebResearch workflows on the workflow queue and the activities on every
// queue, clients wired from config, and Prometheus metrics on
// telemetry.metrics_addr.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sync"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.uber.org/zap"

	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/config/load"
	"github.com/lethe-research/lethe/logging"
	"github.com/lethe-research/lethe/service"
)

func main() {
	file := flag.String("config", "", "YAML config file (default $LETHE_CONFIG)")
	level := flag.String("log-level", "info", "debug, info, warn or error")
	queues := flag.String("queues", "", "comma-separated task queues to poll (default: all configured: task_queue, llm_queue, research_queue and the search queues <task_queue>-search-<provider>)")
	pprofAddr := flag.String("pprof", "", "serve net/http/pprof on this loopback address (e.g. 127.0.0.1:6060); empty disables")
	flag.Parse()
	stopPprof, err := servePprof(*pprofAddr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(2)
	}
	defer stopPprof()
	if err := run(*file, *level, *queues); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(1)
	}
}

func run(file, level, queueFlag string) error {
	src := load.Sources{File: file}
	cfg, err := load.Load(src)
	if err != nil {
		return err
	}
	queues, err := service.Queues(cfg, queueFlag)
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
	acts, err := service.NewActivities(cfg, src, store, z)
	if err != nil {
		return err
	}
	defer acts.CloseResearch()
	metrics, err := service.StartMetrics(cfg.Telemetry.MetricsAddr)
	if err != nil {
		return err
	}
	defer metrics.Close()
	c, err := client.Dial(client.Options{
		HostPort: cfg.Temporal.HostPort, Namespace: cfg.Temporal.Namespace,
		Logger: logging.Temporal(z), MetricsHandler: metrics.Handler,
		ConnectionOptions: client.ConnectionOptions{GrpcCompression: compression(cfg.Temporal.GRPCGzip)},
	})
	if err != nil {
		return fmt.Errorf("connect to Temporal at %s: %w", cfg.Temporal.HostPort, err)
	}
	defer c.Close()
	if cfg.Temporal.SearchAttributes {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		added, err := service.EnsureSearchAttributes(ctx, c, cfg.Temporal.Namespace)
		cancel()
		if err != nil {
			return err
		}
		if len(added) > 0 {
			z.Info("registered search attributes", zap.Strings("attributes", added))
		}
	}
	workers := service.NewWorkers(c, cfg, queues, acts)
	z.Info("worker starting", zap.Strings("queues", queues), zap.String("temporal", cfg.Temporal.HostPort),
		zap.String("llm", config.RedactURL(cfg.LLM.BaseURL)), zap.String("embed", config.RedactURL(cfg.Embed.BaseURL)), zap.String("graph", cfg.Graph.Backend),
		zap.String("corpus", cfg.Research.CorpusDir), zap.String("metrics", metrics.Addr))
	return runAll(workers)
}

// runAll runs every worker until an interrupt; the first failure stops all.
func runAll(ws []worker.Worker) error {
	for i, w := range ws {
		if err := w.Start(); err != nil {
			for _, started := range ws[:i] {
				started.Stop()
			}
			return fmt.Errorf("start worker: %w", err)
		}
	}
	<-worker.InterruptCh()
	var wg sync.WaitGroup
	for _, w := range ws {
		wg.Add(1)
		go func() { defer wg.Done(); w.Stop() }()
	}
	wg.Wait()
	return nil
}

// compression is the worker's gRPC request compression: gzip (the SDK's
// default) costs CPU on both ends of every poll and completion, which a
// fast link does not pay back (docs/scaling.md).
func compression(gzip bool) client.GrpcCompression {
	if gzip {
		return &client.GrpcCompressionGzip{}
	}
	return &client.GrpcCompressionNone{}
}
