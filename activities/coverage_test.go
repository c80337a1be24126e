package activities

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/lethe-research/lethe/contract"
)

// coverSource is a source in the form the corpus stores it: a heading, a
// paragraph per line, sentences of two facts each.
const coverSource = "Interfaces and contact\n" +
	"The interface between the cathode and the solid electrolyte degrades chemically and mechanically. " +
	"Sulfide electrolytes such as Li6PS5Cl are not stable against high-voltage oxide cathodes and form resistive decomposition layers during cycling. " +
	"Interfacial resistance grows as the decomposition interphase thickens. " +
	"Coatings such as lithium niobate on cathode particles slow this reaction and keep the impedance of the solid-state battery low.\n" +
	"Garnet LLZO electrolytes typically show critical current densities below 1.5 mA/cm2 at room temperature. " +
	"Lithium metal is stable against garnet electrolytes, which makes them the preferred separator for lithium anodes."

func TestCoveredIn(t *testing.T) {
	for _, c := range []struct {
		name, sentence string
		want           bool
		quote          string // a prefix of the covering window
	}{
		{"connectives changed", "Sulfide electrolytes, like Li6PS5Cl, are not stable against high-voltage oxide cathodes and form resistive decomposition layers during cycling [1].",
			true, "Sulfide electrolytes such as"},
		{"two facts joined", "Sulfide electrolytes like Li6PS5Cl are not stable against high-voltage oxide cathodes and form decomposition layers, while coatings like lithium niobate slow this reaction and keep the impedance low.",
			true, "Sulfide electrolytes such as"},
		{"number kept", "Garnet LLZO electrolytes show critical current densities below 1.5 mA/cm2 at room temperature.", true, "Garnet LLZO"},
		{"number changed", "Garnet LLZO electrolytes show critical current densities below 5.1 mA/cm2 at room temperature.", false, ""},
		{"number added", "Garnet LLZO electrolytes show critical current densities below 1.5 mA/cm2 at 25 degrees room temperature.", false, ""},
		{"negation dropped", "Sulfide electrolytes such as Li6PS5Cl are stable against high-voltage oxide cathodes and form resistive decomposition layers during cycling.", false, ""},
		{"negation added", "Lithium metal is not stable against garnet electrolytes, which makes them the preferred separator for lithium anodes.", false, ""},
		{"new fact", "Sulfide electrolytes such as Li6PS5Cl react with moisture in air and release hydrogen sulfide, so manufacturing requires dry rooms.", false, ""},
		{"too short", "Interfacial resistance grows thicker.", false, ""},
		// An anchor (anchorTerms) the window lacks: a neighbouring name
		// swapped in, nine tenths of the words kept.
		{"anchor swapped", "Sulfide electrolytes such as Li3PS4 are not stable against high-voltage oxide cathodes and form resistive decomposition layers during cycling.", false, ""},
		// With an anchor held, 85% of the words suffice: a paraphrase.
		{"anchored paraphrase", "Sulfide electrolytes such as Li6PS5Cl are not stable against high-voltage oxide cathodes; they form resistive decomposition layers while cycling.", true, "Sulfide electrolytes such as"},
		{"facts four sentences apart", "The interface between the cathode and the solid electrolyte degrades chemically, while coatings of lithium niobate keep the impedance of the battery low.", false, ""},
	} {
		q, ok := CoveredIn(c.sentence, []string{coverSource})
		if ok != c.want || !strings.HasPrefix(q, c.quote) {
			t.Errorf("%s: covered %v (%q), want %v (%q…)", c.name, ok, q, c.want, c.quote)
		}
	}
}

// TestCoveredInOneText: a window never joins the end of one stored text
// to the start of another (two chunks of a page need not be adjacent).
func TestCoveredInOneText(t *testing.T) {
	a := "Stack pressure reduces void formation at the lithium anode."
	b := "Higher pressure raises the critical current density of garnet cells."
	s := "Stack pressure reduces void formation at the lithium anode and raises the critical current density of garnet cells."
	if _, ok := CoveredIn(s, []string{a + " " + b}); !ok {
		t.Fatalf("not covered by one text holding both sentences")
	}
	if q, ok := CoveredIn(s, []string{a, b}); ok {
		t.Fatalf("covered across two texts by %q", q)
	}
}

// TestCoveredInTableRow: a flattened table holds every number of its
// rows; a sentence's number must stand near the words it stands near in
// the sentence (bench/verify's v05 and v07, the eighth evaluation run's
// POP3 port 995 for imaps).
func TestCoveredInTableRow(t *testing.T) {
	table := "Table 4.7. List of insecure and secure services and ports insecure service name port secure service name port " +
		"www (http) 80 https 443 smtp (mail) 25 ssmtp (smtps) 465 imap2 143 imaps 993 pop3 110 pop3s 995 ldap 389 ldaps 636"
	for _, c := range []struct {
		sentence string
		want     bool
	}{
		{"In the list of secure services and ports, the secure service imaps uses port 993.", true},
		{"In the list of secure services and ports, the secure service imaps uses port 995.", false},
		{"In the list of secure services and ports, the secure service pop3s uses port 995.", true},
	} {
		if q, ok := CoveredIn(c.sentence, []string{table}); ok != c.want {
			t.Errorf("%q: covered %v (%q), want %v", c.sentence, ok, q, c.want)
		}
	}
}

func TestAnchorTerms(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"Write to /proc/sysrq-trigger from an SSH terminal to use Alt-SysRq [2].", []string{" proc sysrq trigger ", " alt sysrq "}},
		{`The "fc-match(1)" command picks the default font.`, []string{" fc match 1 "}},
		{"The secure IMAP service imaps uses port 993.", []string{" 993 "}},
		{"IPv6 hosts set LANG=en_US.UTF-8 in ~/.profile.", []string{" ipv6 ", " lang en us utf 8 ", " profile "}},
		{"The cups-bsd package provides lpr(1), e.g. for scripts.", []string{" cups bsd ", " lpr 1 "}},
		// Options are names (dr-067's summary, twentieth evaluation run).
		{"The `-p` option prints collated copies; ssh-keygen --no-pager - or lp -o.", []string{" p ", " ssh keygen ", " no pager ", " o "}},
		// English compounds, initials, acronyms and plain words are not names.
		{"Locale data is pre-compiled for non-interactive and/or login shells, i.e. under UPG (USA).", nil},
	} {
		got := anchorTerms(c.in)
		if strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("anchorTerms(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestLocalTerms(t *testing.T) {
	got := strings.Join(localTerms("The entry 127.0.1.1 [2], version 5.10, lines."), " ")
	if want := "the entry 127.0.1.1 version 5.10 line"; got != want {
		t.Errorf("localTerms = %q, want %q", got, want)
	}
}

// TestCoveredInScopedNegation: a negation decides for the word it
// governs. The stored PDF passage of the fifteenth evaluation run's
// dr-010 denies pulling packages in, in a condition; the summary's
// instruction asserts nothing it denies.
func TestCoveredInScopedNegation(t *testing.T) {
	src := `If you wish not to pull in particular packages automatically by ”Recommends”, you must create the ”/etc/apt/preferences” file and explicitly list all those packages at the top of it as the following. Package: package-1 Pin: version * Pin-Priority: -1 Package: package-2 Pin: version * Pin-Priority: -1`
	for _, c := range []struct {
		sentence string
		want     bool
	}{
		{`Create the "/etc/apt/preferences" file and explicitly list all the packages at the top of it as the following: Package: package-1 Pin: version * Pin-Priority: -1 Package: package-2 Pin: version * Pin-Priority: -1`, true},
		// It asserts what the source denies.
		{`Create the "/etc/apt/preferences" file and explicitly list all the packages at the top of it to pull them in automatically by "Recommends".`, false},
	} {
		if q, ok := CoveredIn(c.sentence, []string{src}); ok != c.want {
			t.Errorf("%q: covered %v (%q), want %v", c.sentence, ok, q, c.want)
		}
	}
}

// TestCoveredInNegatedSentence: a negated sentence needs a negated window.
func TestCoveredInNegatedSentence(t *testing.T) {
	src := "If you wish to pull in particular packages automatically, you must create the /etc/apt/preferences file and list all those packages at the top of it."
	s := "You must not create the /etc/apt/preferences file to list all those packages at the top of it."
	if q, ok := CoveredIn(s, []string{src}); ok {
		t.Errorf("covered by %q", q)
	}
}

// TestCoveredInCodeBlock: a sentence that copies an instruction and its
// code block (dr-010's summary, sixteenth evaluation run, against the
// HTML passage, where the stanza is a fenced block of seven lines) is
// covered by the instruction and the block as one window; a changed value
// is not; a block longer than codeUnitLines stays a line per sentence.
func TestCoveredInCodeBlock(t *testing.T) {
	const src = "Warning: Use of apt-pinning by a novice user is sure call for major troubles.\n" +
		"If you wish not to pull in particular packages automatically by \"Recommends\", you must create the \"/etc/apt/preferences\" file and explicitly list all those packages at the top of it as the following.\n" +
		"```\nPackage: package-1\nPin: version *\nPin-Priority: -1\n\nPackage: package-2\nPin: version *\nPin-Priority: -1\n```\n" +
		"The value of \"Pin-Priority\" is described later."
	claim := "To block particular packages from \"Recommends\", you must create the \"/etc/apt/preferences\" file and explicitly list all those packages at the top of it as the following. " +
		"Package: package-1 Pin: version * Pin-Priority: -1 Package: package-2 Pin: version * Pin-Priority: -1"
	if q, ok := CoveredIn(claim, []string{src}); !ok || !strings.Contains(q, "Package: package-1 Pin: version * Pin-Priority: -1 Package: package-2") {
		t.Errorf("instruction and stanza not covered (quote %q)", q)
	}
	if _, ok := CoveredIn(strings.ReplaceAll(claim, "-1", "100"), []string{src}); ok {
		t.Error("a stanza with another priority is covered")
	}
	long := "```\n" + strings.Repeat("Pin: version *\n", codeUnitLines+1) + "```"
	if got := sourceSentences(long); len(got) != codeUnitLines+1 {
		t.Errorf("a %d-line block is %d sentences, want one per line", codeUnitLines+1, len(got))
	}
	if got := sourceSentences("Run this.\n```\n$ a\n$ b\n```\nDone."); strings.Join(got, "|") != "Run this.|$ a $ b|Done." {
		t.Errorf("sentences %q", got)
	}
}

// TestValueEndedSentenceVerified: a summary sentence that ends with a
// value and its mark, with no period ("… Pin-Priority: -1 [1] The …", the
// seventeenth evaluation run's dr-010), is its own pair, and its source
// covers it; read together with the next sentence, as before, the pair
// held two statements no window of the source holds, and the right
// answer was marked [unverified].
func TestValueEndedSentenceVerified(t *testing.T) {
	const src = "The Pin-Priority value of each package is defined by \"Pin-Priority\" entries in the \"/etc/apt/preferences\" file or uses its default value.\n" +
		"Table 2.18. List of notable Pin-Priority values.\n" +
		"If you wish not to pull in particular packages automatically by \"Recommends\", you must create the \"/etc/apt/preferences\" file and explicitly list all those packages at the top of it as the following.\n" +
		"```\nPackage: package-1\nPin: version *\nPin-Priority: -1\n\nPackage: package-2\nPin: version *\nPin-Priority: -1\n```\n"
	const url = "corpus:///ch02.en.html?passage=78"
	summary := "Create the \"/etc/apt/preferences\" file and explicitly list all the packages at the top of it as the following: " +
		"Package: package-1 Pin: version * Pin-Priority: -1 Package: package-2 Pin: version * Pin-Priority: -1 [1] " +
		"The Pin-Priority value of each package decides which version is installed [1]."
	var items []VerifyItem
	for _, p := range contract.CitedPairs(contract.SplitSentences(summary)) {
		items = append(items, VerifyItem{I: p.I, Sentence: p.Text, N: p.N, URL: url})
	}
	if len(items) != 2 {
		t.Fatalf("pairs %+v, want the instruction and the next sentence apart", items)
	}
	held, rest := SplitByContainment(items, map[string][]string{url: {src}})
	if len(held) != 1 || held[0].I != 0 || held[0].Via != contract.ViaCoverage || len(rest) != 1 {
		t.Fatalf("held %+v, left %+v; want the instruction covered and the paraphrase left to the model", held, rest)
	}
}

// TestCoveredInHinderedVerb: "keep … from being pulled in" denies pulling
// in as "wish not to pull in" does, so the seventeenth evaluation run's
// dr-010 summary is covered by the passage it paraphrases; a sentence
// that asserts the pulling is not, and "from" naming a source denies
// nothing.
func TestCoveredInHinderedVerb(t *testing.T) {
	src := `If you wish not to pull in particular packages automatically by ”Recommends”, you must create the ”/etc/apt/preferences” file and explicitly list all those packages at the top of it as the following. Package: package-1 Pin: version * Pin-Priority: -1 Package: package-2 Pin: version * Pin-Priority: -1`
	for _, c := range []struct {
		sentence string
		want     bool
	}{
		{`To keep particular packages from being pulled in automatically through Recommends, you must create the "/etc/apt/preferences" file and explicitly list all those packages at the top of it as the following. Package: package-1 Pin: version * Pin-Priority: -1 Package: package-2 Pin: version * Pin-Priority: -1`, true},
		{`To stop particular packages from pulling in others automatically by Recommends, you must create the "/etc/apt/preferences" file and explicitly list all those packages at the top of it as the following.`, true},
		{`To have particular packages pulled in automatically through Recommends, you must create the "/etc/apt/preferences" file and explicitly list all those packages at the top of it as the following.`, false},
	} {
		if q, ok := CoveredIn(c.sentence, []string{src}); ok != c.want {
			t.Errorf("%q: covered %v (%q), want %v", c.sentence, ok, q, c.want)
		}
	}
	for s, want := range map[string]bool{
		"journald keeps messages from all services below /var/log/journal.":  false,
		"Pinning keeps a package from being upgraded.":                       true,
		"A firewall blocked the port from accepting connections yesterday.":  true,
		"The file was kept from the previous release for the old installer.": false,
	} {
		if got := profile(s).negated; got != want {
			t.Errorf("%q: negated %v, want %v", s, got, want)
		}
	}
}

func TestDerive(t *testing.T) {
	for _, c := range []struct{ a, b string }{
		{"automatically", "automatic"}, {"generates", "generator"}, {"generation", "generated"},
		{"creates", "creation"}, {"converts", "converter"}, {"listed", "list"}, {"pulled", "pull"},
	} {
		if derive(c.a) != derive(c.b) {
			t.Errorf("derive(%q) = %q, derive(%q) = %q: want one stem", c.a, derive(c.a), c.b, derive(c.b))
		}
	}
	// Short words keep a stem of four letters: "used" and "user" are not
	// folded into "us".
	for _, c := range []struct{ a, b string }{{"user", "used"}, {"port", "portal"}, {"server", "service"}} {
		if derive(c.a) == derive(c.b) {
			t.Errorf("derive(%q) = derive(%q) = %q: want two stems", c.a, c.b, derive(c.a))
		}
	}
}

func TestSignedNumbers(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"Pin-Priority: -1", []string{"-1"}},
		{"Package: package-1 Pin: version *", nil},
		{"LANG=en_US.UTF-8 on port 993", []string{"993"}},
		{"-5 and 1.5, not 5.1", []string{"-5", "1.5", "5.1"}},
		{"ports 80-443", []string{"80"}},
	} {
		if got := signedNumbers(c.in); !slices.Equal(got, c.want) {
			t.Errorf("signedNumbers(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestCoveredInDerived: a table row restated with its words' other
// forms ("automatic manpage generator" as "automatically generates
// manpage", the twenty-second evaluation run's dr-051) is covered; the
// same words with a number a name's digits supply is not (bench/verify's
// v04: "Pin-Priority: 1" where the source has -1 and "package-1").
func TestCoveredInDerived(t *testing.T) {
	table := "| package | popcon | size | keyword | description | | docbook-to-man | V:0, I:10 | 191 | SGML→manpage | converter from DocBook SGML into roff man macros | " +
		"| help2man | V:0, I:8 | 542 | text→manpage | automatic manpage generator from --help |"
	if _, ok := CoveredIn("The help2man package automatically generates manpage from --help.", []string{table}); !ok {
		t.Errorf("help2man row restated: not covered")
	}
	if _, ok := CoveredIn("The help2man package automatically generates manpage from --version.", []string{table}); ok {
		t.Errorf("help2man row with another option: covered")
	}
	pin := `If you wish not to pull in particular packages automatically by "Recommends", you must create the "/etc/apt/preferences" file ` +
		"and explicitly list all those packages at the top of it as the following. Package: package-1 Pin: version * Pin-Priority: -1"
	sentence := `Packages listed in /etc/apt/preferences with "Pin: version *" and "Pin-Priority: %s" are never pulled in automatically by "Recommends".`
	if _, ok := CoveredIn(fmt.Sprintf(sentence, "-1"), []string{pin}); !ok {
		t.Errorf("pinning restated with -1: not covered")
	}
	if _, ok := CoveredIn(fmt.Sprintf(sentence, "1"), []string{pin}); ok {
		t.Errorf("pinning restated with 1: covered")
	}
}
