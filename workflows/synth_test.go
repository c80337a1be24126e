package workflows_test

import (
	"bytes"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/lethe-research/lethe/internal/lethetest"
	"github.com/lethe-research/lethe/llm/llmtest"
	"github.com/lethe-research/lethe/workflows"
)

// The report as a synthesis: an outline of the sections, each section a
// paragraph written from its extracted facts and citing their sources,
// then the summary; every citation verified.
func TestSynthesisReport(t *testing.T) {
	s := lethetest.Script(t, "battery_no_ready")
	// A section call answers with prose citing the first fact's source,
	// and quotes that fact's opening to the judge; the summary cites [1].
	section := sectionRule("## Heading the model added\n\n- The research on ${title} finds a clear mechanism [${n}].\n- It matters for the whole cell [${n}].")
	summary := llmtest.Rule{Name: "summary", Match: []string{`^Summarize this report`}, Reply: "Both dendrites and interfaces make solid-state cells fail [1]."}
	judge := llmtest.Rule{Name: "judge", Match: []string{`^Check these citations`}, Reply: `{"verdicts":[{"i":0,"supported":false,"quote":""}]}`}
	s.Rules = append([]llmtest.Rule{judge, summary, section}, s.Rules...)
	r := runSession(t, s, nil)
	if r.err != nil {
		t.Fatal(r.err)
	}
	used := rulesUsed(r.llm)
	// Two sections; one has evidence (the other task finished on the
	// first one's search) and is written from its facts, the other is its
	// task's result as collected.
	if used["section"] != 1 || used["summary"] != 1 || used["compose"] != 0 {
		t.Fatalf("rules used %v\n%s", used, r.res.Report)
	}
	rep := r.res.Report
	inOrder(t, rep, "## Outline\n\n1. Find how", "\n2. Find how", "\n## Find how", "\n## Find how", "finds a clear mechanism [", "\n## Summary\n\nBoth dendrites", "## Sources", "_Citations verified:")
	if strings.Contains(rep, "Heading the model added") || regexp.MustCompile(`(?m)^- `).MatchString(rep) {
		t.Errorf("the model's heading or list survived:\n%s", rep)
	}
	// The judge rejects pair 0 (the first section's first sentence) and
	// leaves the rest unchecked: one removed, precision 0 of 1.
	if p := r.res.CitationPrecision; p == nil || *p != 0 || r.res.CitationsUnsupported != 1 || r.res.CitationsUnchecked == 0 {
		t.Errorf("precision %v, unsupported %d, unchecked %d", p, r.res.CitationsUnsupported, r.res.CitationsUnchecked)
	}
	if !strings.Contains(rep, "finds a clear mechanism [unverified].") {
		t.Errorf("the rejected sentence is not marked:\n%s", rep)
	}
}

// sectionRule answers a synthesis section call with reply, which may use
// ${title} (the section's title, cut) and ${n} (its first fact's source).
func sectionRule(reply string) llmtest.Rule {
	return llmtest.Rule{
		Name:   "section",
		Match:  []string{`the section "(?P<title>[^"]{10,40})`, `(?m)^Facts:\n\[(?P<n>\d+)\] `},
		Expand: true,
		Reply:  reply,
	}
}

// rootSectionRules make the battery_root_done session's sections prose
// that cites the first fact's source, and a judge that supports every
// pair by quoting its source: the root-shortcut report as a synthesis.
func rootSectionRules(s llmtest.Script) llmtest.Script {
	section := sectionRule("The research on ${title} finds a clear mechanism [${n}].")
	summary := llmtest.Rule{Name: "summary", Match: []string{`^Summarize this report`}, Reply: "A summary nobody asked for [1]."}
	s.Rules = append([]llmtest.Rule{summary, section}, s.Rules...)
	return s
}

// A session that ends by root DONE gets the composed report too: the
// outline, its sections in prose, and the root's answer as the summary,
// in place of a Summarize call; every citation verified.
func TestRootDoneComposesSections(t *testing.T) {
	r := runSession(t, rootSectionRules(lethetest.Script(t, "battery_root_done")), nil)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.res.StopReason != workflows.StopRootDone {
		t.Fatalf("stop %q", r.res.StopReason)
	}
	used := rulesUsed(r.llm)
	if used["section"] == 0 || used["summary"] != 0 || used["judge"] == 0 {
		t.Fatalf("rules used %v\n%s", used, r.res.Report)
	}
	rep := r.res.Report
	inOrder(t, rep, "## Outline\n\n1. Find how", "\n2. Find how", "\n## Find how", "finds a clear mechanism [",
		"\n## Summary\n\nSolid-state batteries fail mainly by lithium dendrites", "## Sources", "_Citations verified:")
	if strings.Contains(rep, "nobody asked for") {
		t.Errorf("a Summarize call wrote the summary:\n%s", rep)
	}
}

// Sections the model cannot write (down past the tolerance for every
// section call) leave the root's answer alone, as before the sections
// existed: the stop stays root_done, and nothing says compose_failed.
func TestRootDoneSectionsFailKeepTheAnswer(t *testing.T) {
	s := rootSectionRules(lethetest.Script(t, "battery_root_done"))
	sectionCall := regexp.MustCompile(`the section \\"`)
	r := runFaultyScript(t, s, map[string]string{"llm.outage_tolerance": "3m"}, func(_ int, req *http.Request) bool {
		if !isChat(req) {
			return false
		}
		b, err := io.ReadAll(req.Body)
		if err != nil {
			return true
		}
		req.Body = io.NopCloser(bytes.NewReader(b))
		return sectionCall.Match(b)
	})
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.res.StopReason != workflows.StopRootDone || r.res.Error != "" {
		t.Fatalf("stop %q, error %q", r.res.StopReason, r.res.Error)
	}
	rep := r.res.Report
	if strings.Contains(rep, "## Outline") || strings.Contains(rep, "## Summary") || strings.Contains(rep, "extractive") ||
		!strings.Contains(rep, "Solid-state batteries fail mainly by lithium dendrites") {
		t.Fatalf("the report is not the root's answer alone:\n%s", rep)
	}
}

// inOrder fails unless the report holds each of wants, one after another.
func inOrder(t *testing.T, rep string, wants ...string) {
	t.Helper()
	at := 0
	for _, want := range wants {
		i := strings.Index(rep[at:], want)
		if i < 0 {
			t.Fatalf("report lacks %q after byte %d:\n%s", want, at, rep)
		}
		at += i + len(want)
	}
}
