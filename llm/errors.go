package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"

	"github.com/lethe-research/lethe/config"
)

// ErrInvalidRequest marks errors caused by the caller or the client's
// configuration (bad base URL, invalid JSON schema, ...). Retrying cannot fix
// them.
var ErrInvalidRequest = errors.New("invalid request")

// ErrBadResponse marks answers the client cannot use although the server
// answered with a success status: malformed JSON, no choices, wrong number of
// embeddings, inconsistent dimensions, an error event inside a stream. It is
// not retryable unless the cause is a truncated body (io.ErrUnexpectedEOF).
var ErrBadResponse = errors.New("bad response")

// maxErrorBody is how much of an error response body HTTPError keeps.
const maxErrorBody = 2048

// HTTPError is a non-2xx answer from a model server.
type HTTPError struct {
	Status int    // HTTP status code
	Body   string // response body, truncated to a few KiB
	URL    string // request URL
}

func (e *HTTPError) Error() string {
	body := strings.TrimSpace(e.Body)
	if body == "" {
		return fmt.Sprintf("%s: HTTP %d", config.RedactURL(e.URL), e.Status)
	}
	return fmt.Sprintf("%s: HTTP %d: %s", config.RedactURL(e.URL), e.Status, body)
}

// Retryable reports whether the status is one a retry can cure: 408, 429 and
// every 5xx. Other statuses (400, 401, 403, 404, 422, ...) are not.
func (e *HTTPError) Retryable() bool {
	return e.Status == 408 || e.Status == 429 || e.Status >= 500
}

// IsRetryable reports whether err, returned by this package, is worth
// retrying: retryable HTTP statuses, transport errors (connection refused or
// reset, DNS failures), timeouts and truncated bodies. Cancellation by the
// caller, invalid requests, non-retryable statuses and malformed answers are
// not retryable. nil is not retryable.
func IsRetryable(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, context.Canceled) {
		return false
	}
	var he *HTTPError
	if errors.As(err, &he) {
		return he.Retryable()
	}
	if errors.Is(err, ErrInvalidRequest) {
		return false
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	if errors.Is(err, ErrBadResponse) {
		return false
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return true
	}
	return errors.Is(err, io.EOF)
}

// errorBody reads at most maxErrorBody bytes of an error response.
func errorBody(r io.Reader) string {
	b, _ := io.ReadAll(io.LimitReader(r, maxErrorBody))
	return string(b)
}
