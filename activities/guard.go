package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"

	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/contract"
	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/graph/embedded"
	"github.com/lethe-research/lethe/graph/neo4j"
	"github.com/lethe-research/lethe/llm"
)

// Error types the guard gives the failures it classifies (contract).
const (
	ErrModelUnavailable = contract.ErrModelUnavailable
	ErrPayloadTooLarge  = contract.ErrPayloadTooLarge
	ErrPermanentStore   = contract.ErrPermanentStore
)

// Outage is the detail of an ErrModelUnavailable failure (contract).
type Outage = contract.Outage

// Guard is the worker interceptor every activity runs through, so that no
// activity can forget what all of them owe the workflow: a heartbeat on a
// timer from its first moment (a killed worker is noticed within the
// heartbeat timeout, however long a model call takes), a result that fits
// in history, and failures classified as outage, permanent or transient.
type Guard struct {
	interceptor.WorkerInterceptorBase
	// MaxPayload is the largest result, in JSON bytes (0 = no check).
	MaxPayload int
}

// InterceptActivity implements interceptor.WorkerInterceptor.
func (g *Guard) InterceptActivity(ctx context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	return &guarded{ActivityInboundInterceptorBase: interceptor.ActivityInboundInterceptorBase{Next: next}, max: g.MaxPayload}
}

type guarded struct {
	interceptor.ActivityInboundInterceptorBase
	max int
}

func (g *guarded) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	stop := heartbeatEvery(ctx, activity.GetInfo(ctx).HeartbeatTimeout/3, nil)
	res, err := g.Next.ExecuteActivity(ctx, in)
	stop()
	if err != nil {
		return nil, redactFailure(Classify(ctx, err))
	}
	if err := checkPayload(activity.GetInfo(ctx).ActivityType.Name, res, g.max); err != nil {
		return nil, err
	}
	return res, nil
}

// heartbeatEvery records a heartbeat every d, with details() when details
// is set, until stop is called; d ≤ 0 (no heartbeat timeout) starts
// nothing. The guard's heartbeats carry no details: they only prove the
// worker lives, and an activity's own progress heartbeats go on as before.
func heartbeatEvery(ctx context.Context, d time.Duration, details func() any) (stop func()) {
	if d <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				if details == nil {
					activity.RecordHeartbeat(ctx)
				} else {
					activity.RecordHeartbeat(ctx, details())
				}
			}
		}
	}()
	return func() { close(done); <-finished }
}

// checkPayload refuses a result whose JSON form is over max bytes: it
// would be refused by the server (2 MiB) or bloat every replay. A result
// this large is a bug in a bound upstream, so the error names the activity
// and the size, and is not retried (the same input gives the same size).
func checkPayload(name string, res any, max int) error {
	if max <= 0 || res == nil {
		return nil
	}
	b, err := json.Marshal(res)
	if err != nil {
		return fmt.Errorf("%s result: encode: %w", name, err)
	}
	if len(b) > max {
		return temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("%s result is %d bytes, over temporal.max_payload_bytes = %d", name, len(b), max), ErrPayloadTooLarge, nil)
	}
	return nil
}

// Classify turns an activity's error into what the workflow acts on: a
// model outage (ErrModelUnavailable with the service, URL and the wait the
// server asked for), a model server's refusal of the key or a permanent
// store error (non-retryable), or the error as it was (transient: retried
// by the activity's retry policy). Application errors pass unchanged.
func Classify(ctx context.Context, err error) error {
	if llm.IsAuth(err) { // a refused key, even inside an activity's own error: no retry or wait can change the answer
		return temporal.NewNonRetryableApplicationError(err.Error(), contract.ErrModelKeyRefused, err)
	}
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return err
	}
	if se, ok := llm.AsOutage(ctx, err); ok {
		return temporal.NewApplicationErrorWithOptions(err.Error(), ErrModelUnavailable, temporal.ApplicationErrorOptions{
			Cause: err, Details: []any{Outage{Service: se.Service, URL: config.RedactURL(se.URL), Error: config.RedactText(se.Err.Error()), RetryAfter: llm.RetryAfterOf(err)}},
		})
	}
	if errors.Is(err, graph.ErrNotFound) || errors.Is(err, graph.ErrImmutable) || errors.Is(err, neo4j.ErrUnauthorized) ||
		neo4j.Permanent(err) || embedded.Permanent(err) {
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrPermanentStore, err)
	}
	return err
}
