// Package contract is what crosses the workflow boundary: the input and
// result types of the workflows and activities, the task-status, evidence-
// kind and stop-reason enums, the search-attribute names, the error kinds
// of non-retryable failures, the parameter tree's types (aliases of config,
// which is pure data) and typed references to the activities (stubs.go).
//
// It imports only the standard library, algebra and config, so that the
// workflow package, which imports contract instead of activities, graph or
// research, links no I/O code: `go run ./internal/importcheck` checks the
// whole dependency closure of workflows (docs/contract.md). Packages that
// owned these types before keep aliases to them (activities.ReadStateInput
// = contract.ReadStateInput, graph.Status = contract.TaskStatus, ...), so
// the JSON of every payload, and so every recorded history, is unchanged.
package contract
