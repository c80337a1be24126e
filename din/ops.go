package din

import (
	"fmt"
	"strconv"

	"github.com/lethe-research/lethe/contract"
)

// Op is one DIN-Write operation as the model wrote it (contract.Op: it
// travels in the ApplyOps input). Which fields an operation may carry is
// fixed by its type (see opSpecs); every other field must stay empty.
type Op = contract.Op

// Operation type names, in the order the protocol documents them.
const (
	OpCreate   = "create"
	OpUpdate   = "update"
	OpDepend   = "depend"
	OpComplete = "complete"
	OpFail     = "fail"
	OpContinue = "continue"
	OpEvidence = "evidence"
	OpCall     = "call"
)

// ToolWebSearch is the only tool the protocol knows today.
const ToolWebSearch = "web_search"

// OpTypes returns the eight operation type names in protocol order.
func OpTypes() []string {
	out := make([]string, len(opSpecs))
	for i, s := range opSpecs {
		out[i] = s.name
	}
	return out
}

// Tools returns the tool names a call op may use, sorted.
func Tools() []string { return []string{ToolWebSearch} }

// fieldKind says how a field is checked.
type fieldKind int

const (
	kText    fieldKind = iota // free text, MaxStringLen
	kEmbed                    // embed_text, MaxEmbedTextLen
	kNewID                    // create's id: a fresh short id
	kRef                      // a reference to an existing (or earlier created) task
	kRefList                  // depends_on
	kURL                      // evidence source: optional http(s) URL
	kTool                     // call's tool
	kArgs                     // call's args
)

type fieldSpec struct {
	name     string
	kind     fieldKind
	required bool
	doc      string // one-line description used by Schema and SystemPrompt
}

type opSpec struct {
	name   string
	doc    string
	fields []fieldSpec
}

// opSpecs is the single source of truth for the wire format: Parse, Validate,
// Schema and SystemPrompt all read it, so they cannot drift apart.
var opSpecs = []opSpec{
	{OpCreate, "create a new PENDING subtask", []fieldSpec{
		{"id", kNewID, true, "new short id: letters, digits, _ or -, at most 32 characters, not used before"},
		{"description", kText, true, "what the subtask must find out"},
		{"embed_text", kEmbed, true, "one or two plain sentences stating the subtask's topic, for semantic search"},
		{"parent", kRef, false, "short id of the parent task; leave it out (or null) to make a subtask of the task you are working on"},
		{"depends_on", kRefList, false, "short ids of tasks that must be DONE before this one starts (optional)"},
	}},
	{OpUpdate, "revise the description of a PENDING or ACTIVE task", []fieldSpec{
		{"task", kRef, true, "short id of the task"},
		{"description", kText, true, "the new description"},
		{"embed_text", kEmbed, true, "one or two plain sentences stating the revised topic"},
	}},
	{OpDepend, "make a task wait until another one is DONE", []fieldSpec{
		{"task", kRef, true, "short id of the waiting task"},
		{"on", kRef, true, "short id of the task it waits for"},
	}},
	{OpComplete, "mark a task DONE with its result (again on a DONE task: revise the result)", []fieldSpec{
		{"task", kRef, true, "short id of the task"},
		{"result", kText, true, "the answer to the task, synthesized from the evidence, with source URLs"},
		{"embed_text", kEmbed, true, "one or two plain sentences summarizing the result"},
	}},
	{OpFail, "mark a task FAILED: a dead end that nobody should repeat", []fieldSpec{
		{"task", kRef, true, "short id of the task"},
		{"reason", kText, true, "why it is a dead end"},
	}},
	{OpContinue, "keep a task open for a later turn (back to PENDING)", []fieldSpec{
		{"task", kRef, true, "short id of the task"},
	}},
	{OpEvidence, "record a finding you derived from the context", []fieldSpec{
		{"task", kRef, true, "short id of the task it supports"},
		{"content", kText, true, "the finding, self-contained"},
		{"embed_text", kEmbed, true, "one or two plain sentences stating the finding"},
		{"source", kURL, false, "http(s) URL the finding comes from; leave it out (or null) when there is none"},
	}},
	{OpCall, "call a tool for a task; it runs after your operations are applied", []fieldSpec{
		{"task", kRef, true, "short id of the task the call serves"},
		{"tool", kTool, true, "tool name: web_search"},
		{"args", kArgs, true, `tool arguments; web_search takes {"query": "..."}`},
	}},
}

// allFields lists every field name an op may have, in wire order.
var allFields = []string{"op", "id", "task", "description", "embed_text", "parent",
	"depends_on", "on", "result", "reason", "content", "source", "tool", "args"}

func specOf(op string) (opSpec, bool) {
	for _, s := range opSpecs {
		if s.name == op {
			return s, true
		}
	}
	return opSpec{}, false
}

func (s opSpec) field(name string) (fieldSpec, bool) {
	for _, f := range s.fields {
		if f.name == name {
			return f, true
		}
	}
	return fieldSpec{}, false
}

func isField(name string) bool {
	for _, f := range allFields {
		if f == name {
			return true
		}
	}
	return false
}

// str returns the value of a string field by wire name.
func str(o *Op, name string) string {
	switch name {
	case "op":
		return o.Op
	case "id":
		return o.ID
	case "task":
		return o.Task
	case "description":
		return o.Description
	case "embed_text":
		return o.EmbedText
	case "parent":
		return o.Parent
	case "on":
		return o.On
	case "result":
		return o.Result
	case "reason":
		return o.Reason
	case "content":
		return o.Content
	case "source":
		return o.Source
	case "tool":
		return o.Tool
	}
	return ""
}

// setStr sets a string field by wire name (used by the decoder).
func setStr(o *Op, name, v string) {
	switch name {
	case "op":
		o.Op = v
	case "id":
		o.ID = v
	case "task":
		o.Task = v
	case "description":
		o.Description = v
	case "embed_text":
		o.EmbedText = v
	case "parent":
		o.Parent = v
	case "on":
		o.On = v
	case "result":
		o.Result = v
	case "reason":
		o.Reason = v
	case "content":
		o.Content = v
	case "source":
		o.Source = v
	case "tool":
		o.Tool = v
	}
}

// isSet reports whether a field by wire name holds a value.
func isSet(o *Op, name string) bool {
	switch name {
	case "depends_on":
		return len(o.DependsOn) > 0
	case "args":
		return len(o.Args) > 0
	}
	return str(o, name) != ""
}

// Limits bounds what one answer may contain. A zero or negative field means
// "use the default", so a partially filled Limits (e.g. from an older config)
// never turns into "nothing is allowed".
type Limits struct {
	MaxOps          int // operations per answer
	MaxStringLen    int // characters (runes) of description, result, reason, content, source
	MaxEmbedTextLen int // characters of embed_text: it only needs to carry the topic
	MaxQueryLen     int // characters of a web_search query
}

// DefaultLimits returns the limits used when the config says nothing. MaxOps
// and MaxStringLen match config's din.max_ops and din.max_string_chars.
func DefaultLimits() Limits {
	return Limits{MaxOps: 32, MaxStringLen: 8000, MaxEmbedTextLen: 2000, MaxQueryLen: 400}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxOps <= 0 {
		l.MaxOps = d.MaxOps
	}
	if l.MaxStringLen <= 0 {
		l.MaxStringLen = d.MaxStringLen
	}
	if l.MaxEmbedTextLen <= 0 {
		l.MaxEmbedTextLen = d.MaxEmbedTextLen
	}
	if l.MaxQueryLen <= 0 {
		l.MaxQueryLen = d.MaxQueryLen
	}
	return l
}

// Error codes: stable identifiers of each kind of problem, for tests and
// metrics. The message (Msg) is what the model reads.
const (
	CodeNoJSON        = "no_json"        // no JSON object in the answer
	CodeBadJSON       = "bad_json"       // an object was found but is not valid JSON, or is cut off
	CodeNoOps         = "no_ops"         // the object has no "ops" key
	CodeOpsNotArray   = "ops_not_array"  // "ops" is not an array
	CodeTopField      = "top_field"      // a key other than "ops" at the top level
	CodeTooManyOps    = "too_many_ops"   // more than MaxOps operations
	CodeNotObject     = "not_object"     // an element of ops is not an object
	CodeUnknownOp     = "unknown_op"     // op type is not one of the eight
	CodeUnknownField  = "unknown_field"  // a field that is not part of this op type
	CodeType          = "wrong_type"     // a field has the wrong JSON type
	CodeMissing       = "missing"        // a required field is absent
	CodeEmpty         = "empty"          // a string is empty or whitespace only
	CodeTooLong       = "too_long"       // a string exceeds its limit
	CodeBadID         = "bad_id"         // a new id does not match [A-Za-z0-9_-]{1,32}
	CodeIDExists      = "id_exists"      // a new id is already a task of the session
	CodeDuplicateID   = "duplicate_id"   // a new id is created twice in one answer
	CodeUnknownID     = "unknown_id"     // a reference to a task that does not exist
	CodeFailedTarget  = "failed_target"  // a reference to a FAILED task
	CodeDoneTarget    = "done_target"    // update, fail or continue on a DONE task
	CodeRootGoal      = "root_goal"      // update or fail on the root goal
	CodeSelfReference = "self_reference" // depend on itself, own parent, own dependency
	CodeDuplicateRef  = "duplicate_ref"  // depends_on lists a task twice
	CodeUnknownTool   = "unknown_tool"   // call with a tool that does not exist
	CodeMissingQuery  = "missing_query"  // web_search without a query
	CodeUnknownArg    = "unknown_arg"    // a tool argument the tool does not take
	CodeBadSource     = "bad_source"     // evidence source is not an http(s) URL (or corpus:/// address)
	CodeOpenSubtasks  = "open_subtasks"  // complete on a task the answer also gives open subtasks
	CodeCut           = "cut"            // the answer reached the output limit before it ended
)

// Error is one problem with an answer. Index is the position of the op in
// the "ops" array, or -1 when the problem concerns the whole answer. Field is
// the wire name of the field at fault ("depends_on[1]", "args.query"), empty
// when the op as a whole is at fault.
type Error struct {
	Index int
	Op    string
	Field string
	Msg   string
	Code  string // one of the Code* constants
}

// String renders the error the way the repair prompt shows it to the model:
// the JSON path first, so the model can find the spot, then the message.
func (e Error) String() string {
	if e.Index < 0 {
		return "answer: " + e.Msg
	}
	s := "ops[" + strconv.Itoa(e.Index) + "]"
	if e.Op != "" {
		s += " (" + e.Op + ")"
	}
	if e.Field != "" {
		s += " field " + e.Field
	}
	return s + ": " + e.Msg
}

// Error makes Error usable as a Go error.
func (e Error) Error() string { return e.String() }

func errf(index int, op, field, code, format string, args ...any) Error {
	return Error{Index: index, Op: op, Field: field, Code: code, Msg: fmt.Sprintf(format, args...)}
}
