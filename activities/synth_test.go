package activities

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/lethe-research/lethe/contract"
)

func TestExtractFacts(t *testing.T) {
	ev := map[int]string{
		2: "# Interfaces\nThe cathode interface decomposes and raises the resistance of the cell. Cooking pasta needs salted boiling water.",
		1: "Lithium dendrites grow along grain boundaries of the electrolyte. Short line.\nDendrites short the cell when they reach the cathode side.",
	}
	for _, c := range []struct {
		focus string
		k     int
		want  []Fact
	}{
		{"how do lithium dendrites grow and short the cell", 2, []Fact{
			{1, "Lithium dendrites grow along grain boundaries of the electrolyte."},
			{1, "Dendrites short the cell when they reach the cathode side."}}},
		{"cathode interface resistance", 1, []Fact{{2, "The cathode interface decomposes and raises the resistance of the cell."}}},
		{"cathode interface resistance", 0, []Fact{}}, // assembly.summary_facts 0
		{"cathode", 3, []Fact{ // ties keep source order; headings and short lines never count
			{1, "Dendrites short the cell when they reach the cathode side."},
			{2, "The cathode interface decomposes and raises the resistance of the cell."},
			{1, "Lithium dendrites grow along grain boundaries of the electrolyte."}}},
	} {
		got := ExtractFacts(c.focus, ev, FactOptions{K: c.k, MaxChars: 400})
		if c.focus == "cathode" { // returned in source order
			c.want = []Fact{c.want[2], c.want[0], c.want[1]}
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q k=%d:\n got %v\nwant %v", c.focus, c.k, got, c.want)
		}
	}
	dup := map[int]string{1: "The same sentence appears twice here.", 2: "The  same sentence appears twice HERE."}
	if got := ExtractFacts("same sentence", dup, FactOptions{K: 5, MaxChars: 400}); len(got) != 1 || got[0].N != 1 {
		t.Errorf("duplicates: %v", got)
	}
	if got := ExtractFacts("x", nil, FactOptions{K: 5, MaxChars: 400}); len(got) != 0 {
		t.Errorf("no evidence: %v", got)
	}
}

// TestExtractFactsShortLines: manuals state values in short lines (a
// table row, a configuration line); they compete on their score, while a
// one-word caption, a section number and a heading never do.
func TestExtractFactsShortLines(t *testing.T) {
	ev := map[int]string{
		1: "The port usage is described in the services file of the system.\n| imap2 | 143 | imaps | 993 |\nExample 6.1.\n# Ports and imaps",
		2: "Pinning is configured per package in the preferences file.\nPin-Priority: -1\nPackages\n1.2.3.",
	}
	for _, c := range []struct {
		focus, want string
	}{
		{"imaps port", "| imap2 | 143 | imaps | 993 |"},
		{"pin priority", "Pin-Priority: -1"},
	} {
		got := ExtractFacts(c.focus, ev, FactOptions{K: 1, MaxChars: 400})
		if len(got) != 1 || got[0].Text != c.want {
			t.Errorf("%q: got %v, want %q", c.focus, got, c.want)
		}
	}
	for _, p := range []string{"Example 6.1.", "Packages", "1.2.3.", "# Ports and imaps", "| --- | --- |"} {
		pc := factPieces(map[int]string{1: p}, 400)
		if len(pc) == 1 && factCandidate(pc[0]) {
			t.Errorf("%q is a fact candidate", p)
		}
	}
}

// TestExtractFactsSkipsTitles: a title line that stands alone (a corpus
// passage's first line, a section title of an extracted page) is neither
// a fact nor the continuation of one, so the report does not run it into
// the next sentence; a configuration line, a list item and a command that
// stand alone stay candidates.
func TestExtractFactsSkipsTitles(t *testing.T) {
	ev := map[int]string{
		1: "Manufacturing challenges of solid-state batteries\n\nThin ceramic separators are brittle and difficult to produce at scale.\n\nLithium dendrites in solid electrolytes\n\nDendrites grow through the separators along grain boundaries.",
		2: "Table 6.11. List of print servers and utilities\n\nPin-Priority: -1\n\n- Lock GRUB menu from editing\n\n$ systemctl set-default multi-user\n",
	}
	got := ExtractFacts("manufacturing challenges separators dendrites", ev, FactOptions{K: 6, MaxChars: 400, Follow: 3})
	for _, f := range got {
		for _, title := range []string{"Manufacturing challenges of solid-state batteries", "Lithium dendrites in solid electrolytes", "Table 6.11."} {
			if strings.Contains(f.Text, title) {
				t.Errorf("fact %q holds the title %q", f.Text, title)
			}
		}
	}
	if len(got) < 2 || !strings.HasPrefix(got[0].Text, "Thin ceramic separators") || !strings.HasPrefix(got[1].Text, "Dendrites grow") {
		t.Errorf("facts %+v: want the two sentences of source 1 first, without their titles", got)
	}
	for _, line := range []string{"Pin-Priority: -1", "- Lock GRUB menu from editing", "$ systemctl set-default multi-user"} {
		pc := factPieces(map[int]string{1: line + "\n\nMore text follows here in a sentence."}, 400)
		if !factCandidate(pc[0]) {
			t.Errorf("%q standing alone is not a fact candidate", line)
		}
	}
}

func TestProseAndFactsParagraph(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"## Dendrites\n\nDendrites grow [1].\nThey short cells [2].", "Dendrites grow [1]. They short cells [2]."},
		{"- one [1]\n- two [2]\n1. three [3]", "one [1] two [2] three [3]"},
		{"```\ncode\n```\ntext", "`code` text"},
		// A block is one code span, and a line with no punctuation before a
		// capital ends its sentence (dr-003's summary, seventeenth run).
		{"You can change it by the following command:\n```\n$ sudo update-alternatives --config editor\n```\nThis command selects the editor [1].",
			"You can change it by the following command: `$ sudo update-alternatives --config editor`. This command selects the editor [1]."},
		{"Change it by:\n$ sudo update-alternatives --config editor\nThis command selects the editor [1].",
			"Change it by: $ sudo update-alternatives --config editor. This command selects the editor [1]."},
		{"Run `a` then `b`\n```\nx `y`\n```", "Run `a` then `b` x `y`"},
		{"- Alpha\n- Beta [2]\nthen more", "Alpha. Beta [2] then more"},
		// Section numbers in brackets are not citations (the real-model
		// CI step's dr-029 summary, stop 46); [n] and code stay.
		{"It uses X11 [unverified]. [7.2] The eyes move [1]. [7.3. GUI infrastructure] See [Section 9.4.12] too.",
			"It uses X11 [unverified]. The eyes move [1]. See too."},
		{"Version [1] is 2.6.30 [2]; run `a[1.2]` and `b [3.4 x]`.", "Version [1] is 2.6.30 [2]; run `a[1.2]` and `b [3.4 x]`."},
		{"", ""},
		// Marks that open the paragraph: dropped when the first sentence has
		// its own, moved to its end when it has none.
		{"[1] Sulfide decomposes [1]. [2] Cells short [3].", "Sulfide decomposes [1]. [2] Cells short [3]."},
		{"[1] Sulfide decomposes. Cells short [3].", "Sulfide decomposes [1]. Cells short [3]."},
		{"[1][2] Sulfide decomposes", "Sulfide decomposes [1][2]"},
		{"[1]", ""},
		{"Sulfide [1] decomposes.", "Sulfide [1] decomposes."},
		// A list number before the marks (dr-036's summary, sixteenth
		// evaluation run, opened "2 [unverified] The file …") goes with them.
		{"2 [1] The file is /proc/sysrq-trigger.", "The file is /proc/sysrq-trigger [1]."},
		{"12 [3, 4] Ports differ [4].", "Ports differ [4]."},
		{"2 ports [1] differ.", "2 ports [1] differ."},
		{"993 [1] is the port.", "993 [1] is the port."},
		// A sentence that names its sources first (dr-031's section, the
		// real-model CI step of stop 45) has them moved to its end, so that
		// the check's removal leaves no "From and [unverified], …".
		{"From [2] and [3], you can list fonts with fc-list. From [4], the fonts-hack package suits code [4].",
			"You can list fonts with fc-list [2][3]. The fonts-hack package suits code [4]."},
		{"According to [1], xterm still uses X11. In [2, 3], the file goes", "xterm still uses X11 [1]. The file goes [2, 3]"},
		{"See [1] for details. Based on [1][2] , it works [3].", "See [1] for details. It works [3][1][2]."},
		{"In [2] the file goes.", "In [2] the file goes."},
		{"From [2], [3], you can list fonts.", "You can list fonts [2][3]."},
		// The sources as the subject of a "that" clause (dr-067's section,
		// nineteenth evaluation run).
		{"The facts [1], [2], and [3] collectively support the conclusion that the CUPS interface is reached on port 631.",
			"The CUPS interface is reached on port 631 [1][2][3]."},
		{"Source [4] states that lp -n 3 prints copies [4].", "lp -n 3 prints copies [4]."},
		{"From [1], [2], and [3], you can print.", "You can print [1][2][3]."},
		{"The facts [1] and [2] provide information about CUPS.", "The facts [1] and [2] provide information about CUPS."},
		{"From the manual [1], you run it.", "From the manual [1], you run it."},
		// The prompt's word for a source before the marks (dr-061's
		// section, twentieth evaluation run).
		{"From fact [3], GRUB2 reads the ESP partition. According to the sources [1] and [2], it boots.",
			"GRUB2 reads the ESP partition [3]. It boots [1][2]."},
		{"From facts, it boots [1].", "From facts, it boots [1]."},
		{"In 2020 [1] it changed.", "In 2020 [1] it changed."},
		{"From [1].", "From [1]."},
		// A cited lead whose marks composition removed (dr-031's section,
		// twenty-third evaluation run).
		{"You can list fonts. From  and , the fonts-hack package suits code.", "You can list fonts. The fonts-hack package suits code."},
		{"According to , xterm uses X11.", "xterm uses X11."},
		{"From , , and , it boots.", "It boots."},
		{"From here, it boots.", "From here, it boots."},
		{"In short, it boots.", "In short, it boots."},
		// A sentence that only cites the one before it (dr-018's section,
		// twenty-second evaluation run) gives that one its marks.
		{"To use imaps, the port is 993. This is specified in fact [1]. It is secure.", "To use imaps, the port is 993 [1]. It is secure."},
		{"The port is 993 [2]. This is specified in fact [1].", "The port is 993 [2][1]."},
		{"The port is 993 [1]. This is stated in source [1].", "The port is 993 [1]."},
		{"The port is 993. See source [1].", "The port is 993 [1]."},
		{"The port is 993. This is specified in fact [1]. See [2, 3].", "The port is 993 [1][2, 3]."},
		{"This is specified in fact [1]. The port is 993.", "This is specified in fact [1]. The port is 993."},
		{"The port is 993. The claim that imaps is secure is supported by fact [3].", "The port is 993. The claim that imaps is secure is supported by fact [3]."},
		{"The port is 993. This port is also listed in [4].", "The port is 993 [4]."},
	} {
		if got := Prose(c.in); got != c.want {
			t.Errorf("Prose(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	got := factsParagraph([]Fact{{1, "Dendrites grow."}, {3, "Cells short"}, {2, "Is it safe?"}})
	if want := "Dendrites grow [1]. Cells short [3] Is it safe [2]?"; got != want {
		t.Errorf("factsParagraph = %q, want %q", got, want)
	}
}

// TestCitedLeadAfterCheck: a cited lead whose sources the check rejects
// leaves the sentence whole with the marker at its end, where before it
// left "From and [unverified], you can list …" (stop 45's CI report).
func TestCitedLeadAfterCheck(t *testing.T) {
	para := Prose("From [2] and [3], you can list fonts with fc-list. From [1], fc-match picks one [1].")
	sents := contract.SplitSentences(para)
	status := map[int]string{0: contract.Unsupported, 1: contract.Unsupported, 2: contract.Supported}
	got, c := contract.ApplyVerdicts(para, sents, status)
	if want := "You can list fonts with fc-list [unverified]. fc-match picks one [1]."; got != want {
		t.Errorf("after the check:\n got  %q\n want %q", got, want)
	}
	if c.Marked != 1 || c.Supported != 1 || c.Unsupported != 2 {
		t.Errorf("counts %+v, want 1 marked, 1 supported, 2 unsupported", c)
	}
}

// TestExtractFactsAnswerFollows is the Debian Reference's paragraph on the
// default editor (question dr-003): the sentence that names the subject
// restates the question, the command that answers it is the line after.
// Word overlap picks the sentences that share the question's common words
// and never the command; BM25 weighs the rare words, and Follow joins the
// answer to its sentence, as one contiguous span of the source.
func TestExtractFactsAnswerFollows(t *testing.T) {
	ev := map[int]string{1: "You should become proficient in one of variants of Vim or Emacs programs which are popular in the Unix-like system.\n" +
		"Debian provides unified access to the system default editor via command \"/usr/bin/editor\" so other programs (e.g., reportbug(1)) can invoke it. You can change it by the following.\n" +
		"$ sudo update-alternatives --config editor\n" +
		"The choice \"/usr/bin/vim.basic\" over \"/usr/bin/vim.tiny\" is my recommendation for newbies since it supports syntax highlighting.\n" +
		"For the consistency on the Debian system, set these to \"/usr/bin/editor\" which points to the program that the system uses."}
	focus := "Which command changes the program that Debian's unified system default editor /usr/bin/editor points to?"
	has := func(fs []Fact, s string) bool {
		for _, f := range fs {
			if strings.Contains(f.Text, s) {
				return true
			}
		}
		return false
	}
	if fs := ExtractFacts(focus, ev, FactOptions{K: 1, MaxChars: 400, Overlap: true}); has(fs, "update-alternatives") {
		t.Errorf("overlap scoring found the command: the test no longer shows the difference: %v", fs)
	}
	fs := ExtractFacts(focus, ev, FactOptions{K: 1, MaxChars: 400, Follow: 2})
	if !has(fs, "update-alternatives --config editor") || !strings.HasPrefix(fs[0].Text, "Debian provides unified access") {
		t.Fatalf("BM25 with follow: %v", fs)
	}
	if _, ok := ContainedIn(fs[0].Text, []string{NormalizeContain(ev[1])}); !ok {
		t.Errorf("fact %q is not one span of its source", fs[0].Text)
	}
	// A followed sentence is not picked again as a fact of its own.
	fs = ExtractFacts(focus, ev, FactOptions{K: 5, MaxChars: 400, Follow: 1})
	for i, f := range fs {
		for _, g := range fs[i+1:] {
			if strings.Contains(f.Text, g.Text) || strings.Contains(g.Text, f.Text) {
				t.Errorf("facts overlap: %q and %q", f.Text, g.Text)
			}
		}
	}
	// A table row does not continue a sentence.
	table := map[int]string{1: "Debian source packages come in three files that dpkg-source unpacks together.\n| The source package (description) | package-name_upstream-version-debian.revision.dsc |\n| Tip | Here only the basic formats are described. |"}
	if fs := ExtractFacts("source packages files dpkg-source", table, FactOptions{K: 1, MaxChars: 400, Follow: 3}); len(fs) != 1 || strings.Contains(fs[0].Text, "|") {
		t.Errorf("table rows joined a fact: %v", fs)
	}
	// The continuation stays within MaxChars.
	for _, f := range ExtractFacts(focus, ev, FactOptions{K: 5, MaxChars: 160, Follow: 2}) {
		if n := len([]rune(f.Text)); n > 160 {
			t.Errorf("fact of %d runes over 160: %q", n, f.Text)
		}
	}
}

// TestExtractFactsCodeBlocks is the same paragraph as the corpus passage
// writes it, the command in a fenced block (research/extract_html.go): a
// code line is a fact piece of its own as an inline code span, whole,
// whatever dots it holds, and no fence reaches a fact; a line of a root
// prompt ("# …") is a command, not a heading.
func TestExtractFactsCodeBlocks(t *testing.T) {
	ev := map[int]string{1: "Debian provides unified access to the system default editor via command \"/usr/bin/editor\". You can change it by the following.\n" +
		"```\n$ sudo update-alternatives --config editor\n```\n" +
		"The choice \"/usr/bin/vim.basic\" over \"/usr/bin/vim.tiny\" is my recommendation.\n\n" +
		"```\n# cd /usr/src/linux. && make menuconfig\n```\n" +
		"| NORMAL | :q | quit vim |"}
	fs := ExtractFacts("change system default editor update-alternatives", ev, FactOptions{K: 2, MaxChars: 400, Follow: 1})
	if len(fs) != 2 || !strings.HasPrefix(fs[1].Text, "`$ sudo update-alternatives --config editor` The choice") {
		t.Fatalf("facts %v, want the command as a code span", fs)
	}
	for _, f := range fs {
		if strings.Contains(f.Text, "```") {
			t.Errorf("a fence reached fact %q", f.Text)
		}
		if _, ok := ContainedIn(f.Text, []string{NormalizeContain(ev[1])}); !ok {
			t.Errorf("fact %q is not one span of its source", f.Text)
		}
	}
	fs = ExtractFacts("make menuconfig linux", ev, FactOptions{K: 1, MaxChars: 400})
	if len(fs) != 1 || fs[0].Text != "`# cd /usr/src/linux. && make menuconfig`" {
		t.Errorf("root-prompt command: %v", fs)
	}
	long := strings.Repeat("x ", 60)
	for _, p := range factPieces(map[int]string{1: "```\n" + long + "\n```"}, 40) {
		if n := len([]rune(p.text)); n > 40 || !strings.HasPrefix(p.text, "`") || !strings.HasSuffix(p.text, "`") {
			t.Errorf("long code line piece %q (%d runes)", p.text, n)
		}
	}
}

// TestDropEchoes: the repair request a small model copied into a report
// section (a real-model evaluation, dr-003) is dropped with its markers;
// the material's sentences and the headings stay.
func TestDropEchoes(t *testing.T) {
	fix := fmt.Sprintf(uncitedFix, 3)
	draft := "## Editor\n\nDebian provides unified access to the system default editor [1]. The draft cites no source. Rewrite it so that each claim ends with the number of the material's source it comes from, like [1], and leave out claims the material does not support.\nSee [2]."
	got := dropEchoes(draft, synthSystem, sectionReminder, invalidFix, fix)
	want := "## Editor\n\nDebian provides unified access to the system default editor [1].\nSee [2]."
	if got != want {
		t.Errorf("dropEchoes:\n got %q\nwant %q", got, want)
	}
	// The same request in the model's own words (dr-029, the next run).
	meta := "The protocol can be Wayland or X11 [1]. The draft cites sources [1] and [2] to support the claims."
	if got := dropEchoes(meta, synthSystem, sectionReminder, invalidFix, fix); got != "The protocol can be Wayland or X11 [1]." {
		t.Errorf("a sentence about the draft was kept: %q", got)
	}
	// A sentence about the source numbers (dr-003, this stop's run).
	numbers := "Run update-alternatives --config editor [1]. This statement ends with source number [1] as it directly cites the fact about it."
	if got := dropEchoes(numbers, synthSystem, sectionReminder); got != "Run update-alternatives --config editor [1]." {
		t.Errorf("a sentence about source numbers was kept: %q", got)
	}
	if got := dropEchoes("Use only the facts given in the manual [1].", synthSystem); got != "Use only the facts given in the manual [1]." {
		t.Errorf("a sentence that only shares words with the instruction was dropped: %q", got)
	}
	// The reminder said back with one word changed (dr-010's summary,
	// twenty-third evaluation run).
	said := "Answer the goal now from the sources: 2 to 4 sentences. Create /etc/apt/preferences [1]."
	if got := dropEchoes(said, answerSystem, answerReminder); got != "Create /etc/apt/preferences [1]." {
		t.Errorf("the reminder said back was kept: %q", got)
	}
	// Sentences about the task or the sources, not the subject
	// (twenty-third evaluation run, dr-067 and dr-036), go; a sentence
	// that opens the same way but states something stays.
	for _, c := range []struct {
		sent string
		meta bool
	}{
		{"To answer the question, we need to focus on the information provided about the lp command and its use to print collated copies.", true},
		{"Fact [2] provides a brief overview of the pdftk package, which is a tool used for PDF document conversion.", true},
		{"This information is relevant to understanding the context of the question and how the lp command might be used.", true},
		{"This information is supported by the Debian Reference (version 2.100) (2023-02-04 11:59:01 UTC) (2023) [1].", true},
		{"The facts [1] and [2] provide information about the CUPS web interface.", true},
		{"Fact [1] describes the port 631 of the CUPS web interface.", false},
		{"This information is stored in /etc/passwd [1].", false},
		{"To answer the question, the port is 631 [1].", false},
		{"The sources provide port 631 for the CUPS web interface [1].", false},
	} {
		claim := "CUPS listens on port 631 [1]."
		want := claim + " " + c.sent
		if c.meta {
			want = claim
		}
		if got := dropEchoes(claim+" "+c.sent, answerSystem); got != want {
			t.Errorf("dropEchoes(%q) = %q, want %q", c.sent, got, want)
		}
	}
	two := "Answer the goal now from the docs: 3 to 4 sentences."
	if got := dropEchoes(two, answerSystem, answerReminder); got != two {
		t.Errorf("a sentence two words away from the reminder was dropped: %q", got)
	}
}

// TestDropRepeats: a paragraph that says its sentences twice (dr-010) keeps
// each once, with the citation the repeat carried; short pieces (a lone
// marker) and different sentences stay.
func TestDropRepeats(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"There is no need to set it. When newer packages come, APT upgrades. There is no need to set it. When newer packages come, APT upgrades. [1]",
			"There is no need to set it. When newer packages come, APT upgrades. [1]"},
		{"APT reads /etc/apt/preferences first. APT reads /etc/apt/preferences first [2].", "APT reads /etc/apt/preferences first [2]."},
		{"Pinning uses priorities [1]. Pinning uses priorities. Blocking uses -1 [2].", "Pinning uses priorities [1]. Blocking uses -1 [2]."},
		{"One sentence here [1]. Another sentence there [2].", "One sentence here [1]. Another sentence there [2]."},
		// A restatement in other words (make run, 2026-12-02): dropped, its citation kept.
		{"Solid-state batteries suffer from thermal runaway due to a lithium metal anode melting at 180 degrees Celsius and reacting violently with cathode oxygen release. " +
			"Short circuits caused by dendrites heat the cell locally [1]. " +
			"Solid-state batteries are not immune to thermal runaway: a lithium metal anode melts at 180 degrees Celsius and molten lithium reacts violently with cathode oxygen release. [1]",
			"Solid-state batteries are not immune to thermal runaway: a lithium metal anode melts at 180 degrees Celsius and molten lithium reacts violently with cathode oxygen release. [1] " +
				"Short circuits caused by dendrites heat the cell locally [1]."},
		// Same words, another number: two facts.
		{"Garnet LLZO electrolytes show critical current densities below 1 mA/cm2 at room temperature [1]. " +
			"Garnet LLZO electrolytes show critical current densities below 3 mA/cm2 at 60 degrees [2].",
			"Garnet LLZO electrolytes show critical current densities below 1 mA/cm2 at room temperature [1]. " +
				"Garnet LLZO electrolytes show critical current densities below 3 mA/cm2 at 60 degrees [2]."},
		// Shared subject, other facts: kept.
		{"Sulfide electrolytes such as Li6PS5Cl form resistive decomposition layers against oxide cathodes [1]. " +
			"Sulfide electrolytes such as Li6PS5Cl release hydrogen sulfide in moist air, so factories need dry rooms [2].",
			"Sulfide electrolytes such as Li6PS5Cl form resistive decomposition layers against oxide cathodes [1]. " +
				"Sulfide electrolytes such as Li6PS5Cl release hydrogen sulfide in moist air, so factories need dry rooms [2]."},
	} {
		if got := dropRepeats(c.in); got != c.want {
			t.Errorf("dropRepeats(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

func TestDropPromptTalk(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		// The eighth evaluation run's dr-016 section ends so.
		{"Both packages are in the repositories [1]. These claims are supported by the given facts [1] and.",
			"Both packages are in the repositories [1]."},
		{"From the facts provided, we can see that. The CUPS web interface is on port 631 [1].",
			"The CUPS web interface is on port 631 [1]."},
		// A clause is not cut: what follows the colon belongs to the sentence.
		{"From the facts provided, we can see that: the port is 631 [1].",
			"From the facts provided, we can see that: the port is 631 [1]."},
		{"To answer the goal, we need to know two things.", ""},
		// One word of the subject, or a number, keeps a sentence.
		{"The report states that help2man writes the page [2].", "The report states that help2man writes the page [2]."},
		{"The facts given say 993 [1].", "The facts given say 993 [1]."},
		{"See the facts.", ""},
		// The fifteenth evaluation run's dr-003 summary: one word, and
		// every word about the prompt.
		{"The editor is nano [1]. This is sourced from [1].", "The editor is nano [1]."},
		{"According to [2].", ""},
		{"See the pinning facts.", "See the pinning facts."},
		{"No meta sentence here [1]. Another fact there [2].", "No meta sentence here [1]. Another fact there [2]."},
		// The section prompt's frame, echoed and run into the first fact
		// (eleventh evaluation run, dr-010): the frame goes.
		{`This is part 1 of 1 of the report: the section "Which file stops Recommends?" Facts: There is no need to set Pin-Priority explicitly [2].`,
			"There is no need to set Pin-Priority explicitly [2]."},
		{"This is part 2 of 3. Material: The port is 631 [1].", "The port is 631 [1]."},
		{"Part 2 of the manual covers printing [1].", "Part 2 of the manual covers printing [1]."},
		// The nineteenth evaluation run's dr-010 summary opened with the
		// summary prompt's own instruction ("Say the answer in the first
		// sentence"), as a statement.
		{`The goal is answered in the first sentence of the summary. You must create the "/etc/apt/preferences" file [3].`,
			`You must create the "/etc/apt/preferences" file [3].`},
		{"The first sentence of the GPL preamble names freedom [1].", "The first sentence of the GPL preamble names freedom [1]."},
	} {
		if got := dropPromptTalk(c.in); got != c.want {
			t.Errorf("dropPromptTalk(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

// TestExtractFactsListLead is the corpus passage of dr-029 as the
// eighteenth evaluation run stored it: a list item picked as a fact takes
// the sentence that opens its list, with the code line between, so the
// fact names what the item speaks of (xeyes); the fact stays one span of
// its source; a lead too long, or used by another fact already, is left.
func TestExtractFactsListLead(t *testing.T) {
	ev := map[int]string{1: "This situation was the background of creating Wayland as a local-only GUI communication protocol.\n\n" +
		"Using the xeyes program started from the GNOME terminal, you can check GUI communication protocol used by each GUI application.\n\n" +
		"```\n $ xeyes\n```\n\n" +
		"- If the mouse cursor is on an application such as \"GNOME terminal\" which uses Wayland display server protocol, eyes don't move with the mouse cursor.\n" +
		"- If the mouse cursor is on an application such as \"xterm\" which uses X Window System core protocol, eyes move with the mouse cursor exposing not-so-isolated nature of X Window architecture.\n"}
	focus := "Which small program, started from a GNOME terminal, shows whether an application uses the Wayland protocol or the X Window System core protocol?"
	fs := ExtractFacts(focus, ev, FactOptions{K: 1, MaxChars: 400, Follow: 0})
	if len(fs) != 1 || !strings.HasPrefix(fs[0].Text, "- If the mouse") && !strings.Contains(fs[0].Text, "- If the mouse") {
		t.Fatalf("the test no longer picks a list item: %v", fs)
	}
	if !strings.HasPrefix(fs[0].Text, "Using the xeyes program") || !strings.Contains(fs[0].Text, "`$ xeyes`") {
		t.Errorf("the item's fact has no lead: %q", fs[0].Text)
	}
	if _, ok := ContainedIn(fs[0].Text, []string{NormalizeContain(ev[1])}); !ok {
		t.Errorf("fact %q is not one span of its source", fs[0].Text)
	}
	// Two facts: the lead is not repeated in the second.
	fs = ExtractFacts(focus, ev, FactOptions{K: 2, MaxChars: 400})
	n := 0
	for _, f := range fs {
		n += strings.Count(f.Text, "Using the xeyes program")
	}
	if n != 1 {
		t.Errorf("the lead stands %d times in %v", n, fs)
	}
	// A lead that would take the fact past twice MaxChars is left out.
	for _, f := range ExtractFacts(focus, ev, FactOptions{K: 1, MaxChars: 120}) {
		if strings.Contains(f.Text, "Using the xeyes") {
			t.Errorf("a lead past the bound joined: %q", f.Text)
		}
	}
}
