package main

import (
	"strings"
	"testing"

	"github.com/lethe-research/lethe/contract"
	"github.com/lethe-research/lethe/llm/llmtest"
)

// TestVerifyAllScripted runs the bench's whole path (config from the
// environment, a real embedded store, the activity under the Guard, the
// report) against a scripted model that judges one item: its verdict
// lands on that pair, by the model; the batch's other items the answer
// leaves out are unchecked, and the report counts them so.
func TestVerifyAllScripted(t *testing.T) {
	model := llmtest.NewServer(llmtest.Script{Rules: []llmtest.Rule{{
		Name:  "judge",
		Match: []string{`(?m)^Item 4\nSentence: The secure IMAP service imaps uses port 993\.`},
		Reply: `{"verdicts":[{"i":4,"quote":"imap2 143 imaps 993 pop3 110","supported":true}]}`,
	}}})
	t.Cleanup(model.Close)
	t.Setenv("LETHE_LLM_BASE_URL", model.URL())
	t.Setenv("LETHE_EMBED_BASE_URL", model.URL())
	set, err := loadSet("", "")
	if err != nil {
		t.Fatal(err)
	}
	run, err := verifyAll(t.Context(), set)
	if err != nil {
		t.Fatal(err)
	}
	if v := run.Verdicts["v05"]; v.Status != contract.Supported || v.Via != contract.ViaModel {
		t.Errorf("v05: %+v, want supported by the model", v)
	}
	if v := run.Verdicts["v02"]; v.Status != contract.Unchecked {
		t.Errorf("v02: %+v, want unchecked (the answer left it out)", v)
	}
	if len(run.Verdicts) != len(set.Pairs) || run.Batches < 2 {
		t.Errorf("%d verdicts in %d batches for %d pairs", len(run.Verdicts), run.Batches, len(set.Pairs))
	}
	var out strings.Builder
	printReport(&out, set, run, false)
	for _, want := range []string{"| true | model | 1 |", "recall (true pairs supported):", "| wrong-number | false | 6 |"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}
