package llmtest

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// Hosted makes a Server behave as a hosted API (OpenAI's) does where a
// local server does not: every path wants the key, there is no /health,
// some calls are refused with 429 and a Retry-After, a streamed answer
// carries its usage only when stream_options.include_usage asks for it
// (as every Server does), and prompt_tokens counts the chat format's
// overhead, so that usage the server sent is told from a client's
// estimate. The rate limit makes answers depend on the order of requests,
// not only on each request.
type Hosted struct {
	// Key every request must carry as "Authorization: Bearer <Key>"; any
	// other request gets 401 with OpenAI's error body.
	Key string `json:"key"`
	// RateLimitEvery refuses every Nth new POST of each endpoint (chat
	// completions and embeddings counted apart) with 429; 0 = never. Only
	// a body not seen before counts, and none is refused twice: a client
	// that repeats its work after a refusal gets through, as it does once
	// a real limit's window has passed.
	RateLimitEvery int `json:"rate_limit_every"`
	// RetryAfterS is the wait a 429 asks for, in seconds: the refusals
	// alternate between the two forms of Retry-After, delay seconds first,
	// then an HTTP date that far ahead (rounded up to the whole second).
	RetryAfterS int `json:"retry_after_s"`
}

// Chat format overhead of OpenAI's token counts: each message costs a few
// tokens around its content, and the reply is primed with a few more.
const (
	tokensPerMessage = 3
	tokensReplyPrime = 3
)

func (h *Hosted) validate() error {
	switch {
	case h.Key == "":
		return fmt.Errorf("hosted: key is empty")
	case h.RateLimitEvery < 0 || h.RetryAfterS < 0:
		return fmt.Errorf("hosted: rate_limit_every %d and retry_after_s %d must not be negative", h.RateLimitEvery, h.RetryAfterS)
	}
	return nil
}

// hostedGate is the state of a hosted server's rate limit.
type hostedGate struct {
	Hosted
	next     http.Handler
	rec      func(Recorded)
	mu       sync.Mutex
	posts    map[string]int  // new POST bodies seen per path
	seen     map[uint64]bool // path and body hashes of the POSTs seen
	refusals int             // 429s sent, which alternate the Retry-After form
}

// ServeHTTP answers what a hosted API answers before its model sees the
// request: a missing or wrong key, a path it does not serve (/health), a
// rate limit; the rest goes to next.
func (g *hostedGate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := Recorded{Method: r.Method, Path: r.URL.Path, RuleIndex: -1, At: time.Now()}
	if auth := r.Header.Get("Authorization"); auth != "Bearer "+g.Key {
		rec.Status = http.StatusUnauthorized
		g.rec(rec)
		writeOpenAIError(w, rec.Status, "invalid_request_error", keyCode(auth), keyMessage(auth))
		return
	}
	if r.URL.Path == "/health" {
		rec.Status = http.StatusNotFound
		g.rec(rec)
		writeOpenAIError(w, rec.Status, "invalid_request_error", "", fmt.Sprintf("Invalid URL (%s %s)", r.Method, r.URL.Path))
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		rec.Status = http.StatusBadRequest
		g.rec(rec)
		writeOpenAIError(w, rec.Status, "invalid_request_error", "", "could not read the request body")
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	if wait, ok := g.limited(r, body); ok {
		rec.Status = http.StatusTooManyRequests
		rec.Body = string(body)
		g.rec(rec)
		w.Header().Set("Retry-After", wait)
		writeOpenAIError(w, rec.Status, "requests", "rate_limit_exceeded",
			fmt.Sprintf("Rate limit reached for requests. Please try again in %ds.", g.RetryAfterS))
		return
	}
	g.next.ServeHTTP(w, r)
}

// limited counts a new POST and says whether it is refused, with the
// Retry-After value to send.
func (g *hostedGate) limited(r *http.Request, body []byte) (string, bool) {
	if r.Method != http.MethodPost || g.RateLimitEvery == 0 {
		return "", false
	}
	h := hash64(r.URL.Path + "\x00" + string(body))
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.seen[h] {
		return "", false
	}
	g.seen[h] = true
	g.posts[r.URL.Path]++
	if g.posts[r.URL.Path]%g.RateLimitEvery != 0 {
		return "", false
	}
	g.refusals++
	if g.refusals%2 == 1 {
		return fmt.Sprint(g.RetryAfterS), true
	}
	at := time.Now().Add(time.Duration(g.RetryAfterS) * time.Second).Truncate(time.Second).Add(time.Second)
	return at.UTC().Format(http.TimeFormat), true
}

func keyCode(auth string) string {
	if auth == "" {
		return ""
	}
	return "invalid_api_key"
}

func keyMessage(auth string) string {
	if auth == "" {
		return "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY)."
	}
	return "Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys."
}

// writeOpenAIError writes OpenAI's error object: its code is a string or
// null, and param is always present.
func writeOpenAIError(w http.ResponseWriter, status int, typ, code, msg string) {
	var c any
	if code != "" {
		c = code
	}
	writeJSON(w, status, map[string]any{
		"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": c},
	})
}
