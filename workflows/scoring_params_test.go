package workflows_test

import (
	"context"
	"encoding/json"
	"testing"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"

	"github.com/lethe-research/lethe/activities"
	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/contract"
	"github.com/lethe-research/lethe/internal/lethetest"
	"github.com/lethe-research/lethe/llm/llmtest"
	"github.com/lethe-research/lethe/workflows"
)

// scoringTrace is what a session's activities were given and returned, and
// the strengths its evidence was stored with (by content).
type scoringTrace struct {
	observeIn []activities.ObserveInput
	obs       []activities.Observation
	ingestIn  []activities.IngestInput
	ingest    []activities.IngestResult
	applyIn   []activities.ApplyInput
	focusIn   []activities.FocusInput
	strength  map[string]float64
}

// traceSession runs the scripted session with its recorded config changed
// by set; the worker's own config stays the default.
func traceSession(t *testing.T, set func(*config.Config)) scoringTrace {
	t.Helper()
	srv := llmtest.NewServer(lethetest.Script(t, "battery_root_done"))
	t.Cleanup(srv.Close)
	var tr scoringTrace
	r := runAt(t, srv, srv.URL(), nil, func(cfg *config.Config) workflows.SessionInput {
		session := *cfg
		if set != nil {
			set(&session)
		}
		return workflows.SessionInput{Goal: goal, Config: &session}
	}, func(env *testsuite.TestWorkflowEnvironment) {
		env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, args converter.EncodedValues) {
			switch info.ActivityType.Name {
			case "Observe":
				var in activities.ObserveInput
				if args.Get(&in) == nil {
					tr.observeIn = append(tr.observeIn, in)
				}
			case "Ingest":
				var in activities.IngestInput
				if args.Get(&in) == nil {
					tr.ingestIn = append(tr.ingestIn, in)
				}
			case "ApplyOps":
				var in activities.ApplyInput
				if args.Get(&in) == nil {
					tr.applyIn = append(tr.applyIn, in)
				}
			case "Focus":
				var in activities.FocusInput
				if args.Get(&in) == nil {
					tr.focusIn = append(tr.focusIn, in)
				}
			case "FocusView":
				var in contract.FocusViewInput
				if args.Get(&in) == nil {
					tr.focusIn = append(tr.focusIn, in.Focus)
				}
			}
		})
		// Observe is a local activity in the bounded view (changeBoundedView),
		// ApplyOps and FocusView since local-steps (changeLocalSteps).
		env.SetOnLocalActivityStartedListener(func(_ *activity.Info, _ context.Context, args []any) {
			for _, a := range args {
				switch in := a.(type) {
				case contract.ObserveInput:
					tr.observeIn = append(tr.observeIn, in)
				case contract.ApplyInput:
					tr.applyIn = append(tr.applyIn, in)
				case contract.FocusViewInput:
					tr.focusIn = append(tr.focusIn, in.Focus)
				}
			}
		})
		env.SetOnLocalActivityCompletedListener(func(_ *activity.Info, result converter.EncodedValue, err error) {
			var keys map[string]json.RawMessage
			if err != nil || result.Get(&keys) != nil {
				return
			}
			if _, ok := keys["stability_conf"]; !ok { // not an Observation
				return
			}
			var o activities.Observation
			if result.Get(&o) == nil {
				tr.obs = append(tr.obs, o)
			}
		})
		env.SetOnActivityCompletedListener(func(info *activity.Info, result converter.EncodedValue, err error) {
			if err != nil {
				return
			}
			switch info.ActivityType.Name {
			case "Observe":
				var o activities.Observation
				if result.Get(&o) == nil {
					tr.obs = append(tr.obs, o)
				}
			case "Ingest":
				var o activities.IngestResult
				if result.Get(&o) == nil {
					tr.ingest = append(tr.ingest, o)
				}
			}
		})
	})
	if r.err != nil {
		t.Fatal(r.err)
	}
	evs, err := r.store.Evidence(context.Background(), r.res.SessionID, "")
	if err != nil {
		t.Fatal(err)
	}
	tr.strength = map[string]float64{}
	for _, e := range evs {
		tr.strength[e.Content] = e.Strength
	}
	return tr
}

// Every parameter this change added travels from the session's recorded
// config in its activity's input, whatever the worker's config says.
func TestScoringParamsTravelInActivityInputs(t *testing.T) {
	set := func(c *config.Config) {
		c.Algebra.AttentionK, c.Algebra.AttentionTau = 3, 0.2
		c.Algebra.StateRecency, c.Algebra.StateWeightEv, c.Algebra.StateWeightTask, c.Algebra.StateWeightActive = 1, 0.4, 0.4, 0.2
		c.Algebra.NoveltyWeightDist = 0.7
		c.Algebra.CorroborationBoost, c.Algebra.ContradictionPen = 0.5, 0
		c.Research.AttentionK = 4
		c.Research.StrengthGoalWeight, c.Research.StrengthGainWeight = 0.7, 0.3
		c.Research.PriorHTML, c.Research.PriorText, c.Research.PriorOther = 0.6, 0.7, 0.8
		c.Research.LLMEvidenceStrength = 0.35
	}
	tr := traceSession(t, set)
	want := config.Defaults()
	set(&want)
	if len(tr.observeIn) == 0 || len(tr.ingestIn) == 0 || len(tr.applyIn) == 0 || len(tr.focusIn) == 0 {
		t.Fatalf("%d Observe, %d Ingest, %d ApplyOps, %d Focus inputs", len(tr.observeIn), len(tr.ingestIn), len(tr.applyIn), len(tr.focusIn))
	}
	for _, in := range tr.observeIn {
		if in.Signals == nil || *in.Signals != want.Algebra.SignalParams() {
			t.Fatalf("Observe signals %+v, want %+v", in.Signals, want.Algebra.SignalParams())
		}
	}
	wantIngest := activities.IngestParamsOf(want)
	for _, in := range tr.ingestIn {
		p := in.Params
		if p.AttentionK != 4 || p.AttentionTau != 0.2 || p.Strength == nil || *p.Strength != *wantIngest.Strength {
			t.Fatalf("Ingest params %+v (strength %+v), want %+v", p, p.Strength, wantIngest.Strength)
		}
	}
	for _, in := range tr.applyIn {
		if in.EvidenceStrength != 0.35 {
			t.Fatalf("ApplyOps evidence strength %v, want 0.35", in.EvidenceStrength)
		}
	}
	for _, in := range tr.focusIn {
		if r := in.Similar.Refine; r == nil || r.Boost != 0.5 || r.Penalty != 0 {
			t.Fatalf("Focus refinement %+v, want boost 0.5, penalty 0", r)
		}
		if in.Context.BetaMin != want.Context.BetaMin || in.Context.BetaMax != want.Context.BetaMax {
			t.Fatalf("Focus context %+v", in.Context)
		}
	}
}

// research.prior_* and research.strength_*: a session started with lower
// source-kind priors stores its evidence with lower strengths, on workers
// whose own configuration has the defaults.
func TestSessionStrengthParamsReachIngest(t *testing.T) {
	base := traceSession(t, nil)
	low := traceSession(t, func(c *config.Config) {
		r := &c.Research
		r.PriorPDF, r.PriorHTML, r.PriorText, r.PriorTranscript, r.PriorLLM, r.PriorOther = 0.5, 0.5, 0.5, 0.5, 0.5, 0.5
	})
	common := 0
	for content, s := range base.strength {
		l, ok := low.strength[content]
		if !ok {
			continue
		}
		common++
		if !(l < s) {
			t.Fatalf("evidence %.60q: strength %v with priors 0.5, %v with the defaults", content, l, s)
		}
	}
	if common == 0 {
		t.Fatalf("no evidence in common (%d and %d items)", len(base.strength), len(low.strength))
	}
}

// algebra.attention_k reaches Observe and research.attention_k reaches
// Ingest: the first goal alignment computed over more than one evidence
// item differs from the default's, and everything before it is the same.
func TestSessionAttentionParamsReachSignals(t *testing.T) {
	base := traceSession(t, nil)
	one := traceSession(t, func(c *config.Config) { c.Algebra.AttentionK, c.Research.AttentionK = 1, 1 })
	firstMulti := func(n []int) int {
		for i, v := range n {
			if v > 1 {
				return i
			}
		}
		return -1
	}
	var obsN []int
	for _, o := range base.obs {
		obsN = append(obsN, o.NEvidence)
	}
	i := firstMulti(obsN)
	if i < 0 || i >= len(one.obs) {
		t.Fatalf("no observation over several evidence items: %v", obsN)
	}
	for k := 0; k < i; k++ {
		if base.obs[k] != one.obs[k] {
			t.Fatalf("observation %d differs before any evidence: %+v vs %+v", k, base.obs[k], one.obs[k])
		}
	}
	if base.obs[i].NEvidence != one.obs[i].NEvidence || base.obs[i].GA == one.obs[i].GA {
		t.Fatalf("observation %d: GA %v (n=%d) with attention_k 1, %v (n=%d) with 10: the parameter did not reach Observe",
			i, one.obs[i].GA, one.obs[i].NEvidence, base.obs[i].GA, base.obs[i].NEvidence)
	}
	var ingN []int
	for _, r := range base.ingest {
		ingN = append(ingN, r.New+r.Duplicates)
	}
	j := firstMulti(ingN)
	if j < 0 || j >= len(one.ingest) {
		t.Fatalf("no ingest of several items: %v", ingN)
	}
	if base.ingest[j].GA == one.ingest[j].GA {
		t.Fatalf("ingest %d: GA %v with research.attention_k 1 and 8: the parameter did not reach Ingest", j, base.ingest[j].GA)
	}
}
