package workflows_test

import (
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

// focusResults runs a session whose recorded config is changed by set
// (the worker's own config stays the default) and returns what each Focus
// activity (PPR expansion) returned.
func focusResults(t *testing.T, set func(*config.Config)) []activities.ExpandResult {
	t.Helper()
	srv := llmtest.NewServer(lethetest.Script(t, "battery_root_done"))
	t.Cleanup(srv.Close)
	var got []activities.ExpandResult
	r := runAt(t, srv, srv.URL(), nil, func(cfg *config.Config) workflows.SessionInput {
		session := *cfg // the activities keep the worker's copy
		if set != nil {
			set(&session)
		}
		return workflows.SessionInput{Goal: goal, Config: &session}
	}, func(env *testsuite.TestWorkflowEnvironment) {
		// FocusView is a local activity since local-steps (changeLocalSteps).
		// The test environment names no local activity type, so the
		// result is told by its keys.
		env.SetOnLocalActivityCompletedListener(func(_ *activity.Info, result converter.EncodedValue, err error) {
			var keys map[string]json.RawMessage
			if err != nil || result.Get(&keys) != nil {
				return
			}
			if _, ok := keys["expand"]; !ok {
				return
			}
			var fv contract.FocusViewResult
			if result.Get(&fv) == nil {
				got = append(got, fv.Expand)
			}
		})
		env.SetOnActivityCompletedListener(func(info *activity.Info, result converter.EncodedValue, err error) {
			var ex activities.ExpandResult
			if info.ActivityType.Name == "Focus" && err == nil && result.Get(&ex) == nil {
				got = append(got, ex)
			}
			var fv contract.FocusViewResult
			if info.ActivityType.Name == "FocusView" && err == nil && result.Get(&fv) == nil {
				got = append(got, fv.Expand)
			}
		})
	})
	if r.err != nil {
		t.Fatal(r.err)
	}
	return got
}

// A session's parameters decide what its activities do: started with
// context.ppr_alpha=0.3 (recorded in its history), a session's Expand
// ranks the context differently from one with the default 0.15, although
// both run on workers whose own configuration has the default. (Before the
// parameters travelled in activity inputs, Expand read the worker's 0.15
// and both sessions got the same scores.)
func TestSessionParamsReachActivities(t *testing.T) {
	base := focusResults(t, nil)
	alpha := focusResults(t, func(c *config.Config) { c.Context.PPRAlpha = 0.3 })
	if len(base) == 0 || len(base) != len(alpha) {
		t.Fatalf("%d and %d Focus results", len(base), len(alpha))
	}
	differ := false
	for i := range base {
		for j := range base[i].Candidates {
			if j < len(alpha[i].Candidates) && base[i].Candidates[j].PPR != alpha[i].Candidates[j].PPR {
				differ = true
			}
		}
	}
	if !differ {
		t.Fatal("ppr_alpha=0.3 gave the same PPR scores as the default: the session's parameter did not reach Expand")
	}
}
