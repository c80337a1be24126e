// Package workflows holds the ResearchSession workflow and its WebResearch
// child. Workflow code is deterministic: it calls algebra and din (pure
// functions) and gets everything else from activities, which it names
// through contract, so that no I/O code is linked into it (docs/contract.md).
package workflows

import (
	"github.com/lethe-research/lethe/contract"
)

// The workflow names, stop reasons and the session's input, state,
// progress and result live in contract (docs/contract.md).
const (
	SessionWorkflow      = contract.SessionWorkflow
	ResearchWorkflow     = contract.ResearchWorkflow
	QueryProgress        = contract.QueryProgress
	QueryTree            = contract.QueryTree
	QueryState           = contract.QueryState
	QueryReport          = contract.QueryReport
	SignalStop           = contract.SignalStop
	UpdateExtend         = contract.UpdateExtend
	UpdateGuide          = contract.UpdateGuide
	StopRootDone         = contract.StopRootDone
	StopConverged        = contract.StopConverged
	StopNoReadyTasks     = contract.StopNoReadyTasks
	StopMaxIterations    = contract.StopMaxIterations
	StopWallClockCap     = contract.StopWallClockCap
	StopRequested        = contract.StopRequested
	StopCancelled        = contract.StopCancelled
	StopModelUnavailable = contract.StopModelUnavailable
	StopComposeFailed    = contract.StopComposeFailed
	StopTokenBudget      = contract.StopTokenBudget
	StopNoProgress       = contract.StopNoProgress
)

type (
	SessionInput  = contract.SessionInput
	Signals       = contract.Signals
	SessionState  = contract.SessionState
	Stats         = contract.Stats
	Progress      = contract.Progress
	SessionResult = contract.SessionResult
)

// acts is how workflow code names activities: by method value on a nil
// *contract.Activities (the samples-go pattern), so the compiler checks
// each call's name and types and the SDK derives the registered name from
// the method; the worker registers *contract.Activities, whose methods
// carry the same names. Only the method values are used; the pointer stays
// nil.
var acts *contract.Activities
