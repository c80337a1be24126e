package din

import (
	"reflect"
	"strings"
	"testing"

	"github.com/lethe-research/lethe/graph"
)

// testKnown is the session used by the tests: the root, a PENDING, an
// ACTIVE, a DONE and a FAILED task.
func testKnown() Known {
	return Known{Status: map[string]graph.Status{
		"root": graph.Active,
		"t1":   graph.Pending,
		"t2":   graph.Active,
		"t3":   graph.Done,
		"t4":   graph.Failed,
	}, Active: "root"}
}

func TestParseValidOps(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []Op
	}{
		{"empty ops list", `{"ops":[]}`, []Op{}},
		{"create minimal", `{"ops":[{"op":"create","id":"t5","description":"d","embed_text":"e"}]}`,
			[]Op{{Op: "create", ID: "t5", Description: "d", EmbedText: "e"}}},
		{"create with parent and depends_on", `{"ops":[{"op":"create","id":"new-task_X","description":"d","embed_text":"e","parent":"t1","depends_on":["t2","t3"]}]}`,
			[]Op{{Op: "create", ID: "new-task_X", Description: "d", EmbedText: "e", Parent: "t1", DependsOn: []string{"t2", "t3"}}}},
		{"create with null optionals (strict schema output)", `{"ops":[{"op":"create","id":"t5","description":"d","embed_text":"e","parent":null,"depends_on":null}]}`,
			[]Op{{Op: "create", ID: "t5", Description: "d", EmbedText: "e"}}},
		{"create under a DONE parent", `{"ops":[{"op":"create","id":"t5","description":"d","embed_text":"e","parent":"t3"}]}`,
			[]Op{{Op: "create", ID: "t5", Description: "d", EmbedText: "e", Parent: "t3"}}},
		{"update pending", `{"ops":[{"op":"update","task":"t1","description":"d2","embed_text":"e2"}]}`,
			[]Op{{Op: "update", Task: "t1", Description: "d2", EmbedText: "e2"}}},
		{"update active", `{"ops":[{"op":"update","task":"t2","description":"d2","embed_text":"e2"}]}`,
			[]Op{{Op: "update", Task: "t2", Description: "d2", EmbedText: "e2"}}},
		{"depend", `{"ops":[{"op":"depend","task":"t1","on":"t2"}]}`,
			[]Op{{Op: "depend", Task: "t1", On: "t2"}}},
		{"depend on DONE", `{"ops":[{"op":"depend","task":"t1","on":"t3"}]}`,
			[]Op{{Op: "depend", Task: "t1", On: "t3"}}},
		{"complete", `{"ops":[{"op":"complete","task":"t2","result":"r","embed_text":"e"}]}`,
			[]Op{{Op: "complete", Task: "t2", Result: "r", EmbedText: "e"}}},
		{"complete DONE revises the result", `{"ops":[{"op":"complete","task":"t3","result":"r2","embed_text":"e"}]}`,
			[]Op{{Op: "complete", Task: "t3", Result: "r2", EmbedText: "e"}}},
		{"complete root", `{"ops":[{"op":"complete","task":"root","result":"answer","embed_text":"e"}]}`,
			[]Op{{Op: "complete", Task: "root", Result: "answer", EmbedText: "e"}}},
		{"fail", `{"ops":[{"op":"fail","task":"t1","reason":"no data"}]}`,
			[]Op{{Op: "fail", Task: "t1", Reason: "no data"}}},
		{"continue", `{"ops":[{"op":"continue","task":"t2"}]}`,
			[]Op{{Op: "continue", Task: "t2"}}},
		{"continue root", `{"ops":[{"op":"continue","task":"root"}]}`,
			[]Op{{Op: "continue", Task: "root"}}},
		{"evidence without source", `{"ops":[{"op":"evidence","task":"t2","content":"c","embed_text":"e"}]}`,
			[]Op{{Op: "evidence", Task: "t2", Content: "c", EmbedText: "e"}}},
		{"blank optionals count as absent", `{"ops":[{"op":"evidence","task":"t2","content":"c","embed_text":"e","source":" "},{"op":"create","id":"t5","description":"d","embed_text":"e","parent":"","depends_on":[]}]}`,
			[]Op{{Op: "evidence", Task: "t2", Content: "c", EmbedText: "e"}, {Op: "create", ID: "t5", Description: "d", EmbedText: "e", DependsOn: []string{}}}},
		{"evidence with source", `{"ops":[{"op":"evidence","task":"t3","content":"c","embed_text":"e","source":"https://example.org/a?b=c"}]}`,
			[]Op{{Op: "evidence", Task: "t3", Content: "c", EmbedText: "e", Source: "https://example.org/a?b=c"}}},
		{"call web_search", `{"ops":[{"op":"call","task":"t2","tool":"web_search","args":{"query":"solid state battery"}}]}`,
			[]Op{{Op: "call", Task: "t2", Tool: "web_search", Args: map[string]string{"query": "solid state battery"}}}},
		{"ops reference ids created earlier", `{"ops":[
			{"op":"create","id":"a","description":"d","embed_text":"e"},
			{"op":"create","id":"b","description":"d","embed_text":"e","parent":"a","depends_on":["a"]},
			{"op":"depend","task":"b","on":"a"},
			{"op":"call","task":"a","tool":"web_search","args":{"query":"q"}},
			{"op":"evidence","task":"b","content":"c","embed_text":"e"},
			{"op":"complete","task":"b","result":"r","embed_text":"e"},
			{"op":"continue","task":"a"}]}`,
			[]Op{
				{Op: "create", ID: "a", Description: "d", EmbedText: "e"},
				{Op: "create", ID: "b", Description: "d", EmbedText: "e", Parent: "a", DependsOn: []string{"a"}},
				{Op: "depend", Task: "b", On: "a"},
				{Op: "call", Task: "a", Tool: "web_search", Args: map[string]string{"query": "q"}},
				{Op: "evidence", Task: "b", Content: "c", EmbedText: "e"},
				{Op: "complete", Task: "b", Result: "r", EmbedText: "e"},
				{Op: "continue", Task: "a"},
			}},
		{"complete a task whose new subtasks the answer closes", `{"ops":[
			{"op":"create","id":"x","description":"d","embed_text":"e","parent":"t1"},
			{"op":"create","id":"y","description":"d","embed_text":"e","parent":"t1"},
			{"op":"complete","task":"x","result":"r","embed_text":"e"},
			{"op":"fail","task":"y","reason":"r"},
			{"op":"complete","task":"t1","result":"r","embed_text":"e"}]}`,
			[]Op{
				{Op: "create", ID: "x", Description: "d", EmbedText: "e", Parent: "t1"},
				{Op: "create", ID: "y", Description: "d", EmbedText: "e", Parent: "t1"},
				{Op: "complete", Task: "x", Result: "r", EmbedText: "e"},
				{Op: "fail", Task: "y", Reason: "r"},
				{Op: "complete", Task: "t1", Result: "r", EmbedText: "e"},
			}},
		{"complete the active task, subtasks planned elsewhere", `{"ops":[{"op":"create","id":"x","description":"d","embed_text":"e","parent":"t1"},{"op":"complete","task":"root","result":"r","embed_text":"e"}]}`,
			[]Op{{Op: "create", ID: "x", Description: "d", EmbedText: "e", Parent: "t1"}, {Op: "complete", Task: "root", Result: "r", EmbedText: "e"}}},
		{"dependencies on the root are dropped, the rest stands", `{"ops":[
			{"op":"create","id":"x","description":"d","embed_text":"e","depends_on":["t1","root"]},
			{"op":"create","id":"y","description":"d","embed_text":"e","depends_on":["root"]},
			{"op":"depend","task":"t1","on":"root"},
			{"op":"depend","task":"root","on":"t1"},
			{"op":"call","task":"x","tool":"web_search","args":{"query":"q"}}]}`,
			[]Op{
				{Op: "create", ID: "x", Description: "d", EmbedText: "e", DependsOn: []string{"t1"}},
				{Op: "create", ID: "y", Description: "d", EmbedText: "e", DependsOn: []string{}},
				{Op: "depend", Task: "root", On: "t1"},
				{Op: "call", Task: "x", Tool: "web_search", Args: map[string]string{"query": "q"}},
			}},
		{"complete twice", `{"ops":[{"op":"complete","task":"t1","result":"r","embed_text":"e"},{"op":"complete","task":"t1","result":"r2","embed_text":"e"}]}`,
			[]Op{{Op: "complete", Task: "t1", Result: "r", EmbedText: "e"}, {Op: "complete", Task: "t1", Result: "r2", EmbedText: "e"}}},
		{"unicode and escapes", `{"ops":[{"op":"evidence","task":"t2","content":"Zürich \"quoted\" {brace} \u00e9","embed_text":"日本語"}]}`,
			[]Op{{Op: "evidence", Task: "t2", Content: `Zürich "quoted" {brace} é`, EmbedText: "日本語"}}},
		{"wrapped in think, fence and prose", "<think>Let me plan {\"ops\": 1}</think>\nHere you go:\n```json\n{\"ops\":[{\"op\":\"continue\",\"task\":\"t1\"}]}\n```\nDone.",
			[]Op{{Op: "continue", Task: "t1"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, errs := Parse(tt.in, testKnown(), DefaultLimits())
			if len(errs) > 0 {
				t.Fatalf("unexpected errors: %v", errs)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("ops\n got %#v\nwant %#v", got, tt.want)
			}
			if errs := Validate(got, testKnown(), DefaultLimits()); len(errs) > 0 {
				t.Fatalf("parsed ops do not validate: %v", errs)
			}
		})
	}
}

// want is one expected error: op index, field and code.
type want struct {
	index int
	field string
	code  string
}

func errKeys(errs []Error) []want {
	out := make([]want, len(errs))
	for i, e := range errs {
		out[i] = want{e.Index, e.Field, e.Code}
	}
	return out
}

func TestParseErrors(t *testing.T) {
	long := strings.Repeat("x", 101)
	tests := []struct {
		name string
		in   string
		lim  Limits
		want []want
		msg  string // substring of the first error's message
	}{
		{"no JSON at all", "I think the answer is forty-two.", Limits{},
			[]want{{-1, "", CodeNoJSON}}, "no JSON object"},
		{"empty answer", "", Limits{}, []want{{-1, "", CodeNoJSON}}, "no JSON object"},
		{"cut off", `{"ops":[{"op":"continue","task":"t1"}`, Limits{},
			[]want{{-1, "", CodeBadJSON}}, "not closed"},
		{"invalid JSON (trailing comma)", `{"ops":[{"op":"continue","task":"t1"},]}`, Limits{},
			[]want{{-1, "", CodeBadJSON}}, "not valid JSON"},
		{"object without ops", `{"operations":[]}`, Limits{},
			[]want{{-1, "", CodeTopField}, {-1, "", CodeNoOps}}, `unexpected top-level key "operations"`},
		{"ops not an array", `{"ops":{"op":"continue","task":"t1"}}`, Limits{},
			[]want{{-1, "", CodeOpsNotArray}}, "must be an array"},
		{"ops null", `{"ops":null}`, Limits{}, []want{{-1, "", CodeOpsNotArray}}, "must be an array"},
		{"extra top-level key", `{"ops":[],"thoughts":"x"}`, Limits{},
			[]want{{-1, "", CodeTopField}}, `"thoughts"`},
		{"too many ops", `{"ops":[{"op":"continue","task":"t1"},{"op":"continue","task":"t2"},{"op":"continue","task":"root"}]}`,
			Limits{MaxOps: 2}, []want{{-1, "", CodeTooManyOps}}, "at most 2"},
		{"op not an object", `{"ops":["create"]}`, Limits{}, []want{{0, "", CodeNotObject}}, "must be an object"},
		{"missing op", `{"ops":[{"task":"t1"}]}`, Limits{}, []want{{0, "op", CodeMissing}}, `missing "op"`},
		{"op not a string", `{"ops":[{"op":3}]}`, Limits{}, []want{{0, "op", CodeType}}, "must be a string"},
		{"unknown op", `{"ops":[{"op":"delete","task":"t1"}]}`, Limits{}, []want{{0, "op", CodeUnknownOp}}, `unknown op "delete"`},
		{"unknown op, wrong case", `{"ops":[{"op":"Create","id":"x","description":"d","embed_text":"e"}]}`, Limits{},
			[]want{{0, "op", CodeUnknownOp}}, "unknown op"},
		{"unknown field", `{"ops":[{"op":"continue","task":"t1","priority":"high"}]}`, Limits{},
			[]want{{0, "priority", CodeUnknownField}}, `unknown field "priority"`},
		{"field of another op type", `{"ops":[{"op":"continue","task":"t1","result":"r"}]}`, Limits{},
			[]want{{0, "result", CodeUnknownField}}, `"result" is not a field of a continue op`},
		{"field name in wrong case", `{"ops":[{"op":"continue","Task":"t1"}]}`, Limits{},
			[]want{{0, "Task", CodeUnknownField}, {0, "task", CodeMissing}}, `unknown field "Task"`},
		{"string field with number", `{"ops":[{"op":"fail","task":"t1","reason":7}]}`, Limits{},
			[]want{{0, "reason", CodeType}}, "must be a string"},
		{"depends_on not an array", `{"ops":[{"op":"create","id":"x","description":"d","embed_text":"e","depends_on":"t1"}]}`, Limits{},
			[]want{{0, "depends_on", CodeType}}, "array of short ids"},
		{"args not an object", `{"ops":[{"op":"call","task":"t1","tool":"web_search","args":"q"}]}`, Limits{},
			[]want{{0, "args", CodeType}}, "must be an object"},
		{"args value not a string", `{"ops":[{"op":"call","task":"t1","tool":"web_search","args":{"query":["a"]}}]}`, Limits{},
			[]want{{0, "args.query", CodeType}}, "must be a string"},
		{"missing required fields", `{"ops":[{"op":"create","id":"x"}]}`, Limits{},
			[]want{{0, "description", CodeMissing}, {0, "embed_text", CodeMissing}}, `missing required field "description"`},
		{"missing task", `{"ops":[{"op":"continue"}]}`, Limits{}, []want{{0, "task", CodeMissing}}, `"task"`},
		{"missing args", `{"ops":[{"op":"call","task":"t1","tool":"web_search"}]}`, Limits{}, []want{{0, "args", CodeMissing}}, `"args"`},
		{"null required field is missing", `{"ops":[{"op":"fail","task":"t1","reason":null}]}`, Limits{},
			[]want{{0, "reason", CodeMissing}}, `"reason"`},
		{"empty string", `{"ops":[{"op":"fail","task":"t1","reason":""}]}`, Limits{}, []want{{0, "reason", CodeEmpty}}, "is empty"},
		{"whitespace-only string", `{"ops":[{"op":"update","task":"t1","description":" \n\t","embed_text":"e"}]}`, Limits{},
			[]want{{0, "description", CodeEmpty}}, "is empty"},
		{"empty reference", `{"ops":[{"op":"continue","task":" "}]}`, Limits{}, []want{{0, "task", CodeEmpty}}, "is empty"},
		{"empty new id", `{"ops":[{"op":"create","id":"","description":"d","embed_text":"e"}]}`, Limits{},
			[]want{{0, "id", CodeEmpty}}, "is empty"},
		{"string too long", `{"ops":[{"op":"fail","task":"t1","reason":"` + long + `"}]}`, Limits{MaxStringLen: 100},
			[]want{{0, "reason", CodeTooLong}}, "has 101 characters, at most 100"},
		{"embed_text too long", `{"ops":[{"op":"complete","task":"t1","result":"r","embed_text":"` + long + `"}]}`, Limits{MaxEmbedTextLen: 100},
			[]want{{0, "embed_text", CodeTooLong}}, "at most 100"},
		{"limit counts characters, not bytes", `{"ops":[{"op":"fail","task":"t1","reason":"` + strings.Repeat("é", 100) + `"}]}`, Limits{MaxStringLen: 100},
			nil, ""},
		{"query too long", `{"ops":[{"op":"call","task":"t1","tool":"web_search","args":{"query":"` + long + `"}}]}`, Limits{MaxQueryLen: 100},
			[]want{{0, "args.query", CodeTooLong}}, "at most 100"},
		{"invalid new id", `{"ops":[{"op":"create","id":"my task","description":"d","embed_text":"e"}]}`, Limits{},
			[]want{{0, "id", CodeBadID}}, "not a valid short id"},
		{"new id too long", `{"ops":[{"op":"create","id":"` + strings.Repeat("a", 33) + `","description":"d","embed_text":"e"}]}`, Limits{},
			[]want{{0, "id", CodeBadID}}, "at most 32"},
		{"create id collides with existing", `{"ops":[{"op":"create","id":"t1","description":"d","embed_text":"e"}]}`, Limits{},
			[]want{{0, "id", CodeIDExists}}, "already names an existing task"},
		{"create id collides with root", `{"ops":[{"op":"create","id":"root","description":"d","embed_text":"e"}]}`, Limits{},
			[]want{{0, "id", CodeIDExists}}, "existing task"},
		{"create id collides with FAILED task", `{"ops":[{"op":"create","id":"t4","description":"d","embed_text":"e"}]}`, Limits{},
			[]want{{0, "id", CodeIDExists}}, "existing task"},
		{"duplicate new id", `{"ops":[{"op":"create","id":"x","description":"d","embed_text":"e"},{"op":"create","id":"x","description":"d2","embed_text":"e2"}]}`, Limits{},
			[]want{{1, "id", CodeDuplicateID}}, "created twice"},
		{"unknown task id", `{"ops":[{"op":"continue","task":"t9"}]}`, Limits{}, []want{{0, "task", CodeUnknownID}}, `unknown task id "t9"`},
		{"unknown id with brackets gets a hint", `{"ops":[{"op":"continue","task":"[t1]"}]}`, Limits{},
			[]want{{0, "task", CodeUnknownID}}, `did you mean "t1"?`},
		{"unknown id in other case gets a hint", `{"ops":[{"op":"continue","task":"T1"}]}`, Limits{},
			[]want{{0, "task", CodeUnknownID}}, `did you mean "t1"?`},
		{"id created later is unknown", `{"ops":[{"op":"continue","task":"x"},{"op":"create","id":"x","description":"d","embed_text":"e"}]}`, Limits{},
			[]want{{0, "task", CodeUnknownID}}, "unknown task id"},
		{"unknown parent", `{"ops":[{"op":"create","id":"x","description":"d","embed_text":"e","parent":"nope"}]}`, Limits{},
			[]want{{0, "parent", CodeUnknownID}}, "unknown task id"},
		{"unknown dependency", `{"ops":[{"op":"create","id":"x","description":"d","embed_text":"e","depends_on":["t1","nope"]}]}`, Limits{},
			[]want{{0, "depends_on[1]", CodeUnknownID}}, "unknown task id"},
		{"unknown depend on", `{"ops":[{"op":"depend","task":"t1","on":"nope"}]}`, Limits{}, []want{{0, "on", CodeUnknownID}}, "unknown task id"},
		{"update FAILED", `{"ops":[{"op":"update","task":"t4","description":"d","embed_text":"e"}]}`, Limits{},
			[]want{{0, "task", CodeFailedTarget}}, "is FAILED"},
		{"depend task FAILED", `{"ops":[{"op":"depend","task":"t4","on":"t1"}]}`, Limits{}, []want{{0, "task", CodeFailedTarget}}, "FAILED"},
		{"depend on FAILED", `{"ops":[{"op":"depend","task":"t1","on":"t4"}]}`, Limits{}, []want{{0, "on", CodeFailedTarget}}, "FAILED"},
		{"complete FAILED", `{"ops":[{"op":"complete","task":"t4","result":"r","embed_text":"e"}]}`, Limits{},
			[]want{{0, "task", CodeFailedTarget}}, "FAILED"},
		{"fail FAILED", `{"ops":[{"op":"fail","task":"t4","reason":"r"}]}`, Limits{}, []want{{0, "task", CodeFailedTarget}}, "FAILED"},
		{"continue FAILED", `{"ops":[{"op":"continue","task":"t4"}]}`, Limits{}, []want{{0, "task", CodeFailedTarget}}, "FAILED"},
		{"evidence FAILED", `{"ops":[{"op":"evidence","task":"t4","content":"c","embed_text":"e"}]}`, Limits{},
			[]want{{0, "task", CodeFailedTarget}}, "FAILED"},
		{"call FAILED", `{"ops":[{"op":"call","task":"t4","tool":"web_search","args":{"query":"q"}}]}`, Limits{},
			[]want{{0, "task", CodeFailedTarget}}, "FAILED"},
		{"create under FAILED parent", `{"ops":[{"op":"create","id":"x","description":"d","embed_text":"e","parent":"t4"}]}`, Limits{},
			[]want{{0, "parent", CodeFailedTarget}}, "FAILED"},
		{"create depending on FAILED", `{"ops":[{"op":"create","id":"x","description":"d","embed_text":"e","depends_on":["t4"]}]}`, Limits{},
			[]want{{0, "depends_on[0]", CodeFailedTarget}}, "FAILED"},
		{"target failed earlier in the same answer", `{"ops":[{"op":"fail","task":"t1","reason":"r"},{"op":"call","task":"t1","tool":"web_search","args":{"query":"q"}}]}`, Limits{},
			[]want{{1, "task", CodeFailedTarget}}, "FAILED"},
		{"fail DONE", `{"ops":[{"op":"fail","task":"t3","reason":"r"}]}`, Limits{}, []want{{0, "task", CodeDoneTarget}}, "is DONE"},
		{"fail after complete in the same answer", `{"ops":[{"op":"complete","task":"t1","result":"r","embed_text":"e"},{"op":"fail","task":"t1","reason":"r"}]}`, Limits{},
			[]want{{1, "task", CodeDoneTarget}}, "is DONE"},
		{"update DONE", `{"ops":[{"op":"update","task":"t3","description":"d","embed_text":"e"}]}`, Limits{},
			[]want{{0, "task", CodeDoneTarget}}, "is DONE"},
		{"continue DONE", `{"ops":[{"op":"continue","task":"t3"}]}`, Limits{}, []want{{0, "task", CodeDoneTarget}}, "reopened"},
		{"update root", `{"ops":[{"op":"update","task":"root","description":"d","embed_text":"e"}]}`, Limits{},
			[]want{{0, "task", CodeRootGoal}}, "cannot be rewritten"},
		{"fail root", `{"ops":[{"op":"fail","task":"root","reason":"r"}]}`, Limits{}, []want{{0, "task", CodeRootGoal}}, "cannot be failed"},
		{"complete a task the answer plans subtasks under", `{"ops":[{"op":"create","id":"x","description":"d","embed_text":"e","parent":"t1"},{"op":"complete","task":"t1","result":"r","embed_text":"e"}]}`, Limits{},
			[]want{{1, "task", CodeOpenSubtasks}}, `creates subtasks of "t1" (x)`},
		{"complete the active task after creating subtasks without a parent", `{"ops":[{"op":"create","id":"x","description":"d","embed_text":"e"},{"op":"create","id":"y","description":"d","embed_text":"e","depends_on":["x"]},{"op":"complete","task":"root","result":"r","embed_text":"e"}]}`, Limits{},
			[]want{{2, "task", CodeOpenSubtasks}}, `creates subtasks of "root" (x, y)`},
		{"complete before creating the subtask", `{"ops":[{"op":"complete","task":"t1","result":"r","embed_text":"e"},{"op":"create","id":"x","description":"d","embed_text":"e","parent":"t1"}]}`, Limits{},
			[]want{{0, "task", CodeOpenSubtasks}}, "drop the complete"},
		{"self-dependency", `{"ops":[{"op":"depend","task":"t1","on":"t1"}]}`, Limits{}, []want{{0, "on", CodeSelfReference}}, "depend on itself"},
		{"own parent", `{"ops":[{"op":"create","id":"x","description":"d","embed_text":"e","parent":"x"}]}`, Limits{},
			[]want{{0, "parent", CodeSelfReference}}, "own parent"},
		{"own dependency", `{"ops":[{"op":"create","id":"x","description":"d","embed_text":"e","depends_on":["x"]}]}`, Limits{},
			[]want{{0, "depends_on[0]", CodeSelfReference}}, "depend on itself"},
		{"duplicate dependency", `{"ops":[{"op":"create","id":"x","description":"d","embed_text":"e","depends_on":["t1","t1"]}]}`, Limits{},
			[]want{{0, "depends_on[1]", CodeDuplicateRef}}, "listed twice"},
		{"unknown tool", `{"ops":[{"op":"call","task":"t1","tool":"browse","args":{"url":"x"}}]}`, Limits{},
			[]want{{0, "tool", CodeUnknownTool}}, `unknown tool "browse"`},
		{"web_search without query", `{"ops":[{"op":"call","task":"t1","tool":"web_search","args":{}}]}`, Limits{},
			[]want{{0, "args.query", CodeMissingQuery}}, "needs a non-empty query"},
		{"web_search with blank query", `{"ops":[{"op":"call","task":"t1","tool":"web_search","args":{"query":"  "}}]}`, Limits{},
			[]want{{0, "args.query", CodeMissingQuery}}, "needs a non-empty query"},
		{"web_search with an unknown argument", `{"ops":[{"op":"call","task":"t1","tool":"web_search","args":{"query":"q","limit":"5"}}]}`, Limits{},
			[]want{{0, "args.limit", CodeUnknownArg}}, `not "limit"`},
		{"evidence source not a URL", `{"ops":[{"op":"evidence","task":"t1","content":"c","embed_text":"e","source":"my memory"}]}`, Limits{},
			[]want{{0, "source", CodeBadSource}}, "not an http(s) URL"},
		{"evidence source with another scheme", `{"ops":[{"op":"evidence","task":"t1","content":"c","embed_text":"e","source":"file:///etc/passwd"}]}`, Limits{},
			[]want{{0, "source", CodeBadSource}}, "not an http(s) URL"},
		{"all errors are listed, in op order", `{"ops":[
			{"op":"continue","task":"t9"},
			{"op":"oops"},
			{"op":"create","id":"t1","description":"","embed_text":"e","parent":"t4"},
			{"op":"call","task":"t2","tool":"web_search","args":{}}],"extra":1}`, Limits{MaxOps: 3},
			[]want{
				{-1, "", CodeTopField},
				{-1, "", CodeTooManyOps},
				{0, "task", CodeUnknownID},
				{1, "op", CodeUnknownOp},
				{2, "id", CodeIDExists},
				{2, "description", CodeEmpty},
				{2, "parent", CodeFailedTarget},
				{3, "args.query", CodeMissingQuery},
			}, "extra"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ops, errs := Parse(tt.in, testKnown(), tt.lim)
			if got := errKeys(errs); !reflect.DeepEqual(got, tt.want) && (len(got) > 0 || len(tt.want) > 0) {
				t.Fatalf("errors\n got %v\nwant %v\n%v", got, tt.want, errs)
			}
			if len(errs) > 0 && ops != nil {
				t.Fatalf("ops returned together with errors: %v", ops)
			}
			if tt.msg != "" && !strings.Contains(errs[0].Msg, tt.msg) {
				t.Fatalf("message %q does not contain %q", errs[0].Msg, tt.msg)
			}
			for _, e := range errs {
				if e.Msg == "" || e.Code == "" {
					t.Fatalf("error without message or code: %#v", e)
				}
				if e.Index >= 0 && !strings.HasPrefix(e.String(), "ops[") {
					t.Fatalf("error string does not start with its path: %q", e.String())
				}
			}
		})
	}
}

// TestValidateDirect covers what only Validate sees: Ops built in Go rather
// than decoded, with fields of other op types set.
func TestValidateDirect(t *testing.T) {
	tests := []struct {
		name string
		ops  []Op
		want []want
	}{
		{"nil is valid", nil, nil},
		{"valid", []Op{{Op: "call", Task: "t1", Tool: "web_search", Args: map[string]string{"query": "q"}}}, nil},
		{"missing op", []Op{{Task: "t1"}}, []want{{0, "op", CodeMissing}}},
		{"unknown op", []Op{{Op: "remove", Task: "t1"}}, []want{{0, "op", CodeUnknownOp}}},
		{"foreign fields", []Op{{Op: "continue", Task: "t1", Result: "r", Args: map[string]string{"query": "q"}}},
			[]want{{0, "result", CodeUnknownField}, {0, "args", CodeUnknownField}}},
		{"empty string is missing", []Op{{Op: "fail", Task: "t1"}}, []want{{0, "reason", CodeMissing}}},
		{"blank string is empty", []Op{{Op: "fail", Task: "t1", Reason: " "}}, []want{{0, "reason", CodeEmpty}}},
		{"blank optional is empty in Go-built ops", []Op{{Op: "evidence", Task: "t1", Content: "c", EmbedText: "e", Source: " "}}, []want{{0, "source", CodeEmpty}}},
		{"nil args", []Op{{Op: "call", Task: "t1", Tool: "web_search"}}, []want{{0, "args", CodeMissing}}},
		{"too many", []Op{{Op: "continue", Task: "t1"}, {Op: "continue", Task: "t2"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := Validate(tt.ops, testKnown(), DefaultLimits())
			if got := errKeys(errs); !reflect.DeepEqual(got, tt.want) && (len(got) > 0 || len(tt.want) > 0) {
				t.Fatalf("errors\n got %v\nwant %v\n%v", got, tt.want, errs)
			}
		})
	}
	errs := Validate([]Op{{Op: "continue", Task: "t1"}, {Op: "continue", Task: "t2"}}, testKnown(), Limits{MaxOps: 1})
	if got := errKeys(errs); !reflect.DeepEqual(got, []want{{-1, "", CodeTooManyOps}}) {
		t.Fatalf("MaxOps: got %v", errs)
	}
}

// TestErrorMessagesDistinct checks that different problems read differently:
// a model that gets the same words for two mistakes cannot tell them apart.
func TestErrorMessagesDistinct(t *testing.T) {
	inputs := map[string]string{
		CodeIDExists:      `{"ops":[{"op":"create","id":"t1","description":"d","embed_text":"e"}]}`,
		CodeDuplicateID:   `{"ops":[{"op":"create","id":"x","description":"d","embed_text":"e"},{"op":"create","id":"x","description":"d","embed_text":"e"}]}`,
		CodeMissing:       `{"ops":[{"op":"fail","task":"t1"}]}`,
		CodeEmpty:         `{"ops":[{"op":"fail","task":"t1","reason":""}]}`,
		CodeUnknownID:     `{"ops":[{"op":"fail","task":"zz","reason":"r"}]}`,
		CodeFailedTarget:  `{"ops":[{"op":"fail","task":"t4","reason":"r"}]}`,
		CodeDoneTarget:    `{"ops":[{"op":"fail","task":"t3","reason":"r"}]}`,
		CodeSelfReference: `{"ops":[{"op":"depend","task":"t1","on":"t1"}]}`,
		CodeUnknownTool:   `{"ops":[{"op":"call","task":"t1","tool":"x","args":{"query":"q"}}]}`,
		CodeMissingQuery:  `{"ops":[{"op":"call","task":"t1","tool":"web_search","args":{}}]}`,
		CodeUnknownOp:     `{"ops":[{"op":"x"}]}`,
		CodeTooLong:       `{"ops":[{"op":"fail","task":"t1","reason":"` + strings.Repeat("y", 9000) + `"}]}`,
	}
	seen := map[string]string{}
	for _, code := range sortedKeys(inputs) {
		_, errs := Parse(inputs[code], testKnown(), DefaultLimits())
		if len(errs) != 1 || errs[0].Code != code {
			t.Fatalf("%s: got %v", code, errs)
		}
		if other, dup := seen[errs[0].Msg]; dup {
			t.Fatalf("%s and %s share the message %q", code, other, errs[0].Msg)
		}
		seen[errs[0].Msg] = code
	}
}

func TestErrorString(t *testing.T) {
	tests := []struct {
		e    Error
		want string
	}{
		{Error{Index: -1, Msg: "no JSON object found"}, "answer: no JSON object found"},
		{Error{Index: 2, Op: "call", Field: "args.query", Msg: "m"}, "ops[2] (call) field args.query: m"},
		{Error{Index: 0, Msg: "m"}, "ops[0]: m"},
	}
	for _, tt := range tests {
		if got := tt.e.String(); got != tt.want {
			t.Errorf("got %q want %q", got, tt.want)
		}
	}
}

func TestParseDeterministic(t *testing.T) {
	in := `{"ops":[{"op":"call","task":"t1","tool":"web_search","args":{"z":"1","a":"2","m":"3"}},{"op":"create","id":"x","zeta":1,"alpha":2,"description":"d","embed_text":"e"}],"b":1,"a":2}`
	_, first := Parse(in, testKnown(), DefaultLimits())
	for range 20 {
		_, again := Parse(in, testKnown(), DefaultLimits())
		if !reflect.DeepEqual(first, again) {
			t.Fatalf("error order changed:\n%v\n%v", first, again)
		}
	}
}

func TestLimitsDefaults(t *testing.T) {
	if got := (Limits{}).withDefaults(); got != DefaultLimits() {
		t.Fatalf("zero limits should mean defaults, got %+v", got)
	}
	got := Limits{MaxOps: 3, MaxStringLen: -1}.withDefaults()
	if got.MaxOps != 3 || got.MaxStringLen != DefaultLimits().MaxStringLen {
		t.Fatalf("partial limits: %+v", got)
	}
}

// TestParseEvidenceDependencies: a depends_on entry naming an evidence
// line of the read (and no task) is read as absent when the read's refs
// are known, and is an unknown id when they are not (sessions started
// before). The real-model answer that every iteration of a make run
// session sent is the first case.
func TestParseEvidenceDependencies(t *testing.T) {
	answer := `{"ops":[
		{"op":"create","id":"failures","description":"Identify the factors that cause failure","embed_text":"e","depends_on":["e1","e3","t1"]},
		{"op":"create","id":"e2","description":"a task named like a ref","embed_text":"e"},
		{"op":"create","id":"y","description":"d","embed_text":"e","depends_on":["e2"]}]}`
	k := testKnown()
	if _, errs := Parse(answer, k, DefaultLimits()); len(errs) != 2 {
		t.Fatalf("without the read's refs: %d errors (%v), want the 2 unknown ids", len(errs), errs)
	}
	k.EvidenceRefs = map[string]bool{"e1": true, "e2": true, "e3": true}
	ops, errs := Parse(answer, k, DefaultLimits())
	if len(errs) != 0 {
		t.Fatalf("with the read's refs: %v", errs)
	}
	eqDeps := func(i int, want ...string) {
		t.Helper()
		if !reflect.DeepEqual(ops[i].DependsOn, want) && !(len(want) == 0 && len(ops[i].DependsOn) == 0) {
			t.Errorf("op %d depends_on %v, want %v", i, ops[i].DependsOn, want)
		}
	}
	eqDeps(0, "t1")
	eqDeps(2, "e2")                // a task created earlier in the answer keeps the dependency
	k.Status["e3"] = graph.Pending // a task of the session named like a ref stays too
	ops, errs = Parse(answer, k, DefaultLimits())
	if len(errs) != 0 {
		t.Fatalf("with a task e3: %v", errs)
	}
	eqDeps(0, "e3", "t1")
	if _, errs := Parse(`{"ops":[{"op":"depend","task":"t1","on":"e1"}]}`, k, DefaultLimits()); len(errs) != 1 || errs[0].Index != 0 {
		t.Errorf("a depend op on evidence is left to validation: %v", errs)
	}
}
