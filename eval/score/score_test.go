package score

import (
	"context"
	"encoding/xml"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/lethe-research/lethe/contract"
)

func TestSentences(t *testing.T) {
	report := "# Goal title\n\n" +
		"Journald collects the kernel and system messages on Debian [1]. It keeps them persistently below /var/log/journal. [2][3]\n" +
		"Short one [1].\n" +
		"- Key files:\n" +
		"- pam_unix reads the user accounts from /etc/passwd [4]\n" +
		"| a | b |\n" +
		"e.g. this sentence has no citation but six words.\n" +
		"For consistency set these to \"/usr/bin/editor\". (Historically, \"$EDITOR\" was \"ed\" and \"$VISUAL\" was \"vi\".) [1] | NORMAL | :q | quit vim | [1]\n\n" +
		"[2] The secure IMAP service, imaps, uses port 993.\n[3] thermal\n[4] Debian Reference, chapter six on network applications — https://example.org/ch06\n\n" +
		"## Sources\n\n[1] Debian Reference — file:///ch03\n\n_Session stopped: root_done._\n"
	got := Sentences(report)
	want := []Sentence{
		{Text: "Journald collects the kernel and system messages on Debian.", Cites: []int{1}, Factual: true},
		{Text: "It keeps them persistently below /var/log/journal.", Cites: []int{2, 3}, Factual: true},
		{Text: "Short one.", Cites: []int{1}, Factual: false},
		{Text: "Key files:", Factual: false},
		{Text: "pam_unix reads the user accounts from /etc/passwd", Cites: []int{4}, Factual: true},
		{Text: "e.g. this sentence has no citation but six words.", Factual: true},
		{Text: "For consistency set these to \"/usr/bin/editor\".", Factual: true},
		{Text: "(Historically, \"$EDITOR\" was \"ed\" and \"$VISUAL\" was \"vi\".)", Cites: []int{1}, Factual: true},
		{Text: "| NORMAL | :q | quit vim |", Cites: []int{1}, Factual: false},
		{Text: "The secure IMAP service, imaps, uses port 993.", Cites: []int{2}, Factual: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Sentences:\n got  %#v\n want %#v", got, want)
	}
	factual, citing := Recall(got)
	if factual != 7 || citing != 5 {
		t.Fatalf("Recall = %d, %d; want 7, 5", factual, citing)
	}
}

func TestRatio(t *testing.T) {
	for _, tc := range []struct {
		n, d int
		want float64
	}{{0, 0, 0}, {2, 3, 2.0 / 3}, {3, 3, 1}} {
		if got := Ratio(tc.n, tc.d); got != tc.want {
			t.Errorf("Ratio(%d,%d) = %v", tc.n, tc.d, got)
		}
	}
}

func TestRank(t *testing.T) {
	chunks := []string{
		"Gardening tips for tomatoes and roses.",
		"The journal service journald writes binary logs below /var/log/journal.",
		"journalctl shows the journal; journalctl -b shows the last boot.",
		"",
	}
	if got := Rank("Which command shows the journal logs?", chunks, 2); !reflect.DeepEqual(got, []int{2, 1}) {
		t.Fatalf("Rank = %v, want [2 1]", got)
	}
	if got := Rank("the and of", chunks, 3); len(got) != 0 {
		t.Fatalf("stopword query ranked %v", got)
	}
	if got := Rank("journal", nil, 3); got != nil {
		t.Fatalf("no chunks ranked %v", got)
	}
}

func TestWindow(t *testing.T) {
	text := strings.Repeat("filler words about nothing in particular. ", 50) + "The shadow file holds encrypted passwords. " + strings.Repeat("more filler text here. ", 50)
	w := Window(text, "Encrypted passwords live in the shadow file.", 120)
	if !strings.Contains(w, "shadow file holds encrypted passwords") || len([]rune(w)) > 120 {
		t.Fatalf("Window = %q", w)
	}
	if Window("short", "x", 100) != "short" {
		t.Fatal("short text must come back whole")
	}
}

// TestJudge runs the judge's two questions against scripted answers: a
// grade needs a quote that is the response's own and a "same" verdict on
// it; an outage is passed on, an answer that does not parse is
// ErrJudgeAnswer.
func TestJudge(t *testing.T) {
	const response = "# Title\n\nIt uses TLS. It listens on 143 too. The daemon listens on port 993 [1]. It also speaks POP3.\n\n## Summary\n\nUse port 143 with STARTTLS [2].\n\n[3] The \"imaps\" entry of /etc/services names port 993."
	outage := errors.New("connection refused")
	for _, c := range []struct {
		name             string
		extract, compare string
		extractErr       error
		score            float64
		quote            string
		calls            int
		err              error
	}{
		{"same", `{"quote": "The daemon listens on port 993 [1]."}`, `{"same": true}`, nil, 1, "The daemon listens on port 993.", 2, nil},
		{"copied loosely, in a fence", "```json\n{\"quote\": \"the daemon listens on port 993\"}\n```", `{"same": true}`, nil, 1, "The daemon listens on port 993.", 2, nil},
		{"two sentences", `{"quote": "The daemon listens on port 993. It also speaks POP3."}`, `{"same": true}`, nil, 1, "The daemon listens on port 993. It also speaks POP3.", 2, nil},
		{"different", `{"quote": "Use port 143 with STARTTLS."}`, `{"same": false}`, nil, 0, "Use port 143 with STARTTLS.", 2, nil},
		{"quote marks unescaped", `{"quote": "The "imaps" entry of /etc/services names port 993."}`, `{"same": true}`, nil, 1, `The "imaps" entry of /etc/services names port 993.`, 2, nil},
		{"string closed by a backtick", "{\"quote\": \"Use port 143 with `STARTTLS`}", `{"same": false}`, nil, 0, "Use port 143 with STARTTLS.", 2, nil},
		{"two sentences apart, copied out of order", `{"quote": "Use port 143 with STARTTLS. The daemon listens on port 993."}`, `{"same": true}`, nil, 1, "The daemon listens on port 993. Use port 143 with STARTTLS.", 2, nil},
		{"one sentence invented", `{"quote": "The daemon listens on port 993. Thunderbird connects there by default."}`, `{"same": true}`, nil, 0, "", 1, nil},
		{"nothing answers", `{"quote": ""}`, `{"same": true}`, nil, 0, "", 1, nil},
		{"the judge's own words", `{"quote": "IMAPS uses port 993 according to /etc/services."}`, `{"same": true}`, nil, 0, "", 1, nil},
		{"no verdict", `{"quote": "The daemon listens on port 993."}`, `{"answer": "yes"}`, nil, 0, "The daemon listens on port 993.", 2, ErrJudgeAnswer},
		{"extract not JSON", `port 993`, ``, nil, 0, "", 1, ErrJudgeAnswer},
		{"outage", ``, ``, outage, 0, "", 1, outage},
		// The second question asked of each sentence alone when the
		// sentences together do not give the gold answer (compareOne
		// below answers for the sentence on port 993).
		{"one of two sentences", `{"quote": "It also speaks POP3. The daemon listens on port 993."}`, `{"same": false}`, nil, 1, "The daemon listens on port 993. It also speaks POP3.", 3, nil},
		{"neither of two sentences", `{"quote": "It also speaks POP3. Use port 143 with STARTTLS."}`, `{"same": false}`, nil, 0, "It also speaks POP3. Use port 143 with STARTTLS.", 4, nil},
		{"an unreadable answer for one sentence", `{"quote": "It uses TLS. The daemon listens on port 993."}`, `{"same": false}`, nil, 1, "It uses TLS. The daemon listens on port 993.", 4, nil},
		{"an outage while asking of one sentence", `{"quote": "It listens on 143 too. The daemon listens on port 993."}`, `{"same": false}`, nil, 0, "It listens on 143 too. The daemon listens on port 993.", 3, outage},
		{"one sentence is not asked again", `{"quote": "The daemon listens on port 993 [1]."}`, `{"same": false}`, nil, 0, "The daemon listens on port 993.", 2, nil},
	} {
		// compareOne answers the second question asked of one sentence
		// of a longer quote: yes for the sentence on port 993 alone.
		compareOne := map[string]string{
			"The daemon listens on port 993.": `{"same": true}`,
			"It also speaks POP3.":            `{"same": false}`,
			"Use port 143 with STARTTLS.":     `{"same": false}`,
			"It uses TLS.":                    `{"answer": "yes"}`,
			"It listens on 143 too.":          "outage",
		}
		ask := func(_ context.Context, system, user string, maxTokens int) (string, error) {
			compare := strings.Contains(user, "ANSWER A: Port 993.") && maxTokens == CompareTokens
			_, after, _ := strings.Cut(user, "ANSWER B: ")
			b, _, _ := strings.Cut(after, "\n")
			switch {
			case system != JudgeSystem:
				t.Fatalf("%s: system %q", c.name, system)
			case compare && b == c.quote:
				return c.compare, nil
			case compare && compareOne[b] == "outage":
				return "", outage
			case compare && compareOne[b] != "":
				return compareOne[b], nil
			case strings.Contains(user, "RESPONSE:\n# Title") && maxTokens == ExtractTokens:
				return c.extract, c.extractErr
			}
			t.Fatalf("%s: unexpected question %q", c.name, user)
			return "", nil
		}
		j, calls, err := Judge(context.Background(), ask, "Which port?", "Port 993.", response, 1000)
		if j.Score != c.score || j.Quote != c.quote || calls != c.calls || !errors.Is(err, c.err) || (c.err == nil) != (err == nil) {
			t.Errorf("%s: Judge = %+v, %d calls, %v", c.name, j, calls, err)
		}
	}
}

// TestRubricNamesItsQuestions keeps the prompts and the rubric the docs
// quote on the same two questions.
// TestGroundSplitsAsTheResponse: the twentieth run's dr-061
// summary, "… refers to root=UUID=... is kept in `/boot/grub/grub.cfg`.",
// is three pieces to the splitter; the judge's copy of it is split the
// same way and grounded piece by piece.
func TestGroundSplitsAsTheResponse(t *testing.T) {
	response := "# Which command probes the UUID of a block device, and in which file does GRUB2 keep the menu entry whose kernel line refers to root=UUID=...?\n\n## Summary\n\nUse `blkid(8)` to probe UUID of a block device [5]. The GRUB2 menu entry whose kernel line refers to root=UUID=... is kept in `/boot/grub/grub.cfg`. [3]"
	quote := "Use `blkid(8)` to probe UUID of a block device [5]. The GRUB2 menu entry whose kernel line refers to root=UUID=... is kept in `/boot/grub/grub.cfg`. [3]"
	got, ok := Ground(quote, response)
	if !ok || got != "Use `blkid(8)` to probe UUID of a block device. The GRUB2 menu entry whose kernel line refers to root=UUID=... is kept in `/boot/grub/grub.cfg`." {
		t.Fatalf("Ground = %q, %v", got, ok)
	}
}

func TestRubricNamesItsQuestions(t *testing.T) {
	ext, cmp := ExtractPrompt("Q?", "R.", 100), ComparePrompt("Q?", "G.", "B.")
	for _, phrase := range []string{"Copy, word for word, the sentence or two of the RESPONSE that best answer the QUESTION", "give the same answer to the QUESTION", "a different command, file, option, number or name does"} {
		if !strings.Contains(Rubric, phrase) || !strings.Contains(ext+cmp, phrase) {
			t.Errorf("%q is not in both the rubric and the prompts", phrase)
		}
	}
	if strings.Contains(ext, "G.") {
		t.Error("the first question shows the gold answer")
	}
}

func TestParseVerdicts(t *testing.T) {
	for _, c := range []struct {
		name            string
		in              string
		supported, seen []bool
		err             bool
	}{
		{"out of order, unknown number ignored", `{"verdicts":[{"i":2,"supported":true,"quote":"x"},{"i":1,"supported":false},{"i":9,"supported":true}]}`,
			[]bool{false, true, false}, []bool{true, true, false}, false},
		{"first verdict counts", `{"verdicts":[{"i":1,"supported":true},{"i":1,"supported":false}]}`, []bool{true}, []bool{true}, false},
		{"truncated", `{"verdicts":[{"i":1,"supported":true,"quote":"the eyes mo`, nil, nil, true},
		{"no JSON", "nothing", nil, nil, true},
	} {
		sup, seen, err := ParseVerdicts(c.in, len(c.supported)+1*boolInt(c.err))
		if (err != nil) != c.err || !reflect.DeepEqual(sup, c.supported) || !reflect.DeepEqual(seen, c.seen) {
			t.Errorf("%s: ParseVerdicts = %v, %v, %v", c.name, sup, seen, err)
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestSummarize(t *testing.T) {
	recs := []Record{
		{Index: 1, System: "rag", Contains: true, Backed: true, Judge: 1, Cited: 3, Supported: 2, Factual: 4, Citing: 3, EvidenceRecall: 1, Calls: 1, PromptTokens: 900, CompletionTokens: 100, Seconds: 30},
		{Index: 0, System: "rag", Judge: 0.5, Cited: 2, Supported: 1, Unjudged: 1, Factual: 1, Citing: 1, EvidenceRecall: 0.5, Calls: 1, PromptTokens: 1000, Seconds: 30},
		{Index: 0, System: "lethe", Failed: true, Error: "stopped"},
		{Index: 1, System: "lethe", Contains: true, UnverifiedOnly: true},
	}
	sums := Summarize(recs, []string{"lethe", "rag", "loop"})
	want := []Summary{
		{System: "lethe", Questions: 2, Failed: 1, Contains: 0.5},
		{System: "rag", Questions: 2, Contains: 0.5, Verified: 0.5, Backed: 0.5, Judge: 0.75, Precision: 0.6, CitationRecall: 0.8, EvidenceRecall: 0.75, Unjudged: 1, Calls: 2, Tokens: 2000, Minutes: 1},
	}
	if !reflect.DeepEqual(sums, want) {
		t.Fatalf("Summarize:\n got  %+v\n want %+v", sums, want)
	}
	SortRecords(recs, []string{"lethe", "rag"})
	if recs[0].System != "lethe" || recs[1].Index != 0 || recs[2].Index != 1 || recs[2].System != "lethe" {
		t.Fatalf("SortRecords: %+v", recs)
	}
	tab := Table(sums, recs)
	if !strings.Contains(tab, "| rag | 2 | 0 | 0.50 | 0.50 | 0.50 | 0.75 | 0.60 | 0.80 | 0.75 | 1 | 2 | 2000 | 1.0 |") ||
		!strings.Contains(tab, "| lethe | 2 | 1 | 0.50 | 0.00 |") || !strings.Contains(tab, "| lethe | unverified |") ||
		!strings.Contains(tab, "| rag | no | 0.5 | 2 (1) | 1 | 1 (1) |") || !strings.Contains(tab, "failed: stopped") {
		t.Fatalf("Table:\n%s", tab)
	}
	// lethe: one failed, one contained with grade 0 (disagree); rag: a
	// contained answer graded 1 and a missed one graded 0.5 (one of
	// each). A record the judge could not grade is not counted.
	if !strings.Contains(tab, "The judge and gold containment agree on 1 of 3 graded answers (lethe 0 of 1, rag 1 of 2)") {
		t.Fatalf("Table lacks the agreement line:\n%s", tab)
	}
	if a, n := Agreement(append(recs, Record{System: "rag", Contains: true, Judge: 1, JudgeError: "timeout"})); a != 1 || n != 3 {
		t.Fatalf("Agreement counted a record the judge could not grade: %d of %d", a, n)
	}
	if r := recs[3]; math.Abs(r.Precision()-2.0/3) > 1e-12 || r.CitationRecall() != 0.75 {
		t.Fatalf("record precision %v recall %v", r.Precision(), r.CitationRecall())
	}
	lines, err := JSONL(recs)
	if err != nil || strings.Count(lines, "\n") != 4 {
		t.Fatalf("JSONL: %v\n%s", err, lines)
	}
}

func TestPlotIsSVG(t *testing.T) {
	svg := Plot([]Summary{{System: "lethe <x>", Questions: 2, Judge: 0.5, Tokens: 200000}, {System: "rag", Questions: 2, Judge: 0.25, Tokens: 3000}})
	if err := xml.Unmarshal([]byte(svg), new(struct{})); err != nil {
		t.Fatalf("not XML: %v\n%s", err, svg)
	}
	for _, s := range []string{"lethe &lt;x&gt;", "rag", "<circle", "100k", "1k", "tokens per question"} {
		if !strings.Contains(svg, s) {
			t.Errorf("plot lacks %q", s)
		}
	}
	if err := xml.Unmarshal([]byte(Plot(nil)), new(struct{})); err != nil {
		t.Fatalf("empty plot: %v", err)
	}
}

// docs/eval.md quotes the rubric the judge gets; they must not drift.
func TestRubricMatchesDocs(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "eval.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i, j := strings.Index(doc, "<!-- rubric -->"), strings.Index(doc, "<!-- /rubric -->")
	if i < 0 || j < i {
		t.Fatal("docs/eval.md has no rubric block")
	}
	quoted := strings.TrimSpace(doc[i+len("<!-- rubric -->") : j])
	quoted = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(quoted, "```"), "```"))
	if quoted != Rubric {
		t.Fatalf("docs/eval.md rubric:\n%s\n\ncode:\n%s", quoted, Rubric)
	}
}

// The verified report's footer (contract.CitationCounts.Footer, written as
// "_…_" after the sources, or after the body when no source is listed)
// is not a sentence of the answer, and the [unverified] marker is not
// part of a sentence's text.
func TestSentencesSkipVerificationFooter(t *testing.T) {
	footers := []contract.CitationCounts{
		{Pairs: 3, Supported: 1, Unsupported: 2, Marked: 1, Contained: 1},
		{Pairs: 2, Unchecked: 2},
		{},
	}
	body := "# Goal\n\nJournald keeps the logs below /var/log/journal [1]. Systemd starts it at boot time [unverified].\n\n"
	want := []Sentence{
		{Text: "Journald keeps the logs below /var/log/journal.", Cites: []int{1}, Factual: true},
		{Text: "Systemd starts it at boot time.", Factual: true},
	}
	for _, c := range footers {
		foot := "_" + c.Footer() + " The model could not be asked about some citations (see the worker log)._\n\n_Session stopped: root_done._\n"
		for _, report := range []string{
			body + "## Sources\n\n[1] Debian Reference — file:///ch03\n\n" + foot,
			body + foot, // no source listed
		} {
			if got := Sentences(report); !reflect.DeepEqual(got, want) {
				t.Errorf("footer %q:\n got  %#v\n want %#v", c.Footer(), got, want)
			}
		}
	}
}

// TestVerified: a sentence the citation check marked goes, with its mark
// wherever the check put it (after the full stop, where the mark it
// replaced belonged to the sentence before it, or after a comma); what
// the report states on evidence stays, spacing aside.
func TestVerified(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"No marks here [1].", "No marks here [1]."},
		{"CUPS listens on 631 [1]. The lp option is -o collate=true, [unverified]. Done [2].",
			"CUPS listens on 631 [1]. Done [2]."},
		{"The port is 993. [unverified] Use imaps [1].", "Use imaps [1]."},
		{"Guess one [unverified]. Guess two [unverified].", ""},
		{"# Title\n\n## Part\n\nRead it [1]. Made up [unverified].\n\n## Summary\n\nAlso made up. [unverified]",
			"# Title\n\n## Part\n\nRead it [1]. \n\n## Summary\n\n"},
		{"Run `echo [unverified]` to print it [1].", "Run `echo [unverified]` to print it [1]."},
	} {
		if got := Verified(c.in); strings.Join(strings.Fields(got), " ") != strings.Join(strings.Fields(c.want), " ") {
			t.Errorf("Verified(%q)\n got  %q\n want %q", c.in, got, c.want)
		}
	}
}
