package contract

import (
	"context"
	"errors"
)

// Activities names the activities for workflow code, with their real
// signatures: workflow.ExecuteActivity(ctx, acts.ReadState, in) with a nil
// *Activities gives the SDK the name "ReadState" and the compiler the input
// and result types, without linking the activities package (and its HTTP,
// browser and database clients) into the workflow. The worker registers
// the real *activities.Activities, whose methods have the same names and
// signatures (activities/stubs_test.go checks both ways). These methods
// never run: a worker that registered this type would fail every call.
type Activities struct{}

// errStub is what a stub returns if it ever runs.
var errStub = errors.New("contract.Activities is a typed reference to an activity; register *activities.Activities on the worker")

// ResolveConfig is activities.(*Activities).ResolveConfig.
func (*Activities) ResolveConfig(context.Context, ResolveConfigInput) (Config, error) {
	return Config{}, errStub
}

// HealthCheck is activities.(*Activities).HealthCheck.
func (*Activities) HealthCheck(context.Context, HealthInput) (HealthResult, error) {
	return HealthResult{}, errStub
}

// Bootstrap is activities.(*Activities).Bootstrap.
func (*Activities) Bootstrap(context.Context, BootstrapInput) (BootstrapResult, error) {
	return BootstrapResult{}, errStub
}

// ReadState is activities.(*Activities).ReadState.
func (*Activities) ReadState(context.Context, ReadStateInput) (ReadStateResult, error) {
	return ReadStateResult{}, errStub
}

// SetStatus is activities.(*Activities).SetStatus.
func (*Activities) SetStatus(context.Context, StatusInput) error { return errStub }

// SyncSimilar is activities.(*Activities).SyncSimilar.
func (*Activities) SyncSimilar(context.Context, SyncSimilarInput) (SyncSimilarResult, error) {
	return SyncSimilarResult{}, errStub
}

// Focus is activities.(*Activities).Focus.
func (*Activities) Focus(context.Context, FocusInput) (ExpandResult, error) {
	return ExpandResult{}, errStub
}

// FocusView is activities.(*Activities).FocusView.
func (*Activities) FocusView(context.Context, FocusViewInput) (FocusViewResult, error) {
	return FocusViewResult{}, errStub
}

// Expand is activities.(*Activities).Expand.
func (*Activities) Expand(context.Context, ExpandInput) (ExpandResult, error) {
	return ExpandResult{}, errStub
}

// Reason is activities.(*Activities).Reason.
func (*Activities) Reason(context.Context, ReasonInput) (ReasonResult, error) {
	return ReasonResult{}, errStub
}

// ApplyOps is activities.(*Activities).ApplyOps.
func (*Activities) ApplyOps(context.Context, ApplyInput) (ApplyOutput, error) {
	return ApplyOutput{}, errStub
}

// CheckQuery is activities.(*Activities).CheckQuery.
func (*Activities) CheckQuery(context.Context, CheckQueryInput) (CheckQueryResult, error) {
	return CheckQueryResult{}, errStub
}

// Observe is activities.(*Activities).Observe.
func (*Activities) Observe(context.Context, ObserveInput) (Observation, error) {
	return Observation{}, errStub
}

// CollectSections is activities.(*Activities).CollectSections.
func (*Activities) CollectSections(context.Context, CollectInput) (CollectResult, error) {
	return CollectResult{}, errStub
}

// Compose is activities.(*Activities).Compose.
func (*Activities) Compose(context.Context, ComposeInput) (ComposeResult, error) {
	return ComposeResult{}, errStub
}

// Summarize is activities.(*Activities).Summarize.
func (*Activities) Summarize(context.Context, SummarizeInput) (ComposeResult, error) {
	return ComposeResult{}, errStub
}

// VerifyCitations is activities.(*Activities).VerifyCitations.
func (*Activities) VerifyCitations(context.Context, VerifyInput) (VerifyResult, error) {
	return VerifyResult{}, errStub
}

// Extract is activities.(*Activities).Extract.
func (*Activities) Extract(context.Context, ComposeInput) (ComposeResult, error) {
	return ComposeResult{}, errStub
}

// Finalize is activities.(*Activities).Finalize.
func (*Activities) Finalize(context.Context, FinalizeInput) (FinalizeResult, error) {
	return FinalizeResult{}, errStub
}

// Discover is activities.(*Activities).Discover.
func (*Activities) Discover(context.Context, DiscoverInput) (DiscoverResult, error) {
	return DiscoverResult{}, errStub
}

// Fetch is activities.(*Activities).Fetch.
func (*Activities) Fetch(context.Context, FetchInput) (FetchResult, error) {
	return FetchResult{}, errStub
}

// Transcribe is activities.(*Activities).Transcribe.
func (*Activities) Transcribe(context.Context, TranscribeInput) (TranscribeResult, error) {
	return TranscribeResult{}, errStub
}

// Ingest is activities.(*Activities).Ingest.
func (*Activities) Ingest(context.Context, IngestInput) (IngestResult, error) {
	return IngestResult{}, errStub
}

// BaselineRAG is activities.(*Activities).BaselineRAG.
func (*Activities) BaselineRAG(context.Context, BaselineInput) (SystemAnswer, error) {
	return SystemAnswer{}, errStub
}

// BaselineLoop is activities.(*Activities).BaselineLoop.
func (*Activities) BaselineLoop(context.Context, BaselineInput) (SystemAnswer, error) {
	return SystemAnswer{}, errStub
}

// Score is activities.(*Activities).Score.
func (*Activities) Score(context.Context, ScoreInput) (EvalRecord, error) {
	return EvalRecord{}, errStub
}

// WriteEvalOutputs is activities.(*Activities).WriteEvalOutputs.
func (*Activities) WriteEvalOutputs(context.Context, EvalOutputsInput) (EvalOutputsResult, error) {
	return EvalOutputsResult{}, errStub
}
