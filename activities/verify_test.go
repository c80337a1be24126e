package activities

import (
	"reflect"
	"testing"

	"github.com/lethe-research/lethe/contract"
)

func TestQuoteInSource(t *testing.T) {
	src := []string{"Garnet LLZO electrolytes typically show critical current densities below 1 mA/cm2.\nOther text."}
	for _, c := range []struct {
		quote string
		want  bool
	}{
		{"critical current densities below 1 mA/cm2", true},
		{"  CRITICAL   current\ndensities ", true},           // case and spaces
		{"…typically show critical current…", true},          // ellipses dropped
		{"“Garnet LLZO electrolytes”", true},                 // surrounding quotes dropped
		{"Garnet LLZO electrolytes", true},                   // exactly
		{"critical current densities above 1 mA/cm2", false}, // not in the source
		{"LLZO", false}, // too short to prove anything
		{"", false},
	} {
		if got := QuoteInSource(c.quote, src); got != c.want {
			t.Errorf("%q: %v, want %v", c.quote, got, c.want)
		}
	}
}

func TestParseVerdicts(t *testing.T) {
	items := []VerifyItem{{I: 4, N: 1, URL: "u1"}, {I: 5, N: 3, URL: "u3"}}
	sources := map[string][]string{"u1": {"Dendrites grow along grain boundaries of the electrolyte."}, "u3": {"Thermal runaway starts above 150 C."}}
	for _, c := range []struct {
		name    string
		content string
		want    []string
		err     bool
	}{
		{"both judged", `{"verdicts":[{"i":4,"supported":true,"quote":"grow along grain boundaries"},{"i":5,"supported":false,"quote":""}]}`,
			[]string{contract.Supported, contract.Unsupported}, false},
		{"supported with a quote not in the source", `{"verdicts":[{"i":4,"supported":true,"quote":"dendrites never form in solids"},{"i":5,"supported":true,"quote":"Thermal runaway starts above 150 C"}]}`,
			[]string{contract.Unsupported, contract.Supported}, false},
		{"supported with the other source's quote", `{"verdicts":[{"i":4,"supported":true,"quote":"Thermal runaway starts above"}]}`,
			[]string{contract.Unsupported, contract.Unchecked}, false},
		{"bare array in a fence", "```json\n[{\"i\":5,\"supported\":true,\"quote\":\"runaway starts above 150\"}]\n```",
			[]string{contract.Unchecked, contract.Supported}, false},
		{"unknown items only", `{"verdicts":[{"i":1,"supported":true,"quote":"x"}]}`, []string{contract.Unchecked, contract.Unchecked}, true},
		{"not JSON", `The first is supported.`, []string{contract.Unchecked, contract.Unchecked}, true},
		{"DIN answer", `{"ops":[]}`, []string{contract.Unchecked, contract.Unchecked}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseVerdicts(c.content, items, sources)
			var st []string
			for k, v := range got {
				st = append(st, v.Status)
				if v.I != items[k].I {
					t.Errorf("verdict %d is for item %d", k, v.I)
				}
			}
			if !reflect.DeepEqual(st, c.want) || (err != nil) != c.err {
				t.Errorf("got %v, %v; want %v, error %v", st, err, c.want, c.err)
			}
		})
	}
}

// TestParseVerdictsNumbers: a "supported" whose quote does not show the
// sentence's number near the sentence's words is unsupported (bench/verify:
// the 1.5B model quoted a table row for "imaps uses port 995").
func TestParseVerdictsNumbers(t *testing.T) {
	sources := map[string][]string{"u": {"Table 4.7 secure service name port imap2 143 imaps 993 pop3 110 pop3s 995 ldap 389"}}
	items := []VerifyItem{
		{I: 0, N: 1, URL: "u", Sentence: "The secure IMAP service imaps uses port 995."},
		{I: 1, N: 1, URL: "u", Sentence: "The secure IMAP service imaps uses port 993."},
		{I: 2, N: 1, URL: "u", Sentence: "Port 443 is what the secure service imaps uses."},
	}
	answer := `{"verdicts":[{"i":0,"quote":"imap2 143 imaps 993 pop3 110 pop3s 995","supported":true},` +
		`{"i":1,"quote":"imap2 143 imaps 993 pop3 110 pop3s 995","supported":true},{"i":2,"quote":"secure service name port imap2","supported":true}]}`
	got, err := ParseVerdicts(answer, items, sources)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{contract.Unsupported, contract.Supported, contract.Unsupported}
	for k, v := range got {
		if v.Status != want[k] {
			t.Errorf("item %d: %s, want %s", k, v.Status, want[k])
		}
	}
}

// TestParseVerdictsNames: a "supported" for a sentence that names an
// option, command or path its source does not hold is unsupported, even
// with a quote from the source (the twentieth evaluation run's dr-067:
// "The `-p` option prints collated copies" cited to the print-server
// table).
func TestParseVerdictsNames(t *testing.T) {
	sources := map[string][]string{"u": {"cups-client: System V printer commands for CUPS: lp(1), lpstat(1). Print two collated copies with lp -n 2 -o Collate=True file."}}
	items := []VerifyItem{
		{I: 0, N: 1, URL: "u", Sentence: "The `-p` option prints collated copies."},
		{I: 1, N: 1, URL: "u", Sentence: "The `-o Collate=True` option prints collated copies."},
		{I: 2, N: 1, URL: "u", Sentence: "The lpq(1) command comes with cups-client."},
		{I: 3, N: 1, URL: "u", Sentence: "Copies can be collated when printing."},
	}
	answer := `{"verdicts":[{"i":0,"quote":"Print two collated copies","supported":true},{"i":1,"quote":"Print two collated copies","supported":true},` +
		`{"i":2,"quote":"System V printer commands for CUPS","supported":true},{"i":3,"quote":"Print two collated copies","supported":true}]}`
	got, err := ParseVerdicts(answer, items, sources)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{contract.Unsupported, contract.Supported, contract.Unsupported, contract.Supported}
	for k, v := range got {
		if v.Status != want[k] {
			t.Errorf("item %d (%s): %s, want %s", k, items[k].Sentence, v.Status, want[k])
		}
	}
}

func TestExcerpt(t *testing.T) {
	texts := []string{"Intro about batteries. Dendrites grow along grain boundaries. Unrelated cooking text.\nThe cathode swells and loses contact."}
	for _, c := range []struct {
		sentence string
		chars    int
		want     string
	}{
		{"Lithium dendrites grow at grain boundaries", 45, "Dendrites grow along grain boundaries."},
		{"Lithium dendrites grow at grain boundaries", 80, "Intro about batteries. … Dendrites grow along grain boundaries."}, // ties: the earlier passage
		{"The cathode loses contact", 40, "The cathode swells and loses contact."},
		{"anything", 10, "Intro…"}, // no overlap: the first passage, cut at a word
	} {
		if got := Excerpt(c.sentence, texts, c.chars); got != c.want {
			t.Errorf("%q (%d): %q, want %q", c.sentence, c.chars, got, c.want)
		}
	}
	if got := Excerpt("x", nil, 100); got != "" {
		t.Errorf("no texts: %q", got)
	}
}
