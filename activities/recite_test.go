package activities_test

import (
	"errors"
	"net/http"
	"reflect"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/lethe-research/lethe/activities"
	"github.com/lethe-research/lethe/contract"
	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/graph/embedded"
	"github.com/lethe-research/lethe/graph/graphtest"
	"github.com/lethe-research/lethe/llm/llmtest"
)

func TestReciteCandidates(t *testing.T) {
	sources := map[string][]string{
		"corpus:///a": {"Lithium dendrites grow along grain boundaries of the electrolyte."},
		"corpus:///b": {"It receives the stored message from the TLS/IMAP4 port (993).\nOther text."},
		"corpus:///c": {"The secure IMAP port is listed in /etc/services as imaps."},
		"corpus:///d": {"The secure IMAP port is listed in /etc/services as imaps."},
	}
	item := func(i int, sentence, url string) contract.VerifyItem {
		return contract.VerifyItem{I: i, Sentence: sentence, N: 1, URL: url}
	}
	unsupported := func(i int) contract.VerifyVerdict {
		return contract.VerifyVerdict{I: i, Status: contract.Unsupported, Via: contract.ViaModel}
	}
	tests := []struct {
		name    string
		item    contract.VerifyItem
		verdict contract.VerifyVerdict
		want    string // candidate URL, "" for none
	}{
		{"the source sharing most words", item(0, "The stored message comes from the IMAP4 port 993.", "corpus:///a"), unsupported(0), "corpus:///b"},
		{"never the cited source", item(1, "The secure IMAP port is in /etc/services.", "corpus:///c"), unsupported(1), "corpus:///d"},
		{"ties to the first URL", item(2, "The secure IMAP port is in /etc/services.", "corpus:///a"), unsupported(2), "corpus:///c"},
		{"too few words shared", item(3, "The moon is made of cheese and dendrites.", "corpus:///b"), unsupported(3), ""},
		{"function words do not count", item(7, "It is the one from the other.", "corpus:///a"), unsupported(7), ""},
		{"a supported item", item(4, "The stored message comes from the IMAP4 port 993.", "corpus:///a"), contract.VerifyVerdict{I: 4, Status: contract.Supported}, ""},
		{"an item already moved", item(5, "The stored message comes from the IMAP4 port 993.", "corpus:///a"), contract.VerifyVerdict{I: 5, Status: contract.Unsupported, Moved: 2}, ""},
		{"an unchecked item", item(6, "The stored message comes from the IMAP4 port 993.", "corpus:///a"), contract.VerifyVerdict{I: 6, Status: contract.Unchecked}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := activities.ReciteCandidates([]contract.VerifyItem{tt.item}, []contract.VerifyVerdict{tt.verdict}, sources, 600)
			var want []contract.VerifyItem
			if tt.want != "" {
				w := tt.item
				w.URL = tt.want
				want = []contract.VerifyItem{w}
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("candidates %+v, want %+v", got, want)
			}
		})
	}
}

const (
	urlA, urlB, urlC = "https://a.example/1", "https://b.example/2", "corpus:///mail.html?passage=3"
	imap             = "The secure IMAP service runs on port 993."
	cathode          = "Cathode particles swell and crack on cycling."
	gap              = "Dendrites reach the cathode through the port 993 gap."
)

// reciteSession stores a session whose three sources the second look's
// tests cite, and returns the batch they verify: the IMAP sentence cites
// the dendrite page, but the mail page (not a source of the report)
// holds it; the cathode sentence cites the dendrite page, but the
// report's source 2 holds it; the gap sentence no source holds.
func reciteSession(t *testing.T, store *embedded.Store) contract.VerifyInput {
	t.Helper()
	const sid = "recite"
	if err := store.CreateSession(t.Context(), graph.Session{ID: sid, Goal: "g", GoalDocEmb: graphtest.Unit(0), GoalQueryEmb: graphtest.Unit(1), Dim: graphtest.Dim},
		graph.Task{Description: "g", EmbedText: "g", Embedding: graphtest.Unit(0)}); err != nil {
		t.Fatal(err)
	}
	if _, err := store.AddEvidence(t.Context(), sid, "k", graph.RootShortID, []graph.Evidence{
		{Content: "Lithium dendrites grow along grain boundaries of the solid electrolyte.", SourceURL: urlA, Kind: graph.KindHTML, Strength: 0.5, Embedding: graphtest.Unit(2), CreatedIter: 1},
		{Content: "Cathode particles swell on cycling.", SourceURL: urlB, Kind: graph.KindHTML, Strength: 0.5, Embedding: graphtest.Unit(3), CreatedIter: 1},
		{Content: "It receives the stored message on the ISP's server from the TLS/IMAP4 port (993).", SourceURL: urlC, Title: "Mail", Kind: graph.KindHTML, Strength: 0.5, Embedding: graphtest.Unit(4), CreatedIter: 1},
	}); err != nil {
		t.Fatal(err)
	}
	return contract.VerifyInput{SessionID: sid, Batch: 1, SourceChars: 600, MaxTokens: 400, Recite: true,
		Items:   []contract.VerifyItem{{I: 0, Sentence: imap, N: 1, URL: urlA}, {I: 1, Sentence: cathode, N: 1, URL: urlA}, {I: 2, Sentence: gap, N: 2, URL: urlB}},
		Sources: []contract.VerifySource{{N: 1, URL: urlA}, {N: 2, URL: urlB}}}
}

// TestVerifyRecitesByModel runs VerifyCitations with Recite on a real
// store against the scripted model: a sentence the model refused for its
// cited source is judged again against the source that shares most of its
// words, and moved there when supported: to the report's number for a
// source the report lists, to the URL and title of one it does not. A
// sentence refused twice stays where it was, and so does one whose second
// call the server refuses.
func TestVerifyRecitesByModel(t *testing.T) {
	env, store, _, model := newScriptedEnv(t, t.TempDir(), nil, llmtest.Script{Rules: []llmtest.Rule{
		{Name: "refused", Match: []string{`Item 7\nSentence: [^\n]*\nSource \[\d\] excerpt: It receives`}, Status: 400, Reply: `{"error":"refused"}`},
		{Name: "first7", Match: []string{`Item 7\nSentence: [^\n]*\nSource \[1\] excerpt: Lithium`}, Reply: `{"verdicts":[{"i":7,"supported":false,"quote":""}]}`},
		{Name: "second", Match: []string{`Item 0\nSentence: [^\n]*\nSource \[\d\] excerpt: It receives`},
			Reply: `{"verdicts":[{"i":0,"supported":true,"quote":"from the TLS/IMAP4 port (993)"},{"i":1,"supported":true,"quote":"Cathode particles swell on cycling"},{"i":2,"supported":false,"quote":""}]}`},
		{Name: "first", Match: []string{`^Check these citations`},
			Reply: `{"verdicts":[{"i":0,"supported":false,"quote":""},{"i":1,"supported":false,"quote":""},{"i":2,"supported":false,"quote":""}]}`},
	}})
	in := reciteSession(t, store)
	res := execute[contract.VerifyResult](t, env, acts.VerifyCitations, in)
	want := []contract.VerifyVerdict{
		{I: 0, Status: contract.Unsupported, Via: contract.ViaModel, Quote: "from the TLS/IMAP4 port (993)", MovedURL: urlC, MovedTitle: "Mail"},
		{I: 1, Status: contract.Unsupported, Via: contract.ViaModel, Quote: "Cathode particles swell on cycling", Moved: 2},
		{I: 2, Status: contract.Unsupported, Via: contract.ViaModel},
	}
	if !reflect.DeepEqual(res.Verdicts, want) || res.Calls != 2 || model.ChatCount() != 2 {
		t.Fatalf("verdicts %+v\nwant %+v\n(%d calls)", res.Verdicts, want, res.Calls)
	}
	in.Recite, in.Batch = false, 2
	in.Items = in.Items[:1]
	if res = execute[contract.VerifyResult](t, env, acts.VerifyCitations, in); res.Calls != 1 || res.Verdicts[0].MovedURL != "" {
		t.Fatalf("without Recite: %d calls, verdict %+v", res.Calls, res.Verdicts[0])
	}
	// The second look's call refused: the first verdict stands, no error.
	in.Recite, in.Batch = true, 3
	in.Items = []contract.VerifyItem{{I: 7, Sentence: imap, N: 1, URL: urlA}}
	if res = execute[contract.VerifyResult](t, env, acts.VerifyCitations, in); res.Verdicts[0].Status != contract.Unsupported || res.Verdicts[0].MovedURL != "" {
		t.Fatalf("second look refused: verdict %+v", res.Verdicts[0])
	}
}

// TestSecondLookOutage takes the model server down at the second look's
// call (the connection cut, as when it crashes). The activity fails with
// an error the workflow waits out, rather than keeping the first
// verdicts and losing the re-citing; run again once the server is back, it
// reads the first look's verdicts from the store and asks only the second
// look again, and ends as a batch the outage never touched.
func TestSecondLookOutage(t *testing.T) {
	model := llmtest.NewServer(llmtest.Script{Rules: []llmtest.Rule{
		{Name: "second", Match: []string{`Item 0\nSentence: [^\n]*\nSource \[\d\] excerpt: It receives`},
			Reply: `{"verdicts":[{"i":0,"supported":true,"quote":"from the TLS/IMAP4 port (993)"}]}`},
		{Name: "first", Match: []string{`^Check these citations`}, Reply: `{"verdicts":[{"i":0,"supported":false,"quote":""}]}`},
	}})
	t.Cleanup(model.Close)
	chat, err := llmtest.NewFaulty(model.Handler())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(chat.Close)
	chat.OnRequest(func(n int, _ *http.Request) bool {
		if n == 2 {
			chat.Down()
		}
		return false
	})
	env, store, acts := newEnvAt(t, t.TempDir(), map[string]string{"embed.base_url": model.URL()}, chat.URL())
	in := reciteSession(t, store)
	in.Items = in.Items[:1]
	if _, err := env.ExecuteActivity(acts.VerifyCitations, in); err == nil || temporal.IsApplicationError(err) && isNonRetryable(err) {
		t.Fatalf("the second look's outage gave %v, want an error the workflow waits out", err)
	}
	if err := chat.Up(); err != nil {
		t.Fatal(err)
	}
	res := execute[contract.VerifyResult](t, env, acts.VerifyCitations, in)
	want := []contract.VerifyVerdict{{I: 0, Status: contract.Unsupported, Via: contract.ViaModel, Quote: "from the TLS/IMAP4 port (993)", MovedURL: urlC, MovedTitle: "Mail"}}
	if !reflect.DeepEqual(res.Verdicts, want) || res.Calls != 2 {
		t.Fatalf("after the outage: verdicts %+v (%d calls), want %+v (2 calls)", res.Verdicts, res.Calls, want)
	}
	if n := model.ChatCount(); n != 2 {
		t.Fatalf("the model answered %d calls, want 2: the first look was asked again", n)
	}
}

func isNonRetryable(err error) bool {
	var ae *temporal.ApplicationError
	return errors.As(err, &ae) && ae.NonRetryable()
}
