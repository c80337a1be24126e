package preflight

import (
	"strings"
	"testing"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/lethe-research/lethe/config"
)

// TestSessionQueues: the workflow queue always; the LLM and research
// queues only when split off it, each once.
func TestSessionQueues(t *testing.T) {
	names := func(tc config.Temporal) string {
		var out []string
		for _, q := range Queues(tc) {
			out = append(out, q.name+"/"+q.kind.String())
		}
		return strings.Join(out, " ")
	}
	wf, act := enumspb.TASK_QUEUE_TYPE_WORKFLOW.String(), enumspb.TASK_QUEUE_TYPE_ACTIVITY.String()
	for _, c := range []struct {
		tc   config.Temporal
		want string
	}{
		{config.Temporal{TaskQueue: "lethe"}, "lethe/" + wf},
		{config.Temporal{TaskQueue: "lethe", LLMQueue: "gpu"}, "lethe/" + wf + " gpu/" + act},
		{config.Temporal{TaskQueue: "lethe", LLMQueue: "x", ResearchQueue: "x"}, "lethe/" + wf + " x/" + act},
		{config.Temporal{TaskQueue: "lethe", ResearchQueue: "browser"}, "lethe/" + wf + " browser/" + act},
	} {
		if got := names(c.tc); got != c.want {
			t.Errorf("%+v: %s, want %s", c.tc, got, c.want)
		}
	}
}
