package activities_test

import (
	"fmt"
	"testing"

	"github.com/lethe-research/lethe/activities"
	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/llm/llmtest"
)

// TestComposeRepairEchoDropped: a draft that cites a number the material
// does not have gets one repair call; a repaired draft that copies the
// request, its list of bad citations filled in, loses that sentence (the
// 1.5B model's "These citations are invalid: [7] is not a source of this
// material." stood in dr-067's report, sixteenth evaluation run), and
// keeps its own.
func TestComposeRepairEchoDropped(t *testing.T) {
	const section = "Testing a TLS POP3 service"
	fact := `(?m)^\[(?P<n>\d+)\] To test the TLS/SSL enabled POP3`
	own := "A POP3 test over TLS needs a TLS-capable telnet client [${n}]."
	script := llmtest.Script{Rules: []llmtest.Rule{
		{Name: "repair", Match: []string{`Your previous draft:`, fact}, Expand: true,
			Reply: own + " These citations are invalid: [97] is not a source of this material."},
		{Name: "draft", Match: []string{`^Goal: echo\n`, fact}, Expand: true, Reply: "A POP3 test over TLS needs a TLS-capable telnet client [97]."},
	}}
	env, store, _, model := newScriptedEnv(t, t.TempDir(), nil, script)
	asm := config.Defaults().Assembly
	n := collectedSummarySession(t, env, store, "echo")
	v, err := env.ExecuteActivity(acts.Compose, activities.ComposeInput{SessionID: "echo", Goal: "echo", Sections: []int{0}, Part: 1, Parts: 1,
		Synthesis: true, Facts: asm.SectionFacts, FactFollow: asm.FactFollow})
	if err != nil {
		t.Fatal(err)
	}
	var got activities.ComposeResult
	if err := v.Get(&got); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("## %s\n\nA POP3 test over TLS needs a TLS-capable telnet client [%d].", section, n)
	if got.Markdown != want || got.RepairCalls != 1 {
		t.Errorf("section %q (%d repair calls), want %q; requests %d", got.Markdown, got.RepairCalls, want, len(model.Requests()))
	}
}

// TestSummaryDropsInventedLink: a link in the summary that neither its
// prompt, its evidence nor a source's address holds is removed (dr-018's
// "port 443 (https://example.org/secure-imap)", sixteenth evaluation
// run); the sentence and its citation stay.
func TestSummaryDropsInventedLink(t *testing.T) {
	script := llmtest.Script{Rules: []llmtest.Rule{
		{Name: "summary", Match: []string{`^Summarize this report`}, Reply: "The report covers a POP3 client [1] (https://example.org/pop3-client)."},
	}}
	env, store, _, _ := newScriptedEnv(t, t.TempDir(), nil, script)
	collectedSummarySession(t, env, store, "link")
	v, err := env.ExecuteActivity(acts.Summarize, activities.SummarizeInput{SessionID: "link", Goal: summaryGoal, Report: "## POP3\n\nA POP3 client [1]."})
	if err != nil {
		t.Fatal(err)
	}
	var sum activities.ComposeResult
	if err := v.Get(&sum); err != nil || sum.Markdown != "The report covers a POP3 client [1]." {
		t.Errorf("summary %q %v", sum.Markdown, err)
	}
}

// TestSummaryWithoutWordsDropped: a summary answer with no words, only
// numbers and marks (the eighteenth evaluation run's dr-036 summary was
// "2 4", what the 1.5B model left of "2 to 4 sentences"), gives the report
// no summary; a short one with words stays.
func TestSummaryWithoutWordsDropped(t *testing.T) {
	for reply, want := range map[string]string{
		"2 4 [1].":       "",
		"2 to 4. [1]":    "",
		"Run xeyes [1].": "Run xeyes [1].",
	} {
		script := llmtest.Script{Rules: []llmtest.Rule{{Name: "summary", Match: []string{`^Summarize this report`}, Reply: reply}}}
		env, store, _, _ := newScriptedEnv(t, t.TempDir(), nil, script)
		collectedSummarySession(t, env, store, "words")
		v, err := env.ExecuteActivity(acts.Summarize, activities.SummarizeInput{SessionID: "words", Goal: summaryGoal, Report: "## POP3\n\nA POP3 client [1]."})
		if err != nil {
			t.Fatal(err)
		}
		var sum activities.ComposeResult
		if err := v.Get(&sum); err != nil || sum.Markdown != want || (want == "") != (len(sum.Cited) == 0) {
			t.Errorf("answer %q: summary %q (cited %v, %v), want %q", reply, sum.Markdown, sum.Cited, err, want)
		}
	}
}
