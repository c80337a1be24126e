package din

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Example is one worked example of the system prompt: a DIN-Read excerpt and
// a correct answer to it. Tests parse every answer, so the prompt never
// teaches the model something the parser rejects.
type Example struct {
	Title   string
	Context string
	Answer  string
}

// Examples returns the worked examples of the system prompt.
func Examples() []Example { return append([]Example(nil), examples...) }

var examples = []Example{
	{
		Title: "Decompose a broad goal and start searching",
		Context: `=GOAL How do solid-state batteries fail?
TOOLS: web_search(query)`,
		Answer: `{"ops":[
 {"op":"create","id":"mech","description":"Identify the main physical and chemical failure mechanisms of solid-state batteries","embed_text":"Failure mechanisms of solid-state batteries such as lithium dendrites, interface degradation and cracking."},
 {"op":"create","id":"mitig","description":"Find how researchers and manufacturers mitigate these failure mechanisms","embed_text":"Mitigation strategies against solid-state battery failure.","depends_on":["mech"]},
 {"op":"call","task":"mech","tool":"web_search","args":{"query":"solid-state battery failure mechanisms lithium dendrites interface"}},
 {"op":"continue","task":"root"}
]}`,
	},
	{
		Title: "Answer a subtask from its evidence",
		Context: `YOUR TASK: [mech] Identify the main physical and chemical failure mechanisms of solid-state batteries (Parent goal for context: How do solid-state batteries fail?)
E ea [mech] Lithium filaments grow along grain boundaries of the ceramic electrolyte and short the cell. (source: https://example.org/review "Dendrites in ceramic electrolytes")
E eb [mech] Volume changes of the cathode during cycling open gaps at the solid-solid interface. (source: https://example.org/interfaces)
! subtask [mitig] PENDING Find how researchers and manufacturers mitigate these failure mechanisms: no evidence yet`,
		Answer: `{"ops":[
 {"op":"evidence","task":"mech","content":"Both reported mechanisms act at interfaces: filaments follow grain boundaries inside the electrolyte, contact loss happens at the electrode boundary.","embed_text":"Solid-state battery failures concentrate at grain boundaries and electrode interfaces."},
 {"op":"complete","task":"mech","result":"Two mechanisms dominate. Lithium filaments grow along the grain boundaries of ceramic electrolytes until they short the cell (https://example.org/review). Cathode volume changes during cycling open gaps at the solid-solid interface, so contact and capacity are lost (https://example.org/interfaces).","embed_text":"Solid-state batteries fail by lithium filaments along grain boundaries and by contact loss at the cathode interface."}
]}`,
	},
	{
		Title: "Give up a dead end, add an ordering, sharpen a task",
		Context: `YOUR TASK: [cost] Find the production cost of solid-state cells (Parent goal for context: How do solid-state batteries fail?)
T mech ACTIVE Identify the main failure mechanisms of solid-state batteries
T mitig PENDING Find how researchers and manufacturers mitigate these failure mechanisms
! recent searches found nothing new: try different queries or synthesize what you have`,
		Answer: `{"ops":[
 {"op":"fail","task":"cost","reason":"Production costs are not published; searches return only marketing claims, and cost does not explain failure."},
 {"op":"update","task":"mitig","description":"Find mitigations for dendrite growth and interface contact loss in solid-state batteries","embed_text":"Mitigating dendrites and interface contact loss in solid-state batteries."},
 {"op":"depend","task":"mitig","on":"mech"},
 {"op":"call","task":"mitig","tool":"web_search","args":{"query":"suppress lithium dendrites ceramic electrolyte interface coating"}}
]}`,
	},
	{
		Title: "The goal is answered: complete the root",
		Context: `=GOAL How do solid-state batteries fail?
T mech DONE Identify the main failure mechanisms => Two mechanisms dominate: lithium filaments along grain boundaries and contact loss at the cathode interface…
T mitig DONE Find mitigations => Interface coatings and stack pressure reduce both mechanisms…`,
		Answer: `{"ops":[
 {"op":"complete","task":"root","result":"Solid-state batteries fail mainly in two ways. First, lithium filaments grow along the grain boundaries of ceramic electrolytes and short the cell (https://example.org/review). Second, the cathode changes volume during cycling, which opens gaps at the solid-solid interface and cuts capacity (https://example.org/interfaces). Interface coatings and stack pressure mitigate both.","embed_text":"Solid-state batteries fail through lithium filaments and interface contact loss; coatings and pressure mitigate them."}
]}`,
	},
	{
		Title:   "Nothing useful to do this turn",
		Context: `YOUR TASK: [mitig] Find mitigations (Parent goal for context: How do solid-state batteries fail?)`,
		Answer:  `{"ops":[]}`,
	},
}

// SystemPrompt is the system message of every reasoning call. It teaches
// DIN-Read (what the model sees) and DIN-Write (what it must answer) from
// the same field table the parser uses.
func SystemPrompt() string {
	var b strings.Builder
	b.WriteString(`You are the reasoning step of a deep-research agent. Research is organized as a graph of tasks under one goal, the root task. Each turn you see one task in focus with the part of the graph and the evidence that matter for it, and you answer with operations that change the graph. You have no memory between turns: the graph is the memory, so write down what you learn.

## What you read

=GOAL <goal>                     you work on the root goal itself
YOUR TASK: [<id>] <description> (Parent goal for context: <goal>)
                                 you work on subtask <id>; stay within its scope
T <id> <STATUS> <description> => <result>
                                 a task; STATUS is PENDING, ACTIVE, DONE or FAILED; DONE tasks show their result
>SUB <child> <parent>            <child> is a subtask of <parent>
>DEP <task> <on>                 <task> waits until <on> is DONE
E <ref> [<task>] <content> (source: <url> "<title>")
                                 evidence supporting <task>
! <text>                         a warning: coverage of subtasks, dead ends, tasks that others cover, notes from the user
TOOLS: web_search(query)         the tools you may call

Within the task lines and within the evidence lines, the most relevant items come first and last.

## What you write

Reply with exactly one JSON object and nothing else: {"ops":[ ... ]}. No prose, no Markdown, no code fences around it. Each element of "ops" is one operation, applied in order:

`)
	for _, s := range opSpecs {
		b.WriteString(`- {"op":"` + s.name + `"`)
		for _, f := range s.fields {
			b.WriteString(`, "` + f.name + `"`)
			if !f.required {
				b.WriteString(" (optional)")
			}
		}
		b.WriteString("}: " + s.doc + "\n")
		for _, f := range s.fields {
			b.WriteString("    " + f.name + ": " + f.doc + "\n")
		}
	}
	b.WriteString(`
## Rules

- Refer to tasks only by the short ids shown in the context (the word inside [ ] without the brackets), or by ids you create earlier in the same answer. The root goal is "root". Evidence refs such as the one after E are not task ids.
- New ids are short and new: letters, digits, _ and - only. Never reuse an existing id.
- FAILED tasks are dead ends: never target them, never hang new tasks under them or make tasks wait for them. Do not repeat what a dead end tried.
- Look facts up with web_search instead of relying on memory. Never invent facts, quotes or URLs; results arrive as evidence in a later turn. One focused question per query; several calls are fine.
- Split a broad task into focused subtasks with create. Do not create a task that duplicates one already in the context.
- When the evidence answers your task, complete it: the result is a self-contained synthesis that keeps the important details and the source URLs.
- Never complete a task in the same answer that creates subtasks under it: the subtasks would never run.
- If your task still needs work after this turn (for example it waits for search results or subtasks), continue it; otherwise it is not picked up again.
- If a task cannot be done or is not worth doing, fail it with the reason, so nobody repeats it.
- When the goal is answered by what the graph holds, complete "root" with the full answer. That ends the research.
- embed_text is one or two plain sentences that state the topic, without Markdown; it is used for semantic search.
- An answer with no operations, {"ops":[]}, is valid and means there is nothing useful to do.

## Examples
`)
	for _, ex := range examples {
		b.WriteString("\n" + ex.Title + ".\nContext:\n" + ex.Context + "\nAnswer:\n" + ex.Answer + "\n")
	}
	return b.String()
}

// RepairEchoChars bounds how much of the rejected answer the repair prompt
// quotes back; long answers keep their beginning and end.
const RepairEchoChars = 6000

// RepairPrompt is the user message of a repair call: it lists every error,
// quotes the rejected answer (without its reasoning), and restates the
// format. attempt counts from one.
//
// Reasoning calls are single-turn, so the repair call does not see the
// original context unless the caller sends it too; RepairPromptWithContext
// does that.
func RepairPrompt(response string, errs []Error, attempt, maxAttempts int) string {
	if attempt < 1 {
		attempt = 1
	}
	if maxAttempts < attempt {
		maxAttempts = attempt
	}
	var b strings.Builder
	b.WriteString("Your previous answer could not be applied (repair attempt " +
		strconv.Itoa(attempt) + " of " + strconv.Itoa(maxAttempts) + "). Nothing from it was applied.\n\nProblems:\n")
	if len(errs) == 0 {
		b.WriteString("- the answer was rejected\n")
	}
	for _, e := range errs {
		b.WriteString("- " + oneLine(e.String()) + "\n")
	}
	b.WriteString("\nYour previous answer:\n<previous_answer>\n" + echo(response) + "\n</previous_answer>\n\n")
	b.WriteString(`Write the answer again: one JSON object {"ops":[...]} that fixes every problem above and keeps the operations that were fine. Reply with the JSON object only: no prose, no code fences.

Operations and their fields:
`)
	for _, s := range opSpecs {
		b.WriteString("- " + s.name + ": " + strings.TrimPrefix(fieldList(s.name), "op, ") + "\n")
	}
	b.WriteString(`Refer to tasks by the short ids of the context or ids created earlier in the same answer; never target FAILED tasks; web_search takes {"query": "..."}.` + "\n")
	return b.String()
}

// RepairPromptWithContext is RepairPrompt preceded by the DIN-Read context
// of the failed call, so the model sees the ids it may use again.
func RepairPromptWithContext(context, response string, errs []Error, attempt, maxAttempts int) string {
	return strings.TrimRight(context, "\n") + "\n\n" + RepairPrompt(response, errs, attempt, maxAttempts)
}

// echo is the part of a rejected answer worth showing again: the JSON object
// when one can be found (reasoning would only waste context), else the text
// outside think blocks, clipped in the middle.
func echo(response string) string {
	s, err := Extract(response)
	if err != nil {
		out, _, _ := splitThink(response)
		s = strings.TrimSpace(out)
	}
	if s == "" {
		return "(empty)"
	}
	if utf8.RuneCountInString(s) <= RepairEchoChars {
		return s
	}
	r := []rune(s)
	half := RepairEchoChars / 2
	return string(r[:half]) + "\n[… middle of the answer omitted …]\n" + string(r[len(r)-half:])
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// Schema returns the JSON Schema of a DIN-Write answer in OpenAI's strict
// form, for response_format {"type":"json_schema","strict":true}.
//
// It sticks to the subset both OpenAI structured outputs (strict mode) and
// llama.cpp's grammar converter accept: type, properties, required,
// additionalProperties false, anyOf, const, enum, items, pattern,
// description. Strict mode requires every property to be listed in
// "required", so optional fields are required but nullable; Parse treats
// null as absent. Properties keep wire order ("op" first): grammar-based
// decoders emit them in schema order, and the model should name the
// operation before its fields. The schema cannot express references to
// existing ids, limits or FAILED targets: Validate still runs on every
// answer.
func Schema() []byte { return schema(true) }

// LooseSchema is Schema for decoders without a strict mode (llama.cpp's
// grammar): an optional field is left out of "required" and is not
// nullable. A grammar decoder enforces "required" literally, so with the
// strict form a small model must write every optional field and fills them
// with invented ids (a parent that is the task itself, dependencies that do
// not exist); with this form it leaves them out. Parse reads both the same
// way. Measured in docs/models.md.
func LooseSchema() []byte { return schema(false) }

func schema(strict bool) []byte {
	variants := make([]any, 0, len(opSpecs))
	for _, s := range opSpecs {
		props := omap{{"op", omap{{"type", "string"}, {"const", s.name}}}}
		required := []string{"op"}
		for _, f := range s.fields {
			props = append(props, kv{f.name, fieldSchema(f, strict)})
			if strict || f.required {
				required = append(required, f.name)
			}
		}
		variants = append(variants, omap{
			{"type", "object"},
			{"description", s.doc},
			{"properties", props},
			{"required", required},
			{"additionalProperties", false},
		})
	}
	schema := omap{
		{"type", "object"},
		{"properties", omap{
			{"ops", omap{{"type", "array"}, {"items", omap{{"anyOf", variants}}}}},
		}},
		{"required", []string{"ops"}},
		{"additionalProperties", false},
	}
	out, err := json.Marshal(schema)
	if err != nil {
		panic("din: schema does not marshal: " + err.Error()) // static data: cannot happen
	}
	return out
}

// fieldSchema is one field's schema; an optional field admits null in the
// strict form only.
func fieldSchema(f fieldSpec, strict bool) omap {
	nullable := strict && !f.required
	var typ any = "string"
	if nullable {
		typ = []string{"string", "null"}
	}
	m := omap{{"type", typ}}
	switch f.kind {
	case kNewID:
		m = append(m, kv{"pattern", ShortIDPattern})
	case kRefList:
		typ = "array"
		if nullable {
			typ = []string{"array", "null"}
		}
		m = omap{{"type", typ}, {"items", omap{{"type", "string"}}}}
	case kTool:
		m = append(m, kv{"enum", Tools()})
	case kArgs:
		m = omap{
			{"type", "object"},
			{"properties", omap{{"query", omap{{"type", "string"}, {"description", "one focused search query"}}}}},
			{"required", []string{"query"}},
			{"additionalProperties", false},
		}
	}
	return append(m, kv{"description", f.doc})
}

// omap is a JSON object that keeps its keys in the order written
// (encoding/json sorts map keys).
type omap []kv

type kv struct {
	k string
	v any
}

func (m omap) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, e := range m {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(e.k)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(e.v)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
