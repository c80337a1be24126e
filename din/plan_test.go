package din

import (
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
