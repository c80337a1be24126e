package llm_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/lethe-research/lethe/llm"
	"github.com/lethe-research/lethe/llm/llmtest"
)

const (
	testKey     = "sk-test-key"
	chatSetting = "llm.api_key (LETHE_LLM_API_KEY)"
)

// hostedServer is the scripted server behaving as a hosted API: the key on
// every path, no /health, every rateEvery-th POST refused (0 = none).
func hostedServer(t *testing.T, rateEvery int) *llmtest.Server {
	t.Helper()
	srv := llmtest.NewServer(llmtest.Script{Hosted: &llmtest.Hosted{Key: testKey, RateLimitEvery: rateEvery, RetryAfterS: 2}})
	t.Cleanup(srv.Close)
	return srv
}

// The health probe sends the key: a hosted API (no /health, 401 on every
// path without the key) is healthy with it, through /v1/models, and a
// probe without it or with a wrong one fails with an error that names the
// setting to fix and is not retryable.
func TestHealthSendsKey(t *testing.T) {
	srv := hostedServer(t, 0)
	ctx := context.Background()
	if err := llm.NewChatClient(llm.ChatConfig{BaseURL: srv.URL(), APIKey: testKey, KeySetting: chatSetting}, nil).Health(ctx); err != nil {
		t.Fatalf("chat health with the key: %v", err)
	}
	if err := llm.NewEmbedClient(llm.EmbedConfig{BaseURL: srv.URL(), APIKey: testKey}, nil).Health(ctx); err != nil {
		t.Fatalf("embed health with the key: %v", err)
	}
	var paths []string
	for _, r := range srv.Requests() {
		paths = append(paths, r.Method+" "+r.Path+" "+http.StatusText(r.Status))
	}
	want := "GET /health Not Found,GET /v1/models OK"
	if got := strings.Join(paths[:2], ","); got != want {
		t.Errorf("probe asked %q, want %q", got, want)
	}
	for _, c := range []struct{ key, want string }{
		{"", "no API key was sent: set " + chatSetting},
		{"sk-wrong", "the server refused the API key of " + chatSetting},
	} {
		err := llm.NewChatClient(llm.ChatConfig{BaseURL: srv.URL(), APIKey: c.key, KeySetting: chatSetting}, nil).Health(ctx)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "HTTP 401") || !llm.IsAuth(err) || llm.IsRetryable(err) {
			t.Errorf("key %q: %v, want a non-retryable 401 saying %q", c.key, err, c.want)
		}
	}
}

// 401 and 403 from a model call are refusals of the key: not retryable,
// not an outage, and the error says which setting holds the key.
func TestAuthRefusalNamesSetting(t *testing.T) {
	ctx := context.Background()
	srv := hostedServer(t, 0)
	_, err := llm.NewEmbedClient(llm.EmbedConfig{BaseURL: srv.URL(), KeySetting: "embed.api_key (LETHE_EMBED_API_KEY)"}, nil).
		Embed(ctx, llm.Query, []string{"q"})
	checkRefused(t, ctx, err, 401, "no API key was sent: set embed.api_key (LETHE_EMBED_API_KEY)")

	forbidden := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"message":"You are not allowed to sample from this model","type":"invalid_request_error","param":null,"code":null}}`, http.StatusForbidden)
	}))
	defer forbidden.Close()
	_, err = llm.NewChatClient(llm.ChatConfig{BaseURL: forbidden.URL, APIKey: testKey, KeySetting: chatSetting}, nil).
		Complete(ctx, llm.ChatRequest{User: "u"}, nil)
	checkRefused(t, ctx, err, 403, "the server refused the API key of "+chatSetting)
}

func checkRefused(t *testing.T, ctx context.Context, err error, status int, want string) {
	t.Helper()
	var he *llm.HTTPError
	if !errors.As(err, &he) || he.Status != status {
		t.Fatalf("err %v, want HTTP %d", err, status)
	}
	if !llm.IsAuth(err) || llm.IsRetryable(err) || !strings.Contains(err.Error(), want) {
		t.Errorf("err %v: auth %v retryable %v, want a non-retryable refusal saying %q", err, llm.IsAuth(err), llm.IsRetryable(err), want)
	}
	if _, outage := llm.AsOutage(ctx, err); outage {
		t.Errorf("HTTP %d taken for an outage", status)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		v    string
		want time.Duration
	}{
		{"7", 7 * time.Second},
		{" 0 ", 0},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0}, // past
		{"", 0},
		{"soon", 0},
		{"-3", 0},
		{"1.5", 0},
	} {
		if got := llm.RetryAfter(c.v, now); got != c.want {
			t.Errorf("RetryAfter(%q) = %s, want %s", c.v, got, c.want)
		}
	}
}

// A 429 is an outage that carries the wait the server asked for, in both
// forms of Retry-After.
func TestRateLimitCarriesRetryAfter(t *testing.T) {
	ctx := context.Background()
	srv := hostedServer(t, 1) // every new request refused once
	c := llm.NewChatClient(llm.ChatConfig{BaseURL: srv.URL(), APIKey: testKey}, nil)
	for i, form := range []string{"seconds", "HTTP date"} {
		_, err := c.Complete(ctx, llm.ChatRequest{User: form}, nil)
		se, outage := llm.AsOutage(ctx, err)
		wait := llm.RetryAfterOf(err)
		if !outage || se.Service != llm.ServiceChat || wait < time.Second || wait > 3*time.Second {
			t.Errorf("429 %d (%s): outage %v, retry after %s (err %v), want an outage asking about 2 s", i, form, outage, wait, err)
		}
	}
	if _, err := c.Complete(ctx, llm.ChatRequest{User: "seconds"}, nil); err != nil {
		t.Errorf("a request tried again after its 429: %v", err)
	}
	if d := llm.RetryAfterOf(errors.New("refused")); d != 0 {
		t.Errorf("RetryAfterOf of an error without a server's answer: %s", d)
	}
}

// A streaming server that sends usage only when asked
// (stream_options.include_usage) is asked, and its numbers are taken, not
// an estimate; a plain answer's usage is taken the same way.
func TestUsageFromHostedServer(t *testing.T) {
	srv := hostedServer(t, 0)
	var got llm.Usage
	for _, stream := range []bool{true, false} {
		resp, err := llm.NewChatClient(llm.ChatConfig{BaseURL: srv.URL(), APIKey: testKey, Stream: stream}, nil).
			Complete(context.Background(), llm.ChatRequest{System: "be brief", User: "say something"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Usage.Estimated {
			t.Errorf("stream %v: usage %+v is an estimate", stream, resp.Usage)
		}
		got.PromptTokens += resp.Usage.PromptTokens
		got.CompletionTokens += resp.Usage.CompletionTokens
	}
	sent := srv.Usage()
	if sent.Answers != 2 || got.PromptTokens != sent.PromptTokens || got.CompletionTokens != sent.CompletionTokens {
		t.Errorf("client counted %+v, server sent %+v", got, sent)
	}
	est := llm.EstimateTokens("be brief") + llm.EstimateTokens("say something")
	if got.PromptTokens == 2*est {
		t.Errorf("prompt tokens %d equal the estimate: the test cannot tell usage from estimates", got.PromptTokens)
	}
	if r := srv.Requests()[0]; !r.Stream || !strings.Contains(r.Body, `"stream_options":{"include_usage":true}`) {
		t.Errorf("streamed request did not ask for usage: %s", r.Body)
	}
}
