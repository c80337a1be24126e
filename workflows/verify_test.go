package workflows_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/internal/lethetest"
	"github.com/lethe-research/lethe/llm/llmtest"
	"github.com/lethe-research/lethe/workflows"
)

// verifyComposed is a composition with one citation of the wrong source:
// the second sentence is about interfaces and cites [1] (dendrites) as
// well as [2], and the last sentence cites only the wrong source.
const verifyComposed = "## Dendrites\n\nLithium dendrites grow along grain boundaries of the solid electrolyte [1].\n\n" +
	"## Interfaces\n\nDecomposition interphases at the cathode raise the resistance [1][2]. Particles swell and lose contact [2]. " +
	"Garnet electrolytes conduct lithium at room temperature [2]."

// groupCompose composes by groups (the composition before synthesis), so
// that verifyComposed is the report's body as written.
var groupCompose = map[string]string{"assembly.synthesis": "false"}

// quoteOf captures, as ${name}, 25 characters of source text from the
// excerpt of item i of a verification prompt.
func quoteOf(i int, name string) string {
	return fmt.Sprintf(`Item %d\nSentence: [^\n]*\nSource \[\d+\] excerpt: [^\n]*?(?P<%s>[A-Za-z][^\n"\\…]{24})`, i, name)
}

// verifyScript is battery_no_ready with verifyComposed as the composition
// and a judge that answers for pairs 0-4: supported with a quote taken
// from the prompt's excerpt (0, 2, 3), unsupported (1: the wrong source),
// and for pair 4 what last says.
func verifyScript(t *testing.T, last string) llmtest.Script {
	s := composing(t, verifyComposed)
	judge := llmtest.Rule{
		Name:   "judge",
		Match:  []string{`^Check these citations`, quoteOf(0, "q0"), quoteOf(2, "q2"), quoteOf(3, "q3"), `Item 4\n`},
		Expand: true,
		Reply: `{"verdicts":[{"i":0,"supported":true,"quote":"${q0}"},{"i":1,"supported":false,"quote":""},` +
			`{"i":2,"supported":true,"quote":"${q2}"},{"i":3,"supported":true,"quote":"${q3}"},` + last + `]}`,
	}
	s.Rules = append([]llmtest.Rule{judge}, s.Rules...)
	return s
}

// A composition citing the wrong source: the judge says so, the citation
// goes, the sentence keeps its right one, and the precision is 3 of 4
// judged pairs... plus pair 4, judged supported with a quote that is not
// in the source: counted unsupported, its sentence marked.
func TestVerifyRemovesWrongCitation(t *testing.T) {
	r := runSession(t, verifyScript(t, `{"i":4,"supported":true,"quote":"garnet electrolytes conduct lithium superbly"}`), groupCompose)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if used := rulesUsed(r.llm); used["judge"] != 1 {
		t.Fatalf("the judge was asked %d times; rules %v\n%s", used["judge"], used, r.res.Report)
	}
	reportHas(t, r.res.Report,
		"of the solid electrolyte [1].",
		"raise the resistance [2].",
		"lose contact [2].",
		"at room temperature [unverified].",
		"_Citations verified: 3 of 5 supported (60%); 2 unsupported removed; 1 sentence(s) marked [unverified]._")
	if p := r.res.CitationPrecision; p == nil || *p != 0.6 {
		t.Errorf("citation_precision %v, want 0.6", p)
	}
	if r.res.CitationsSupported != 3 || r.res.CitationsUnsupported != 2 || r.res.SentencesMarked != 1 || r.res.CitationsUnchecked != 0 {
		t.Errorf("counts: supported %d unsupported %d marked %d unchecked %d", r.res.CitationsSupported, r.res.CitationsUnsupported, r.res.SentencesMarked, r.res.CitationsUnchecked)
	}
	// No sentence here is copied from its source: the model judged all.
	if r.res.CitationsContained != 0 || r.res.CitationsByModel != 3 {
		t.Errorf("routes: contained %d, by model %d; want 0, 3", r.res.CitationsContained, r.res.CitationsByModel)
	}
}

// With the stage off, the same session keeps every citation as composed.
func TestVerifyOff(t *testing.T) {
	r := runSession(t, verifyScript(t, `{"i":4,"supported":false,"quote":""}`), map[string]string{"assembly.verify_citations": "false", "assembly.synthesis": "false"})
	if r.err != nil {
		t.Fatal(r.err)
	}
	if used := rulesUsed(r.llm); used["judge"] != 0 || r.res.CitationPrecision != nil || strings.Contains(r.res.Report, "Citations verified") {
		t.Fatalf("verification ran while off: rules %v, precision %v", used, r.res.CitationPrecision)
	}
	if !strings.Contains(r.res.Report, "raise the resistance [1][2].") {
		t.Errorf("the composition changed:\n%s", r.res.Report)
	}
}

// A judge that answers what is not a verdict gets one repair call; then
// the pairs it was asked about stand unchecked: no citation removed.
func TestVerifyUnreadableAnswerLeavesCitations(t *testing.T) {
	s := lethetest.Script(t, "battery_no_ready")
	s.Rules = append([]llmtest.Rule{{Name: "judge", Match: []string{`^Check these citations`}, Reply: "All of them look fine to me."}}, s.Rules...)
	r := runSession(t, s, nil)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if used := rulesUsed(r.llm); used["judge"] != 2 {
		t.Fatalf("judge asked %d times, want 2 (one repair)", used["judge"])
	}
	// The one sentence composition numbered by its fact is proved by
	// containment; the two the model would judge stand unchecked.
	if r.res.CitationsUnchecked != 2 || r.res.CitationsUnsupported != 0 || r.res.CitationsContained != 1 || r.res.CitationsByModel != 0 {
		t.Fatalf("unchecked %d unsupported %d contained %d by model %d", r.res.CitationsUnchecked, r.res.CitationsUnsupported, r.res.CitationsContained, r.res.CitationsByModel)
	}
	if !strings.Contains(r.res.Report, "Citations verified: 1 of 1 supported (100%); 2 could not be checked and stand unverified.") || r.res.Citations == 0 {
		t.Errorf("report:\n%s", r.res.Report)
	}
}

// The root-shortcut path (root DONE with a result that cites) goes through
// the same check: the root's result cites [1] for a claim the judge
// rejects. Without synthesis the report is that result alone, so the
// judge sees exactly its two pairs (TestRootDoneComposesSections has the
// composed root-shortcut report).
func TestVerifyRootShortcut(t *testing.T) {
	s := lethetest.Script(t, "battery_root_done")
	for i, r := range s.Rules {
		if strings.HasSuffix(r.Name, "-done-last") {
			s.Rules[i].Reply = strings.Replace(r.Reply, "Solid-state batteries fail mainly by lithium dendrites",
				"Solid-state batteries fail mainly by lithium dendrites [1]. They never fail by heat [1]. In short they", 1)
		}
	}
	s.Rules = append([]llmtest.Rule{{
		Name: "judge", Match: []string{`^Check these citations`, quoteOf(0, "q0"), `Item 1\n`}, Expand: true,
		Reply: `{"verdicts":[{"i":0,"supported":true,"quote":"${q0}"},{"i":1,"supported":false,"quote":""}]}`,
	}}, s.Rules...)
	r := runSession(t, s, map[string]string{"assembly.synthesis": "false"})
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.res.StopReason != workflows.StopRootDone {
		t.Fatalf("stop %q", r.res.StopReason)
	}
	if used := rulesUsed(r.llm); used["judge"] != 1 || used["compose"] != 0 {
		t.Fatalf("rules %v\n%s", used, r.res.Report)
	}
	if !strings.Contains(r.res.Report, "lithium dendrites [1].") || !strings.Contains(r.res.Report, "never fail by heat [unverified].") {
		t.Errorf("report:\n%s", r.res.Report)
	}
	if p := r.res.CitationPrecision; p == nil || *p != 0.5 {
		t.Errorf("precision %v, want 0.5", p)
	}
}

// A chat outage during verification (the first three judge requests cut)
// is waited out: the same report as without it, no failed call, and the
// wait recorded off the budget.
func TestVerifyOutageIsWaitedOut(t *testing.T) {
	script := verifyScript(t, `{"i":4,"supported":false,"quote":""}`)
	base := runSession(t, script, groupCompose)
	if base.err != nil {
		t.Fatal(base.err)
	}
	srv := llmtest.NewServer(script)
	t.Cleanup(srv.Close)
	f, err := llmtest.NewFaulty(srv.Handler())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	cuts := 0
	f.OnRequest(func(_ int, req *http.Request) bool {
		if !isChat(req) || cuts >= 3 {
			return false
		}
		body, _ := io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte("Check these citations")) {
			cuts++
			return true
		}
		return false
	})
	r := runAt(t, srv, f.URL(), groupCompose, func(cfg *config.Config) workflows.SessionInput {
		return workflows.SessionInput{Goal: goal, Config: cfg}
	}, nil)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if cuts != 3 {
		t.Fatalf("%d judge requests cut, want 3", cuts)
	}
	sameOutcome(t, r.res, base.res)
	if r.res.ModelWaitedS <= 0 || *r.res.CitationPrecision != *base.res.CitationPrecision {
		t.Fatalf("model_waited_s %.1f, precision %v (undisturbed %v)", r.res.ModelWaitedS, *r.res.CitationPrecision, *base.res.CitationPrecision)
	}
}

// A sentence copied from one source but numbered with another: the
// judge rejects the number, and the stage cites the source that holds
// the sentence instead of marking it [unverified].
func TestVerifyRecitesToTheHolder(t *testing.T) {
	s := composing(t, "## Dendrites\n\nDendrite growth in solid electrolytes is driven by uneven current density at the lithium interface [2].\n\n"+
		"## Interfaces\n\nThe moon is made of cheese [2].")
	s.Rules = append([]llmtest.Rule{{Name: "judge", Match: []string{`^Check these citations`},
		Reply: `{"verdicts":[{"i":0,"supported":false,"quote":""},{"i":1,"supported":false,"quote":""}]}`}}, s.Rules...)
	r := runSession(t, s, groupCompose)
	if r.err != nil {
		t.Fatal(r.err)
	}
	reportHas(t, r.res.Report,
		"at the lithium interface [1].",
		"made of cheese [unverified].",
		"_Citations verified: 0 of 2 supported (0%); 2 unsupported removed; 1 sentence(s) re-cited to the source that holds them; 1 sentence(s) marked [unverified]._",
		"[1] Lithium dendrites in solid electrolytes — corpus:///dendrites.md")
	if r.res.SentencesRecited != 1 || r.res.SentencesMarked != 1 {
		t.Errorf("recited %d, marked %d; want 1, 1", r.res.SentencesRecited, r.res.SentencesMarked)
	}
}

// composing is the battery_no_ready script with its composition answered
// by reply.
func composing(t *testing.T, reply string) llmtest.Script {
	t.Helper()
	s := lethetest.Script(t, "battery_no_ready")
	for i, r := range s.Rules {
		if r.Name == "compose" {
			s.Rules[i].Reply = reply
		}
	}
	return s
}

// reportHas fails the test for each string the report lacks.
func reportHas(t *testing.T, rep string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(rep, want) {
			t.Errorf("report lacks %q:\n%s", want, rep)
		}
	}
}

// TestVerifyRecitesByModel: a sentence the judge refuses for its cited
// source, which no source of the report holds by its text, is judged again
// against the passage of the session's evidence that shares most of its
// words; supported there, it cites that source, which the report lists.
func TestVerifyRecitesByModel(t *testing.T) {
	s := composing(t, "## Dendrites\n\nLithium metal turns liquid near 180 degrees and then reacts with the oxygen of the cathode [1].\n\n"+
		"## Interfaces\n\nThe moon is made of cheese [1].")
	s.Rules = append([]llmtest.Rule{
		{Name: "recite", Match: []string{`^Check these citations`, `Item 0\nSentence: [^\n]*\nSource \[1\] excerpt: [^\n]*melts at 180`},
			Reply: `{"verdicts":[{"i":0,"supported":true,"quote":"a lithium metal anode melts at 180 degrees Celsius"}]}`},
		{Name: "judge", Match: []string{`^Check these citations`},
			Reply: `{"verdicts":[{"i":0,"supported":false,"quote":""},{"i":1,"supported":false,"quote":""}]}`}}, s.Rules...)
	// One evidence item per section: the thermal page is read, not listed.
	r := runSession(t, s, map[string]string{"assembly.synthesis": "false", "assembly.done_evidence": "1", "assembly.leaf_evidence": "1"})
	if r.err != nil {
		t.Fatal(r.err)
	}
	t.Log(r.res.Report)
	reportHas(t, r.res.Report,
		"the oxygen of the cathode [1].",
		"made of cheese [unverified].",
		"1 sentence(s) re-cited to the source that holds them; 1 sentence(s) marked [unverified]._",
		"[1] Thermal behaviour and safety — corpus:///thermal.md")
	if used := rulesUsed(r.llm); used["recite"] != 1 || r.res.SentencesRecited != 1 {
		t.Errorf("recite rule used %d times, recited %d; want 1, 1", used["recite"], r.res.SentencesRecited)
	}
}
