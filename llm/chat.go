package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"regexp"
	"strings"
	"time"
)

// ChatConfig configures a ChatClient. The zero value of every field but
// BaseURL is usable.
type ChatConfig struct {
	// BaseURL of the server, without "/v1" (tolerated): "http://127.0.0.1:8080".
	BaseURL string
	// Model sent as "model"; omitted when empty (llama.cpp serves its one model).
	Model string
	// APIKey sent as "Authorization: Bearer ..." on every request, the
	// health probe's included, when non-empty.
	APIKey string
	// KeySetting names where APIKey is configured ("llm.api_key
	// (LETHE_LLM_API_KEY)"), so that a refused key (401, 403) says what to
	// fix; empty = unnamed.
	KeySetting string
	// Timeout bounds one Complete call, streaming included; 0 = only ctx.
	Timeout time.Duration
	// JSONSchema: send response_format {"type":"json_schema",...} when the
	// request carries a schema. Off for servers without structured output.
	JSONSchema bool
	// ThinkingField names the request field that carries the thinking budget
	// ("" = none is sent), e.g. "thinking_budget_tokens" or "reasoning_budget".
	// A dotted name nests: "chat_template_kwargs.thinking_budget".
	ThinkingField string
	// Stream requests server-sent events; Complete then reports progress
	// every few chunks so that a long call can heartbeat.
	Stream bool
	// Temperature is always sent (0 = greedy, the reproducible default).
	Temperature float64
	// Seed is sent when non-zero.
	Seed int
}

// ChatRequest is one single-turn completion: a system and a user message.
type ChatRequest struct {
	System, User string
	// MaxTokens for the answer; the thinking budget is added on top
	// (max_tokens = MaxTokens + ThinkingBudget, or MaxTokens with NoThink).
	// 0 with no budget leaves max_tokens to the server.
	MaxTokens int
	// ThinkingBudget in tokens, sent in ChatConfig.ThinkingField when set.
	ThinkingBudget int
	// NoThink disables thinking: sends chat_template_kwargs.enable_thinking
	// = false and neither budget field nor budget tokens.
	NoThink bool
	// Schema is a JSON schema for the answer, sent as response_format when
	// ChatConfig.JSONSchema is on; nil = free text.
	Schema []byte
	// SchemaStrict marks Schema as written for OpenAI's strict mode (every
	// property required, optional ones nullable) and asks for it; a schema
	// with optional properties must be sent without it.
	SchemaStrict bool
	// SchemaName names the schema in response_format ("response" if empty).
	SchemaName string
}

// Usage is the token accounting of one call. When the server reports none,
// the client fills it with EstimateTokens of the messages and the answer and
// sets Estimated.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
	// Estimated is true when the numbers are estimates, not the server's.
	Estimated bool `json:"estimated,omitempty"`
}

// ChatResponse is the result of Complete.
type ChatResponse struct {
	// Content is the answer with thinking blocks removed, trimmed.
	Content string
	// Thinking is the reasoning: reasoning_content / reasoning fields and
	// <think> blocks of the content, joined.
	Thinking string
	Usage    Usage
	// Model as reported by the server (the configured one if absent).
	Model string
	// FinishReason as reported: "stop", "length" (budget exhausted), ...
	FinishReason string
	// Latency is the wall time of the call, from request to last byte.
	Latency time.Duration
}

// ChatClient calls /v1/chat/completions. It is stateless and safe for
// concurrent use.
type ChatClient struct {
	cfg ChatConfig
	hc  *http.Client
}

// NewChatClient returns a client for cfg over hc (a fresh http.Client when
// nil). The base URL is checked on each call, so a bad one is reported as a
// non-retryable error by Complete.
func NewChatClient(cfg ChatConfig, hc *http.Client) *ChatClient {
	return &ChatClient{cfg: cfg, hc: httpClient(hc)}
}

// Config returns the client's configuration.
func (c *ChatClient) Config() ChatConfig { return c.cfg }

// Health probes the client's server, with its API key: GET /health, or
// GET /v1/models where there is no /health. A refused key names
// KeySetting.
func (c *ChatClient) Health(ctx context.Context) error {
	return keyHint(health(ctx, c.hc, c.cfg.BaseURL, c.cfg.APIKey), c.cfg.KeySetting, c.cfg.APIKey)
}

// chatMessage is one message of a request or an answer.
type chatMessage struct {
	Role             string `json:"role"`
	Content          string `json:"content"`
	ReasoningContent string `json:"reasoning_content,omitempty"`
	Reasoning        string `json:"reasoning,omitempty"`
}

// chatAnswer is the non-streaming answer.
type chatAnswer struct {
	Model   string `json:"model"`
	Choices []struct {
		Message      chatMessage `json:"message"`
		FinishReason string      `json:"finish_reason"`
	} `json:"choices"`
	Usage *Usage    `json:"usage"`
	Error *apiError `json:"error"`
}

// apiError is the OpenAI error object, also sent inside streams.
type apiError struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Code    any    `json:"code"`
}

func (e *apiError) String() string {
	if e.Type != "" {
		return e.Type + ": " + e.Message
	}
	return e.Message
}

var schemaNameRe = regexp.MustCompile(`[^a-zA-Z0-9_-]+`)

// sanitizeSchemaName makes a name OpenAI accepts: [a-zA-Z0-9_-]{1,64}.
func sanitizeSchemaName(name string) string {
	name = schemaNameRe.ReplaceAllString(name, "_")
	if len(name) > 64 {
		name = name[:64]
	}
	if name == "" {
		name = "response"
	}
	return name
}

// RequestBody returns the JSON object Complete would POST for req, for logs
// and tests.
func (c *ChatClient) RequestBody(req ChatRequest) (map[string]any, error) {
	msgs := make([]chatMessage, 0, 2)
	if req.System != "" {
		msgs = append(msgs, chatMessage{Role: "system", Content: req.System})
	}
	msgs = append(msgs, chatMessage{Role: "user", Content: req.User})
	body := map[string]any{
		"messages":    msgs,
		"temperature": c.cfg.Temperature,
	}
	if c.cfg.Model != "" {
		body["model"] = c.cfg.Model
	}
	if c.cfg.Seed != 0 {
		body["seed"] = c.cfg.Seed
	}
	if req.MaxTokens < 0 || req.ThinkingBudget < 0 {
		return nil, fmt.Errorf("%w: negative max tokens (%d) or thinking budget (%d)", ErrInvalidRequest, req.MaxTokens, req.ThinkingBudget)
	}
	maxTokens := req.MaxTokens
	if req.NoThink {
		body["chat_template_kwargs"] = map[string]any{"enable_thinking": false}
	} else {
		maxTokens += req.ThinkingBudget
		if c.cfg.ThinkingField != "" && req.ThinkingBudget > 0 {
			setPath(body, c.cfg.ThinkingField, req.ThinkingBudget)
		}
	}
	if maxTokens > 0 {
		body["max_tokens"] = maxTokens
	}
	if c.cfg.JSONSchema && req.Schema != nil {
		if !json.Valid(req.Schema) {
			return nil, fmt.Errorf("%w: schema %q is not valid JSON", ErrInvalidRequest, req.SchemaName)
		}
		body["response_format"] = map[string]any{
			"type": "json_schema",
			"json_schema": map[string]any{
				"name":   sanitizeSchemaName(req.SchemaName),
				"schema": json.RawMessage(req.Schema),
				"strict": req.SchemaStrict,
			},
		}
	}
	if c.cfg.Stream {
		body["stream"] = true
		body["stream_options"] = map[string]any{"include_usage": true}
	}
	return body, nil
}

// setPath sets a dotted key ("a.b.c") in nested maps, creating them.
func setPath(m map[string]any, path string, v any) {
	parts := strings.Split(path, ".")
	for _, p := range parts[:len(parts)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	m[parts[len(parts)-1]] = v
}

// Complete runs one single-turn completion. onProgress (may be nil) receives
// the number of completion tokens produced so far: once at the end without
// streaming, every progressEvery chunks and at the end with streaming. The
// answer's content has its thinking removed (see SplitThinking); an empty
// content is not an error.
func (c *ChatClient) Complete(ctx context.Context, req ChatRequest, onProgress func(tokens int)) (ChatResponse, error) {
	resp, err := c.complete(ctx, req, onProgress)
	return resp, serviceError(ServiceChat, c.cfg.BaseURL, keyHint(err, c.cfg.KeySetting, c.cfg.APIKey))
}

func (c *ChatClient) complete(ctx context.Context, req ChatRequest, onProgress func(tokens int)) (ChatResponse, error) {
	start := time.Now()
	base, err := normalizeBaseURL(c.cfg.BaseURL)
	if err != nil {
		return ChatResponse{}, fmt.Errorf("llm chat: %w", err)
	}
	u := base + "/v1/chat/completions"
	body, err := c.RequestBody(req)
	if err != nil {
		return ChatResponse{}, fmt.Errorf("llm chat %s: %w", u, err)
	}
	if c.cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.cfg.Timeout)
		defer cancel()
	}
	accept := "application/json"
	if c.cfg.Stream {
		accept = "text/event-stream"
	}
	resp, err := postJSON(ctx, c.hc, u, c.cfg.APIKey, body, accept)
	if err != nil {
		return ChatResponse{}, fmt.Errorf("llm chat: %w", c.timeoutCause(ctx, err))
	}
	defer resp.Body.Close()

	var out ChatResponse
	var rawContent, reasoning string
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt == "text/event-stream" {
		rawContent, reasoning, out, err = readStream(resp.Body, onProgress)
	} else {
		rawContent, reasoning, out, err = readAnswer(resp.Body)
	}
	if err != nil {
		return ChatResponse{}, fmt.Errorf("llm chat %s: %w", u, c.timeoutCause(ctx, err))
	}
	thinking, content := SplitThinking(rawContent)
	out.Content = content
	out.Thinking = joinThinking(reasoning, thinking)
	if out.Model == "" {
		out.Model = c.cfg.Model
	}
	if out.Usage.CompletionTokens == 0 && out.Usage.PromptTokens == 0 {
		out.Usage = Usage{
			PromptTokens:     EstimateTokens(req.System) + EstimateTokens(req.User),
			CompletionTokens: EstimateTokens(rawContent) + EstimateTokens(reasoning),
			Estimated:        true,
		}
	}
	if out.Usage.TotalTokens == 0 {
		out.Usage.TotalTokens = out.Usage.PromptTokens + out.Usage.CompletionTokens
	}
	out.Latency = time.Since(start)
	if onProgress != nil {
		onProgress(out.Usage.CompletionTokens)
	}
	return out, nil
}

// timeoutCause makes an error caused by the client's own Timeout say so.
func (c *ChatClient) timeoutCause(ctx context.Context, err error) error {
	if c.cfg.Timeout > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded) && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("timeout %s: %w (%w)", c.cfg.Timeout, context.DeadlineExceeded, err)
	}
	return err
}

// readAnswer decodes a non-streaming answer.
func readAnswer(r io.Reader) (content, reasoning string, out ChatResponse, err error) {
	var a chatAnswer
	if err = decodeBody(r, &a); err != nil {
		return "", "", out, err
	}
	if a.Error != nil {
		return "", "", out, fmt.Errorf("%w: server error: %s", ErrBadResponse, a.Error)
	}
	if len(a.Choices) == 0 {
		return "", "", out, fmt.Errorf("%w: answer has no choices", ErrBadResponse)
	}
	ch := a.Choices[0]
	out.Model = a.Model
	out.FinishReason = ch.FinishReason
	if a.Usage != nil {
		out.Usage = *a.Usage
	}
	reasoning = ch.Message.ReasoningContent
	if reasoning == "" {
		reasoning = ch.Message.Reasoning
	}
	return ch.Message.Content, reasoning, out, nil
}
