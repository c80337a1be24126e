package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// health checks that the model server at baseURL answers and is ready,
// sending apiKey on every request: a hosted API refuses any path without
// it. It tries GET {base}/health (llama.cpp, vLLM; llama.cpp answers 503
// while it loads the model) and, when that path does not exist there (any
// 4xx), GET {base}/v1/models (Ollama, OpenAI). The error names the URL
// tried and says whether the server was unreachable or unhealthy; it wraps
// the cause, so IsRetryable tells a loading server (503) or refused
// connection from a misconfiguration, and IsAuth a refused key.
func health(ctx context.Context, hc *http.Client, baseURL, apiKey string) error {
	base, err := normalizeBaseURL(baseURL)
	if err != nil {
		return fmt.Errorf("llm health: %w", err)
	}
	ans, err := get(ctx, hc, base+"/health", apiKey)
	if err != nil {
		return fmt.Errorf("llm health: model server at %s is unreachable: %w", base, err)
	}
	switch {
	case ans.Status >= 200 && ans.Status <= 299:
		if bad := unhealthyStatus(ans.Body); bad != "" {
			ans.Status = http.StatusServiceUnavailable
			return fmt.Errorf("llm health: model server at %s is not ready: %w", base, ans)
		}
		return nil
	case ans.Status >= 500:
		return fmt.Errorf("llm health: model server at %s is not ready: %w", base, ans)
	}
	// /health is not served here: try the model list.
	if ans, err = get(ctx, hc, base+"/v1/models", apiKey); err != nil {
		return fmt.Errorf("llm health: model server at %s is unreachable: %w", base, err)
	}
	if ans.Status < 200 || ans.Status > 299 {
		return fmt.Errorf("llm health: model server at %s is unhealthy (GET /health and /v1/models failed): %w", base, ans)
	}
	return nil
}

// unhealthyStatus returns the status of a 2xx /health body that nonetheless
// says the server is not ready ({"status":"loading model"}), or "".
func unhealthyStatus(body string) string {
	var h struct {
		Status string `json:"status"`
	}
	if json.Unmarshal([]byte(body), &h) != nil || h.Status == "" {
		return ""
	}
	if st := strings.ToLower(h.Status); strings.Contains(st, "loading") || strings.Contains(st, "error") {
		return h.Status
	}
	return ""
}

// get sends GET u with the key and returns the answer as an HTTPError
// whatever its status (health reads the body of a 2xx too).
func get(ctx context.Context, hc *http.Client, u, apiKey string) (*HTTPError, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidRequest, err)
	}
	if apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+apiKey)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return httpError(resp, u), nil
}
