package contract

import (
	"time"

	"github.com/lethe-research/lethe/config"
)

// The Evaluation workflow's activity payloads (docs/eval.md).

// Eval is the evaluation's part of the parameter tree.
type Eval = config.Eval

// EvalQuestion is one question of an evaluation: the fields of
// eval/questions.Question, which converts to it and back.
type EvalQuestion struct {
	ID       string   `json:"id"`
	Question string   `json:"question"`
	Answer   string   `json:"answer"`
	Gold     []string `json:"gold"`
	Kind     string   `json:"kind"`
	Sources  []string `json:"sources"`
}

// EvalRecord is the score of one system on one question: a JSONL line of the
// output, and what the Evaluation workflow accumulates.
type EvalRecord struct {
	Index    int    `json:"index"` // position of the question in the evaluation
	Question string `json:"question_id"`
	Kind     string `json:"kind,omitempty"`
	System   string `json:"system"`
	Failed   bool   `json:"failed,omitempty"`
	Error    string `json:"error,omitempty"`
	Answer   string `json:"answer,omitempty"` // cut to eval.record_answer_chars
	// Correctness: gold containment (eval/questions: Contains) and the
	// judge's grade (0 or 1; 0.5 also in records of runs before the
	// two-question judge; JudgeError set when it could not grade).
	Contains bool `json:"contains"`
	// UnverifiedOnly: the gold answer is contained only in sentences
	// the session's citation check marked [unverified] (score.Verified),
	// that is, the model's guess flagged to the reader, not what it read.
	UnverifiedOnly bool `json:"unverified_only,omitempty"`
	// Backed: the gold answer is contained in the sentences whose
	// citations the evaluation's judge supports, by the same rule for
	// every system (the session's own check is lethe's alone).
	Backed      bool    `json:"contains_backed,omitempty"`
	Judge       float64 `json:"judge"`
	JudgeReason string  `json:"judge_reason,omitempty"`
	JudgeError  string  `json:"judge_error,omitempty"`
	JudgeQuote  string  `json:"judge_quote,omitempty"` // the response's sentences the judge graded
	// CitationError is the last answer of the entailment judge that gave
	// no verdict on a single claim (that claim is counted in Unjudged).
	CitationError string `json:"citation_error,omitempty"`
	// Citations: cited sentences and those the entailment check supports;
	// factual sentences and those that cite.
	Cited     int `json:"cited_sentences"`
	Supported int `json:"supported_sentences"`
	// Of the supported, those contained in their cited evidence (no judge
	// call); of the cited, those the judge gave no usable verdict on after
	// its batch was split down to the single claim (counted unsupported).
	Contained int `json:"contained_sentences,omitempty"`
	Unjudged  int `json:"unjudged_sentences,omitempty"`
	// Unsupported are the first cited sentences counted unsupported (at
	// most MaxUnsupportedShown, each cut to 300 characters), so that a
	// precision can be read back to the sentences behind it.
	Unsupported []string `json:"unsupported,omitempty"`
	Factual     int      `json:"factual_sentences"`
	Citing      int      `json:"factual_citing"`
	// EvidenceRecall is the share of gold strings in what the system read.
	EvidenceRecall float64 `json:"evidence_recall"`
	// Cost of the system under test (the judge's calls are not counted).
	Calls            int     `json:"llm_calls"`
	PromptTokens     int     `json:"prompt_tokens"`
	CompletionTokens int     `json:"completion_tokens"`
	Seconds          float64 `json:"seconds"`
	JudgeCalls       int     `json:"judge_calls,omitempty"`
}

// MaxUnsupportedShown bounds EvalRecord.Unsupported: records travel in the
// Evaluation workflow's history.
const MaxUnsupportedShown = 5

// NoteUnsupported keeps sentence among the record's unsupported examples.
func (r *EvalRecord) NoteUnsupported(sentence string) {
	if len(r.Unsupported) >= MaxUnsupportedShown {
		return
	}
	if rs := []rune(sentence); len(rs) > 300 {
		sentence = string(rs[:300]) + "…"
	}
	r.Unsupported = append(r.Unsupported, sentence)
}

// Precision is the record's citation precision (supported/cited).
func (r EvalRecord) Precision() float64 { return ratio(r.Supported, r.Cited) }

// CitationRecall is the record's citation recall (citing/factual).
func (r EvalRecord) CitationRecall() float64 { return ratio(r.Citing, r.Factual) }

// EvalSummary aggregates one system over the questions.
type EvalSummary struct {
	System         string  `json:"system"`
	Questions      int     `json:"questions"`
	Failed         int     `json:"failed"`
	Contains       float64 `json:"contains"`           // share of questions
	Verified       float64 `json:"contains_verified"`  // share of questions contained outside [unverified] sentences
	Backed         float64 `json:"contains_backed"`    // share of questions contained in sentences with a supported citation (EvalRecord.Backed)
	Judge          float64 `json:"judge"`              // mean grade
	Precision      float64 `json:"citation_precision"` // pooled: Σsupported/Σcited
	CitationRecall float64 `json:"citation_recall"`    // pooled: Σciting/Σfactual
	EvidenceRecall float64 `json:"evidence_recall"`    // mean
	Unjudged       int     `json:"unjudged_sentences"` // cited sentences the judge could not judge (Σ)
	Calls          int     `json:"llm_calls"`
	Tokens         int     `json:"tokens"`
	Minutes        float64 `json:"minutes"`
}

func ratio(num, den int) float64 {
	if den == 0 {
		return 0
	}
	return float64(num) / float64(den)
}

// BaselineInput runs one baseline system on one question. Everything the
// baseline decides with comes from the evaluation's recorded config.
type BaselineInput struct {
	EvalID   string `json:"eval_id"`
	Question string `json:"question"`
	QID      string `json:"qid"`
	Eval     Eval   `json:"eval"`
	// Schema and SchemaLoose hold the loop baseline's planning call to
	// din.PlanSchema as the session's seed plan is held (llm.json_schema,
	// llm.json_schema_loose).
	Schema      bool `json:"schema,omitempty"`
	SchemaLoose bool `json:"schema_loose,omitempty"`
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
	Eval      Eval         `json:"eval"`
	// The judge model, resolved by the workflow (eval.judge_model or
	// llm.model); its endpoint and key are the worker's alone.
	JudgeModel string `json:"judge_model,omitempty"`
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

// EvalInput starts an evaluation: the questions (inline, they are small),
// the systems, and the configuration every system runs with (the same
// model endpoint, corpus and limits; eval.* for the baselines and the
// judge). Without Config the worker resolves one from Params.
type EvalInput struct {
	Questions []EvalQuestion    `json:"questions"`
	Systems   []string          `json:"systems,omitempty"` // default: lethe, rag, loop
	Config    *Config           `json:"config,omitempty"`
	Params    map[string]string `json:"params,omitempty"`
	State     *EvalState        `json:"state,omitempty"` // carried by continue-as-new
}

// EvalState is what an evaluation carries across continue-as-new: the
// records so far, slim (answers and reasons live in the output directory).
type EvalState struct {
	StartedAt time.Time    `json:"started_at"`
	Records   []EvalRecord `json:"records,omitempty"`
	Runs      int          `json:"runs,omitempty"`
}

// EvalResult is the evaluation's result.
type EvalResult struct {
	EvalID    string        `json:"eval_id"`
	Dir       string        `json:"dir"`
	Table     string        `json:"table"`
	Summaries []EvalSummary `json:"summaries"`
	Failed    int           `json:"failed"` // records of a system that failed on a question
	// OutputsError is why the output files were not written (Dir is then
	// empty): the table and summaries above are computed by the workflow
	// from its records, so they are whole either way.
	OutputsError string `json:"outputs_error,omitempty"`
}

// EvalProgress is the answer of the evaluation's progress query.
type EvalProgress struct {
	EvalID    string         `json:"eval_id"`
	Phase     string         `json:"phase"`
	Questions int            `json:"questions"`
	Done      int            `json:"done"` // questions every system has a record for
	Running   []string       `json:"running,omitempty"`
	Runs      int            `json:"runs"`
	Systems   []SystemStatus `json:"systems"`
	// OutputsError is the last failure to write the outputs while the
	// evaluation waits for the retry-outputs signal.
	OutputsError string `json:"outputs_error,omitempty"`
}

// SystemStatus is one system's running totals.
type SystemStatus struct {
	System    string  `json:"system"`
	Records   int     `json:"records"`
	Failed    int     `json:"failed"`
	Contains  float64 `json:"contains"`          // share so far
	Verified  float64 `json:"contains_verified"` // share so far, outside [unverified] sentences (EvalSummary.Verified)
	Backed    float64 `json:"contains_backed"`   // share so far, in sentences with a supported citation (EvalSummary.Backed)
	Judge     float64 `json:"judge"`             // mean so far
	Cited     int     `json:"cited"`
	Supported int     `json:"supported"`
	Unjudged  int     `json:"unjudged"`
	Tokens    int     `json:"tokens"`
}
