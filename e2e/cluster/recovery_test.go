package cluster

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"

	"github.com/lethe-research/lethe/internal/lethetest/sessiontest"
)

// row is one fault's line of the recovery table.
type row struct {
	fault           string
	identical, runs int
	// down is how long the fault's command took: the component stopped
	// and answering again (for a worker, killed and started again).
	down time.Duration
	// recovery runs from the fault to the moment every session that was
	// still running when the component was back had made progress again
	// (a completed activity, local activity or research run, or its end).
	recovery time.Duration
	total    time.Duration // the batch's first start to its last result
	// retried counts the sessions in which an activity ran more than once:
	// the fault reached them, not only the clock.
	retried int
}

func (w row) markdown() string {
	return fmt.Sprintf("| %s | %d of %d | %.1f | %.1f | %d | %.1f |", w.fault, w.identical, w.runs, w.recovery.Seconds(), w.down.Seconds(), w.retried, w.total.Seconds())
}

// table collects the rows of the package's tests and keeps them in a file
// beside the cluster's directory.
type table struct {
	mu   sync.Mutex
	path string
	rows []row
}

const tableHead = "| fault | sessions identical | recovery s | fault command s | sessions with a retried activity | total s |\n|---|---|---|---|---|---|\n"

func (tb *table) add(t *testing.T, w row) {
	t.Helper()
	tb.mu.Lock()
	defer tb.mu.Unlock()
	tb.rows = append(tb.rows, w)
	t.Logf("\n%s%s", tableHead, w.markdown())
	if err := os.WriteFile(tb.path, []byte(tb.markdownLocked()), 0o644); err != nil {
		t.Errorf("write the recovery table: %v", err)
		return
	}
	t.Logf("recovery table so far: %s", tb.path)
}

func (tb *table) markdownLocked() string {
	var b strings.Builder
	b.WriteString(tableHead)
	for _, w := range tb.rows {
		b.WriteString(w.markdown() + "\n")
	}
	return b.String()
}

func (tb *table) print(w io.Writer) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	if len(tb.rows) == 0 {
		return
	}
	fmt.Fprintf(w, "cluster: recovery table (%s):\n%s", tb.path, tb.markdownLocked())
}

// recovery is the longest time from faultAt to a session's first progress
// at or after back, over the sessions still running at back; zero when
// none was.
func recovery(outs []sessiontest.Outcome, faultAt, back time.Time) time.Duration {
	var worst time.Duration
	for _, o := range outs {
		if at := progressAfter(o.History, back); !at.IsZero() {
			worst = max(worst, at.Sub(faultAt))
		}
	}
	return worst
}

// progressAfter is the time of the first event at or after from that shows
// the session moving on; zero when the session had ended before from.
func progressAfter(h *historypb.History, from time.Time) time.Time {
	for _, e := range h.Events {
		at := e.GetEventTime().AsTime()
		if at.Before(from) {
			continue
		}
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED, enumspb.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED,
			enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED:
			return at
		case enumspb.EVENT_TYPE_MARKER_RECORDED:
			if e.GetMarkerRecordedEventAttributes().GetMarkerName() == "LocalActivity" {
				return at
			}
		}
	}
	return time.Time{}
}

// disturb runs a batch of sessions, calls inject once every session is in
// its middle, and checks that each ends as the undisturbed reference; it
// adds the fault's row to the table.
func (r *rig) disturb(t *testing.T, fault string, inject func(t *testing.T)) {
	t.Helper()
	ref := r.reference(t)
	b := r.startBatch(t, slug(fault), sessions)
	r.waitMidSession(t, b)
	faultAt := time.Now()
	inject(t)
	back := time.Now()
	outs := r.finishBatch(t, b)
	same := compare(t, b.ids, outs, ref, all)
	r.table.add(t, row{fault: fault, identical: same, runs: len(outs), down: back.Sub(faultAt),
		recovery: recovery(outs, faultAt, back), retried: retried(outs), total: time.Since(b.start)})
}

// retried counts the outcomes with an activity that ran more than once.
func retried(outs []sessiontest.Outcome) int {
	n := 0
	for _, o := range outs {
		if len(sessiontest.Retried(o.History)) > 0 {
			n++
		}
	}
	return n
}
