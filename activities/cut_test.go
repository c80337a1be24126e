package activities_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/lethe-research/lethe/activities"
	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/llm/llmtest"
)

// TestComposeCutByTokenBound: a section or summary the model's token
// bound cut (finish_reason "length") ends at its last whole sentence, its
// citation kept; a section with no whole sentence is written from its
// facts, as an empty draft is; a model that stopped by itself keeps its
// text.
func TestComposeCutByTokenBound(t *testing.T) {
	const section = "Testing a TLS POP3 service"
	fact := `(?m)^\[(?P<n>\d+)\] To test the TLS/SSL enabled POP3`
	rule := func(goal, reply, finish string) llmtest.Rule {
		return llmtest.Rule{Name: goal, Match: []string{`^Goal: ` + goal + `\n`, fact}, Expand: true, Reply: reply, Finish: finish}
	}
	whole := "A POP3 test over TLS needs a TLS-capable telnet client [${n}]."
	script := llmtest.Script{Rules: []llmtest.Rule{
		rule("cut", whole+" Such a client, which limits fast chargin", "length"),
		rule("nothing-whole", "As the guide says [${n}], a POP3 test over TLS needs a TLS-capable telnet cli", "length"),
		rule("stopped", whole+" Such a client is", "stop"),
		{Name: "summary", Match: []string{`^Summarize this report`}, Reply: "The report covers a POP3 client [1]. It also", Finish: "length"},
	}}
	env, store, _, model := newScriptedEnv(t, t.TempDir(), nil, script)
	asm := config.Defaults().Assembly
	n := collectedSummarySession(t, env, store, "cut")
	sentence := fmt.Sprintf("A POP3 test over TLS needs a TLS-capable telnet client [%d].", n)
	for _, tc := range []struct{ goal, want string }{
		{"cut", sentence},
		{"nothing-whole", fmt.Sprintf("To test the TLS/SSL enabled POP3 service you need a TLS/SSL enabled telnet client [%d].", n)},
		{"stopped", sentence + " Such a client is"},
	} {
		v, err := env.ExecuteActivity(acts.Compose, activities.ComposeInput{SessionID: "cut", Goal: tc.goal, Sections: []int{0}, Part: 1, Parts: 1,
			Synthesis: true, Facts: asm.SectionFacts, FactFollow: asm.FactFollow})
		if err != nil {
			t.Fatal(err)
		}
		var got activities.ComposeResult
		if err := v.Get(&got); err != nil {
			t.Fatal(err)
		}
		if want := "## " + section + "\n\n" + tc.want; got.Markdown != want {
			t.Errorf("%s: section %q, want %q; prompt:\n%s", tc.goal, got.Markdown, want, model.Requests()[len(model.Requests())-1].User)
		}
	}
	v, err := env.ExecuteActivity(acts.Summarize, activities.SummarizeInput{SessionID: "cut", Goal: summaryGoal,
		Report: "## " + section + "\n\n" + sentence})
	if err != nil {
		t.Fatal(err)
	}
	var sum activities.ComposeResult
	if err := v.Get(&sum); err != nil || sum.Markdown != "The report covers a POP3 client [1]." {
		t.Errorf("summary %q %v, want its whole sentence", sum.Markdown, err)
	}
	if strings.Contains(sum.Markdown, "It also") {
		t.Error("the cut sentence is in the summary")
	}
}
