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
