package workflows

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/lethe-research/lethe/contract"
)

// Search attributes upserted every iteration, so that
// temporal workflow list --query 'LetheStatus="running"' works. They must be
// registered on the namespace (make run and the tests do it on the dev
// server; README shows the command for a real cluster).
var (
	AttrStatus    = temporal.NewSearchAttributeKeyKeyword(contract.AttrNameStatus)
	AttrIteration = temporal.NewSearchAttributeKeyInt64(contract.AttrNameIteration)
	AttrPressure  = temporal.NewSearchAttributeKeyFloat64(contract.AttrNamePressure)
	AttrPsi       = temporal.NewSearchAttributeKeyFloat64(contract.AttrNamePsi)
	AttrTasksDone = temporal.NewSearchAttributeKeyInt64(contract.AttrNameTasksDone)
	AttrEvidence  = temporal.NewSearchAttributeKeyInt64(contract.AttrNameEvidence)
	// A Double: SQL visibility stores allow three Int attributes (contract).
	AttrTokens = temporal.NewSearchAttributeKeyFloat64(contract.AttrNameTokens)
)

// SearchAttributes lists every attribute with its type, in the form
// `temporal operator search-attribute create` and start-dev take.
func SearchAttributes() []string { return contract.SearchAttributes() }

// Session statuses of LetheStatus (contract).
const (
	StatusRunning    = contract.StatusRunning
	StatusAssembling = contract.StatusAssembling
	StatusDone       = contract.StatusDone
	StatusCancelled  = contract.StatusCancelled
	StatusFailed     = contract.StatusFailed
	StatusWaiting    = contract.StatusWaiting
)

// publish upserts the search attributes and the workflow's current details
// (the Markdown the UI shows on the workflow page) and records our metrics.
// Visibility must never break a session: an upsert error is logged only.
func (s *session) publish(ctx workflow.Context, status string) {
	if s.wait != nil && s.wait.current != nil {
		status = StatusWaiting
	}
	done := s.st.Counts["DONE"]
	if s.cfg.Temporal.SearchAttributes {
		err := workflow.UpsertTypedSearchAttributes(ctx,
			AttrStatus.ValueSet(status),
			AttrIteration.ValueSet(int64(s.st.Iteration)),
			AttrPressure.ValueSet(s.st.Pressure),
			AttrPsi.ValueSet(s.st.Psi),
			AttrTasksDone.ValueSet(int64(done)),
			AttrEvidence.ValueSet(int64(s.st.Evidence)),
			AttrTokens.ValueSet(float64(s.st.TokensUsed())),
		)
		if err != nil {
			s.log.Warn("search attribute upsert failed", "error", err)
		}
	}
	workflow.SetCurrentDetails(ctx, s.details(ctx, status))
}

// changeFailedStatus: a session that fails upserts LetheStatus=failed
// before it returns its error. Asked only on that path, so a failed
// session recorded before it (replayed when it is queried) keeps its
// history, and sessions that do not fail record no marker.
const changeFailedStatus = "failed-status"

// markFailed publishes LetheStatus=failed when the session ends with an
// error, so that the query for running sessions stops listing it.
// Continue-as-new and cancellation (LetheStatus=cancelled) are not
// failures. Without a config (an empty goal before ResolveConfig, a
// ResolveConfig that did not say) the session cannot tell whether the
// attributes are registered on the namespace, and an upsert of an
// unregistered one would fail every workflow task: it shows the failure
// in its details only.
func (s *session) markFailed(ctx workflow.Context, err error) {
	if err == nil || workflow.IsContinueAsNewError(err) || temporal.IsCanceledError(err) || errors.Is(ctx.Err(), workflow.ErrCanceled) {
		return
	}
	s.phase, s.failure = "failed", err.Error()
	if s.wait != nil {
		s.wait.current = nil // a wait of a coroutine that the failure ended
	}
	s.log.Error("session failed", "error", err)
	if s.cfg.Temporal.SearchAttributes && workflow.GetVersion(ctx, changeFailedStatus, workflow.DefaultVersion, 1) < 1 {
		workflow.SetCurrentDetails(ctx, s.details(ctx, StatusFailed))
		return
	}
	s.publish(ctx, StatusFailed)
}

// attributesRegistered is the detail of a ResolveConfig failure: whether
// the worker registered the search attributes, which a session or an
// evaluation without a config has no other way to know. No detail (a
// worker older than it, or another error): not known, so no upsert.
func attributesRegistered(err error) bool {
	var app *temporal.ApplicationError
	registered := false
	if errors.As(err, &app) && app.HasDetails() && app.Details(&registered) == nil {
		return registered
	}
	return false
}

// details is the Markdown shown as the workflow's current details.
func (s *session) details(ctx workflow.Context, status string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### Lethe research session: %s\n\n", status)
	fmt.Fprintf(&b, "**Goal:** %s\n\n", s.in.Goal)
	fmt.Fprintf(&b, "| | |\n|---|---|\n")
	if s.wait != nil && s.wait.current != nil {
		writeWait(&b, workflow.Now(ctx), s.wait.current)
	}
	if s.st.ModelWaited > 0 {
		fmt.Fprintf(&b, "| waited for models in all | %s (not counted against the budget) |\n", s.st.ModelWaited.Round(time.Second))
	}
	fmt.Fprintf(&b, "| iteration | %d of %d |\n", s.st.Iteration, s.st.MaxIterations(s.cfg.Budget.MaxIterations))
	if s.st.Current != "" {
		fmt.Fprintf(&b, "| current task | `%s` |\n", s.st.Current)
	}
	fmt.Fprintf(&b, "| tasks | %s |\n", statusLine(s.st.Counts))
	fmt.Fprintf(&b, "| evidence | %d |\n", s.st.Evidence)
	fmt.Fprintf(&b, "| pressure / ψ | %.2f / %.2f |\n", s.st.Pressure, s.st.Psi)
	if s.stop != "" {
		fmt.Fprintf(&b, "| stop reason | %s |\n", s.stop)
	}
	if s.failure != "" {
		fmt.Fprintf(&b, "| error | %s |\n", strings.ReplaceAll(truncateRunes(s.failure, 500), "|", "\\|"))
	}
	if len(s.st.LastOps) > 0 {
		b.WriteString("\n**Last operations**\n\n")
		for _, op := range s.st.LastOps {
			fmt.Fprintf(&b, "- %s\n", op)
		}
	}
	return b.String()
}

// writeWait adds the rows that say which model server the workflow waits
// for, how long it has waited and how many tries have failed.
func writeWait(b *strings.Builder, now time.Time, w *ModelWait) {
	fmt.Fprintf(b, "| waiting for | %s at %s |\n", w.Service, w.URL)
	fmt.Fprintf(b, "| waited | %s |\n", now.Sub(w.Since).Round(time.Second))
	fmt.Fprintf(b, "| attempt | %d |\n", w.Attempt)
	if w.Error != "" {
		fmt.Fprintf(b, "| last error | %s |\n", strings.ReplaceAll(truncateRunes(w.Error, 200), "|", "\\|"))
	}
}

func truncateRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// statuses fixes the order in which counts are shown (no map iteration in
// workflow code).
var statuses = []string{"PENDING", "ACTIVE", "DONE", "FAILED"}

func statusLine(c map[string]int) string {
	var parts []string
	for _, k := range statuses {
		if c[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", strings.ToLower(k), c[k]))
		}
	}
	if len(parts) == 0 {
		return "none yet"
	}
	return strings.Join(parts, ", ")
}

// summarized sets the one-line summary the UI shows for the next activity.
func summarized(ctx workflow.Context, format string, args ...any) workflow.Context {
	opts := workflow.GetActivityOptions(ctx)
	opts.Summary = fmt.Sprintf(format, args...)
	return workflow.WithActivityOptions(ctx, opts)
}

// metrics records the iteration's numbers on the SDK's metrics handler
// (exported by the worker as Prometheus); the SDK drops them during replay.
func (s *session) metrics(ctx workflow.Context, newEvidence, tokens int) {
	m := workflow.GetMetricsHandler(ctx)
	m.Counter("lethe_iterations_total").Inc(1)
	m.Counter("lethe_evidence_new_total").Inc(int64(newEvidence))
	m.Counter("lethe_llm_tokens_total").Inc(int64(tokens))
	m.Gauge("lethe_psi").Update(s.st.Psi)
	m.Gauge("lethe_pressure").Update(s.st.Pressure)
}
