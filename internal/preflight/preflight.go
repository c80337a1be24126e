// Package preflight holds the checks a command makes before it starts a
// workflow: that workers poll the task queues the workflow needs, so that
// nothing is started to wait in silence.
package preflight

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/lethe-research/lethe/config"
)

// pollerCheckEvery is how often the pre-start check asks the server again:
// a worker that has just started opens its polls within a second or two.
const pollerCheckEvery = 500 * time.Millisecond

// queueNeed is a task queue a session cannot progress without, and the
// kind of task a worker must poll it for.
type queueNeed struct {
	name  string
	param string // the parameter that names it
	kind  enumspb.TaskQueueType
}

// sessionQueues are the queues a session waits on when nobody polls them:
// the workflow queue, and the LLM and research queues when they are split
// off it (a worker polling the workflow queue also runs the activities
// routed to it). Search queues are left out: a provider nobody serves is
// skipped by the fallback chain after research.search_wait.
func Queues(t config.Temporal) []queueNeed {
	needs := []queueNeed{{t.TaskQueue, "temporal.task_queue", enumspb.TASK_QUEUE_TYPE_WORKFLOW}}
	if q := t.QueueLLM(); q != t.TaskQueue {
		needs = append(needs, queueNeed{q, "temporal.llm_queue", enumspb.TASK_QUEUE_TYPE_ACTIVITY})
	}
	if q := t.QueueResearch(); q != t.TaskQueue && q != t.QueueLLM() {
		needs = append(needs, queueNeed{q, "temporal.research_queue", enumspb.TASK_QUEUE_TYPE_ACTIVITY})
	}
	return needs
}

// Workers waits up to wait for a poller on every queue a session needs
// (an evaluation's sessions and baselines need the same). A workflow
// started with none would wait in silence until a worker came; the caller
// refuses instead, before anything is started, with this error naming
// which queue has no worker and how to start one. what names the workflow
// ("session", "evaluation") and flag the caller's flag that skips the
// check. wait 0 skips it (a workflow submitted for workers that start
// later).
func Workers(ctx context.Context, c client.Client, cfg config.Config, wait time.Duration, what, flag string) error {
	if wait <= 0 {
		return nil
	}
	deadline := time.Now().Add(wait)
	for {
		missing, err := unpolled(ctx, c, Queues(cfg.Temporal))
		if err != nil {
			return err
		}
		if len(missing) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return noWorker(cfg.Temporal, missing, wait, what, flag)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pollerCheckEvery):
		}
	}
}

// unpolled are the queues of needs that no worker polls now.
func unpolled(ctx context.Context, c client.Client, needs []queueNeed) ([]queueNeed, error) {
	var missing []queueNeed
	for _, q := range needs {
		resp, err := c.DescribeTaskQueue(ctx, q.name, q.kind)
		if err != nil {
			return nil, fmt.Errorf("describe task queue %q (%s): %w", q.name, q.param, err)
		}
		if len(resp.GetPollers()) == 0 {
			missing = append(missing, q)
		}
	}
	return missing, nil
}

// noWorker says which queues have no worker and the command that starts
// one for each.
func noWorker(t config.Temporal, missing []queueNeed, wait time.Duration, what, flag string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "no worker polls ")
	for i, q := range missing {
		if i > 0 {
			b.WriteString(", nor ")
		}
		kind := "workflow"
		if q.kind == enumspb.TASK_QUEUE_TYPE_ACTIVITY {
			kind = "activity"
		}
		fmt.Fprintf(&b, "task queue %q (%s, %s tasks)", q.name, q.param, kind)
	}
	fmt.Fprintf(&b, " of namespace %q on %s (checked for %s), so the %s would wait in silence; nothing was started.\n", t.Namespace, t.HostPort, wait, what)
	b.WriteString("Start a worker with the same settings (LETHE_* variables or -config):")
	for _, q := range missing {
		cmd := "go run ./worker"
		if q.kind == enumspb.TASK_QUEUE_TYPE_ACTIVITY {
			cmd += " --queues " + q.name
		}
		fmt.Fprintf(&b, "\n  %s", cmd)
	}
	fmt.Fprintf(&b, "\nor `make run GOAL=...` for a dev server, a worker and a session in one; %s 0 starts the %s without checking.", flag, what)
	return errors.New(b.String())
}
