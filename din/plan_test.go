package din

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestParsePlan(t *testing.T) {
	cases := []struct {
		name    string
		content string
		n       int
		want    []string
		err     string
	}{
		{"plain", `{"queries":["a"," ","b","c","d"]}`, 3, []string{"a", "b", "c"}, ""},
		{"repeats and spacing", `{"queries":["GRUB  menu file","grub menu file"," blkid UUID "]}`, 3, []string{"GRUB menu file", "blkid UUID"}, ""},
		{"after thinking and prose", "<think>two hops</think>Here: {\"queries\":[\"cups port\",\"lp collate\"]} done", 3, []string{"cups port", "lp collate"}, ""},
		{"no object", "I would search for the port.", 3, nil, "no JSON object"},
		{"not a list", `{"queries":"cups port"}`, 3, nil, "cannot unmarshal"},
		{"zero wanted", `{"queries":["a"]}`, 0, nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParsePlan(c.content, c.n)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("ParsePlan error = %v, want one containing %q", err, c.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, c.want) {
				t.Fatalf("ParsePlan = %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

func TestPlanPromptAsksForN(t *testing.T) {
	if p := PlanPrompt("Which port?", 3); !strings.HasPrefix(p, "Question: Which port?") || !strings.Contains(p, "Plan 3 search queries.") {
		t.Fatalf("PlanPrompt = %q", p)
	}
}

// TestPlanSchema: the strict form requires the list and bounds nothing
// (OpenAI's strict mode); the loose form, for a grammar decoder, bounds the
// list to 1 … n; both refuse other properties, and a plan of either form
// is what ParsePlan reads.
func TestPlanSchema(t *testing.T) {
	cases := []struct {
		n          int
		strict     bool
		minI, maxI any
	}{
		{3, true, nil, nil},
		{3, false, float64(1), float64(3)},
		{0, false, float64(1), float64(1)},
	}
	for _, c := range cases {
		var s struct {
			Type       string
			Required   []string
			Additional *bool `json:"additionalProperties"`
			Properties struct {
				Queries map[string]any
			}
		}
		b := PlanSchema(c.n, c.strict)
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatalf("n %d strict %v: %v in %s", c.n, c.strict, err, b)
		}
		q := s.Properties.Queries
		if s.Type != "object" || !reflect.DeepEqual(s.Required, []string{"queries"}) || s.Additional == nil || *s.Additional ||
			q["type"] != "array" || q["minItems"] != c.minI || q["maxItems"] != c.maxI {
			t.Errorf("n %d strict %v: %s", c.n, c.strict, b)
		}
	}
	if got, err := ParsePlan(`{"queries":["cups port","lp collate"]}`, 3); err != nil || len(got) != 2 {
		t.Fatalf("a plan of the schema's shape: %q, %v", got, err)
	}
}
