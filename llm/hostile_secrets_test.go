package llm_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lethe-research/lethe/llm"
)

// A model server that answers with a redirect to another server (a
// loopback listener standing for an attacker's host on the same name, to
// which Go would keep Authorization) is not followed by the chat or the
// embedding client: the listener sees no request and no key, and the
// error is final, not an outage to wait out.
func TestHostileKeyedRedirectNotFollowed(t *testing.T) {
	var seen atomic.Int64
	attacker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.Add(1)
		t.Errorf("the redirect target got %s %s (authorization %q)", r.Method, r.URL, r.Header.Get("Authorization"))
	}))
	defer attacker.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, attacker.URL+r.URL.Path, http.StatusPermanentRedirect)
	}))
	defer srv.Close()
	ctx := context.Background()
	chat := llm.NewChatClient(llm.ChatConfig{BaseURL: srv.URL, Model: "m", APIKey: "worker-key", Timeout: 5 * time.Second}, nil)
	_, cerr := chat.Complete(ctx, llm.ChatRequest{System: "s", User: "u"}, nil)
	embed := llm.NewEmbedClient(llm.EmbedConfig{BaseURL: srv.URL, Model: "e", APIKey: "worker-key", Timeout: 5 * time.Second}, nil)
	_, eerr := embed.Embed(ctx, llm.Query, []string{"x"})
	for name, err := range map[string]error{"chat": cerr, "embed": eerr} {
		if !errors.Is(err, llm.ErrKeyedRedirect) || llm.IsRetryable(err) {
			t.Errorf("%s: error %v (retryable %v), want a final redirect refusal", name, err, llm.IsRetryable(err))
		}
		if err != nil && strings.Contains(err.Error(), "worker-key") {
			t.Errorf("%s: the error shows the key: %v", name, err)
		}
	}
	if n := seen.Load(); n != 0 {
		t.Fatalf("the redirect target saw %d requests", n)
	}
}
