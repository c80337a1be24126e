package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Health checks that the model server at baseURL answers and is ready. It
// tries GET {base}/health (llama.cpp, vLLM; llama.cpp answers 503 while it
// loads the model) and, when that path does not exist there (any 4xx), GET
// {base}/v1/models (Ollama, OpenAI). The error names the URL tried and says
// whether the server was unreachable or unhealthy; it wraps the cause, so
// IsRetryable tells a loading server (503) or refused connection from a
// misconfiguration.
func Health(ctx context.Context, hc *http.Client, baseURL string) error {
	return health(ctx, httpClient(hc), baseURL, "")
}

func health(ctx context.Context, hc *http.Client, baseURL, apiKey string) error {
	base, err := normalizeBaseURL(baseURL)
	if err != nil {
		return fmt.Errorf("llm health: %w", err)
	}
	status, body, err := get(ctx, hc, base+"/health", apiKey)
	if err != nil {
		return fmt.Errorf("llm health: model server at %s is unreachable: %w", base, err)
	}
	switch {
	case status >= 200 && status <= 299:
		if bad := unhealthyStatus(body); bad != "" {
			return fmt.Errorf("llm health: model server at %s is not ready: %w", base,
				&HTTPError{Status: http.StatusServiceUnavailable, Body: body, URL: base + "/health"})
		}
		return nil
	case status >= 500:
		return fmt.Errorf("llm health: model server at %s is not ready: %w", base,
			&HTTPError{Status: status, Body: body, URL: base + "/health"})
	}
	// /health is not served here: try the model list.
	u := base + "/v1/models"
	status, body, err = get(ctx, hc, u, apiKey)
	if err != nil {
		return fmt.Errorf("llm health: model server at %s is unreachable: %w", base, err)
	}
	if status < 200 || status > 299 {
		return fmt.Errorf("llm health: model server at %s is unhealthy (GET /health and /v1/models failed): %w", base,
			&HTTPError{Status: status, Body: body, URL: u})
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

func get(ctx context.Context, hc *http.Client, u, apiKey string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, "", fmt.Errorf("%w: %v", ErrInvalidRequest, err)
	}
	if apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+apiKey)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	return resp.StatusCode, errorBody(resp.Body), nil
}
