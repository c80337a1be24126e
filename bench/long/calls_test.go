package main

import (
	"strings"
	"testing"
	"time"
)

// TestTimeline: the traced calls come out in the order they were recorded,
// with the step they ran in, only while a step is set and tracing is on,
// and the trace starts over after each timeline.
func TestTimeline(t *testing.T) {
	c := newCallTimer(nil)
	c.trace = true
	c.add("Outside", time.Now(), time.Millisecond) // no step: not recorded
	c.setStep("Focus")
	c.add("NearestEvidence", c.stepStart.Add(2*time.Millisecond), 40*time.Millisecond)
	c.add("Commit", c.stepStart.Add(45*time.Millisecond), 7*time.Millisecond)
	c.setStep("ApplyOps")
	c.add("Apply", c.stepStart, 30*time.Millisecond)
	c.setStep("")
	got := c.timeline("of iteration 3 (focus t1)")
	lines := strings.Split(strings.TrimSpace(got), "\n")
	want := []string{"timeline of iteration 3 (focus t1)", "Focus", "NearestEvidence", "Focus", "Commit", "ApplyOps", "Apply"}
	if len(lines) != 4 {
		t.Fatalf("want a heading and three calls, got:\n%s", got)
	}
	for i, parts := range [][]string{want[:1], want[1:3], want[3:5], want[5:7]} {
		for _, p := range parts {
			if !strings.Contains(lines[i], p) {
				t.Errorf("line %d %q lacks %q", i, lines[i], p)
			}
		}
	}
	if !strings.Contains(lines[1], "+   2.0   40.0 ms") {
		t.Errorf("line 1 %q: want start 2.0 and time 40.0 ms", lines[1])
	}
	if again := c.timeline("again"); strings.Count(again, "\n") != 1 {
		t.Errorf("the trace did not start over:\n%s", again)
	}
	c.trace = false
	c.setStep("Observe")
	c.add("GetBlob", time.Now(), time.Millisecond)
	if off := c.timeline("off"); strings.Count(off, "\n") != 1 {
		t.Errorf("traced with tracing off:\n%s", off)
	}
	if c.count[[2]string{"Observe", "GetBlob"}] != 1 {
		t.Error("the totals must count a call whether traced or not")
	}
}
