package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lethe-research/lethe/llm"
	"github.com/lethe-research/lethe/llm/llmtest"
)

// capture is a handcrafted server that records request bodies and answers
// with a fixed status, content type and body.
type capture struct {
	mu      sync.Mutex
	bodies  []map[string]any
	headers []http.Header
	paths   []string
}

func (c *capture) server(t *testing.T, status int, contentType, body string) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m map[string]any
		data, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(data, &m)
		c.mu.Lock()
		c.bodies = append(c.bodies, m)
		c.headers = append(c.headers, r.Header.Clone())
		c.paths = append(c.paths, r.URL.Path)
		c.mu.Unlock()
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(ts.Close)
	return ts
}

func (c *capture) last(t *testing.T) map[string]any {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.bodies) == 0 {
		t.Fatal("no request captured")
	}
	return c.bodies[len(c.bodies)-1]
}

const okAnswer = `{"model":"m1","choices":[{"message":{"role":"assistant","content":"<think>hmm</think>{\"ops\":[]}"},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`

func TestCompleteAgainstScriptedServer(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Script{Rules: []llmtest.Rule{
		{Name: "closed", Match: []string{`^closed`}, Reply: "<think>I plan.</think>\n{\"ops\":[1]}"},
		{Name: "unclosed", Match: []string{`unclosed`}, Reply: "<think>ran out of budget"},
		{Name: "field", Match: []string{`field`}, Reply: `{"ops":[2]}`, Thinking: "from reasoning_content"},
		{Name: "both", Match: []string{`both`}, Reply: "<think>tag</think>ok", Thinking: "field"},
	}})
	defer srv.Close()
	for _, stream := range []bool{false, true} {
		c := llm.NewChatClient(llm.ChatConfig{BaseURL: srv.URL(), Model: "test", Stream: stream}, nil)
		check := func(user, content, thinking string) {
			t.Helper()
			resp, err := c.Complete(context.Background(), llm.ChatRequest{System: "sys", User: user, MaxTokens: 100}, nil)
			if err != nil {
				t.Fatalf("stream=%v %s: %v", stream, user, err)
			}
			if resp.Content != content || resp.Thinking != thinking {
				t.Errorf("stream=%v %s: got (%q, %q), want (%q, %q)", stream, user, resp.Content, resp.Thinking, content, thinking)
			}
			if resp.FinishReason != "stop" || resp.Model != "test" {
				t.Errorf("stream=%v: finish %q model %q", stream, resp.FinishReason, resp.Model)
			}
			if resp.Usage.Estimated || resp.Usage.CompletionTokens == 0 || resp.Usage.TotalTokens != resp.Usage.PromptTokens+resp.Usage.CompletionTokens {
				t.Errorf("stream=%v: usage %+v", stream, resp.Usage)
			}
			if resp.Latency <= 0 {
				t.Errorf("latency %v", resp.Latency)
			}
		}
		check("closed block", `{"ops":[1]}`, "I plan.")
		check("unclosed block", "", "ran out of budget")
		check("reasoning field", `{"ops":[2]}`, "from reasoning_content")
		check("both kinds", "ok", "field\n\ntag")
		check("nothing matches", `{"ops":[]}`, "")
	}
	if n := srv.ChatCount(); n != 10 {
		t.Errorf("ChatCount = %d, want 10", n)
	}
}

func TestCompleteRequestFields(t *testing.T) {
	var cp capture
	ts := cp.server(t, 200, "application/json", okAnswer)
	schema := []byte(`{"type":"object","properties":{"ops":{"type":"array"}},"required":["ops"]}`)
	cfg := llm.ChatConfig{BaseURL: ts.URL + "/v1/", Model: "qwen", APIKey: "k3y", JSONSchema: true,
		ThinkingField: "thinking_budget_tokens", Temperature: 0.2, Seed: 7}
	c := llm.NewChatClient(cfg, ts.Client())

	resp, err := c.Complete(context.Background(), llm.ChatRequest{System: "S", User: "U", MaxTokens: 1000,
		ThinkingBudget: 4000, Schema: schema, SchemaName: "din ops", SchemaStrict: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != `{"ops":[]}` || resp.Thinking != "hmm" || resp.Usage.TotalTokens != 15 || resp.Model != "m1" {
		t.Errorf("response %+v", resp)
	}
	if cp.paths[0] != "/v1/chat/completions" {
		t.Errorf("path %q (base URL with /v1/ not normalised)", cp.paths[0])
	}
	if got := cp.headers[0].Get("Authorization"); got != "Bearer k3y" {
		t.Errorf("Authorization %q", got)
	}
	b := cp.last(t)
	msgs := b["messages"].([]any)
	if len(msgs) != 2 || msgs[0].(map[string]any)["role"] != "system" || msgs[1].(map[string]any)["content"] != "U" {
		t.Errorf("messages %v", msgs)
	}
	if b["max_tokens"] != 5000.0 || b["thinking_budget_tokens"] != 4000.0 || b["model"] != "qwen" ||
		b["temperature"] != 0.2 || b["seed"] != 7.0 {
		t.Errorf("body %v", b)
	}
	if _, ok := b["chat_template_kwargs"]; ok {
		t.Errorf("chat_template_kwargs sent without NoThink: %v", b)
	}
	rf, _ := b["response_format"].(map[string]any)
	js, _ := rf["json_schema"].(map[string]any)
	if rf["type"] != "json_schema" || js["name"] != "din_ops" || js["strict"] != true {
		t.Errorf("response_format %v", rf)
	}
	if s, _ := json.Marshal(js["schema"]); !strings.Contains(string(s), `"required":["ops"]`) {
		t.Errorf("schema %s", s)
	}
	if _, ok := b["stream"]; ok {
		t.Errorf("stream sent in non-stream mode")
	}

	// A schema not written for strict mode is sent with strict false.
	if _, err := c.Complete(context.Background(), llm.ChatRequest{User: "U", Schema: schema}, nil); err != nil {
		t.Fatal(err)
	}
	rf, _ = cp.last(t)["response_format"].(map[string]any)
	if js, _ := rf["json_schema"].(map[string]any); js["strict"] != false {
		t.Errorf("response_format of a non-strict schema %v", rf)
	}

	// NoThink: enable_thinking false, no budget field, no budget tokens.
	if _, err := c.Complete(context.Background(), llm.ChatRequest{User: "U", MaxTokens: 1000, ThinkingBudget: 4000, NoThink: true}, nil); err != nil {
		t.Fatal(err)
	}
	b = cp.last(t)
	if kw, _ := b["chat_template_kwargs"].(map[string]any); kw["enable_thinking"] != false {
		t.Errorf("chat_template_kwargs %v", b["chat_template_kwargs"])
	}
	if _, ok := b["thinking_budget_tokens"]; ok || b["max_tokens"] != 1000.0 {
		t.Errorf("NoThink body %v", b)
	}
	if _, ok := b["response_format"]; ok {
		t.Errorf("response_format without schema")
	}
	if msgs := b["messages"].([]any); len(msgs) != 1 {
		t.Errorf("empty system message sent: %v", msgs)
	}

	// Schema off in config: no response_format; dotted thinking field nests.
	cfg.JSONSchema = false
	cfg.ThinkingField = "chat_template_kwargs.thinking_budget"
	c2 := llm.NewChatClient(cfg, ts.Client())
	if _, err := c2.Complete(context.Background(), llm.ChatRequest{User: "U", ThinkingBudget: 64, Schema: schema}, nil); err != nil {
		t.Fatal(err)
	}
	b = cp.last(t)
	if _, ok := b["response_format"]; ok {
		t.Errorf("response_format sent with JSONSchema off")
	}
	if kw, _ := b["chat_template_kwargs"].(map[string]any); kw["thinking_budget"] != 64.0 || b["max_tokens"] != 64.0 {
		t.Errorf("dotted thinking field: %v", b)
	}

	// Invalid schema: non-retryable, no request.
	n := len(cp.bodies)
	_, err = c.Complete(context.Background(), llm.ChatRequest{User: "U", Schema: []byte("{not json")}, nil)
	if !errors.Is(err, llm.ErrInvalidRequest) || llm.IsRetryable(err) || len(cp.bodies) != n {
		t.Errorf("invalid schema: err %v, requests %d→%d", err, n, len(cp.bodies))
	}
}

func TestCompleteNoUsageEstimates(t *testing.T) {
	var cp capture
	ts := cp.server(t, 200, "application/json", `{"choices":[{"message":{"content":"12345678","reasoning":"abcd"},"finish_reason":"length"}]}`)
	var progress []int
	resp, err := llm.NewChatClient(llm.ChatConfig{BaseURL: ts.URL, Model: "cfg-model"}, nil).
		Complete(context.Background(), llm.ChatRequest{User: "12345678"}, func(n int) { progress = append(progress, n) })
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Usage.Estimated || resp.Usage.CompletionTokens != 3 || resp.Usage.PromptTokens != 2 || resp.Usage.TotalTokens != 5 {
		t.Errorf("usage %+v", resp.Usage)
	}
	if resp.Thinking != "abcd" || resp.FinishReason != "length" || resp.Model != "cfg-model" {
		t.Errorf("response %+v", resp)
	}
	if len(progress) != 1 || progress[0] != 3 {
		t.Errorf("non-stream progress calls %v, want [3]", progress)
	}
}

func TestStreamingProgress(t *testing.T) {
	long := strings.Repeat("word ", 400) // 2000 bytes → 500 one-token chunks
	srv := llmtest.NewServer(llmtest.Script{Rules: []llmtest.Rule{
		{Name: "long", Match: []string{"go"}, Reply: "<think>short plan</think>" + long, Thinking: strings.Repeat("r", 400)},
	}})
	defer srv.Close()
	c := llm.NewChatClient(llm.ChatConfig{BaseURL: srv.URL(), Stream: true}, nil)
	var progress []int
	resp, err := c.Complete(context.Background(), llm.ChatRequest{User: "go"}, func(n int) { progress = append(progress, n) })
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != strings.TrimSpace(long) || resp.Thinking != strings.Repeat("r", 400)+"\n\nshort plan" {
		t.Errorf("content %d bytes, thinking %q", len(resp.Content), resp.Thinking)
	}
	if len(progress) < 10 {
		t.Fatalf("only %d progress calls: %v", len(progress), progress)
	}
	for i := 1; i < len(progress); i++ {
		if progress[i] < progress[i-1] {
			t.Fatalf("progress not monotonic: %v", progress)
		}
	}
	if last := progress[len(progress)-1]; last != resp.Usage.CompletionTokens || resp.Usage.Estimated {
		t.Errorf("final progress %d, usage %+v", last, resp.Usage)
	}
	reqs := srv.Requests()
	if !reqs[0].Stream || !strings.Contains(reqs[0].Body, `"include_usage":true`) {
		t.Errorf("stream request %+v", reqs[0])
	}
}

// sse writes a handcrafted event stream.
func sse(t *testing.T, events ...string) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		for _, e := range events {
			io.WriteString(w, e)
		}
	}))
	t.Cleanup(ts.Close)
	return ts
}

func TestStreamingEdgeCases(t *testing.T) {
	chunk := func(delta string) string {
		return fmt.Sprintf("data: {\"model\":\"s\",\"choices\":[{\"delta\":%s,\"finish_reason\":null}]}\n\n", delta)
	}
	t.Run("think tags split across chunks, no usage", func(t *testing.T) {
		ts := sse(t, ": keep-alive\n\n", chunk(`{"role":"assistant"}`), chunk(`{"content":"<thi"}`), chunk(`{"content":"nk>plan</th"}`),
			chunk(`{"content":"ink>{\"ops\""}`), "data: {\"choices\":[{\"delta\":{\"content\":\":[]}\"},\"finish_reason\":\"stop\"}]}\r\n\r\n", "data: [DONE]\n\n")
		var progress []int
		resp, err := llm.NewChatClient(llm.ChatConfig{BaseURL: ts.URL, Stream: true}, nil).
			Complete(context.Background(), llm.ChatRequest{User: "u"}, func(n int) { progress = append(progress, n) })
		if err != nil {
			t.Fatal(err)
		}
		if resp.Content != `{"ops":[]}` || resp.Thinking != "plan" || resp.FinishReason != "stop" || resp.Model != "s" {
			t.Errorf("%+v", resp)
		}
		if !resp.Usage.Estimated || len(progress) != 1 || progress[0] != resp.Usage.CompletionTokens {
			t.Errorf("usage %+v progress %v", resp.Usage, progress)
		}
	})
	t.Run("error event", func(t *testing.T) {
		ts := sse(t, chunk(`{"content":"a"}`), "data: {\"error\":{\"message\":\"context overflow\",\"type\":\"server_error\"}}\n\n")
		_, err := llm.NewChatClient(llm.ChatConfig{BaseURL: ts.URL, Stream: true}, nil).Complete(context.Background(), llm.ChatRequest{User: "u"}, nil)
		if err == nil || !strings.Contains(err.Error(), "context overflow") || llm.IsRetryable(err) {
			t.Errorf("err %v", err)
		}
	})
	t.Run("truncated", func(t *testing.T) {
		ts := sse(t, chunk(`{"content":"a"}`), chunk(`{"content":"b"}`))
		_, err := llm.NewChatClient(llm.ChatConfig{BaseURL: ts.URL, Stream: true}, nil).Complete(context.Background(), llm.ChatRequest{User: "u"}, nil)
		if !errors.Is(err, io.ErrUnexpectedEOF) || !llm.IsRetryable(err) {
			t.Errorf("err %v", err)
		}
	})
	t.Run("server ignores stream", func(t *testing.T) {
		var cp capture
		ts := cp.server(t, 200, "application/json", okAnswer)
		resp, err := llm.NewChatClient(llm.ChatConfig{BaseURL: ts.URL, Stream: true}, nil).Complete(context.Background(), llm.ChatRequest{User: "u"}, nil)
		if err != nil || resp.Content != `{"ops":[]}` || cp.last(t)["stream"] != true {
			t.Errorf("resp %+v err %v", resp, err)
		}
	})
}

func TestHTTPErrors(t *testing.T) {
	for _, c := range []struct {
		status    int
		retryable bool
	}{{400, false}, {401, false}, {404, false}, {422, false}, {408, true}, {429, true}, {500, true}, {503, true}} {
		var cp capture
		ts := cp.server(t, c.status, "application/json", `{"error":{"message":"nope"}}`)
		_, err := llm.NewChatClient(llm.ChatConfig{BaseURL: ts.URL}, nil).Complete(context.Background(), llm.ChatRequest{User: "u"}, nil)
		var he *llm.HTTPError
		if !errors.As(err, &he) {
			t.Fatalf("%d: %v is not an HTTPError", c.status, err)
		}
		if he.Status != c.status || he.URL != ts.URL+"/v1/chat/completions" || !strings.Contains(he.Body, "nope") {
			t.Errorf("%d: %+v", c.status, he)
		}
		if he.Retryable() != c.retryable || llm.IsRetryable(err) != c.retryable {
			t.Errorf("%d: retryable %v / %v, want %v", c.status, he.Retryable(), llm.IsRetryable(err), c.retryable)
		}
	}

	// Scripted status rule.
	srv := llmtest.NewServer(llmtest.Script{Rules: []llmtest.Rule{{Name: "boom", Match: []string{"boom"}, Status: 503}}})
	defer srv.Close()
	_, err := llm.NewChatClient(llm.ChatConfig{BaseURL: srv.URL()}, nil).Complete(context.Background(), llm.ChatRequest{User: "boom"}, nil)
	if var503 := new(llm.HTTPError); !errors.As(err, &var503) || var503.Status != 503 || !llm.IsRetryable(err) {
		t.Errorf("scripted 503: %v", err)
	}

	// Malformed 200 answers are not retryable.
	for _, body := range []string{`{"choices":[]}`, `not json`, `{"error":{"message":"bad"}}`} {
		var cp capture
		ts := cp.server(t, 200, "application/json", body)
		_, err := llm.NewChatClient(llm.ChatConfig{BaseURL: ts.URL}, nil).Complete(context.Background(), llm.ChatRequest{User: "u"}, nil)
		if !errors.Is(err, llm.ErrBadResponse) || llm.IsRetryable(err) {
			t.Errorf("%s: %v", body, err)
		}
	}
}

func closedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := "http://" + ln.Addr().String()
	ln.Close()
	return u
}

func TestTransportErrors(t *testing.T) {
	u := closedURL(t)
	_, err := llm.NewChatClient(llm.ChatConfig{BaseURL: u}, nil).Complete(context.Background(), llm.ChatRequest{User: "u"}, nil)
	if err == nil || !llm.IsRetryable(err) || !strings.Contains(err.Error(), u) {
		t.Errorf("connection refused: %v (retryable %v)", err, llm.IsRetryable(err))
	}

	srv := llmtest.NewServer(llmtest.Script{Rules: []llmtest.Rule{{Name: "slow", Match: []string{"slow"}, DelayMS: 5000}}})
	defer srv.Close()
	start := time.Now()
	_, err = llm.NewChatClient(llm.ChatConfig{BaseURL: srv.URL(), Timeout: 50 * time.Millisecond}, nil).
		Complete(context.Background(), llm.ChatRequest{User: "slow"}, nil)
	if !errors.Is(err, context.DeadlineExceeded) || !llm.IsRetryable(err) || time.Since(start) > 2*time.Second {
		t.Errorf("timeout: %v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(30*time.Millisecond, cancel)
	_, err = llm.NewChatClient(llm.ChatConfig{BaseURL: srv.URL()}, nil).Complete(ctx, llm.ChatRequest{User: "slow"}, nil)
	if !errors.Is(err, context.Canceled) || llm.IsRetryable(err) {
		t.Errorf("cancel: %v", err)
	}

	for _, bad := range []string{"", "localhost:8080", "ftp://x"} {
		_, err := llm.NewChatClient(llm.ChatConfig{BaseURL: bad}, nil).Complete(context.Background(), llm.ChatRequest{User: "u"}, nil)
		if !errors.Is(err, llm.ErrInvalidRequest) || llm.IsRetryable(err) {
			t.Errorf("base URL %q: %v", bad, err)
		}
	}
	if llm.IsRetryable(nil) {
		t.Error("nil is retryable")
	}
}
