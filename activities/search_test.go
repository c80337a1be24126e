package activities

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/lethe-research/lethe/research"
)

func TestSearchFailure(t *testing.T) {
	for _, c := range []struct {
		name      string
		err       error
		wantType  string // "" = not an application error (retried by the policy)
		nonRetry  bool
		nextDelay time.Duration
	}{
		{"429 with a short Retry-After", &research.SearchError{Provider: "wikipedia", Status: 429, Retryable: true, RetryAfter: 7 * time.Second}, ErrRateLimited, false, 7 * time.Second},
		{"429 without Retry-After", &research.SearchError{Provider: "arxiv", Status: 429, Retryable: true}, ErrRateLimited, false, 0},
		{"429 asking for an hour", &research.SearchError{Provider: "brave", Status: 429, Retryable: true, RetryAfter: time.Hour}, ErrSearchFailed, true, 0},
		{"503", &research.SearchError{Provider: "tavily", Status: 503, Retryable: true}, "", false, 0},
		{"network", &research.SearchError{Provider: "tavily", Retryable: true, Msg: "connection refused"}, "", false, 0},
		{"bad key", &research.SearchError{Provider: "tavily", Status: 401, Msg: "Unauthorized"}, ErrSearchFailed, true, 0},
		{"malformed answer", &research.SearchError{Provider: "arxiv", Status: 200, Msg: "not an Atom feed"}, ErrSearchFailed, true, 0},
		{"not a provider error", errors.New("store down"), "", false, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := searchFailure(fmt.Errorf("discover: %w", c.err), time.Minute)
			var app *temporal.ApplicationError
			if !errors.As(err, &app) {
				if c.wantType != "" {
					t.Fatalf("%v: not an application error, want %s", err, c.wantType)
				}
				return
			}
			if app.Type() != c.wantType || app.NonRetryable() != c.nonRetry || app.NextRetryDelay() != c.nextDelay {
				t.Errorf("%s non-retryable %v next %s; want %s %v %s", app.Type(), app.NonRetryable(), app.NextRetryDelay(), c.wantType, c.nonRetry, c.nextDelay)
			}
		})
	}
}
