package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/lethe-research/lethe/activities"
	"github.com/lethe-research/lethe/config"
)

// nonRetryable lists the application error types that retrying cannot fix.
var nonRetryable = []string{activities.ErrInvalidInput, activities.ErrUnhealthy, activities.ErrConfig}

func retry(attempts int32) *temporal.RetryPolicy {
	return &temporal.RetryPolicy{
		InitialInterval:        time.Second,
		BackoffCoefficient:     2,
		MaximumInterval:        30 * time.Second,
		MaximumAttempts:        attempts,
		NonRetryableErrorTypes: nonRetryable,
	}
}

// graphCtx is for short store and embedding activities: transient failures
// (a restarted store, a busy embedding server) are retried for minutes.
func graphCtx(ctx workflow.Context, cfg config.Config) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           cfg.Temporal.TaskQueue,
		StartToCloseTimeout: cfg.Temporal.ActivityTimeout,
		RetryPolicy:         retry(20),
	})
}

// probeCtx runs the bootstrap health probe once: an unreachable service is
// a clear, immediate failure rather than a retry storm.
func probeCtx(ctx workflow.Context, cfg config.Config) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           cfg.Temporal.TaskQueue,
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         retry(1),
	})
}

// llmCtx is for the Reason and Compose calls: a long timeout, heartbeats
// while tokens stream, few attempts (the loop has its own recovery: the task
// goes back to PENDING).
func llmCtx(ctx workflow.Context, cfg config.Config) workflow.Context {
	hb := time.Duration(0)
	if cfg.LLM.Stream {
		hb = cfg.Temporal.HeartbeatTimeout
	}
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           cfg.Temporal.QueueLLM(),
		StartToCloseTimeout: cfg.LLM.Timeout + 30*time.Second,
		HeartbeatTimeout:    hb,
		RetryPolicy:         retry(3),
	})
}

// fetchCtx is for the browser-bound Fetch and Transcribe activities.
func fetchCtx(ctx workflow.Context, cfg config.Config) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           cfg.Temporal.QueueResearch(),
		StartToCloseTimeout: 10 * time.Minute,
		HeartbeatTimeout:    cfg.Temporal.HeartbeatTimeout,
		RetryPolicy:         retry(5),
	})
}
