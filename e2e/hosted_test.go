package e2e

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/lethe-research/lethe/internal/lethetest"
	"github.com/lethe-research/lethe/llm/llmtest"
)

const (
	hostedKey    = "sk-lethe-e2e"
	hostedWait   = 2 * time.Second // each 429's Retry-After
	hostedEveryN = 4               // every 4th chat and 4th embeddings POST is refused
)

// A session against a hosted API, as OpenAI's behaves: the key is wanted
// on every path (401 with OpenAI's body otherwise, the health probe's path
// included), there is no /health, every fourth chat and embeddings call is
// refused with 429 and a Retry-After (seconds and HTTP date in turn), and
// a streamed answer carries usage only when include_usage asks for it.
// The worker has its keys in LETHE_LLM_API_KEY and LETHE_EMBED_API_KEY.
// The session ends as an undisturbed one, no request went without the
// key, every refused call was tried again no sooner than the server asked,
// off the budget, and the tokens counted are the ones the server sent.
func TestHostedAPISession(t *testing.T) {
	t.Parallel()
	script := lethetest.Script(t, "battery_root_done")
	base := undisturbed(t, "hosted-base", script)
	script.Hosted = &llmtest.Hosted{Key: hostedKey, RateLimitEvery: hostedEveryN, RetryAfterS: int(hostedWait / time.Second)}
	r := newFaultRigEnv(t, "hosted", script, nil, []string{"LETHE_LLM_API_KEY=" + hostedKey, "LETHE_EMBED_API_KEY=" + hostedKey})
	r.start(t)
	got := r.finish(t, 6*time.Minute)
	sameAsUndisturbed(t, got, base)

	reqs := r.srv.Requests()
	if n := countStatus(reqs, http.StatusUnauthorized); n > 0 {
		t.Errorf("%d requests went without the key", n)
	}
	for _, path := range []string{"/v1/chat/completions", "/v1/embeddings"} {
		refused, waited := retriedAfter(t, reqs, path)
		if refused == 0 || waited == 0 {
			t.Errorf("%s: %d calls refused with 429, %d of them tried again: the rate limit was not exercised", path, refused, waited)
		}
	}
	if got.res.ModelWaitedS <= 0 {
		t.Errorf("model_waited_s %.1f: the rate-limit waits were not kept off the budget", got.res.ModelWaitedS)
	}
	sent := r.srv.Usage()
	if s := got.res.Stats; s.PromptTokens != sent.PromptTokens || s.CompletionToken != sent.CompletionTokens {
		t.Errorf("session counted %d prompt and %d completion tokens; the server sent %d and %d in %d answers",
			s.PromptTokens, s.CompletionToken, sent.PromptTokens, sent.CompletionTokens, sent.Answers)
	}
	if got.res.Stats.PromptTokens == base.res.Stats.PromptTokens {
		t.Errorf("prompt tokens %d equal the undisturbed session's: the server's chat-format overhead was not counted", got.res.Stats.PromptTokens)
	}
	t.Logf("hosted API: %d requests, %d refused with 429, waited %.1f s, %d prompt + %d completion tokens (undisturbed: %d + %d)",
		len(reqs), countStatus(reqs, http.StatusTooManyRequests), got.res.ModelWaitedS,
		got.res.Stats.PromptTokens, got.res.Stats.CompletionToken, base.res.Stats.PromptTokens, base.res.Stats.CompletionToken)
}

func countStatus(reqs []llmtest.Recorded, status int) int {
	n := 0
	for _, r := range reqs {
		if r.Status == status {
			n++
		}
	}
	return n
}

// retriedAfter checks every 429 on path that was tried again: the same
// request came back no sooner than the Retry-After asked (less a little
// for the client's clock reading before the server's). It returns how many
// were refused and how many tried again.
func retriedAfter(t *testing.T, reqs []llmtest.Recorded, path string) (refused, retried int) {
	t.Helper()
	for i, r := range reqs {
		if r.Path != path || r.Status != http.StatusTooManyRequests {
			continue
		}
		refused++
		for _, next := range reqs[i+1:] {
			if next.Path != path || next.Status == http.StatusTooManyRequests || !sameRequest(r, next) {
				continue
			}
			retried++
			if gap := next.At.Sub(r.At); gap < hostedWait-200*time.Millisecond {
				t.Errorf("%s refused at %s was tried again after %s, before its Retry-After of %s", path, r.At.Format(time.StampMilli), gap, hostedWait)
			}
			break
		}
	}
	return refused, retried
}

// sameRequest: a refused request (its raw body recorded) and an answered
// one are the same call: the same chat body, or the same embedding inputs.
func sameRequest(refused, answered llmtest.Recorded) bool {
	if answered.Path == "/v1/chat/completions" {
		return refused.Body == answered.Body
	}
	var req struct {
		Input []string `json:"input"`
	}
	return json.Unmarshal([]byte(refused.Body), &req) == nil && slices.Equal(req.Input, answered.Inputs)
}
