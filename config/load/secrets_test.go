package load

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/lethe-research/lethe/config"
)

// secretParams are the credentials among the parameters (Secret).
func secretParams(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, p := range config.Params() {
		if Secret(p.Key) {
			out = append(out, p.Key)
		}
	}
	for _, want := range []string{"llm.api_key", "embed.api_key", "eval.judge_api_key", "research.tavily_api_key", "research.brave_api_key"} {
		found := false
		for _, k := range out {
			found = found || k == want
		}
		if !found {
			t.Fatalf("%s is not a secret parameter (secrets: %v)", want, out)
		}
	}
	return out
}

// Every API key passed as a session parameter is refused, naming the key
// and the environment variable to use, never echoing the value; the same
// keys load from the worker's environment.
func TestSessionParamKeysRefused(t *testing.T) {
	for _, key := range secretParams(t) {
		t.Run(key, func(t *testing.T) {
			_, err := Load(Sources{Env: []string{}, Overrides: map[string]string{key: "s3cr3t-value", "budget.max_iterations": "3"}})
			if err == nil {
				t.Fatalf("%s accepted as a session parameter", key)
			}
			msg := err.Error()
			if !strings.Contains(msg, key) || !strings.Contains(msg, "session parameter") || !strings.Contains(msg, EnvName(key)) {
				t.Errorf("refusal does not name %s and %s: %v", key, EnvName(key), err)
			}
			if strings.Contains(msg, "s3cr3t-value") {
				t.Errorf("refusal echoes the key: %v", err)
			}
			c, err := Load(Sources{Env: []string{EnvName(key) + "=from-env"}})
			if err != nil {
				t.Fatalf("%s from the worker's environment: %v", key, err)
			}
			if b, _ := json.Marshal(c); !strings.Contains(string(b), `"max_iterations"`) || strings.Contains(string(b), "from-env") {
				t.Errorf("%s set in the environment reaches the config's JSON (workflow input and history)", key)
			}
		})
	}
	if _, err := Load(Sources{Env: []string{}, Overrides: map[string]string{"llm.model": "m", "embed.base_url": "http://127.0.0.1:1"}}); err != nil {
		t.Errorf("non-secret model parameters refused: %v", err)
	}
}
