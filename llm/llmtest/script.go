// Package llmtest is a scripted, deterministic, OpenAI-compatible model
// server for tests: the code under test (the llm clients, a worker process)
// talks to it exactly as to llama.cpp's llama-server.
//
// Chat answers come from a Script: an ordered list of rules whose regexes
// are matched against the user message; the first rule that matches answers
// (its reply, its reasoning, or an HTTP error status), and when none does
// the script's default reply is returned. The server is stateless: the same
// request always gets the same answer, so retried or replayed activities see
// identical results. It records the requests it saw for assertions.
//
// Embeddings are deterministic feature-hashing vectors (see Embedding):
// texts that share words have a higher cosine than texts that do not, which
// is enough for tests of similarity, deduplication and convergence logic.
//
// Endpoints: POST /v1/chat/completions (plain and streaming), POST
// /v1/embeddings, GET /health, GET /v1/models. Script.Hosted makes the
// server behave as a hosted API instead (key on every path, no /health,
// rate limits).
package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
)

// DefaultEmbeddingDim is the embedding dimension when Script.EmbeddingDim
// is 0.
const DefaultEmbeddingDim = 256

// DefaultReply is the chat answer when no rule matches and Script.Default
// is empty: a DIN answer with no operations.
const DefaultReply = `{"ops":[]}`

// Rule is one scripted answer.
type Rule struct {
	// Name identifies the rule in Recorded requests.
	Name string `json:"name"`
	// Match: regexes (RE2 syntax) that must all match the user message.
	// An empty list matches every request.
	Match []string `json:"match"`
	// Not: regexes none of which may match the user message.
	Not []string `json:"not"`
	// System: regexes that must all match the system message (optional;
	// the system message is otherwise ignored).
	System []string `json:"system,omitempty"`
	// Reply is the answer content; it may contain <think> blocks.
	Reply string `json:"reply"`
	// Thinking is returned as reasoning_content.
	Thinking string `json:"thinking"`
	// Status, when non-zero (400-599), answers with that HTTP status and an
	// OpenAI-style error body instead of a completion.
	Status int `json:"status"`
	// DelayMS delays the answer (the delay ends early when the client goes
	// away).
	DelayMS int `json:"delay_ms"`
	// JitterMS spreads the delay uniformly over DelayMS ± JitterMS, as a
	// real model's latency varies; identical delays keep concurrent
	// sessions in lockstep, which no deployment sees.
	JitterMS int `json:"jitter_ms"`
	// Finish is the finish_reason reported; "" means "stop". "length"
	// says the reply was cut by the request's max_tokens, as a real
	// server does when the bound is reached (the reply is not cut here).
	Finish string `json:"finish,omitempty"`
	// Expand replaces ${name} in Reply and Thinking with the named capture
	// groups (?P<name>...) of the Match regexes, so a reply can echo ids
	// from the prompt.
	Expand bool `json:"expand,omitempty"`
}

// Script is what the server answers.
type Script struct {
	// Rules in order; the first matching rule answers.
	Rules []Rule `json:"rules"`
	// Default is the reply when no rule matches; "" means DefaultReply.
	Default string `json:"default"`
	// EmbeddingDim is the dimension of embeddings (DefaultEmbeddingDim when
	// 0); a request's "dimensions" field overrides it.
	EmbeddingDim int `json:"embedding_dim"`
	// Hosted, when set, makes the server behave as a hosted API does (key
	// on every path, no /health, rate limits): see Hosted.
	Hosted *Hosted `json:"hosted,omitempty"`
}

// LoadScript reads a Script from a JSON file. Unknown fields, invalid
// regexes and out-of-range values are errors naming the file and rule.
func LoadScript(path string) (Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Script{}, fmt.Errorf("llmtest: load script: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s Script
	if err := dec.Decode(&s); err != nil {
		return Script{}, fmt.Errorf("llmtest: load script %s: %w", path, err)
	}
	if err := s.Validate(); err != nil {
		return Script{}, fmt.Errorf("llmtest: load script %s: %w", path, err)
	}
	return s, nil
}

// Validate checks every regex and value of the script.
func (s Script) Validate() error {
	_, err := compile(s)
	return err
}

type compiledRule struct {
	Rule
	match, not, system []*regexp.Regexp
}

func compile(s Script) ([]compiledRule, error) {
	if s.EmbeddingDim < 0 {
		return nil, fmt.Errorf("embedding_dim %d is negative", s.EmbeddingDim)
	}
	if s.Hosted != nil {
		if err := s.Hosted.validate(); err != nil {
			return nil, err
		}
	}
	out := make([]compiledRule, len(s.Rules))
	for i, r := range s.Rules {
		where := fmt.Sprintf("rule %d (%q)", i, r.Name)
		if r.Status != 0 && (r.Status < 400 || r.Status > 599) {
			return nil, fmt.Errorf("%s: status %d: want 0 or 400-599", where, r.Status)
		}
		if r.DelayMS < 0 {
			return nil, fmt.Errorf("%s: delay_ms %d is negative", where, r.DelayMS)
		}
		if r.JitterMS < 0 || r.JitterMS > r.DelayMS {
			return nil, fmt.Errorf("%s: jitter_ms %d: want 0 to delay_ms (%d)", where, r.JitterMS, r.DelayMS)
		}
		cr := compiledRule{Rule: r}
		var err error
		if cr.match, err = compileAll(r.Match); err != nil {
			return nil, fmt.Errorf("%s: match: %w", where, err)
		}
		if cr.not, err = compileAll(r.Not); err != nil {
			return nil, fmt.Errorf("%s: not: %w", where, err)
		}
		if cr.system, err = compileAll(r.System); err != nil {
			return nil, fmt.Errorf("%s: system: %w", where, err)
		}
		out[i] = cr
	}
	return out, nil
}

func compileAll(exprs []string) ([]*regexp.Regexp, error) {
	out := make([]*regexp.Regexp, len(exprs))
	for i, e := range exprs {
		re, err := regexp.Compile(e)
		if err != nil {
			return nil, err
		}
		out[i] = re
	}
	return out, nil
}

// matches reports whether the rule answers a request.
func (r *compiledRule) matches(system, user string) bool {
	for _, re := range r.match {
		if !re.MatchString(user) {
			return false
		}
	}
	for _, re := range r.not {
		if re.MatchString(user) {
			return false
		}
	}
	for _, re := range r.system {
		if !re.MatchString(system) {
			return false
		}
	}
	return true
}

var placeholderRe = regexp.MustCompile(`\$\{(\w+)\}`)

// expand substitutes ${name} with the named groups of the Match regexes
// (the first regex defining a name wins); unknown names are left as is.
func (r *compiledRule) expand(text, user string) string {
	if !r.Expand || text == "" {
		return text
	}
	groups := map[string]string{}
	for _, re := range r.match {
		m := re.FindStringSubmatch(user)
		if m == nil {
			continue
		}
		for i, name := range re.SubexpNames() {
			if _, seen := groups[name]; name != "" && !seen {
				groups[name] = m[i]
			}
		}
	}
	return placeholderRe.ReplaceAllStringFunc(text, func(ph string) string {
		if v, ok := groups[ph[2:len(ph)-1]]; ok {
			return v
		}
		return ph
	})
}

// Match returns the rule that answers a chat request with these messages
// (its index, or -1 for the default reply). It is what the server does.
func (s Script) Match(system, user string) (int, error) {
	rules, err := compile(s)
	if err != nil {
		return -1, err
	}
	for i := range rules {
		if rules[i].matches(system, user) {
			return i, nil
		}
	}
	return -1, nil
}
