package workflows

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/lethe-research/lethe/activities"
	"github.com/lethe-research/lethe/algebra"
	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/din"
	"github.com/lethe-research/lethe/graph"
)

func TestBudgetUpdate(t *testing.T) {
	cfg := config.Defaults()
	b, th := cfg.Budget, cfg.Thinking
	base := budgetInput{Iteration: 0, MaxIterations: 10, Elapsed: 0, MaxWallClock: 10 * time.Minute}
	cases := []struct {
		name   string
		mutate func(*budgetInput)
		check  func(t *testing.T, out budgetOutput)
	}{
		{"fresh: no progress, unfamiliar territory gets the full thinking budget", func(*budgetInput) {}, func(t *testing.T, o budgetOutput) {
			if o.ResourceProgress != 0 || o.ThinkingBudget != th.MaxTokens || o.Psi > 0.01 {
				t.Fatalf("%+v", o)
			}
		}},
		{"iterations are the bottleneck", func(in *budgetInput) { in.Iteration, in.Elapsed = 5, time.Minute }, func(t *testing.T, o budgetOutput) {
			if o.ResourceProgress != 0.5 {
				t.Fatalf("progress %v, want 0.5", o.ResourceProgress)
			}
		}},
		{"wall clock is the bottleneck", func(in *budgetInput) { in.Iteration, in.Elapsed = 1, 9*time.Minute }, func(t *testing.T, o budgetOutput) {
			if o.ResourceProgress != 0.9 || o.Pressure < 0.5 {
				t.Fatalf("%+v, want progress 0.9 and high pressure", o)
			}
		}},
		{"low novelty thinks less", func(in *budgetInput) { in.Prev = Signals{Observed: true, Novelty: 0} }, func(t *testing.T, o budgetOutput) {
			if o.ThinkingBudget != th.MinTokens {
				t.Fatalf("thinking %d, want %d", o.ThinkingBudget, th.MinTokens)
			}
		}},
		{"converged and plateaued after min iterations: psi passes the threshold", func(in *budgetInput) {
			in.Iteration, in.Prev = 6, Signals{Observed: true, Convergence: 0.95, Plateau: 1, Novelty: 0.1}
		}, func(t *testing.T, o budgetOutput) {
			if o.Psi <= b.PsiThreshold {
				t.Fatalf("psi %v, want > %v", o.Psi, b.PsiThreshold)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := base
			c.mutate(&in)
			c.check(t, budgetUpdate(in, b, th))
		})
	}
	// Searches that find nothing raise the pressure (zero-yield boost).
	in := budgetInput{Iteration: 4, MaxIterations: 10, MaxWallClock: time.Hour, Prev: Signals{Observed: true, Convergence: 0.4}}
	calm := budgetUpdate(in, b, th)
	in.ZeroYield = 3
	if boosted := budgetUpdate(in, b, th); boosted.Pressure <= calm.Pressure || boosted.Psi <= calm.Psi {
		t.Fatalf("zero yield: pressure %v→%v, psi %v→%v; want both higher", calm.Pressure, boosted.Pressure, calm.Psi, boosted.Psi)
	}
}

func TestSelectTask(t *testing.T) {
	tasks := []activities.TaskInfo{{ShortID: "a"}, {ShortID: "b"}, {ShortID: "deep", Depth: 3}, {ShortID: "worked", NProductive: 8}}
	cases := []struct {
		name     string
		ready    []activities.ReadyTask
		pressure float64
		want     string
	}{
		{"closest to the goal", []activities.ReadyTask{{ShortID: "a", CosGoal: 0.2}, {ShortID: "b", CosGoal: 0.8}}, 0, "b"},
		{"covered tasks yield to uncovered ones", []activities.ReadyTask{{ShortID: "a", CosGoal: 0.6, Coverage: 0}, {ShortID: "b", CosGoal: 0.7, Coverage: 1}}, 0, "a"},
		{"ties keep the earlier task", []activities.ReadyTask{{ShortID: "a", CosGoal: 0.5}, {ShortID: "b", CosGoal: 0.5}}, 0, "a"},
		{"diminishing returns on a productive task", []activities.ReadyTask{{ShortID: "worked", CosGoal: 0.6}, {ShortID: "a", CosGoal: 0.5}}, 0, "a"},
		{"no pressure, no warp", []activities.ReadyTask{{ShortID: "a", CosGoal: 0.6, CosGap: 0.9}, {ShortID: "b", CosGoal: 0.55, CosGap: 0}}, 0, "a"},
		{"pressure warps the ranking", []activities.ReadyTask{{ShortID: "a", CosGoal: 0.6, CosGap: 0.9}, {ShortID: "b", CosGoal: 0.55, CosGap: 0}}, 1, "b"},
		{"no ready task", nil, 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rs := activities.ReadStateResult{Tasks: tasks, Ready: c.ready, GapGoalCos: 0.3}
			if got := selectTask(rs, c.pressure, 0.5); got != c.want {
				t.Fatalf("selected %q, want %q", got, c.want)
			}
		})
	}
}

func TestPack(t *testing.T) {
	ctx := config.Defaults().Context
	cand := func(ref string, ppr, cg float64, tok int) activities.Candidate {
		return activities.Candidate{Ref: ref, PPR: ppr, CosGoal: cg, Tokens: tok}
	}
	cases := []struct {
		name   string
		cands  []activities.Candidate
		sims   [][]float64
		budget int
		want   []string
	}{
		{"everything fits, best score first", []activities.Candidate{cand("x", 0.1, 0.1, 10), cand("y", 0.9, 0.9, 10)}, nil, 100, []string{"y", "x"}},
		{"the token budget binds", []activities.Candidate{cand("x", 1, 0.9, 80), cand("y", 0.5, 0.5, 30), cand("z", 0.4, 0.4, 30)}, nil, 70, []string{"y", "z"}},
		{"a near duplicate loses to a distinct one", []activities.Candidate{cand("x", 1, 0.9, 30), cand("dup", 0.95, 0.9, 30), cand("other", 0.6, 0.6, 30)},
			[][]float64{{1, 0.99, 0}, {0.99, 1, 0}, {0, 0, 1}}, 60, []string{"x", "other"}},
		{"nothing to pack", nil, nil, 100, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx.TokenBudget = c.budget
			ex := activities.ExpandResult{Candidates: c.cands, Sims: simsOf(c.sims, len(c.cands))}
			var got []string
			for _, p := range pack(ex, 0, ctx) {
				got = append(got, p.Ref)
			}
			if strings.Join(got, ",") != strings.Join(c.want, ",") {
				t.Fatalf("packed %v, want %v", got, c.want)
			}
		})
	}
}

// simsOf builds the pairwise cosines of n unit vectors whose Gram matrix
// is sims (the identity when nil).
func simsOf(sims [][]float64, n int) algebra.PairSims {
	vecs := make([][]float64, n)
	for i := range vecs {
		vecs[i] = make([]float64, n)
		vecs[i][i] = 1
	}
	for i, row := range sims { // rows of a Gram matrix of unit-ish vectors: near duplicates share a direction
		copy(vecs[i], row)
	}
	return algebra.NewPairSims(vecs)
}

func TestBuildView(t *testing.T) {
	rs := activities.ReadStateResult{Tasks: []activities.TaskInfo{
		{ShortID: "root", Description: "goal", Status: graph.Active},
		{ShortID: "p", Description: "parent", Parent: "root", Status: graph.Active},
		{ShortID: "f", Description: "focus", Parent: "p", Status: graph.Active},
		{ShortID: "kid", Description: "subtask", Parent: "f", Status: graph.Pending},
		{ShortID: "sib", Description: "sibling", Parent: "p", Status: graph.Pending},
		{ShortID: "dead", Description: "dead end", Parent: "p", Status: graph.Failed, Result: "no sources"},
	}}
	packed := []activities.Candidate{{Ref: "ev1", Task: "f", Text: "a finding", Source: "https://example.org/a", Title: "A"}}
	v := buildView("the goal", rs, "f", packed, 2, []string{"look at garnet"})
	if v.Focus == nil || v.Focus.ShortID != "f" || v.Goal != "the goal" {
		t.Fatalf("focus %+v goal %q", v.Focus, v.Goal)
	}
	var order []string
	for _, l := range v.Tasks {
		order = append(order, l.ShortID)
	}
	if got := strings.Join(order, ","); got != "kid,p,sib,dead" {
		t.Fatalf("task lines %s, want subtasks, parent, siblings", got)
	}
	if len(v.Evidence) != 1 || v.Evidence[0].Ref != "e1" || v.Evidence[0].Source != "https://example.org/a" {
		t.Fatalf("evidence %+v", v.Evidence)
	}
	text := din.Render(v)
	for _, want := range []string{"look at garnet", "dead end", "sibling"} {
		if !strings.Contains(text, want) {
			t.Errorf("DIN-Read lacks %q:\n%s", want, text)
		}
	}
	if root := buildView("g", rs, "root", nil, 0, nil); root.Focus != nil {
		t.Fatalf("the root is the goal line, not a focus: %+v", root.Focus)
	}
}

func TestBoundReport(t *testing.T) {
	long := strings.Repeat("A line of the report with a citation [1].\n", 10000) // 430 KB
	cases := []struct {
		name   string
		report string
		max    int
		cut    bool
	}{
		{"small report unchanged", "# Goal\n\nFindings [1].\n", 256 << 10, false},
		{"long report cut at a line, with the way to the whole one", long, 256 << 10, true},
		{"tiny bound", long, 4096, true},
		{"multibyte text without newlines", strings.Repeat("é", 300000), 256 << 10, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := boundReport(c.report, c.max, "battery-1")
			if !c.cut {
				if got != c.report {
					t.Fatalf("changed a report under the bound")
				}
				return
			}
			if len(got) > c.max*3/4 || !strings.Contains(got, "--name report") || !utf8.ValidString(got) {
				t.Fatalf("%d bytes (bound %d), note present %v, valid UTF-8 %v", len(got), c.max*3/4, strings.Contains(got, "--name report"), utf8.ValidString(got))
			}
			body := got[:strings.Index(got, "\n\n> The report is")]
			if !strings.HasPrefix(c.report, body) {
				t.Fatal("the cut report is not a prefix of the whole one")
			}
		})
	}
}

func TestTokenStop(t *testing.T) {
	for _, c := range []struct {
		used, next, limit int
		reserve           float64
		want              bool
	}{
		{0, 0, 1000, 0.1, false},
		{800, 100, 1000, 0.1, false}, // 900 = 0.9 x 1000: still fits
		{801, 100, 1000, 0.1, true},
		{500, 0, 1000, 0.5, false},
		{1000, 0, 1000, 0, false},
		{1001, 0, 1000, 0, true},
		{0, 2000, 1000, 0, true}, // an iteration dearer than the whole budget
	} {
		if got := tokenStop(c.used, c.next, c.limit, c.reserve); got != c.want {
			t.Errorf("tokenStop(%d, %d, %d, %v) = %v, want %v", c.used, c.next, c.limit, c.reserve, got, c.want)
		}
	}
}

func TestComposePlan(t *testing.T) {
	for _, c := range []struct {
		est  []int
		left int
		want []bool
	}{
		{nil, 100, []bool{}},
		{[]int{10, 20}, 30, []bool{true, true}},
		{[]int{10, 20}, 29, []bool{true, false}},
		{[]int{50, 10}, 20, []bool{false, true}}, // a later, smaller part still fits
		{[]int{10}, -5, []bool{false}},           // already past the limit
	} {
		got := composePlan(c.est, c.left)
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("composePlan(%v, %d) = %v, want %v", c.est, c.left, got, c.want)
		}
	}
}

func TestCost(t *testing.T) {
	cfg := config.Defaults()
	if got := cost(1e6, 1e6, 1e6, cfg); got != 0 {
		t.Errorf("a local model costs %v, want 0", got)
	}
	cfg.LLM.PricePrompt, cfg.LLM.PriceCompletion, cfg.Embed.PricePerMTok = 3, 15, 0.02
	if got, want := cost(2e6, 1e5, 5e5, cfg), 6+1.5+0.01; math.Abs(got-want) > 1e-12 {
		t.Errorf("cost = %v, want %v", got, want)
	}
}
