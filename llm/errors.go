package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

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
	// RetryAfter is how long the server asked the client to wait (its
	// Retry-After header, on a 429 or 503 usually); 0 when it did not say.
	RetryAfter time.Duration
}

// httpError reads a non-2xx response into an HTTPError; the caller closes
// the body.
func httpError(resp *http.Response, u string) *HTTPError {
	return &HTTPError{Status: resp.StatusCode, Body: errorBody(resp.Body), URL: u,
		RetryAfter: RetryAfter(resp.Header.Get("Retry-After"), time.Now())}
}

// RetryAfter parses a Retry-After header value at time now: delay seconds
// or an HTTP date (RFC 9110 §10.2.3). An absent, past or unparseable value
// is 0: the caller's own backoff applies.
func RetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil {
		return time.Duration(max(n, 0)) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// RetryAfterOf is the wait a server asked for in the HTTPError err wraps,
// or 0.
func RetryAfterOf(err error) time.Duration {
	var he *HTTPError
	if errors.As(err, &he) {
		return he.RetryAfter
	}
	return 0
}

// IsAuth reports whether err is a server's refusal of the client's
// credentials: 401 (no or unknown key) or 403 (a key without access).
// Waiting does not cure it, so it is neither retryable nor an outage.
func IsAuth(err error) bool {
	var he *HTTPError
	return errors.As(err, &he) && (he.Status == http.StatusUnauthorized || he.Status == http.StatusForbidden)
}

// keyHint adds to a refused-credentials error what to fix: the setting
// that holds the key (setting, "" = unnamed), and whether a key was sent
// at all. Other errors pass unchanged.
func keyHint(err error, setting, key string) error {
	if !IsAuth(err) {
		return err
	}
	if setting == "" {
		setting = "the client's API key"
	}
	if key == "" {
		return fmt.Errorf("%w (no API key was sent: set %s)", err, setting)
	}
	return fmt.Errorf("%w (the server refused the API key of %s)", err, setting)
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
