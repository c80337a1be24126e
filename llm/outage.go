package llm

import (
	"context"
	"errors"
	"fmt"

	"github.com/lethe-research/lethe/config"
)

// Service names a model server in errors and in the session's waiting
// details.
const (
	ServiceChat  = "chat model"
	ServiceEmbed = "embedding model"
)

// ServiceError is a failed call to a model server: which server, at which
// URL, and why. Both clients return it from every call that reached the
// point of talking to their server, so that a caller far away (an activity
// interceptor) can tell a chat outage from an embedding outage.
type ServiceError struct {
	Service string // ServiceChat or ServiceEmbed
	URL     string // the server's base URL
	Err     error
}

func (e *ServiceError) Error() string {
	return config.RedactText(fmt.Sprintf("%s at %s: %v", e.Service, e.URL, e.Err))
}

func (e *ServiceError) Unwrap() error { return e.Err }

// AsOutage reports whether err is a model-server outage: the server was
// unreachable, timed out, or answered 408, 429 or 5xx. Outages are waited
// out; a bad request, a refusal or an unusable answer is not an outage.
// A call abandoned because the caller's own context ended is not an outage
// either: nothing is known about the server then.
func AsOutage(ctx context.Context, err error) (*ServiceError, bool) {
	var se *ServiceError
	if err == nil || !errors.As(err, &se) || ctx.Err() != nil {
		return nil, false
	}
	return se, IsRetryable(se.Err)
}

func serviceError(service, url string, err error) error {
	if err == nil {
		return nil
	}
	return &ServiceError{Service: service, URL: url, Err: err}
}
