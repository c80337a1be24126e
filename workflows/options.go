package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/lethe-research/lethe/contract"
)

// nonRetryable lists the application error types that retrying on the
// server cannot fix. ErrModelUnavailable is among them because the
// workflow waits model outages out itself (waiter): it shows the wait and
// keeps it off the budget, which a server-side retry cannot.
var nonRetryable = []string{
	contract.ErrInvalidInput, contract.ErrUnhealthy, contract.ErrConfig,
	contract.ErrModelUnavailable, contract.ErrPayloadTooLarge, contract.ErrPermanentStore,
	contract.ErrModelKeyRefused,
}

func retry(attempts int32) *temporal.RetryPolicy {
	return &temporal.RetryPolicy{
		InitialInterval:        time.Second,
		BackoffCoefficient:     2,
		MaximumInterval:        30 * time.Second,
		MaximumAttempts:        attempts,
		NonRetryableErrorTypes: nonRetryable,
	}
}

// heartbeat is the heartbeat timeout of every activity: each heartbeats on
// a timer from its start (contract.Guard), so a killed worker's activity
// is retried on another worker after this, however long the activity runs.
func heartbeat(cfg contract.Config) time.Duration { return cfg.Temporal.HeartbeatTimeout }

// graphCtx is for short store and embedding activities: transient failures
// (a restarted store) are retried for minutes; embedding outages are
// waited out by the workflow.
func graphCtx(ctx workflow.Context, cfg contract.Config) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           cfg.Temporal.TaskQueue,
		StartToCloseTimeout: cfg.Temporal.ActivityTimeout,
		HeartbeatTimeout:    heartbeat(cfg),
		RetryPolicy:         retry(20),
	})
}

// focusCtx is graphCtx for Focus, whose SIMILAR_TO sync makes up to
// ⌈similar_nli_max_pairs / similar_nli_batch⌉ chat calls when NLI is on,
// each bounded by llm.timeout (with no bound on pairs, as many as one
// iteration's evidence needs, capped here at 16 calls). Only the timeout
// differs; replay does not compare activity options.
func focusCtx(ctx workflow.Context, cfg contract.Config) workflow.Context {
	a := cfg.Algebra
	if !a.SimilarNLI {
		return graphCtx(ctx, cfg)
	}
	calls := 16
	if a.SimilarNLIMaxPairs > 0 && a.SimilarNLIBatch > 0 {
		calls = min(calls, (a.SimilarNLIMaxPairs+a.SimilarNLIBatch-1)/a.SimilarNLIBatch)
	}
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           cfg.Temporal.TaskQueue,
		StartToCloseTimeout: cfg.Temporal.ActivityTimeout + time.Duration(calls)*cfg.LLM.Timeout,
		HeartbeatTimeout:    heartbeat(cfg),
		RetryPolicy:         retry(20),
	})
}

// probeCtx runs the bootstrap health probe once: an unreachable service is
// a clear, immediate failure rather than a retry storm.
func probeCtx(ctx workflow.Context, cfg contract.Config) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           cfg.Temporal.TaskQueue,
		StartToCloseTimeout: time.Minute,
		HeartbeatTimeout:    heartbeat(cfg),
		RetryPolicy:         retry(1),
	})
}

// llmCtx is for a Reason call: one completion bounded by llm.timeout,
// heartbeating on a timer whether or not tokens stream. Retries cover a
// lost worker; a model outage comes back to the workflow (waiter).
func llmCtx(ctx workflow.Context, cfg contract.Config) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           cfg.Temporal.QueueLLM(),
		StartToCloseTimeout: cfg.LLM.Timeout + 30*time.Second,
		HeartbeatTimeout:    heartbeat(cfg),
		RetryPolicy:         retry(3),
	})
}

// composeCtx is for a Compose call: a draft and at most one repair, each
// bounded by llm.timeout.
func composeCtx(ctx workflow.Context, cfg contract.Config) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           cfg.Temporal.QueueLLM(),
		StartToCloseTimeout: 2*cfg.LLM.Timeout + 30*time.Second,
		HeartbeatTimeout:    heartbeat(cfg),
		RetryPolicy:         retry(3),
	})
}

// fetchCtx is for the browser-bound Fetch and Transcribe activities.
func fetchCtx(ctx workflow.Context, cfg contract.Config) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           cfg.Temporal.QueueResearch(),
		StartToCloseTimeout: 10 * time.Minute,
		HeartbeatTimeout:    heartbeat(cfg),
		RetryPolicy:         retry(5),
	})
}

// discoverCtx is for one provider's Discover: on the provider family's
// task queue, whose dispatch rate the workers limit (research.rate.*).
// research.search_attempts tries (a 429 waits for its Retry-After), then
// the workflow asks the next provider; so it does at once for a refused
// request (ErrSearchFailed) or after research.search_wait in the queue
// (no worker serves it, or the rate limit holds it that long).
func discoverCtx(ctx workflow.Context, cfg contract.Config, provider string) workflow.Context {
	rp := retry(int32(cfg.Research.SearchAttempts))
	rp.NonRetryableErrorTypes = append(append([]string(nil), nonRetryable...), contract.ErrSearchFailed)
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:              cfg.Temporal.QueueSearch(provider),
		ScheduleToStartTimeout: cfg.Research.SearchWait,
		StartToCloseTimeout:    cfg.Temporal.ActivityTimeout,
		HeartbeatTimeout:       heartbeat(cfg),
		RetryPolicy:            rp,
	})
}
