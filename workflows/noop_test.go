package workflows

import (
	"testing"

	"github.com/lethe-research/lethe/contract"
	"github.com/lethe-research/lethe/din"
)

func TestChangedNothing(t *testing.T) {
	op := func(kind string) din.Op { return din.Op{Op: kind, Task: "root"} }
	ops := func(kinds ...string) []din.Op {
		var out []din.Op
		for _, k := range kinds {
			out = append(out, op(k))
		}
		return out
	}
	cases := []struct {
		name     string
		ops      []din.Op
		res      contract.ApplyResult
		searches int
		want     bool
	}{
		{"continue alone", ops("continue"), contract.ApplyResult{Applied: 1}, 0, true},
		{"continue and update", ops("continue", "update"), contract.ApplyResult{Applied: 2}, 0, true},
		{"no ops", nil, contract.ApplyResult{}, 0, true},
		{"create deduplicated onto an existing task", ops("create", "continue"), contract.ApplyResult{Applied: 1, Mapped: map[string]string{"t9": "t1"}}, 0, true},
		{"evidence already held", ops("evidence", "continue"), contract.ApplyResult{Applied: 1}, 0, true},
		{"call skipped as a duplicate query", ops("call", "continue"), contract.ApplyResult{Applied: 1}, 0, true},
		{"new task", ops("create"), contract.ApplyResult{Applied: 1, Created: []string{"t1"}}, 0, false},
		{"new evidence", ops("evidence"), contract.ApplyResult{Applied: 1, Evidence: 1}, 0, false},
		{"a search ran", ops("call", "continue"), contract.ApplyResult{Applied: 1}, 1, false},
		{"complete", ops("complete"), contract.ApplyResult{Applied: 1}, 0, false},
		{"fail", ops("fail"), contract.ApplyResult{Applied: 1}, 0, false},
		{"depend", ops("depend"), contract.ApplyResult{Applied: 1}, 0, false},
		{"rolled back: a failed iteration, not a no-op", ops("create", "depend"), contract.ApplyResult{RolledBack: true}, 0, false},
	}
	for _, c := range cases {
		if got := changedNothing(c.ops, c.res, c.searches); got != c.want {
			t.Errorf("%s: changedNothing = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestTrackProgress(t *testing.T) {
	var st SessionState
	trackProgress(&st, "root", true)
	trackProgress(&st, "t1", true)
	if st.NoOps != 2 || st.NoOpTask != "t1" {
		t.Fatalf("after two no-ops: %d, %q", st.NoOps, st.NoOpTask)
	}
	trackProgress(&st, "t1", false)
	if st.NoOps != 0 || st.NoOpTask != "" {
		t.Fatalf("after progress: %d, %q", st.NoOps, st.NoOpTask)
	}
}

func TestRotateAfterNoop(t *testing.T) {
	ready := func(ids ...string) contract.ReadStateResult {
		var rs contract.ReadStateResult
		for _, id := range ids {
			rs.Ready = append(rs.Ready, contract.ReadyTask{ShortID: id})
		}
		return rs
	}
	ids := func(rs contract.ReadStateResult) []string {
		var out []string
		for _, r := range rs.Ready {
			out = append(out, r.ShortID)
		}
		return out
	}
	cases := []struct {
		name  string
		rs    contract.ReadStateResult
		noOps int
		task  string
		want  []string
	}{
		{"no no-op: unchanged", ready("root", "t1"), 0, "", []string{"root", "t1"}},
		{"the no-op task leaves", ready("root", "t1", "t2"), 1, "t1", []string{"root", "t2"}},
		{"alone it stays", ready("root"), 2, "root", []string{"root"}},
		{"not ready: unchanged", ready("t1", "t2"), 1, "root", []string{"t1", "t2"}},
	}
	for _, c := range cases {
		got := ids(rotateAfterNoop(c.rs, c.noOps, c.task))
		if len(got) != len(c.want) {
			t.Errorf("%s: ready %v, want %v", c.name, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s: ready %v, want %v", c.name, got, c.want)
				break
			}
		}
	}
}
