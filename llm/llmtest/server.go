package llmtest

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// maxRecorded bounds the request log of a long-running server; the counters
// keep counting past it.
const maxRecorded = 10000

// Recorded is one request the server saw.
type Recorded struct {
	Method, Path string
	// System and User are the chat messages (empty for other endpoints).
	System, User string
	// Rule is the name of the rule that answered a chat request; "" when the
	// default reply answered.
	Rule string
	// RuleIndex is the rule's index, -1 for the default reply or non-chat
	// requests.
	RuleIndex int
	// Stream is true for a streaming chat request.
	Stream bool
	// Status is the HTTP status the server answered.
	Status int
	// Inputs are the texts of an embeddings request.
	Inputs []string
	// Body is the raw request body (chat requests, and every request a
	// Hosted server refused with 429).
	Body string
	// At is when the server received the request.
	At time.Time
}

// Server is a scripted OpenAI-compatible model server. NewServer starts it on
// a loopback port; New builds an unstarted one whose Handler can be served
// elsewhere. Its answers depend only on the request; only the request log
// and counters change.
type Server struct {
	script  Script
	rules   []compiledRule
	dim     int
	handler http.Handler
	ts      *httptest.Server

	mu     sync.Mutex
	reqs   []Recorded
	chats  int
	embeds int
	usage  Usage // of the chat answers that carried usage
}

// Usage sums the token counts a server sent in its chat answers.
type Usage struct {
	Answers                        int // chat answers that carried usage
	PromptTokens, CompletionTokens int
}

// New validates s and returns an unstarted server (URL() is "" until Start).
func New(s Script) (*Server, error) {
	rules, err := compile(s)
	if err != nil {
		return nil, fmt.Errorf("llmtest: %w", err)
	}
	srv := &Server{script: s, rules: rules, dim: s.EmbeddingDim}
	if srv.dim == 0 {
		srv.dim = DefaultEmbeddingDim
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", srv.chat)
	mux.HandleFunc("POST /v1/embeddings", srv.embeddings)
	if s.Hosted == nil {
		mux.HandleFunc("GET /health", srv.health)
	}
	mux.HandleFunc("GET /v1/models", srv.models)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		status, msg := http.StatusNotFound, "no such endpoint: "
		switch r.URL.Path {
		case "/v1/chat/completions", "/v1/embeddings", "/health", "/v1/models":
			status, msg = http.StatusMethodNotAllowed, "method not allowed: "
		}
		srv.record(Recorded{Method: r.Method, Path: r.URL.Path, RuleIndex: -1, Status: status})
		writeError(w, status, "invalid_request_error", msg+r.Method+" "+r.URL.Path)
	})
	srv.handler = mux
	if s.Hosted != nil {
		srv.handler = &hostedGate{Hosted: *s.Hosted, next: mux, rec: srv.record, posts: map[string]int{}, seen: map[uint64]bool{}}
	}
	return srv, nil
}

// NewServer starts a server for s on a loopback port. It panics when the
// script is invalid (use Script.Validate or LoadScript to check first).
func NewServer(s Script) *Server {
	srv, err := New(s)
	if err != nil {
		panic(err)
	}
	srv.Start()
	return srv
}

// Start listens on a loopback port (httptest); it panics when already started.
func (s *Server) Start() {
	if s.ts != nil {
		panic("llmtest: server already started")
	}
	s.ts = httptest.NewServer(s.handler)
}

// URL is the base URL ("http://127.0.0.1:PORT", no "/v1"), "" if unstarted.
func (s *Server) URL() string {
	if s.ts == nil {
		return ""
	}
	return s.ts.URL
}

// Close stops a started server; it is a no-op otherwise.
func (s *Server) Close() {
	if s.ts != nil {
		s.ts.Close()
	}
}

// Handler serves the API; use it to serve the script on a fixed address.
func (s *Server) Handler() http.Handler { return s.handler }

// Script returns the script the server answers from.
func (s *Server) Script() Script { return s.script }

// Requests returns a copy of the request log (at most the first 10000).
func (s *Server) Requests() []Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Recorded(nil), s.reqs...)
}

// ChatCount is the number of chat completion requests received.
func (s *Server) ChatCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.chats
}

// EmbedCount is the number of embeddings requests received (batches, not
// texts).
func (s *Server) EmbedCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.embeds
}

// Usage is the sum of the usage the server sent with chat answers: every
// plain answer's, and a streamed answer's when the request asked for it.
func (s *Server) Usage() Usage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.usage
}

func (s *Server) record(r Recorded) {
	if r.At.IsZero() {
		r.At = time.Now()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case r.Method != http.MethodPost:
	case r.Path == "/v1/chat/completions":
		s.chats++
	case r.Path == "/v1/embeddings":
		s.embeds++
	}
	if len(s.reqs) < maxRecorded {
		s.reqs = append(s.reqs, r)
	}
}

// ---- chat ----

type chatRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Stream        bool `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

// messageText reads a message content: a string or an array of text parts.
func messageText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	return ""
}

// chat answers a chat completion from the script. The request is recorded
// exactly once, with the status it got, whichever way it ends, because
// tests assert on the log and on ChatCount.
func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	req, rec, err := readChatRequest(r)
	if err != nil {
		rec.Status = http.StatusBadRequest
		s.record(rec)
		writeError(w, http.StatusBadRequest, "invalid_request_error", "bad chat request: "+err.Error())
		return
	}
	rec.System, rec.User = chatTexts(req)
	rec.Stream = req.Stream
	rule, reply, thinking := s.pickReply(&rec)
	if s.scriptedFault(w, r, rule, &rec) {
		return
	}
	rec.Status = http.StatusOK
	s.record(rec)
	a := newChatAnswer(req, rec, reply, thinking)
	if rule != nil && rule.Finish != "" {
		a.finish = rule.Finish
	}
	if s.script.Hosted != nil {
		a.usage["prompt_tokens"] += tokensPerMessage*len(req.Messages) + tokensReplyPrime
		a.usage["total_tokens"] = a.usage["prompt_tokens"] + a.usage["completion_tokens"]
	}
	includeUsage := req.StreamOptions != nil && req.StreamOptions.IncludeUsage
	if !req.Stream || includeUsage {
		s.countUsage(a.usage)
	}
	if !req.Stream {
		a.write(w)
		return
	}
	a.stream(w, includeUsage)
}

func (s *Server) countUsage(u map[string]int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.usage.Answers++
	s.usage.PromptTokens += u["prompt_tokens"]
	s.usage.CompletionTokens += u["completion_tokens"]
}

// readChatRequest decodes the body. The raw body is kept in the record even
// when it does not decode, since a malformed request is what a test most
// needs to see.
func readChatRequest(r *http.Request) (chatRequest, Recorded, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	rec := Recorded{Method: r.Method, Path: r.URL.Path, RuleIndex: -1, Body: string(body)}
	var req chatRequest
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	if err == nil && len(req.Messages) == 0 {
		err = fmt.Errorf("messages is empty")
	}
	return req, rec, err
}

// chatTexts is what rules match on: all system (and developer) messages
// joined, and the last user message, which is the one that carries the turn.
func chatTexts(req chatRequest) (system, user string) {
	var sys []string
	for _, m := range req.Messages {
		switch m.Role {
		case "system", "developer":
			sys = append(sys, messageText(m.Content))
		case "user":
			user = messageText(m.Content) // the last user message
		}
	}
	return strings.Join(sys, "\n"), user
}

// pickReply finds the first matching rule, so a script reads like a switch:
// specific rules first, catch-alls last. Without a match the script's
// default (or DefaultReply) answers and rule is nil.
func (s *Server) pickReply(rec *Recorded) (rule *compiledRule, reply, thinking string) {
	reply = s.script.Default
	if reply == "" {
		reply = DefaultReply
	}
	for i := range s.rules {
		if s.rules[i].matches(rec.System, rec.User) {
			rule = &s.rules[i]
			rec.Rule, rec.RuleIndex = rule.Name, i
			reply = rule.expand(rule.Reply, rec.User)
			thinking = rule.expand(rule.Thinking, rec.User)
			break
		}
	}
	return rule, reply, thinking
}

// scriptedFault applies the rule's delay and error status and reports whether
// the request has been dealt with. The delay gives up when the client does,
// so a test's timeout does not leave the handler (and Close) waiting.
func (s *Server) scriptedFault(w http.ResponseWriter, r *http.Request, rule *compiledRule, rec *Recorded) bool {
	if rule != nil && rule.DelayMS > 0 {
		delay := rule.DelayMS
		if rule.JitterMS > 0 {
			delay += rand.IntN(2*rule.JitterMS+1) - rule.JitterMS
		}
		t := time.NewTimer(time.Duration(delay) * time.Millisecond)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			rec.Status = 499 // client closed the request
			s.record(*rec)
			return true
		}
	}
	if rule != nil && rule.Status != 0 {
		rec.Status = rule.Status
		s.record(*rec)
		writeError(w, rule.Status, "scripted_error", fmt.Sprintf("scripted error %d from rule %q", rule.Status, rule.Name))
		return true
	}
	return false
}

// chatAnswer is one reply in both wire forms. The id and usage are derived
// from the request text alone, so the same request always gets the same
// answer (Server promises answers depend only on the request).
type chatAnswer struct {
	id, model       string
	reply, thinking string
	finish          string // finish_reason
	usage           map[string]int
}

func newChatAnswer(req chatRequest, rec Recorded, reply, thinking string) chatAnswer {
	model := req.Model
	if model == "" {
		model = "scripted"
	}
	usage := map[string]int{
		"prompt_tokens":     estimateTokens(rec.System) + estimateTokens(rec.User),
		"completion_tokens": estimateTokens(reply) + estimateTokens(thinking),
	}
	usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
	return chatAnswer{
		id:    fmt.Sprintf("chatcmpl-%016x", hash64(rec.System+"\x00"+rec.User)),
		model: model, reply: reply, thinking: thinking, finish: "stop", usage: usage,
	}
}

// write sends the non-streamed completion. reasoning_content is only present
// with thinking, as on the servers the client has to cope with.
func (a chatAnswer) write(w http.ResponseWriter) {
	msg := map[string]any{"role": "assistant", "content": a.reply}
	if a.thinking != "" {
		msg["reasoning_content"] = a.thinking
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id": a.id, "object": "chat.completion", "created": 0, "model": a.model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": a.finish}},
		"usage":   a.usage,
	})
}

// stream sends the completion as server-sent events in the order real
// servers use (role, reasoning, content, finish, optional usage, [DONE]),
// in token-sized pieces so that the client's progress callback is exercised.
// It stops at the first failed write: the client has gone.
func (a chatAnswer) stream(w http.ResponseWriter, includeUsage bool) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	ev := sseWriter{w: w}
	ev.flusher, _ = w.(http.Flusher)
	if !ev.send(a.chunk(map[string]any{"role": "assistant", "content": ""}, nil)) {
		return
	}
	for _, piece := range pieces(a.thinking) {
		if !ev.send(a.chunk(map[string]any{"reasoning_content": piece}, nil)) {
			return
		}
	}
	for _, piece := range pieces(a.reply) {
		if !ev.send(a.chunk(map[string]any{"content": piece}, nil)) {
			return
		}
	}
	if !ev.send(a.chunk(map[string]any{}, a.finish)) {
		return
	}
	if includeUsage {
		if !ev.send(map[string]any{"id": a.id, "object": "chat.completion.chunk", "created": 0, "model": a.model,
			"choices": []any{}, "usage": a.usage}) {
			return
		}
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	ev.flush()
}

func (a chatAnswer) chunk(delta map[string]any, finish any) map[string]any {
	return map[string]any{
		"id": a.id, "object": "chat.completion.chunk", "created": 0, "model": a.model,
		"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
	}
}

// sseWriter writes one "data:" event per value and flushes it at once, so a
// streaming client sees each chunk when it is sent, not when the reply ends.
type sseWriter struct {
	w       io.Writer
	flusher http.Flusher // nil when the writer cannot flush
}

func (e sseWriter) send(v any) bool {
	var buf strings.Builder
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	if _, err := fmt.Fprintf(e.w, "data: %s\n\n", strings.TrimSuffix(buf.String(), "\n")); err != nil {
		return false
	}
	e.flush()
	return true
}

func (e sseWriter) flush() {
	if e.flusher != nil {
		e.flusher.Flush()
	}
}

// pieces splits s into stream deltas of about one token (4 bytes), on rune
// boundaries.
func pieces(s string) []string {
	var out []string
	for len(s) > 0 {
		n := 0
		for n < len(s) && n < 4 {
			_, size := utf8.DecodeRuneInString(s[n:])
			n += size
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

// ---- embeddings ----

func (s *Server) embeddings(w http.ResponseWriter, r *http.Request) {
	rec := Recorded{Method: r.Method, Path: r.URL.Path, RuleIndex: -1}
	var req struct {
		Model      string          `json:"model"`
		Input      json.RawMessage `json:"input"`
		Dimensions int             `json:"dimensions"`
	}
	err := json.NewDecoder(io.LimitReader(r.Body, 64<<20)).Decode(&req)
	var inputs []string
	if err == nil {
		var one string
		if json.Unmarshal(req.Input, &one) == nil {
			inputs = []string{one}
		} else if uerr := json.Unmarshal(req.Input, &inputs); uerr != nil {
			err = fmt.Errorf("input must be a string or an array of strings")
		} else if len(inputs) == 0 {
			err = fmt.Errorf("input is empty")
		}
	}
	if err == nil && req.Dimensions < 0 {
		err = fmt.Errorf("dimensions %d is negative", req.Dimensions)
	}
	rec.Inputs = inputs
	if err != nil {
		rec.Status = http.StatusBadRequest
		s.record(rec)
		writeError(w, http.StatusBadRequest, "invalid_request_error", "bad embeddings request: "+err.Error())
		return
	}
	rec.Status = http.StatusOK
	s.record(rec)
	dim := s.dim
	if req.Dimensions > 0 {
		dim = req.Dimensions
	}
	data := make([]any, len(inputs))
	tokens := 0
	for i, text := range inputs {
		data[i] = map[string]any{"object": "embedding", "index": i, "embedding": Embedding(text, dim)}
		tokens += estimateTokens(text)
	}
	model := req.Model
	if model == "" {
		model = "scripted-embedding"
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"object": "list", "data": data, "model": model,
		"usage": map[string]int{"prompt_tokens": tokens, "total_tokens": tokens},
	})
}

// ---- health and models ----

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	s.record(Recorded{Method: r.Method, Path: r.URL.Path, RuleIndex: -1, Status: http.StatusOK})
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	s.record(Recorded{Method: r.Method, Path: r.URL.Path, RuleIndex: -1, Status: http.StatusOK})
	writeJSON(w, http.StatusOK, map[string]any{
		"object": "list",
		"data": []any{
			map[string]any{"id": "scripted", "object": "model", "created": 0, "owned_by": "llmtest"},
			map[string]any{"id": "scripted-embedding", "object": "model", "created": 0, "owned_by": "llmtest"},
		},
	})
}

// ---- helpers ----

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // keep <think> readable, as real servers do
	_ = enc.Encode(v)
}

func writeError(w http.ResponseWriter, status int, typ, msg string) {
	writeJSON(w, status, map[string]any{
		"error": map[string]any{"message": msg, "type": typ, "code": status},
	})
}

func hash64(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}
