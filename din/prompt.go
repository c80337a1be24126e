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

// The examples are about a topic unrelated to the demo goal, the test
// corpus and the scripted tests (solid-state batteries): a small model
// copies example results, and a copy must not read like a researched answer.
var examples = []Example{
	{
		Title: "Decompose a broad goal and start searching",
		Context: `=GOAL How do honeybees find their way back to the hive?
TOOLS: web_search(query)`,
		Answer: `{"ops":[
 {"op":"create","id":"cues","description":"Identify the cues honeybees navigate by, such as the sun, landmarks and polarized light","embed_text":"Navigation cues of honeybees: sun compass, landmarks and polarized skylight."},
 {"op":"create","id":"learn","description":"Find how young bees learn the landscape around the hive","embed_text":"How young honeybees learn landmarks and routes around the hive.","depends_on":["cues"]},
 {"op":"call","task":"cues","tool":"web_search","args":{"query":"honeybee navigation sun compass landmarks polarized light"}},
 {"op":"continue","task":"root"}
]}`,
	},
	{
		Title: "Answer a subtask from its evidence",
		Context: `YOUR TASK: [cues] Identify the cues honeybees navigate by, such as the sun, landmarks and polarized light (Parent goal for context: How do honeybees find their way back to the hive?)
E ea [cues] Foragers keep a sun compass that corrects for the sun's movement over the day. (source: https://example.org/compass "The honeybee sun compass")
E eb [cues] Near the hive, bees steer by remembered landmarks and the polarization pattern of the sky. (source: https://example.org/landmarks)
! subtask [learn] PENDING Find how young bees learn the landscape around the hive: no evidence yet`,
		Answer: `{"ops":[
 {"op":"evidence","task":"cues","content":"The two reported cue systems work at different distances: the sun compass over long flights, landmarks and skylight close to the hive.","embed_text":"Honeybees use the sun compass far from the hive and landmarks near it."},
 {"op":"complete","task":"cues","result":"Bees combine two cue systems. Far from the hive they fly by a sun compass that corrects for the sun's movement over the day (https://example.org/compass). Close to the hive they steer by remembered landmarks and the polarization pattern of the sky (https://example.org/landmarks).","embed_text":"Honeybees navigate by a time-compensated sun compass and, near the hive, by landmarks and polarized light."}
]}`,
	},
	{
		Title: "Give up a dead end, add an ordering, sharpen a task",
		Context: `YOUR TASK: [genes] Find the genes behind honeybee navigation (Parent goal for context: How do honeybees find their way back to the hive?)
T cues ACTIVE Identify the cues honeybees navigate by
T learn PENDING Find how young bees learn the landscape around the hive
! recent searches found nothing new: try different queries or synthesize what you have`,
		Answer: `{"ops":[
 {"op":"fail","task":"genes","reason":"No study found links specific genes to the route-finding behaviour; searches return general genome papers, and genes do not explain how the way home is found."},
 {"op":"update","task":"learn","description":"Find how young bees learn landmarks and the sun's course on their first orientation flights","embed_text":"Orientation flights of young honeybees: learning landmarks and the sun's course."},
 {"op":"depend","task":"learn","on":"cues"},
 {"op":"call","task":"learn","tool":"web_search","args":{"query":"honeybee orientation flights learning landmarks"}}
]}`,
	},
	{
		Title: "The goal is answered: complete the root",
		Context: `=GOAL How do honeybees find their way back to the hive?
T cues DONE Identify the navigation cues => Bees combine a sun compass with landmarks and polarized light…
T learn DONE Find how young bees learn the landscape => Short orientation flights teach landmarks and the sun's course…`,
		Answer: `{"ops":[
 {"op":"complete","task":"root","result":"Honeybees find the hive by combining cues. On long flights they use a sun compass that corrects for the time of day (https://example.org/compass); near the hive they steer by remembered landmarks and the polarization pattern of the sky (https://example.org/landmarks). Young bees learn these cues on short orientation flights before they start foraging.","embed_text":"Honeybees return home by sun compass, landmarks and polarized light, learned on orientation flights."}
]}`,
	},
	{
		Title:   "Nothing useful to do this turn",
		Context: `YOUR TASK: [learn] Find how young bees learn the landscape (Parent goal for context: How do honeybees find their way back to the hive?)`,
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
