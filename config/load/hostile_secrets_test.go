package load

import (
	"strings"
	"testing"

	"github.com/lethe-research/lethe/config"
)

// Every endpoint, credential and path of the worker given as a session's
// parameter is refused, naming the worker's environment variable and
// config file key and never echoing the value; a session's own
// parameters pass.
func TestHostileSessionParamsWorkerOnly(t *testing.T) {
	for _, p := range config.Params() {
		if !config.WorkerOnly(p.Key) {
			continue
		}
		err := CheckSessionParams("a session's params", map[string]string{p.Key: "http://127.0.0.1:9/attacker", "budget.max_iterations": "3"})
		if err == nil {
			t.Errorf("%s accepted as a session parameter", p.Key)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, p.Key) || !strings.Contains(msg, EnvName(p.Key)) || strings.Contains(msg, "attacker") {
			t.Errorf("%s: the refusal does not name %s, or echoes the value: %v", p.Key, EnvName(p.Key), err)
		}
	}
	for _, key := range []string{"llm.base_url", "eval.out_dir", "eval.judge_base_url", "graph.neo4j_password", "research.pdftotext_path"} {
		if !config.WorkerOnly(key) {
			t.Errorf("%s is not worker-only", key)
		}
	}
	if err := CheckSessionParams("a session's params", map[string]string{"llm.model": "m", "eval.judge_model": "j", "budget.max_iterations": "3"}); err != nil {
		t.Errorf("a session's own parameters refused: %v", err)
	}
}
