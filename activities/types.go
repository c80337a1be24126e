package activities

import (
	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/contract"
	"github.com/lethe-research/lethe/graph"
)

// The payload types live in contract, so that workflow code links no I/O;
// these aliases keep the names activities had (and tests use).

// Error types of non-retryable application errors.
const (
	ErrInvalidInput = contract.ErrInvalidInput
	ErrUnhealthy    = contract.ErrUnhealthy
	ErrConfig       = contract.ErrConfig
	ErrLLM          = contract.ErrLLM
	ErrSearchFailed = contract.ErrSearchFailed
	ErrRateLimited  = contract.ErrRateLimited
)

type (
	ResolveConfigInput = contract.ResolveConfigInput
	HealthInput        = contract.HealthInput
	HealthResult       = contract.HealthResult
	BootstrapInput     = contract.BootstrapInput
	BootstrapResult    = contract.BootstrapResult
	ReadStateInput     = contract.ReadStateInput
	TaskInfo           = contract.TaskInfo
	ReadyTask          = contract.ReadyTask
	ReadStateResult    = contract.ReadStateResult
	StatusInput        = contract.StatusInput
	SyncSimilarInput   = contract.SyncSimilarInput
	SimilarParams      = contract.SimilarParams
	SyncSimilarResult  = contract.SyncSimilarResult
	FocusInput         = contract.FocusInput
	ExpandInput        = contract.ExpandInput
	Candidate          = contract.Candidate
	ExpandResult       = contract.ExpandResult
	ReasonInput        = contract.ReasonInput
	ReasonResult       = contract.ReasonResult
	ApplyInput         = contract.ApplyInput
	ToolCall           = contract.ToolCall
	ApplyOutput        = contract.ApplyOutput
	CheckQueryInput    = contract.CheckQueryInput
	CheckQueryResult   = contract.CheckQueryResult
	ObserveInput       = contract.ObserveInput
	Observation        = contract.Observation
	CollectInput       = contract.CollectInput
	SectionInfo        = contract.SectionInfo
	Source             = contract.Source
	CollectResult      = contract.CollectResult
	ComposeInput       = contract.ComposeInput
	ComposeResult      = contract.ComposeResult
	SummarizeInput     = contract.SummarizeInput
	VerifyInput        = contract.VerifyInput
	VerifyItem         = contract.VerifyItem
	VerifyVerdict      = contract.VerifyVerdict
	VerifyResult       = contract.VerifyResult
	FinalizeInput      = contract.FinalizeInput
	FinalizeResult     = contract.FinalizeResult
	DiscoverInput      = contract.DiscoverInput
	DiscoverResult     = contract.DiscoverResult
	FetchInput         = contract.FetchInput
	PageRef            = contract.PageRef
	FetchResult        = contract.FetchResult
	IngestInput        = contract.IngestInput
	IngestParams       = contract.IngestParams
	IngestResult       = contract.IngestResult
	ResearchInput      = contract.ResearchInput
	ResearchResult     = contract.ResearchResult
	TranscribeInput    = contract.TranscribeInput
	TranscribeResult   = contract.TranscribeResult
)

// SimilarOf is contract.SimilarOf.
func SimilarOf(c config.Algebra) SimilarParams { return contract.SimilarOf(c) }

// NLIParams is contract.NLIParams.
type NLIParams = contract.NLIParams

// SimilarFor is contract.SimilarFor.
func SimilarFor(c config.Config) SimilarParams { return contract.SimilarFor(c) }

// IngestParamsOf is contract.IngestParamsOf.
func IngestParamsOf(c config.Config) IngestParams { return contract.IngestParamsOf(c) }

// StrengthOf is contract.StrengthOf.
func StrengthOf(r config.Research) contract.StrengthParams { return contract.StrengthOf(r) }

// graphParams are p for graph.SyncSimilar, the defaults filling what an
// input from older workflow code lacks (a nil Refine is the default
// refinement in graph too).
func graphParams(p SimilarParams) graph.SimilarParams {
	p = orDefault(p, SimilarOf(config.Defaults().Algebra))
	gp := graph.SimilarParams{Threshold: p.Threshold, MaxPerNode: p.MaxPerNode, Refine: p.Refine,
		ExactMax: p.ExactMax, CascadeItems: p.CascadeItems}
	if p.NLI != nil {
		gp.NLIBatch, gp.MaxClassify = p.NLI.Batch, p.NLI.MaxPairs
	}
	return gp
}
