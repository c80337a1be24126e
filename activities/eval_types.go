package activities

import "github.com/lethe-research/lethe/contract"

// The evaluation's payloads live in contract (docs/contract.md).
type (
	EvalQuestion      = contract.EvalQuestion
	EvalRecord        = contract.EvalRecord
	EvalSummary       = contract.EvalSummary
	BaselineInput     = contract.BaselineInput
	SystemAnswer      = contract.SystemAnswer
	ScoreInput        = contract.ScoreInput
	EvalOutputsInput  = contract.EvalOutputsInput
	EvalOutputsResult = contract.EvalOutputsResult
)
