package service

import (
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/uber-go/tally/v4"
	tallyprom "github.com/uber-go/tally/v4/prometheus"
	"go.temporal.io/sdk/client"
	sdktally "go.temporal.io/sdk/contrib/tally"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"

	"github.com/lethe-research/lethe/activities"
	"github.com/lethe-research/lethe/config"
)

// Queues returns the task queues a worker polls: the named ones (validated
// against the configured queues), or all configured queues when none is
// named. The workflow queue is task_queue; LLM and research activities go to
// llm_queue and research_queue when those are set.
func Queues(cfg config.Config, flag string) ([]string, error) {
	known := []string{cfg.Temporal.TaskQueue}
	for _, q := range append([]string{cfg.Temporal.QueueLLM(), cfg.Temporal.QueueResearch()}, searchQueues(cfg)...) {
		if !slices.Contains(known, q) {
			known = append(known, q)
		}
	}
	if strings.TrimSpace(flag) == "" {
		return known, nil
	}
	var out []string
	for _, q := range strings.Split(flag, ",") {
		q = strings.TrimSpace(q)
		if q == "" || slices.Contains(out, q) {
			continue
		}
		if !slices.Contains(known, q) {
			return nil, fmt.Errorf("--queues: %q is not a configured queue (temporal.task_queue, llm_queue, research_queue, search queues: %s)", q, strings.Join(known, ", "))
		}
		out = append(out, q)
	}
	return out, nil
}

// NewWorkers creates one worker per queue with that queue's concurrency
// limits. Workflows run on the workflow queue only; every queue can run
// every activity, the workflow routes each to its capability's queue.
func NewWorkers(c client.Client, cfg config.Config, queues []string, a *activities.Activities) []worker.Worker {
	var ws []worker.Worker
	for _, q := range queues {
		opts := worker.Options{
			MaxConcurrentActivityExecutionSize:     cfg.Temporal.MaxConcurrentActivities,
			MaxConcurrentWorkflowTaskExecutionSize: cfg.Temporal.MaxConcurrentWorkflowTasks,
			MaxConcurrentWorkflowTaskPollers:       cfg.Temporal.WorkflowTaskPollers,
			MaxConcurrentActivityTaskPollers:       cfg.Temporal.ActivityTaskPollers,
			DisableWorkflowWorker:                  q != cfg.Temporal.TaskQueue,
			Interceptors:                           Interceptors(cfg),
			MaxHeartbeatThrottleInterval:           HeartbeatThrottle(cfg),
		}
		switch q {
		case cfg.Temporal.TaskQueue:
		case cfg.Temporal.QueueLLM():
			opts.MaxConcurrentActivityExecutionSize = cfg.Temporal.MaxConcurrentLLM
		case cfg.Temporal.QueueResearch():
			opts.MaxConcurrentActivityExecutionSize = cfg.Temporal.MaxConcurrentResearch
		default:
			if p, ok := searchProvider(cfg, q); ok {
				// The server dispatches at most this many activities per
				// second from the queue across every worker polling it, but
				// its token bucket lets a backlog start with a burst of
				// about one second's worth per queue partition; the
				// worker's own limiter (burst 1) spaces the calls it runs
				// evenly, and one poller keeps it from holding more than
				// one started task while it waits (docs/providers.md).
				opts.TaskQueueActivitiesPerSecond = cfg.Research.RateOf(p)
				opts.WorkerActivitiesPerSecond = cfg.Research.RateOf(p)
				opts.MaxConcurrentActivityTaskPollers = 1
			}
		}
		w := worker.New(c, q, opts)
		if !opts.DisableWorkflowWorker {
			RegisterWorkflows(w)
		}
		RegisterActivities(w, a)
		ws = append(ws, w)
	}
	return ws
}

// searchQueues are the rate-limited task queues of the web search
// provider families (config.Temporal.QueueSearch). Every worker polls all
// of them by default: a provider the worker cannot serve (no key) fails at
// once and the session asks the next one.
func searchQueues(cfg config.Config) []string {
	var out []string
	for _, p := range config.WebProviders() {
		out = append(out, cfg.Temporal.QueueSearch(p))
	}
	return out
}

// searchProvider is the provider family whose search queue q is.
func searchProvider(cfg config.Config, q string) (string, bool) {
	for _, p := range config.WebProviders() {
		if cfg.Temporal.QueueSearch(p) == q {
			return p, true
		}
	}
	return "", false
}

// HeartbeatThrottle is the longest the SDK may hold an activity's heartbeat
// back before sending it: temporal.heartbeat_throttle (a third by
// default, the period of the guard's timer heartbeats, activities.Guard)
// of temporal.heartbeat_timeout. The SDK's own hold is 80% of the
// timeout, so on the default 10 s a heartbeat reached the server 8 s plus
// a round trip after the one before it, and a server or link 2 s slow
// timed out a live activity (a model call that thinks for minutes was
// then retried from the start). With a third, the round trip may take two
// thirds of the timeout. 0 (no timeout) keeps the SDK's default.
func HeartbeatThrottle(cfg config.Config) time.Duration {
	return time.Duration(float64(cfg.Temporal.HeartbeatTimeout) * cfg.Temporal.HeartbeatThrottle)
}

// Interceptors are the worker interceptors every worker (and the SDK's
// test environment) runs activities through: heartbeats on a timer, the
// payload bound, failure classification (activities.Guard).
func Interceptors(cfg config.Config) []interceptor.WorkerInterceptor {
	return []interceptor.WorkerInterceptor{&activities.Guard{MaxPayload: cfg.Temporal.MaxPayloadBytes}}
}

// Metrics is the worker's Prometheus endpoint: the SDK's metrics (through
// tally) and ours (recorded with the SDK's metrics handler in workflows and
// activities) under one /metrics.
type Metrics struct {
	Handler client.MetricsHandler
	Addr    string // actual listen address
	close   func()
}

// Close stops the endpoint and flushes the scope.
func (m *Metrics) Close() {
	if m != nil && m.close != nil {
		m.close()
	}
}

// StartMetrics serves /metrics on addr ("" disables: a no-op handler).
func StartMetrics(addr string) (*Metrics, error) {
	if addr == "" {
		return &Metrics{Handler: client.MetricsNopHandler}, nil
	}
	reg := prometheus.NewRegistry()
	// go_goroutines and process_open_fds show a leak (a tunnel, a tab, a
	// child process) that a hostile page left behind.
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	reporter := tallyprom.NewReporter(tallyprom.Options{Registerer: reg})
	scope, closer := tally.NewRootScope(tally.ScopeOptions{
		CachedReporter:  reporter,
		Separator:       tallyprom.DefaultSeparator,
		SanitizeOptions: &sdktally.PrometheusSanitizeOptions,
	}, time.Second)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		closer.Close()
		return nil, fmt.Errorf("metrics listen %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	return &Metrics{
		Handler: sdktally.NewMetricsHandler(scope),
		Addr:    ln.Addr().String(),
		close:   func() { srv.Close(); closer.Close() },
	}, nil
}
