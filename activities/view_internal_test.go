package activities

import (
	"reflect"
	"testing"

	"github.com/lethe-research/lethe/contract"
	"github.com/lethe-research/lethe/graph"
)

func TestRenameCollisions(t *testing.T) {
	before := map[string]bool{"root": true, "t1": true, "t1-7": true, "t2": true}
	cases := []struct {
		name string
		ops  []contract.Op
		want []contract.Op
	}{
		{"no collision", []contract.Op{{Op: "create", ID: "t9"}}, []contract.Op{{Op: "create", ID: "t9"}}},
		{"renamed with every reference",
			[]contract.Op{{Op: "create", ID: "t2"}, {Op: "create", ID: "t3", Parent: "t2", DependsOn: []string{"t2", "root"}},
				{Op: "call", Task: "t2"}, {Op: "depend", Task: "t3", On: "t2"}},
			[]contract.Op{{Op: "create", ID: "t2-7"}, {Op: "create", ID: "t3", Parent: "t2-7", DependsOn: []string{"t2-7", "root"}},
				{Op: "call", Task: "t2-7"}, {Op: "depend", Task: "t3", On: "t2-7"}}},
		{"suffix taken too", []contract.Op{{Op: "create", ID: "t1"}}, []contract.Op{{Op: "create", ID: "t1-7-2"}}},
		{"suffix taken by another new id", []contract.Op{{Op: "create", ID: "t2"}, {Op: "create", ID: "t2-7"}},
			[]contract.Op{{Op: "create", ID: "t2-7-2"}, {Op: "create", ID: "t2-7"}}},
		{"long id stays within 32", []contract.Op{{Op: "create", ID: "abcdefghijabcdefghijabcdefghij12"}},
			[]contract.Op{{Op: "create", ID: "abcdefghijabcdefghijabcdefghij-7"}}},
	}
	before["abcdefghijabcdefghijabcdefghij12"] = true
	for _, c := range cases {
		got, _ := renameCollisions(c.ops, before, 7)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestNeighbourhoodCaps(t *testing.T) {
	sid := "s"
	mk := func(short, parent string, st graph.Status, deps ...string) graph.Task {
		t := graph.Task{ID: graph.TaskID(sid, short), ShortID: short, Status: st}
		if parent != "" {
			t.Parent = graph.TaskID(sid, parent)
		}
		for _, d := range deps {
			t.DependsOn = append(t.DependsOn, graph.TaskID(sid, d))
		}
		return t
	}
	tasks := []graph.Task{
		mk("root", "", graph.Pending), mk("a", "root", graph.Pending), mk("b", "a", graph.Done, "x"), mk("c", "a", graph.Done),
		mk("d", "a", graph.Pending), mk("e", "a", graph.Failed), mk("f", "b", graph.Pending), mk("x", "root", graph.Done),
		mk("y", "root", graph.Pending), mk("z", "root", graph.Pending), mk("g", "c", graph.Pending),
	}
	var outline []graph.TaskNode
	deps := map[string][]string{}
	for _, t := range tasks {
		outline = append(outline, graph.TaskNode{ShortID: t.ShortID, Parent: graph.ShortIDOf(t.Parent), Status: t.Status})
		for _, d := range t.DependsOn {
			deps[t.ShortID] = append(deps[t.ShortID], graph.ShortIDOf(d))
		}
	}
	cases := []struct {
		focus   string
		max     int
		want    []string
		omitted int
	}{
		{"b", 10, []string{"root", "a", "b", "c", "d", "e", "f", "x"}, 0},
		// siblings c, d, e cut to one: the open d first; the child f, the root and the parent stay
		{"b", 1, []string{"root", "a", "b", "d", "f", "x"}, 2},
		{"a", 2, []string{"root", "a", "d", "e", "y", "z"}, 3},
		{"nope", 5, nil, 0},
	}
	for _, c := range cases {
		got, om := neighbourhood(outline, c.focus, deps[c.focus], c.max)
		if !reflect.DeepEqual(got, c.want) || om != c.omitted {
			t.Errorf("focus %s max %d: got %v (%d omitted), want %v (%d)", c.focus, c.max, got, om, c.want, c.omitted)
		}
	}
}

// bestReady keeps the task selection would pick, in first place, whatever
// the cap.
func TestBestReadyKeepsTheSelection(t *testing.T) {
	ready := []contract.ReadyTask{
		{ShortID: "a", CosGoal: 0.2, CosGap: 0.1, Coverage: 0.5, Depth: 1},
		{ShortID: "b", CosGoal: 0.7, CosGap: 0.6, Coverage: 0.1, Depth: 2},
		{ShortID: "c", CosGoal: 0.7, CosGap: 0.6, Coverage: 0.1, Depth: 2}, // ties b: b stays first
		{ShortID: "d", CosGoal: 0.5, CosGap: 0.9, Coverage: 0.0, Depth: 1, NProductive: 3},
	}
	for _, p := range []float64{0, 0.5, 1} {
		v := contract.ViewParams{Ready: 2, Pressure: p, MaxWarp: 0.6}
		best, bestScore := "", -1e9
		for _, r := range ready {
			if s := contract.ReadyScore(r, r.Depth, r.NProductive, 0.3, p, 0.6); s > bestScore {
				best, bestScore = r.ShortID, s
			}
		}
		got := bestReady(ready, 0.3, v)
		if len(got) != 2 || got[0].ShortID != best {
			t.Errorf("pressure %v: capped set %v, selection over all picks %s", p, got, best)
		}
	}
}
