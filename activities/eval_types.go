package activities

import (
	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/eval/questions"
	"github.com/lethe-research/lethe/eval/score"
)

// EvalQuestion is one question of an evaluation (the question set's type).
type EvalQuestion = questions.Question

// EvalRecord is the score of one system on one question.
type EvalRecord = score.Record

// EvalSummary aggregates one system over an evaluation.
type EvalSummary = score.Summary

// BaselineInput runs one baseline system on one question. Everything the
// baseline decides with comes from the evaluation's recorded config.
type BaselineInput struct {
	EvalID   string      `json:"eval_id"`
	Question string      `json:"question"`
	QID      string      `json:"qid"`
	Eval     config.Eval `json:"eval"`
}

// SystemAnswer is what a baseline answered and what it read: the numbered
// sources (source n is Sources[n-1]; bounded by k × eval.chunk_chars) and
// its cost.
type SystemAnswer struct {
	Answer           string   `json:"answer"`
	Sources          []string `json:"sources"`
	Queries          []string `json:"queries,omitempty"`
	Calls            int      `json:"calls"`
	PromptTokens     int      `json:"prompt_tokens"`
	CompletionTokens int      `json:"completion_tokens"`
	Seconds          float64  `json:"seconds"`
}

// ScoreInput scores one system's answer to one question. A lethe answer
// names its session (whose evidence the activity reads from the graph
// store) and its numbered source list; a baseline answer carries the texts
// it read.
type ScoreInput struct {
	EvalID    string       `json:"eval_id"`
	Index     int          `json:"index"`
	Question  EvalQuestion `json:"question"`
	System    string       `json:"system"`
	SessionID string       `json:"session_id,omitempty"`
	Sources   []Source     `json:"sources,omitempty"`
	Answer    SystemAnswer `json:"answer"`
	Eval      config.Eval  `json:"eval"`
	// The judge endpoint, resolved by the workflow (eval.judge_* or the
	// session's llm.*).
	JudgeBaseURL string `json:"judge_base_url"`
	JudgeModel   string `json:"judge_model,omitempty"`
}

// EvalOutputsInput writes an evaluation's outputs.
type EvalOutputsInput struct {
	EvalID  string       `json:"eval_id"`
	Systems []string     `json:"systems"`
	Records []EvalRecord `json:"records"`
	OutDir  string       `json:"out_dir"`
}

// EvalOutputsResult says where the outputs are, with the summary rows.
type EvalOutputsResult struct {
	Dir       string        `json:"dir"`
	Summaries []EvalSummary `json:"summaries"`
	Table     string        `json:"table"` // the per-system table (the per-question rows are in the file)
}
