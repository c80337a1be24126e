package workflows

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/lethe-research/lethe/contract"
)

type (
	ModelWait = contract.ModelWait
)

// OutageError is a model server that stayed down past llm.outage_tolerance.
type OutageError struct {
	Wait   ModelWait
	Waited time.Duration
}

func (e *OutageError) Error() string {
	return fmt.Sprintf("%s at %s did not answer for %s (%d tries): %s", e.Wait.Service, e.Wait.URL, e.Waited, e.Wait.Attempt, e.Wait.Error)
}

func isOutage(err error) bool {
	var oe *OutageError
	return errors.As(err, &oe)
}

// keyRefused reports whether a model server refused the worker's key
// (contract.ErrModelKeyRefused): the session fails rather than trying the
// next iteration with the same key.
func keyRefused(err error) bool {
	var app *temporal.ApplicationError
	return errors.As(err, &app) && app.Type() == contract.ErrModelKeyRefused
}

// outageOf reads the outage an activity failure reports, if it is one.
func outageOf(err error) (contract.Outage, bool) {
	var app *temporal.ApplicationError
	if err == nil || !errors.As(err, &app) || app.Type() != contract.ErrModelUnavailable {
		return contract.Outage{}, false
	}
	var o contract.Outage
	if app.HasDetails() {
		_ = app.Details(&o)
	}
	return o, true
}

// waiter waits out model-server outages for one workflow: an activity that
// fails with ErrModelUnavailable is tried again with exponential backoff
// (1 s doubling up to llm.outage_max_backoff, or the server's Retry-After
// when that is longer) until it succeeds or
// llm.outage_tolerance has passed since its first failure. The time spent
// waiting is added to *waited, which budgets subtract: a session does not
// pay for its model server's outage. Several coroutines may wait at once
// (parallel composition); the wait is shown once and counted once.
type waiter struct {
	tolerance, maxBackoff time.Duration
	waited                *time.Duration
	gaveUp                *bool // sticky: once a server stayed down past the tolerance, later outages are not waited out again
	current               *ModelWait
	waiting               int
	since                 time.Time
	show                  func(ctx workflow.Context, w *ModelWait) // nil w: no longer waiting
	// stops, when set, counts the stop requests so far: one that arrives
	// during a wait ends it (the user asked the session to finish now; it
	// assembles what it has rather than wait on).
	stops func() int
	// anyStop: a stop received before a wait began ends it too (a research
	// run, told by its session to stop, waits no more). A session's own
	// waits end only for a stop that arrives during them: a stopped
	// session still assembles, and a model blip then is worth waiting out.
	anyStop bool
}

func newWaiter(cfg contract.Config, waited *time.Duration, gaveUp *bool, show func(workflow.Context, *ModelWait)) *waiter {
	return &waiter{tolerance: cfg.LLM.OutageTolerance, maxBackoff: cfg.LLM.OutageMaxBackoff, waited: waited, gaveUp: gaveUp, show: show}
}

// run executes call and waits out model outages; out receives the result.
func (w *waiter) run(ctx workflow.Context, call func() workflow.Future, out any) error {
	var first time.Time
	backoff := time.Second
	stopsBefore := w.stopCount()
	if w.anyStop {
		stopsBefore = 0
	}
	stopped := func() bool { return w.stopCount() > stopsBefore }
	for attempt := 1; ; attempt++ {
		err := call().Get(ctx, out)
		o, outage := outageOf(err)
		if !outage {
			if attempt > 1 {
				w.leave(ctx)
			}
			return err
		}
		now := workflow.Now(ctx)
		if attempt == 1 {
			first = now
			w.enter(ctx)
		}
		w.current.Service, w.current.URL, w.current.Error, w.current.Attempt = o.Service, o.URL, o.Error, attempt
		left := w.tolerance - now.Sub(first)
		if *w.gaveUp || left <= 0 || stopped() {
			ow := *w.current
			w.leave(ctx)
			*w.gaveUp = true
			return &OutageError{Wait: ow, Waited: now.Sub(first)}
		}
		w.show(ctx, w.current)
		// A server that said how long to wait (429 Retry-After) is not
		// asked sooner: an earlier try would only be refused again.
		opts := workflow.AwaitOptions{Timeout: min(max(backoff, o.RetryAfter), left), TimerOptions: workflow.TimerOptions{
			Summary: fmt.Sprintf("wait for the %s at %s (attempt %d failed)", o.Service, o.URL, attempt),
		}}
		if _, err := workflow.AwaitWithOptions(ctx, opts, stopped); err != nil {
			w.leave(ctx)
			return err
		}
		backoff = min(2*backoff, w.maxBackoff)
	}
}

func (w *waiter) stopCount() int {
	if w.stops == nil {
		return 0
	}
	return w.stops()
}

func (w *waiter) enter(ctx workflow.Context) {
	if w.waiting == 0 {
		w.since = workflow.Now(ctx)
		w.current = &ModelWait{Since: w.since}
	}
	w.waiting++
}

func (w *waiter) leave(ctx workflow.Context) {
	w.waiting--
	if w.waiting > 0 {
		return
	}
	*w.waited += workflow.Now(ctx).Sub(w.since)
	w.current = nil
	w.show(ctx, nil)
}
