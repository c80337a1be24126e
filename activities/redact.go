package activities

import (
	"errors"
	"strings"

	"go.temporal.io/sdk/temporal"

	"github.com/lethe-research/lethe/config"
)

// redactFailure returns err with every URL in its messages redacted
// (config.RedactURL): an activity's failure is recorded in workflow
// history with the message of each error of its chain, and an error of
// Go's HTTP client names the whole request URL, credentials in a base URL
// (user:pass@, ?key=) included. The failure keeps its type, retryability,
// retry delay and outage details; its cause becomes one redacted error that
// still answers errors.Is for the original chain (a cancellation stays
// one).
func redactFailure(err error) error {
	if err == nil || !strings.Contains(chainText(err), "://") {
		return err
	}
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || error(app) != err {
		return &redactedError{msg: config.RedactText(err.Error()), orig: err}
	}
	opts := temporal.ApplicationErrorOptions{NonRetryable: app.NonRetryable(), NextRetryDelay: app.NextRetryDelay()}
	if cause := app.Unwrap(); cause != nil {
		opts.Cause = &redactedError{msg: config.RedactText(cause.Error()), orig: cause}
	}
	var o Outage
	if app.Type() == ErrModelUnavailable && app.HasDetails() && app.Details(&o) == nil {
		o.URL, o.Error = config.RedactURL(o.URL), config.RedactText(o.Error)
		opts.Details = []any{o}
	}
	return temporal.NewApplicationErrorWithOptions(config.RedactText(app.Message()), app.Type(), opts)
}

// chainText is the messages of err's chain, where a URL may hide in a cause.
func chainText(err error) string {
	var b strings.Builder
	for e := err; e != nil; e = errors.Unwrap(e) {
		b.WriteString(e.Error())
		b.WriteByte('\n')
	}
	return b.String()
}

// redactedError carries a redacted message and no Unwrap, so the failure
// converter records nothing more of the chain; Is still matches it.
type redactedError struct {
	msg  string
	orig error
}

func (e *redactedError) Error() string { return e.msg }

func (e *redactedError) Is(target error) bool { return errors.Is(e.orig, target) }
