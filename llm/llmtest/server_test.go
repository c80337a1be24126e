package llmtest_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lethe-research/lethe/llm/llmtest"
)

type answer struct {
	status   int
	content  string
	thinking string
	body     map[string]any
}

func chat(t *testing.T, url, system, user string) answer {
	t.Helper()
	msgs := []map[string]string{{"role": "user", "content": user}}
	if system != "" {
		msgs = append([]map[string]string{{"role": "system", "content": system}}, msgs...)
	}
	payload, _ := json.Marshal(map[string]any{"model": "m", "messages": msgs})
	resp, err := http.Post(url+"/v1/chat/completions", "application/json", bytes.NewReader(payload))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	a := answer{status: resp.StatusCode, body: body}
	if ch, ok := body["choices"].([]any); ok && len(ch) > 0 {
		msg := ch[0].(map[string]any)["message"].(map[string]any)
		a.content, _ = msg["content"].(string)
		a.thinking, _ = msg["reasoning_content"].(string)
	}
	return a
}

func TestRules(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Script{
		Rules: []llmtest.Rule{
			{Name: "sys", System: []string{`COMPOSE`}, Reply: "report"},
			{Name: "both", Match: []string{`battery`, `solid`}, Not: []string{`(?i)repair`}, Reply: "A", Thinking: "why A"},
			{Name: "battery", Match: []string{`battery`}, Reply: "B"},
			{Name: "shadowed", Match: []string{`battery`, `solid`}, Reply: "never"},
			{Name: "err", Match: []string{`^fail`}, Status: 500},
			{Name: "echo", Match: []string{`YOUR TASK: (?P<id>t\d+)`}, Reply: `{"task":"${id}","x":"${nope}"}`, Expand: true},
		},
		Default: "fallback",
	})
	defer srv.Close()

	cases := []struct {
		system, user, rule, content string
		status                      int
	}{
		{"", "solid battery", "both", "A", 200},
		{"ignored system: battery", "solid battery", "both", "A", 200},
		{"", "solid battery REPAIR", "battery", "B", 200}, // negation falls through
		{"", "battery only", "battery", "B", 200},
		{"", "nothing", "", "fallback", 200},
		{"please COMPOSE", "solid battery", "sys", "report", 200},
		{"", "fail now", "err", "", 500},
		{"", "YOUR TASK: t42 (Parent goal ...)", "echo", `{"task":"t42","x":"${nope}"}`, 200},
	}
	for _, c := range cases {
		a := chat(t, srv.URL(), c.system, c.user)
		if a.status != c.status || a.content != c.content {
			t.Errorf("%q/%q: status %d content %q, want %d %q", c.system, c.user, a.status, a.content, c.status, c.content)
		}
	}
	if a := chat(t, srv.URL(), "", "solid battery"); a.thinking != "why A" {
		t.Errorf("thinking %q", a.thinking)
	}
	if a := chat(t, srv.URL(), "", "fail"); a.body["error"].(map[string]any)["message"] == "" {
		t.Errorf("error body %v", a.body)
	}

	reqs := srv.Requests()
	if len(reqs) != len(cases)+2 || srv.ChatCount() != len(cases)+2 || srv.EmbedCount() != 0 {
		t.Fatalf("%d requests, ChatCount %d", len(reqs), srv.ChatCount())
	}
	for i, c := range cases {
		r := reqs[i]
		if r.Rule != c.rule || r.User != c.user || r.System != c.system || r.Status != c.status || r.Method != "POST" || r.Path != "/v1/chat/completions" {
			t.Errorf("recorded %d: %+v", i, r)
		}
	}
	if reqs[4].RuleIndex != -1 || reqs[0].RuleIndex != 1 {
		t.Errorf("rule indexes %d %d", reqs[4].RuleIndex, reqs[0].RuleIndex)
	}
}

func TestDefaultReplyAndDeterminism(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Script{})
	defer srv.Close()
	a, b := chat(t, srv.URL(), "s", "u"), chat(t, srv.URL(), "s", "u")
	if a.content != llmtest.DefaultReply {
		t.Errorf("default %q", a.content)
	}
	ja, _ := json.Marshal(a.body)
	jb, _ := json.Marshal(b.body)
	if !bytes.Equal(ja, jb) {
		t.Errorf("same request, different answers:\n%s\n%s", ja, jb)
	}
	u := a.body["usage"].(map[string]any)
	if u["prompt_tokens"].(float64) != 2 || u["completion_tokens"].(float64) != 3 || u["total_tokens"].(float64) != 5 {
		t.Errorf("usage %v", u)
	}
}

func TestStream(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Script{Rules: []llmtest.Rule{{Name: "r", Reply: "héllo wörld, long enough", Thinking: "think"}}})
	defer srv.Close()
	payload := `{"stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`
	resp, err := http.Post(srv.URL()+"/v1/chat/completions", "application/json", strings.NewReader(payload))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	var content, thinking strings.Builder
	var usage map[string]any
	var finish string
	done, chunks := false, 0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("bad line %q", line)
		}
		if data == "[DONE]" {
			done = true
			continue
		}
		chunks++
		var ch struct {
			Choices []struct {
				Delta        map[string]string `json:"delta"`
				FinishReason *string           `json:"finish_reason"`
			} `json:"choices"`
			Usage map[string]any `json:"usage"`
		}
		if err := json.Unmarshal([]byte(data), &ch); err != nil {
			t.Fatalf("chunk %q: %v", data, err)
		}
		if ch.Usage != nil {
			usage = ch.Usage
		}
		for _, c := range ch.Choices {
			content.WriteString(c.Delta["content"])
			thinking.WriteString(c.Delta["reasoning_content"])
			if c.FinishReason != nil {
				finish = *c.FinishReason
			}
		}
	}
	if !done || finish != "stop" || usage == nil || content.String() != "héllo wörld, long enough" || thinking.String() != "think" || chunks < 8 {
		t.Errorf("done %v finish %q usage %v content %q thinking %q chunks %d", done, finish, usage, content.String(), thinking.String(), chunks)
	}
	if r := srv.Requests()[0]; !r.Stream || r.User != "hi" || r.Rule != "r" {
		t.Errorf("recorded %+v", r)
	}
}

func TestDelay(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Script{Rules: []llmtest.Rule{{Name: "slow", DelayMS: 80}}})
	defer srv.Close()
	start := time.Now()
	chat(t, srv.URL(), "", "x")
	if d := time.Since(start); d < 80*time.Millisecond {
		t.Errorf("answered after %v", d)
	}
}

// TestJitter: delays spread over DelayMS ± JitterMS, so some calls answer
// before DelayMS (all 20 at or after it has odds of about 1e-6).
func TestJitter(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Script{Rules: []llmtest.Rule{{Name: "slow", DelayMS: 60, JitterMS: 40}}})
	defer srv.Close()
	early := 0
	for i := 0; i < 20; i++ {
		start := time.Now()
		chat(t, srv.URL(), "", "x")
		d := time.Since(start)
		if d < 20*time.Millisecond {
			t.Fatalf("call %d answered after %v, before DelayMS - JitterMS", i, d)
		}
		if d < 60*time.Millisecond {
			early++
		}
	}
	if early == 0 {
		t.Error("no call answered before DelayMS: the jitter is not applied")
	}
	if _, err := llmtest.New(llmtest.Script{Rules: []llmtest.Rule{{Name: "bad", DelayMS: 10, JitterMS: 11}}}); err == nil {
		t.Error("jitter_ms larger than delay_ms accepted")
	}
}

func embed(t *testing.T, url string, body string) ([][]float32, int) {
	t.Helper()
	resp, err := http.Post(url+"/v1/embeddings", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Data []struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
	}
	json.NewDecoder(resp.Body).Decode(&out)
	vecs := make([][]float32, len(out.Data))
	for _, d := range out.Data {
		vecs[d.Index] = d.Embedding
	}
	return vecs, resp.StatusCode
}

func TestEmbeddings(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Script{})
	defer srv.Close()
	texts := []string{
		"Solid-state batteries fail by lithium dendrite growth",
		"lithium dendrite growth causes solid-state battery failure",
		"The cathedral choir sang medieval hymns",
		"",
	}
	in, _ := json.Marshal(map[string]any{"input": texts})
	v1, status := embed(t, srv.URL(), string(in))
	v2, _ := embed(t, srv.URL(), string(in))
	if status != 200 || len(v1) != 4 || len(v1[0]) != llmtest.DefaultEmbeddingDim {
		t.Fatalf("status %d, %d vectors", status, len(v1))
	}
	for i := range v1 {
		for j := range v1[i] {
			if v1[i][j] != v2[i][j] {
				t.Fatalf("embedding %d not deterministic", i)
			}
		}
		if c := llmtest.Cosine(v1[i], v1[i]); c < 0.9999 || c > 1.0001 {
			t.Errorf("vector %d not unit: %v", i, c)
		}
		if c := llmtest.Cosine(v1[i], llmtest.Embedding(texts[i], 0)); c < 0.999999 {
			t.Errorf("server vector %d differs from Embedding()", i)
		}
	}
	related, unrelated := llmtest.Cosine(v1[0], v1[1]), llmtest.Cosine(v1[0], v1[2])
	if related < 0.4 || related <= unrelated+0.3 {
		t.Errorf("cos(related) %v, cos(unrelated) %v", related, unrelated)
	}
	if v1[3][0] != 1 {
		t.Errorf("empty text is not e0")
	}
	// Case and punctuation do not matter; word order does only via bigrams.
	if c := llmtest.Cosine(llmtest.Embedding("Lithium, DENDRITE!", 64), llmtest.Embedding("lithium dendrite", 64)); c < 0.999999 {
		t.Errorf("normalisation: %v", c)
	}
	if c := llmtest.Cosine(llmtest.Embedding("a b c", 64), llmtest.Embedding("c b a", 64)); c >= 0.999 || c < 0.5 {
		t.Errorf("reordered: %v", c)
	}

	// Single string input and the dimensions field.
	vs, status := embed(t, srv.URL(), `{"input":"one text","dimensions":48}`)
	if status != 200 || len(vs) != 1 || len(vs[0]) != 48 {
		t.Errorf("single input: %d %v", status, vs)
	}
	for _, bad := range []string{`{"input":[]}`, `{"input":5}`, `nope`} {
		if _, status := embed(t, srv.URL(), bad); status != 400 {
			t.Errorf("%s: status %d", bad, status)
		}
	}
	if srv.EmbedCount() != 6 || srv.ChatCount() != 0 {
		t.Errorf("EmbedCount %d", srv.EmbedCount())
	}
	if r := srv.Requests()[0]; len(r.Inputs) != 4 || r.Inputs[2] != texts[2] {
		t.Errorf("recorded inputs %v", r.Inputs)
	}

	small := llmtest.NewServer(llmtest.Script{EmbeddingDim: 16})
	defer small.Close()
	if v, _ := embed(t, small.URL(), `{"input":["x"]}`); len(v[0]) != 16 {
		t.Errorf("EmbeddingDim 16: got %d", len(v[0]))
	}
}

func TestHealthModelsNotFound(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Script{})
	defer srv.Close()
	for path, want := range map[string]string{"/health": `"ok"`, "/v1/models": `"scripted"`, "/nope": "no such endpoint"} {
		resp, err := http.Get(srv.URL() + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(body), want) {
			t.Errorf("%s: %d %s", path, resp.StatusCode, body)
		}
	}
	resp, _ := http.Get(srv.URL() + "/v1/chat/completions")
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET chat: %d", resp.StatusCode)
	}
}

func TestLoadScript(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(text), 0o644)
		return p
	}
	s, err := llmtest.LoadScript(write("ok.json", `{"rules":[{"name":"a","match":["x"],"not":["y"],"reply":"r","status":0,"delay_ms":1}],"default":"d","embedding_dim":8}`))
	if err != nil || len(s.Rules) != 1 || s.Rules[0].Not[0] != "y" || s.Default != "d" || s.EmbeddingDim != 8 {
		t.Fatalf("%+v %v", s, err)
	}
	if i, _ := s.Match("", "x"); i != 0 {
		t.Errorf("Match = %d", i)
	}
	if i, _ := s.Match("", "xy"); i != -1 {
		t.Errorf("Match = %d", i)
	}
	for name, text := range map[string]string{
		"regex.json":   `{"rules":[{"name":"bad","match":["("]}]}`,
		"unknown.json": `{"rules":[{"name":"a","reply":"r","replies":"typo"}]}`,
		"status.json":  `{"rules":[{"name":"a","status":200}]}`,
		"dim.json":     `{"embedding_dim":-1}`,
	} {
		if _, err := llmtest.LoadScript(write(name, text)); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := llmtest.LoadScript(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("missing file accepted")
	}
	if _, err := llmtest.New(llmtest.Script{Rules: []llmtest.Rule{{Not: []string{"["}}}}); err == nil {
		t.Error("New accepted a bad regex")
	}
}

func TestUnstartedHandler(t *testing.T) {
	srv, err := llmtest.New(llmtest.Script{Default: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if srv.URL() != "" {
		t.Errorf("URL of unstarted server %q", srv.URL())
	}
	srv.Close() // no-op
	req, _ := http.NewRequestWithContext(context.Background(), "POST", "/v1/chat/completions",
		strings.NewReader(`{"messages":[{"role":"user","content":"q"}]}`))
	rec := &recorder{header: http.Header{}}
	srv.Handler().ServeHTTP(rec, req)
	if rec.status != 200 || !strings.Contains(rec.body.String(), `"content":"hi"`) {
		t.Errorf("%d %s", rec.status, rec.body.String())
	}
}

type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }
func (r *recorder) WriteHeader(s int)           { r.status = s }

// TestFinish: a rule's Finish is the reported finish_reason ("stop" when
// unset), as a server says a reply was cut by max_tokens.
func TestFinish(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Script{Rules: []llmtest.Rule{
		{Name: "cut", Match: []string{`cut`}, Reply: "which limits fast chargin", Finish: "length"},
		{Name: "whole", Reply: "A whole sentence."},
	}})
	defer srv.Close()
	for _, tc := range []struct{ user, want string }{{"cut it", "length"}, {"keep it", "stop"}} {
		a := chat(t, srv.URL(), "", tc.user)
		got := a.body["choices"].([]any)[0].(map[string]any)["finish_reason"]
		if got != tc.want {
			t.Errorf("%q: finish_reason %v, want %q", tc.user, got, tc.want)
		}
	}
}
