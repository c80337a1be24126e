package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/lethe-research/lethe/contract"
)

// changeWorkerOnly: a config given in the input goes through ResolveConfig,
// which refuses worker-only values (config.WorkerOnly) that differ from the
// worker's and fills in the worker's; the config carried into the next run
// leaves them empty, so the worker that runs it fills in its own; an
// evaluation's id is checked before anything runs.
const changeWorkerOnly = "worker-only-config"

// checkEvalID refuses an evaluation id that cannot name its output
// directory (contract.CheckEvalID). An evaluation started before the check
// replays without it; the activities that write refuse such an id too.
func checkEvalID(ctx workflow.Context, id string) error {
	if workflow.GetVersion(ctx, changeWorkerOnly, workflow.DefaultVersion, 1) != 1 {
		return nil
	}
	if err := contract.CheckEvalID(id); err != nil {
		return invalid(err.Error())
	}
	return nil
}

// resolveInputConfig resolves a workflow's config: the one given in the
// input (given) checked by the worker, or the worker's own with params.
// where names the input's owner in errors ("a session's"). It returns the
// config the run uses and the one to carry into the next run.
func resolveInputConfig(ctx workflow.Context, given *contract.Config, params map[string]string, where string) (use, carry contract.Config, err error) {
	checked := workflow.GetVersion(ctx, changeWorkerOnly, workflow.DefaultVersion, 1) == 1
	if given != nil && !checked {
		return *given, *given, nil
	}
	in := contract.ResolveConfigInput{Params: params}
	if checked {
		in.Config, in.Input = given, where+" config"
		if given == nil {
			in.Input = where + " params"
		}
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 30 * time.Second, RetryPolicy: retry(3)})
	if err := workflow.ExecuteActivity(actx, acts.ResolveConfig, in).Get(ctx, &use); err != nil {
		return contract.Config{}, contract.Config{}, fmt.Errorf("resolve config: %w", err)
	}
	if checked {
		return use, use.WithoutWorkerOnly(), nil
	}
	return use, use, nil
}
