package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// maxResponseBody caps how much of a successful answer is read (64 MiB).
const maxResponseBody = 64 << 20

// normalizeBaseURL trims whitespace, trailing slashes and a trailing "/v1"
// and checks that the result is an absolute http(s) URL.
func normalizeBaseURL(raw string) (string, error) {
	s := strings.TrimSpace(raw)
	s = strings.TrimRight(s, "/")
	s = strings.TrimSuffix(s, "/v1")
	s = strings.TrimRight(s, "/")
	if s == "" {
		return "", fmt.Errorf("%w: empty base URL", ErrInvalidRequest)
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("%w: base URL %q: %v", ErrInvalidRequest, raw, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%w: base URL %q: want http(s)://host[:port][/path]", ErrInvalidRequest, raw)
	}
	return s, nil
}

// httpClient returns hc, or a fresh client when hc is nil (never
// http.DefaultClient: no shared state).
func httpClient(hc *http.Client) *http.Client {
	if hc != nil {
		return hc
	}
	return &http.Client{}
}

// postJSON marshals body, POSTs it to u and returns the response when the
// status is 2xx. Non-2xx answers are turned into *HTTPError (body drained and
// closed); the caller closes the returned body.
func postJSON(ctx context.Context, hc *http.Client, u, apiKey string, body any, accept string) (*http.Response, error) {
	payload, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("%w: encode request: %v", ErrInvalidRequest, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(payload))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidRequest, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+apiKey)
		hc = NoRedirects(hc)
	}
	resp, err := hc.Do(req)
	if errors.Is(err, ErrKeyedRedirect) {
		return nil, fmt.Errorf("%w: %w", ErrInvalidRequest, err) // final: retrying meets the same redirect
	}
	if err != nil {
		return nil, err // *url.Error names method and URL
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer resp.Body.Close()
		return nil, httpError(resp, u)
	}
	return resp, nil
}

// decodeBody reads a JSON answer (size-capped) into v.
func decodeBody(r io.Reader, v any) error {
	data, err := io.ReadAll(io.LimitReader(r, maxResponseBody+1))
	if err != nil {
		return fmt.Errorf("read body: %w", err)
	}
	if len(data) > maxResponseBody {
		return fmt.Errorf("%w: body larger than %d bytes", ErrBadResponse, maxResponseBody)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%w: decode JSON: %v (body starts %q)", ErrBadResponse, err, snippet(string(data), 200))
	}
	return nil
}

// snippet shortens s to at most n bytes for error messages.
func snippet(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
