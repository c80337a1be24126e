package activities_test

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"

	"github.com/lethe-research/lethe/config/load"
	"github.com/lethe-research/lethe/contract"
	escore "github.com/lethe-research/lethe/eval/score"
	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/graph/embedded"
	"github.com/lethe-research/lethe/graph/graphtest"
	"github.com/lethe-research/lethe/internal/lethetest"
	"github.com/lethe-research/lethe/llm/llmtest"
	"github.com/lethe-research/lethe/service"
)

// The sentences of the scored answer: one copied from its source, two the
// judge supports, one that cites the wrong source (its text is source
// 1's, it cites 2) and one the judge never answers about in JSON.
const (
	scoreSrc1     = "Using the xeyes program started from the GNOME terminal, you can check the GUI communication protocol used by each GUI application."
	scoreSrc2     = "Over an xterm window, which uses the X Window System core protocol, the eyes move with the mouse cursor."
	scoreCopied   = "Using the xeyes program started from the GNOME terminal, you can check the GUI communication protocol used by each GUI application [1]."
	scoreOwnWords = "Running xeyes from a terminal tells you which display protocol a program speaks [1]."
	scoreEyes     = "The eyes of xeyes follow the pointer only over X applications such as xterm [2]."
	scoreWrong    = "You can check the GUI communication protocol used by each GUI application with the xeyes program [2]."
	scoreNever    = "Xeyes was written for the first X11 release in nineteen eighty seven [1]."
	scoreLong     = "Xeyes draws a pair of eyes that follow the mouse cursor [2]."
	scoreLonger   = "Xeyes follows the cursor only over xterm [2]."
)

// TestScoreCitations runs the Score activity against the scripted judge:
// a copied sentence is supported by containment without a call; a batch
// whose answer is cut mid-JSON is split and asked again down to single
// claims, so nothing is lost to one bad answer; the wrong citation still
// costs exactly one supported sentence; a claim the judge never answers
// in JSON is counted unjudged (and unsupported), with the error recorded.
func TestScoreCitations(t *testing.T) {
	const cut = `{"verdicts": [{"i": 1, "supported": true, "quote": "the eyes mo`
	model := llmtest.NewServer(llmtest.Script{Rules: []llmtest.Rule{
		{Name: "batch-cut", System: []string{"You check citations"}, Match: []string{`CLAIM 2:`}, Reply: cut},
		{Name: "never", System: []string{"You check citations"}, Match: []string{`CLAIM 1: Xeyes was written`}, Reply: cut},
		{Name: "long-again", System: []string{"You check citations"}, Match: []string{`CLAIM 1: Xeyes draws`, `was cut off`},
			Reply: `{"verdicts": [{"i": 1, "supported": true, "quote": "the eyes move"}]}`},
		{Name: "long", System: []string{"You check citations"}, Match: []string{`CLAIM 1: Xeyes (draws|follows)`}, Reply: cut, Finish: "length"},
		{Name: "wrong", System: []string{"You check citations"}, Match: []string{`CLAIM 1: You can check the GUI`},
			Reply: `{"verdicts": [{"i": 1, "supported": false, "quote": ""}]}`},
		{Name: "entail", System: []string{"You check citations"}, Reply: `{"verdicts": [{"i": 1, "supported": true, "quote": "the eyes move"}]}`},
		{Name: "extract", System: []string{"strict grader"}, Match: []string{`Copy, word for word`, `RESPONSE:[\s\S]*Running xeyes`},
			Reply: `{"quote": "Running xeyes from a terminal tells you which display protocol a program speaks."}`},
		{Name: "extract-other", System: []string{"strict grader"}, Match: []string{`Copy, word for word`}, Reply: `{"quote": "The program is called xeyes."}`},
		{Name: "compare", System: []string{"strict grader"}, Match: []string{`ANSWER A: xeyes`}, Reply: `{"same": true}`},
	}})
	t.Cleanup(model.Close)
	cfg := lethetest.Config(t, model.URL(), t.TempDir(), map[string]string{"eval.judge_batch": "3", "eval.out_dir": filepath.Join(t.TempDir(), "eval")})
	store, err := embedded.Open(cfg.Graph.Path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	a, err := service.NewActivities(cfg, load.Sources{}, store, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.CloseResearch)
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivityWithOptions(a, activity.RegisterOptions{SkipInvalidStructFunctions: true})
	score := func(answer string) contract.EvalRecord {
		t.Helper()
		in := contract.ScoreInput{EvalID: "score-test", System: "rag", Eval: cfg.Eval,
			Question: contract.EvalQuestion{ID: "q", Question: "Which program shows the protocol?", Answer: "xeyes", Gold: []string{"xeyes"}},
			Answer:   contract.SystemAnswer{Answer: answer, Sources: []string{scoreSrc1, scoreSrc2}}}
		return execute[contract.EvalRecord](t, env, acts.Score, in)
	}

	rec := score(strings.Join([]string{scoreCopied, scoreOwnWords, scoreEyes, scoreWrong}, " "))
	// Calls: the batch of 3 (cut), its halves [own words] and [eyes, wrong]
	// (cut again), eyes and wrong alone, and the judge's two questions.
	if rec.Cited != 4 || rec.Supported != 3 || rec.Contained != 1 || rec.Unjudged != 0 || rec.JudgeError != "" || rec.CitationError != "" || rec.JudgeCalls != 7 {
		t.Errorf("record: cited %d, supported %d, contained %d, unjudged %d, judge calls %d, error %q",
			rec.Cited, rec.Supported, rec.Contained, rec.Unjudged, rec.JudgeCalls, rec.JudgeError)
	}
	if p := rec.Precision(); p != 0.75 {
		t.Errorf("precision %v, want 3/4: the wrong citation costs one sentence", p)
	}
	if len(rec.Unsupported) != 1 || rec.Unsupported[0] != strings.Replace(scoreWrong, " [2]", "", 1) {
		t.Errorf("unsupported sentences %q, want the wrong one alone", rec.Unsupported)
	}
	if !rec.Backed {
		t.Error("the gold answer stands in supported sentences, yet the record is not backed")
	}
	if rec.Judge != 1 || rec.JudgeQuote != strings.Replace(scoreOwnWords, " [1]", "", 1) {
		t.Errorf("judge %v on %q, want 1 on the response's own sentence", rec.Judge, rec.JudgeQuote)
	}
	copied := regexp.MustCompile(`CLAIM \d+: Using the xeyes program started`)
	for _, r := range model.Requests() {
		if copied.MatchString(r.User) {
			t.Errorf("the copied sentence went to the judge (rule %s)", r.Rule)
		}
	}

	rec = score(scoreNever + " " + scoreOwnWords)
	if rec.Cited != 2 || rec.Supported != 1 || rec.Unjudged != 1 || !strings.Contains(rec.CitationError, "unbalanced") || rec.JudgeError != "" {
		t.Errorf("never answered: cited %d, supported %d, unjudged %d, citation error %q, judge error %q", rec.Cited, rec.Supported, rec.Unjudged, rec.CitationError, rec.JudgeError)
	}
	if len(rec.Unsupported) != 1 || rec.Unsupported[0] != strings.Replace(scoreNever, " [1]", "", 1) {
		t.Errorf("unsupported sentences %q, want the unjudged one", rec.Unsupported)
	}

	// A single claim whose answer is cut at its budget is asked once more,
	// with a larger budget and a word to quote less; cut again, it is
	// unjudged. A cut answer that is not at its budget ("never") is not
	// asked again (above).
	seen := len(model.Requests())
	rec = score(scoreLong + " " + scoreLonger)
	if rec.Cited != 2 || rec.Supported != 1 || rec.Unjudged != 1 || !strings.Contains(rec.CitationError, "unbalanced") {
		t.Errorf("cut at the budget: cited %d, supported %d, unjudged %d, citation error %q; want the retried claim supported, the other unjudged",
			rec.Cited, rec.Supported, rec.Unjudged, rec.CitationError)
	}
	var retries, budgets int
	for _, r := range model.Requests()[seen:] {
		if strings.Contains(r.User, escore.EntailShorter) {
			retries++
			if strings.Contains(r.Body, fmt.Sprintf(`"max_tokens":%d`, escore.EntailRetryTokens)) {
				budgets++
			}
		}
	}
	if retries != 2 || budgets != 2 {
		t.Errorf("%d second tries, %d with the larger budget; want one per cut claim (2), each with %d tokens", retries, budgets, escore.EntailRetryTokens)
	}

	// The gold answer only in a sentence the session's check marked.
	rec = score("The program is xeyes, [unverified]. It runs on X [1].")
	if !rec.Contains || !rec.UnverifiedOnly || rec.Backed {
		t.Errorf("answer only in an [unverified] sentence: contains %v, unverified only %v, backed %v; want contains alone", rec.Contains, rec.UnverifiedOnly, rec.Backed)
	}
	// The judge's quote is no sentence of this response: grade 0 after
	// its first question, whatever the second would have said (the other
	// call is the citation check of "It runs on X [1].").
	if rec.Judge != 0 || rec.JudgeCalls != 2 || rec.JudgeQuote != "" || !strings.Contains(rec.JudgeReason, "not the response's") {
		t.Errorf("ungrounded quote: judge %v, %d calls, quote %q, reason %q", rec.Judge, rec.JudgeCalls, rec.JudgeQuote, rec.JudgeReason)
	}
	if rec = score("The program is xeyes [1]. A guess [unverified]."); !rec.Contains || rec.UnverifiedOnly || !rec.Backed {
		t.Errorf("answer in a checked sentence: contains %v, unverified only %v, backed %v; want contains and backed", rec.Contains, rec.UnverifiedOnly, rec.Backed)
	}
	// The gold answer only in the sentence whose citation the judge rejects.
	if rec = score("Over an xterm window, which uses the X Window System core protocol, the eyes move with the mouse cursor [2]. " + scoreWrong); !rec.Contains || rec.Backed || rec.Supported != 1 {
		t.Errorf("answer in an unsupported sentence: contains %v, backed %v; want contains alone", rec.Contains, rec.Backed)
	}
}

func TestNoteUnsupportedBounded(t *testing.T) {
	var rec contract.EvalRecord
	long := strings.Repeat("é", 400)
	for range contract.MaxUnsupportedShown + 2 {
		rec.NoteUnsupported(long)
	}
	if len(rec.Unsupported) != contract.MaxUnsupportedShown {
		t.Fatalf("%d sentences kept, want %d", len(rec.Unsupported), contract.MaxUnsupportedShown)
	}
	if n := len([]rune(rec.Unsupported[0])); n != 301 {
		t.Fatalf("kept %d runes, want 300 and the ellipsis", n)
	}
}

// TestScoreSessionLeavesModelNotesOut scores a session's answer whose
// sentence is copied from a note the model wrote with a source it read:
// the note is neither that source's text (the sentence is not contained
// and goes to the judge, who sees the page) nor something the session
// read (the gold string only in the note counts for no evidence recall).
func TestScoreSessionLeavesModelNotesOut(t *testing.T) {
	const (
		page = "The tmpfs filesystem keeps its files in virtual memory."
		note = "Mount /run as a ramfs so that it survives a reboot."
		url  = "https://a.example/tmpfs"
	)
	outDir := filepath.Join(t.TempDir(), "eval") // the worker's: Score writes its record there
	env, store, _, model := newScriptedEnv(t, t.TempDir(), map[string]string{"eval.out_dir": outDir}, llmtest.Script{Rules: []llmtest.Rule{
		{Name: "cites", System: []string{"You check citations"}, Match: []string{`CLAIM 1: Mount /run as a ramfs`},
			Reply: `{"verdicts": [{"i": 1, "supported": false, "quote": ""}]}`},
		{Name: "extract", System: []string{"strict grader"}, Match: []string{`Copy, word for word`}, Reply: `{"quote": "Mount /run as a ramfs."}`},
		{Name: "compare", System: []string{"strict grader"}, Reply: `{"same": false}`},
	}})
	const sid = "score-notes"
	if err := store.CreateSession(t.Context(), graph.Session{ID: sid, Goal: "g", GoalDocEmb: graphtest.Unit(0), GoalQueryEmb: graphtest.Unit(1), Dim: graphtest.Dim},
		graph.Task{Description: "g", EmbedText: "g", Embedding: graphtest.Unit(0)}); err != nil {
		t.Fatal(err)
	}
	if _, err := store.AddEvidence(t.Context(), sid, "k", graph.RootShortID, []graph.Evidence{
		{Content: page, SourceURL: url, Kind: graph.KindHTML, Strength: 0.5, Embedding: graphtest.Unit(2), CreatedIter: 1},
		{Content: note, SourceURL: url, Kind: graph.KindLLM, Strength: 0.5, Embedding: graphtest.Unit(3), CreatedIter: 2},
	}); err != nil {
		t.Fatal(err)
	}
	cfg := lethetest.Config(t, model.URL(), t.TempDir(), map[string]string{"eval.out_dir": outDir})
	in := contract.ScoreInput{EvalID: "score-notes", System: "lethe", SessionID: sid, Eval: cfg.Eval,
		Sources:  []contract.Source{{N: 1, URL: url}},
		Question: contract.EvalQuestion{ID: "q", Question: "Which filesystem keeps /run?", Answer: "ramfs", Gold: []string{"ramfs"}},
		Answer:   contract.SystemAnswer{Answer: "Mount /run as a ramfs so that it survives a reboot [1]."}}
	if rec := execute[contract.EvalRecord](t, env, acts.Score, in); rec.Cited != 1 || rec.Contained != 0 || rec.Supported != 0 || rec.EvidenceRecall != 0 || !rec.Contains || rec.Backed {
		t.Fatalf("cited %d, contained %d, supported %d, evidence recall %v, contains %v, backed %v; want 1, 0, 0, 0, true, false",
			rec.Cited, rec.Contained, rec.Supported, rec.EvidenceRecall, rec.Contains, rec.Backed)
	}
}

// execute runs activity on in and returns its result.
func execute[T any](t *testing.T, env *testsuite.TestActivityEnvironment, activity, in any) T {
	t.Helper()
	var out T
	v, err := env.ExecuteActivity(activity, in)
	if err == nil {
		err = v.Get(&out)
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}
