package din

import (
	"encoding/json"
	"fmt"
	"strings"
)

// PlanSystem is the system message of a planning call: one JSON object of
// search queries whose results together answer a question. The session's
// seed (docs/seed-search.md) and the evaluation's loop baseline share it,
// so the two plan alike and differ in what they do with the results.
const PlanSystem = `You plan research. Answer with one JSON object only: {"queries": ["...", "...", "..."]}: short search queries whose results together answer the question.`

// PlanPrompt is the user message of a planning call for n queries.
func PlanPrompt(question string, n int) string {
	return fmt.Sprintf("Question: %s\n\nPlan %d search queries.", question, n)
}

// PlanSchema is the answer schema of a planning call for n queries, sent
// as response_format where the server supports it (llm.json_schema). Free
// text is not enough for a small model: asked for JSON, the 1.5B model of
// the local evaluation answered six of its twelve seed plans with prose
// or numbered steps ("Mark the port by the number 631 …"), each a call of
// up to 78 s that planned nothing, and searched the goal alone; held to
// this schema it wrote three queries in about 4 s (docs/seed-search.md).
// The strict form (OpenAI's) has every property required and no array
// bounds; the loose form (a grammar decoder, llm.json_schema_loose) bounds
// the list to 1 … n, so the model can neither plan nothing nor run on to
// its token bound, which would cut the object.
func PlanSchema(n int, strict bool) []byte {
	queries := omap{{"type", "array"}, {"items", omap{{"type", "string"}}}}
	if !strict {
		queries = append(queries, kv{"minItems", 1}, kv{"maxItems", max(n, 1)})
	}
	b, err := json.Marshal(omap{
		{"type", "object"},
		{"properties", omap{{"queries", queries}}},
		{"required", []string{"queries"}},
		{"additionalProperties", false},
	})
	if err != nil {
		panic(fmt.Sprintf("din: plan schema: %v", err)) // static shape: cannot fail
	}
	return b
}

// ParsePlan reads the planned queries of an answer to PlanPrompt: at most
// n, blank ones and repeats (ignoring case and spacing) dropped, in the
// model's order.
func ParsePlan(content string, n int) ([]string, error) {
	obj, err := Extract(content)
	if err != nil {
		return nil, fmt.Errorf("plan answer: %w", err)
	}
	var p struct {
		Queries []string `json:"queries"`
	}
	if err := json.Unmarshal([]byte(obj), &p); err != nil {
		return nil, fmt.Errorf("plan answer: %w", err)
	}
	seen := map[string]bool{}
	var out []string
	for _, q := range p.Queries {
		q = strings.Join(strings.Fields(q), " ")
		key := strings.ToLower(q)
		if q == "" || seen[key] || len(out) >= n {
			continue
		}
		seen[key] = true
		out = append(out, q)
	}
	return out, nil
}
