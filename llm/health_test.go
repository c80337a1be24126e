package llm_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/lethe-research/lethe/llm"
	"github.com/lethe-research/lethe/llm/llmtest"
)

func TestHealth(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Script{})
	defer srv.Close()
	if err := llm.NewEmbedClient(llm.EmbedConfig{BaseURL: srv.URL() + "/v1"}, nil).Health(context.Background()); err != nil {
		t.Errorf("scripted server: %v", err)
	}
	if err := llm.NewChatClient(llm.ChatConfig{BaseURL: srv.URL()}, nil).Health(context.Background()); err != nil {
		t.Errorf("chat client health: %v", err)
	}

	// No /health (Ollama, OpenAI): falls back to /v1/models with the key.
	var auth string
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		auth = r.Header.Get("Authorization")
		w.Write([]byte(`{"data":[]}`))
	})
	ollama := httptest.NewServer(mux)
	defer ollama.Close()
	if err := llm.NewEmbedClient(llm.EmbedConfig{BaseURL: ollama.URL, APIKey: "sk"}, nil).Health(context.Background()); err != nil || auth != "Bearer sk" {
		t.Errorf("fallback: %v (auth %q)", err, auth)
	}

	// Loading (503) and "loading" with 200: unhealthy, retryable, URL named.
	for _, h := range []http.HandlerFunc{
		func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, `{"error":{"message":"Loading model"}}`, 503)
		},
		func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"status":"loading model"}`)) },
	} {
		ts := httptest.NewServer(h)
		err := chatHealth(ts.URL)
		if err == nil || !strings.Contains(err.Error(), ts.URL) || !strings.Contains(err.Error(), "not ready") || !llm.IsRetryable(err) {
			t.Errorf("loading: %v", err)
		}
		ts.Close()
	}

	// Neither endpoint: unhealthy, not retryable.
	none := httptest.NewServer(http.NotFoundHandler())
	defer none.Close()
	err := chatHealth(none.URL)
	var he *llm.HTTPError
	if !errors.As(err, &he) || he.Status != 404 || !strings.Contains(err.Error(), none.URL) || llm.IsRetryable(err) {
		t.Errorf("no endpoints: %v", err)
	}

	// Down server: error naming the URL.
	u := closedURL(t)
	err = chatHealth(u)
	if err == nil || !strings.Contains(err.Error(), u) || !strings.Contains(err.Error(), "unreachable") {
		t.Errorf("down server: %v", err)
	}

	if err := chatHealth("not a url"); !errors.Is(err, llm.ErrInvalidRequest) {
		t.Errorf("bad URL: %v", err)
	}
}

// chatHealth probes baseURL as a chat client without a key does.
func chatHealth(baseURL string) error {
	return llm.NewChatClient(llm.ChatConfig{BaseURL: baseURL}, nil).Health(context.Background())
}
