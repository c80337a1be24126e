package activities

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/contract"
	"github.com/lethe-research/lethe/research"
)

// The synthesis route (docs/citations.md): extractive, then abstractive.
// For each section, ExtractFacts picks the sentences of its evidence that
// answer it (pure, lexical: BM25 over the sentences); one small call
// rewrites them as a paragraph keeping the [n] markers; one call at the end writes the summary. A small
// CPU model given a few numbered facts writes prose; given pages of
// bulleted excerpts it copies the bullets.

// Fact is one evidence sentence (and the sentences that follow it, see
// FactOptions.Follow) with its source number.
type Fact struct {
	N    int
	Text string
}

// factMinChars is the length from which a sentence is a fact candidate
// whatever its words; shorter ones compete only as table rows or lines of
// two words or more (factCandidate), and as the continuation of a picked
// sentence they are kept.
const factMinChars = 30

// FactOptions say how ExtractFacts picks.
type FactOptions struct {
	K        int // facts picked
	MaxChars int // runes per fact, its continuation included
	// Follow is how many sentences after a picked one join it, while the
	// fact stays within MaxChars: manuals state the subject in one
	// sentence and the answer (a command, a value) in the next.
	Follow int
	// Overlap scores a sentence by the count of focus words it holds, the
	// scoring before BM25: sentences that restate the question win. Kept
	// as the baseline of bench/retrieval -facts.
	Overlap bool
	// NoLead picks list items without the sentence that opens their list
	// (leadOf), as before it; kept as a baseline of bench/retrieval -facts.
	NoLead bool
}

// BM25's constants for sentences as documents (Robertson and Zaragoza
// 2009): k1 saturates repeated words, b normalizes by sentence length.
const (
	factK1 = 1.2
	factB  = 0.75
)

// factStop says whether w is a question word or function word a focus
// holds that says nothing about which sentence answers it. Words of at
// most two letters never count (wordSet).
func factStop(w string) bool {
	switch w {
	case "which", "what", "how", "when", "where", "who", "why", "whom", "whose",
		"the", "and", "for", "that", "this", "with", "from", "does", "did",
		"are", "was", "were", "can", "its", "into", "about", "there", "their",
		"you", "your", "has", "have", "had", "not", "but", "should", "would":
		return true
	}
	return false
}

// piece is one sentence (or a cut part of one) of a source, in order.
type piece struct {
	n       int // source number
	text    string
	words   map[string]int
	len     int
	heading bool // a whole line that is a title (headingLine)
}

// ExtractFacts picks the o.K sentences of the evidence (source number →
// text) that best answer focus, each joined by the o.Follow sentences
// after it within o.MaxChars, duplicates and overlaps dropped, returned in
// source order. A sentence's score is BM25 over the evidence's sentences
// as the collection,
//
//	score(s) = Σ_{w ∈ focus} idf(w) · tf(w,s)·(k1+1) / (tf(w,s) + k1·(1 − b + b·|s|/avg|s|)),
//	idf(w)   = ln(1 + (N − df(w) + 0.5) / (df(w) + 0.5)),
//
// over the focus's words of three letters or more that are not in
// factStop (ties: lower source, earlier sentence).
func ExtractFacts(focus string, evidence map[int]string, o FactOptions) []Fact {
	if o.K <= 0 {
		return []Fact{} // nothing to pick: the summary with assembly.summary_facts 0 splits and scores nothing
	}
	pieces := factPieces(evidence, o.MaxChars)
	score := factScores(focus, pieces, o.Overlap)
	var cands []int
	seen := map[string]bool{}
	for i, p := range pieces {
		key := normalizeQuote(p.text)
		if !factCandidate(p) || seen[key] {
			continue
		}
		seen[key] = true
		cands = append(cands, i)
	}
	sort.SliceStable(cands, func(i, j int) bool { return score[cands[i]] > score[cands[j]] })
	used := map[int]bool{}
	var picked []int
	texts := map[int]string{}
	for _, i := range cands {
		if len(picked) == o.K {
			break
		}
		if used[i] {
			continue
		}
		used[i] = true
		picked = append(picked, i)
		texts[i] = followOn(pieces, i, o, used)
		if lead := leadOf(pieces, i, o, used); lead != "" {
			texts[i] = lead + " " + texts[i]
		}
	}
	sort.Ints(picked)
	out := make([]Fact, len(picked))
	for j, i := range picked {
		out[j] = Fact{N: pieces[i].n, Text: texts[i]}
	}
	return out
}

// factCandidate says whether a sentence may be picked as a fact: not a
// heading, and long enough to state one, or short and still a statement.
// Manuals put their values in short lines: a table row ("| imaps | 993
// |"), a configuration line ("Pin-Priority: -1"). A one-word caption or a
// section number does not state anything (words of three letters or
// more, as the scoring counts them). Measured on the question set: see
// docs/research.md, Fact recall.
func factCandidate(p piece) bool {
	switch {
	case strings.HasPrefix(p.text, "#") || p.heading:
		return false
	case len([]rune(p.text)) >= factMinChars:
		return true
	case strings.HasPrefix(p.text, "|"):
		return len(p.words) >= 1
	default:
		return len(p.words) >= 2
	}
}

// factPieces cuts the evidence into sentences of at most maxChars runes,
// in source order and, within a source, in reading order.
func factPieces(evidence map[int]string, maxChars int) []piece {
	ns := make([]int, 0, len(evidence))
	for n := range evidence {
		ns = append(ns, n)
	}
	sort.Ints(ns)
	var out []piece
	for _, n := range ns {
		lines := strings.Split(evidence[n], "\n")
		fence := false
		for k, line := range lines {
			if contract.FenceLine(line) != "" {
				fence = !fence
				continue
			}
			line = strings.Join(strings.Fields(line), " ")
			if fence {
				out = append(out, codePieces(n, line, maxChars)...)
				continue
			}
			head := headingLine(line, k+1 == len(lines) || strings.TrimSpace(lines[k+1]) == "")
			for _, sent := range splitPassage(line, maxChars) {
				if sent != "" {
					out = append(out, newPiece(n, sent, head))
				}
			}
		}
	}
	return out
}

func newPiece(n int, text string, heading bool) piece {
	ws := wordCounts(text)
	l := 0
	for _, c := range ws {
		l += c
	}
	return piece{n: n, text: text, words: ws, len: l, heading: heading}
}

// codePieces is one line of a code block as an inline code span, not cut
// into sentences ("cd .. && make" is one command). Its fence lines are
// not pieces: a fact that ran "You can change it by the following. ```
// $ sudo update-alternatives --config editor" into the report left an
// open fence in a paragraph of prose, and the 1.5B composer ran the next
// fact's table row into it (eleventh evaluation run, dr-010 and dr-053).
// A line over maxChars is cut as a sentence is, each part its own span.
func codePieces(n int, line string, maxChars int) []piece {
	if line == "" {
		return nil
	}
	var out []piece
	for _, part := range cutPiece(line, max(maxChars-2, 1)) {
		text := part
		if !strings.Contains(part, "`") {
			text = "`" + part + "`"
		}
		out = append(out, newPiece(n, text, false))
	}
	return out
}

// headingMaxWords is the longest line headingLine takes for a title.
const headingMaxWords = 12

// headingLine says whether a whole line is a title: it stands alone (a
// blank line or the end follows it), is short, and ends as no statement
// does, with no punctuation, no value after a colon or an equals sign,
// and not as a command, a list item or a table row. A corpus passage and an extracted
// page put their section titles so ("Lithium dendrites in solid
// electrolytes", then a blank line), and a title picked as a fact, or
// joined to one, runs into the next sentence in the report ("…[2].
// Manufacturing challenges of solid-state batteries Thin ceramic
// separators…").
func headingLine(line string, alone bool) bool {
	if !alone || line == "" || len(strings.Fields(line)) > headingMaxWords || strings.ContainsAny(line, ":=;$|<>{}()[]\"`'/_") ||
		listMarkRe.MatchString(line) {
		return false
	}
	last, _ := utf8.DecodeLastRuneInString(line)
	return unicode.IsLetter(last) || unicode.IsDigit(last)
}

// factScores is each piece's score for focus: BM25 (ExtractFacts), or the
// count of focus words it holds when overlap is set.
func factScores(focus string, pieces []piece, overlap bool) []float64 {
	out := make([]float64, len(pieces))
	want := wordSet(focus)
	if overlap {
		for i, p := range pieces {
			for w := range want {
				if p.words[w] > 0 {
					out[i]++
				}
			}
		}
		return out
	}
	df := map[string]int{}
	total := 0
	for _, p := range pieces {
		total += p.len
		for w := range p.words {
			if want[w] {
				df[w]++
			}
		}
	}
	if len(pieces) == 0 {
		return out
	}
	// The terms in a fixed order: a float sum in map order could break a
	// near tie differently from one run to the next.
	var terms []string
	for w := range want {
		if !factStop(w) {
			terms = append(terms, w)
		}
	}
	sort.Strings(terms)
	n, avg := float64(len(pieces)), math.Max(float64(total)/float64(len(pieces)), 1)
	for i, p := range pieces {
		for _, w := range terms {
			tf := float64(p.words[w])
			if tf == 0 {
				continue
			}
			idf := math.Log(1 + (n-float64(df[w])+0.5)/(float64(df[w])+0.5))
			out[i] += idf * tf * (factK1 + 1) / (tf + factK1*(1-factB+factB*float64(p.len)/avg))
		}
	}
	return out
}

// followOn is piece i's text joined by up to o.Follow next pieces of the
// same source that are not headings or table rows (a real report's
// paragraph filled up with "| The source package | … |" cells), not
// already used and keep the fact within o.MaxChars. A piece cut with "…" takes no continuation: the fact
// must stay a contiguous span of its source for the containment check.
func followOn(pieces []piece, i int, o FactOptions, used map[int]bool) string {
	text := pieces[i].text
	for j := i + 1; j <= i+o.Follow && j < len(pieces); j++ {
		p := pieces[j]
		if p.n != pieces[i].n || used[j] || p.heading || strings.HasPrefix(p.text, "#") || strings.HasPrefix(p.text, "|") || strings.HasSuffix(text, "…") ||
			len([]rune(text))+1+len([]rune(p.text)) > o.MaxChars {
			break
		}
		used[j] = true
		text += " " + p.text
	}
	return text
}

// leadOf is the sentence that opens the list piece i is an item of, with
// what stands between them (earlier items, a code line), when they are
// not used yet and the whole stays within twice o.MaxChars: the fact
// stays a contiguous span of its source. An item says what it says of
// the thing its lead names: the eighteenth evaluation run's dr-029
// section and summary used the items "If the mouse cursor is on an
// application such as "GNOME terminal" … eyes don't move" without their
// lead, "Using the xeyes program started from the GNOME terminal, you can
// check GUI communication protocol used by each GUI application.", and
// never named xeyes, the answer.
func leadOf(pieces []piece, i int, o FactOptions, used map[int]bool) string {
	if o.NoLead || !listMarkRe.MatchString(pieces[i].text) {
		return ""
	}
	for j := i - 1; j >= 0 && j >= i-leadMax && pieces[j].n == pieces[i].n; j-- {
		p := pieces[j]
		if used[j] || p.heading || strings.HasPrefix(p.text, "#") || strings.HasPrefix(p.text, "|") {
			return ""
		}
		if listMarkRe.MatchString(p.text) || strings.HasPrefix(p.text, "`") {
			continue
		}
		parts := make([]string, 0, i-j)
		size := len([]rune(pieces[i].text))
		for k := j; k < i; k++ {
			parts = append(parts, pieces[k].text)
			size += 1 + len([]rune(pieces[k].text))
		}
		if size > 2*o.MaxChars {
			return ""
		}
		for k := j; k < i; k++ {
			used[k] = true
		}
		return strings.Join(parts, " ")
	}
	return ""
}

// leadMax is how many pieces before a list item its lead may stand: the
// items before it and a code line or two.
const leadMax = 4

// wordCounts counts the words of s as wordSet finds them.
func wordCounts(s string) map[string]int {
	out := map[string]int{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len([]rune(w)) > 2 {
			out[w]++
		}
	}
	return out
}

// The closing instructions of the section and summary prompts.
const (
	sectionReminder = "Write this section now: one paragraph of 3 to 6 sentences that answers it from these facts, each sentence ending with its source number like [1]."
	summaryReminder = "Write the summary now: 2 to 4 sentences, keeping the source numbers like [1]."
	answerReminder  = "Answer the goal now from these sources: 2 to 4 sentences, the answer first, each sentence ending with its source number like [1]."
)

// synthSystem is the section-writing instruction.
const synthSystem = `You write one section of a research report as a paragraph of prose, in your own words, from numbered facts.
Use only the facts given. End each sentence with the source number of the fact it comes from, like [2]. Never invent a number.
Copy names, commands, package names, file paths, options and numbers exactly as the facts write them.
No heading, no list, no quotes of whole facts, no source list.`

// composeSection writes one section (in.Sections[0]) from its extracted
// facts. A draft that cites nothing after the repair becomes the facts
// themselves as a paragraph, so the section always cites its sources.
func (a *Activities) composeSection(ctx context.Context, in ComposeInput, doc sectionsDoc) (ComposeResult, error) {
	if len(in.Sections) != 1 || in.Sections[0] < 0 || in.Sections[0] >= len(doc.Sections) {
		return ComposeResult{}, nonRetryable(ErrInvalidInput, fmt.Errorf("compose section: sections %v of %d", in.Sections, len(doc.Sections)))
	}
	sec := doc.Sections[in.Sections[0]]
	title := strings.TrimSpace(sec.Title)
	facts := ExtractFacts(title+" "+in.Goal, sec.Evidence, FactOptions{K: orDefault(in.Facts, config.Defaults().Assembly.SectionFacts), MaxChars: 400, Follow: in.FactFollow})
	res := ComposeResult{}
	if len(facts) == 0 { // a section of model-written results only: as collected
		res.Markdown = fmt.Sprintf("## %s\n\n%s", heading(title), strings.TrimSpace(sec.Text))
		res.Cited, res.NoCall = citedNumbers(res.Markdown), true
		return res, nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Goal: %s\n\nThis is part %d of %d of the report: the section \"%s\".\n\nFacts:\n", in.Goal, in.Part, in.Parts, title)
	for _, f := range facts {
		fmt.Fprintf(&b, "[%d] %s\n", f.N, f.Text)
	}
	b.WriteString("\n" + sectionReminder + "\n")
	system := synthSystem
	if strings.TrimSpace(in.Instructions) != "" {
		system += "\n\nFormatting instructions from the user:\n" + in.Instructions
	}
	evidence := map[int]string{}
	for _, f := range facts {
		evidence[f.N] = sec.Evidence[f.N]
	}
	text, cut, err := a.composeChecked(ctx, in, system, b.String(), sectionReminder, evidence, &res)
	if err != nil {
		return ComposeResult{}, err
	}
	prose, dropped := dropInventedURLs(Prose(text), knownLinks(doc, b.String(), sec.Evidence)...)
	if dropped > 0 {
		logger(ctx, in.SessionID).Info("section links no source holds removed", "section", title, "removed", dropped)
	}
	if cut {
		// A sentence the token bound cut ("…which limits fast chargin")
		// goes; a draft without a whole sentence is an empty one, and
		// becomes the facts paragraph below.
		if whole := wholeSentences(prose); whole != prose {
			logger(ctx, in.SessionID).Info("section cut by its token bound; its last whole sentence ends it", "section", title, "dropped", truncate(prose[len(whole):], 200))
			prose = whole
		}
	}
	para, placed := placeCitations(prose, evidence)
	para = dropPromptTalk(dropRepeats(para))
	if placed > 0 {
		logger(ctx, in.SessionID).Info("section citations placed by their facts", "section", title, "placed", placed)
	}
	if len(citedNumbers(para)) == 0 {
		para = factsParagraph(facts)
	}
	res.Markdown = fmt.Sprintf("## %s\n\n%s", heading(title), para)
	res.Cited = citedNumbers(res.Markdown)
	return res, nil
}

var listMarkRe = regexp.MustCompile(`^\s*(?:[-*+]|\d{1,3}[.)])\s+`)

// Prose turns a model's section draft into one paragraph: headings
// dropped, a fenced block made one code span, list markers removed, lines
// joined (joinLines), marks that open it moved to its first sentence's
// end (marksFirst).
func Prose(text string) string {
	var parts, code []string
	inFence := false
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		switch {
		case contract.FenceLine(t) != "":
			if inFence {
				parts, code = appendCode(parts, code), nil
			}
			inFence = !inFence
		case inFence:
			if t != "" {
				code = append(code, t)
			}
		case t != "" && !strings.HasPrefix(t, "#"):
			parts = append(parts, strings.TrimSpace(listMarkRe.ReplaceAllString(t, "")))
		}
	}
	return dropSectionRefs(citingTails(citedLeads(marksFirst(joinLines(appendCode(parts, code))))))
}

// sectionRefRe is a bracketed section number with its title or not
// ("[7.2]", "[7.3. GUI infrastructure]", "[Section 9.4.12]"): the 1.5B
// summary of the real-model CI step's dr-029 ends sentences so,
// where a reader expects a citation. It is none, and the citation check
// reads only [n].
var sectionRefRe = regexp.MustCompile(`(?i)\s*\[(?:(?:section|chapter|§)\s*)?\d+(?:\.\d+)+\.?(?:\s+[^\[\]\n]{0,80})?\]`)

// dropSectionRefs removes section references outside code spans.
func dropSectionRefs(md string) string {
	pieces := strings.Split(md, "`")
	for i := 0; i < len(pieces); i += 2 { // even pieces are outside code spans
		pieces[i] = sectionRefRe.ReplaceAllString(pieces[i], "")
	}
	return strings.Join(pieces, "`")
}

// appendCode adds a fenced block's lines as one code span (as they are
// when a line holds a backtick of its own): joined into prose bare, the
// 1.5B model's "… the following command:" and its "$ sudo
// update-alternatives --config editor" ran into the next sentence.
func appendCode(parts, code []string) []string {
	if len(code) == 0 {
		return parts
	}
	block := strings.Join(code, " ")
	if !strings.Contains(block, "`") {
		block = "`" + block + "`"
	}
	return append(parts, block)
}

// joinLines joins a draft's lines with spaces, and with a period where a
// line ends with no punctuation and the next opens with a capital: a
// composer writes a sentence per line and sometimes leaves the period
// off after a value or a command. Joined bare, "… --config editor" and
// "This command selects …" read as one sentence to the citation check,
// which no passage held, and the seventeenth evaluation run's dr-003
// summary marked its right answer [unverified] with the clause the model
// added after it.
func joinLines(parts []string) string {
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			prev, _ := utf8.DecodeLastRuneInString(parts[i-1])
			next, _ := utf8.DecodeRuneInString(p)
			if unicode.IsUpper(next) && (unicode.IsLetter(prev) || unicode.IsDigit(prev) || prev == '`') {
				b.WriteByte('.')
			}
			b.WriteByte(' ')
		}
		b.WriteString(p)
	}
	return b.String()
}

var (
	leadMarksRe = regexp.MustCompile(`^(?:\[\d+(?:\s*,\s*\d+)*\]\s*)+`)
	// listNumberRe is a list number without its point before opening
	// marks and a capital ("2 [1] The file …"): dr-036's summary in the
	// sixteenth evaluation run opened "2 [unverified] The file …". A
	// number that is part of the sentence ("993 [1] is the port") is not
	// followed by a capital.
	listNumberRe = regexp.MustCompile(`^\d{1,2}\s+((?:\[\d+(?:\s*,\s*\d+)*\]\s*)+\p{Lu})`)
)

// marksFirst handles a paragraph that opens with citation marks, as the
// facts were given ("[1] fact"): the 1.5B model wrote "[1] Sulfide
// electrolytes … low. [1] Mechanical contact …" (make run, 2026-12-03),
// and the report showed the stray "[1]"; when verification removed it, a
// space opened the summary. The opening marks are dropped when the first
// sentence carries a number of its own, and moved to its end otherwise;
// a list number before them goes (listNumberRe).
func marksFirst(para string) string {
	para = listNumberRe.ReplaceAllString(para, "$1")
	lead := leadMarksRe.FindString(para)
	if lead == "" {
		return para
	}
	rest := para[len(lead):]
	sents := contract.SplitSentences(rest)
	if len(sents) == 0 || len(sents[0].Marks) > 0 {
		return rest
	}
	at := sents[0].End
	for at > 0 && rest[at-1] == ' ' {
		at--
	}
	if at > 0 && strings.ContainsRune(".!?", rune(rest[at-1])) {
		at--
	}
	return rest[:at] + " " + strings.TrimSpace(lead) + rest[at:]
}

// leadRe is a sentence that opens by naming its sources ("From [2] and
// [3], you can list …", "According to [1], …"): the 1.5B composer writes
// a citation as a noun. When the check removed those numbers the reader
// got "From and [unverified], you can list …" (the real-model CI step's
// dr-031). Group 1 is the marks; the comma after them is
// required ("See [1] for details" is not a lead); the rest of the
// sentence follows the match. The prompt's own word for a source may sit
// before the marks ("From fact [3], GRUB2 reads the ESP partition …",
// dr-061's section, twentieth evaluation run); another noun ("From the
// manual [1], …") is the writer's and stays.
// The parts the lead and tail patterns share: the words that open a
// sentence by naming its sources, the prompt's nouns for a source, and a
// run of marks with their separators (one capture group).
const (
	leadOpeners = `from|according to|as (?:stated|noted|described|shown|explained|mentioned|given|seen) in|as per|based on`
	sourceNoun  = `(?i:(?:the\s+)?(?:facts?|sources?|passages?)\s+)?`
	markRun     = `((?:\[\d+(?:\s*,\s*\d+)*\]\s*(?:(?:,\s*and|,|;|and|&)\s*)?)+)`
)

var leadRe = regexp.MustCompile(`^(?i:` + leadOpeners + `|per|in)\s+` + sourceNoun + markRun + `,\s*`)

// factsLeadRe is the other form of it: the sources as the subject of a
// claim about the rest ("The facts [1], [2], and [3] collectively support
// the conclusion that the CUPS … port 631 …", dr-067, nineteenth
// evaluation run, which the check left as "The facts [unverified], , and
// collectively support …"). Only "that" clauses: the rest must be a
// sentence of its own.
var factsLeadRe = regexp.MustCompile(`^(?i:(?:the|these|both|all)\s+)?(?i:facts?|sources?|passages?|references?|evidence)\s+` + markRun + `(?i:(?:collectively|together|all|both)\s+)?(?i:supports?|shows?|states?|indicates?|confirms?|says?)\s+(?i:(?:the\s+conclusion\s+)?that)\s+`)

// emptyLeadRe is a cited lead whose marks are gone ("From  and , the
// fonts-hack package provides …", dr-031's section, twenty-third
// evaluation run): composition removes numbers that name no fact of the
// call before Prose reads the draft. Only separators stand between the
// lead's words and its comma; group 1 is empty, so the sentence is left
// without marks, for placeCitations to number by its text.
var emptyLeadRe = regexp.MustCompile(`^(?i:` + leadOpeners + `)\s+` + sourceNoun + `()(?:(?:,|;|and|&)\s*)*,\s*`)

var markRe = regexp.MustCompile(`\[\d+(?:\s*,\s*\d+)*\]`)

// citedLeads rewrites each sentence that opens by naming its sources
// (leadRe, factsLeadRe) as the sentence alone with those marks at its end, where the
// check and the reader expect them: "From [2] and [3], you can list X."
// becomes "You can list X [2][3]." The first word is capitalized only
// when it is a plain word (leadWords), not a command such as "xterm".
func citedLeads(para string) string {
	sents := contract.SplitSentences(para)
	for i := len(sents) - 1; i >= 0; i-- { // from the end: offsets stay valid
		s := sents[i]
		sent := para[s.Start:s.End]
		m := leadRe.FindStringSubmatch(sent)
		if m == nil {
			m = factsLeadRe.FindStringSubmatch(sent)
		}
		if m == nil {
			m = emptyLeadRe.FindStringSubmatch(sent)
		}
		if m == nil {
			continue
		}
		rest := strings.TrimRight(sent[len(m[0]):], " ")
		if !hasLetter(rest) {
			continue
		}
		rest = endMarks(capitalLead(rest), leadMarks(m[1], rest))
		para = para[:s.Start] + rest + para[s.Start+len(strings.TrimRight(sent, " ")):]
	}
	return para
}

// tailRe is a sentence that only says where the sentence before it comes
// from ("This is specified in fact [1].", dr-018's section, twenty-second
// evaluation run; "See source [2]."): the 1.5B composer cites a fact in a
// sentence of its own. The check then judges "This is specified in fact"
// against the source, which cannot support it, and the claim before it
// stays uncited. Group 1 is the marks. The subject must be a pronoun,
// so a sentence that states a claim of its own ("The claim that X is
// supported by fact [3].") is not one.
var tailRe = regexp.MustCompile(`^(?:(?i:(?:this|that|it|these|those)(?:\s+(?:information|value|port|setting|command|file|option|detail|claim|statement|fact))?\s+(?:is|are|was|were)\s+(?:also\s+)?(?:specified|stated|described|shown|explained|mentioned|given|noted|covered|documented|found|supported|confirmed|listed|defined|detailed|indicated)\s+(?:in|by)|see|cf\.|refer\s+to)\s+(?i:(?:the\s+)?(?:facts?|sources?|passages?|references?|evidence)\s+)?)` + markRun + `[.!]?$`)

// citingTails moves the marks of each such sentence (tailRe) to the end of
// the sentence before it and drops it: "The port is 993. This is
// specified in fact [1]." becomes "The port is 993 [1]." A paragraph's
// first sentence has nothing before it and stays.
func citingTails(para string) string {
	for {
		sents := contract.SplitSentences(para)
		i := len(sents) - 1
		var m []string
		for ; i >= 1; i-- {
			between := strings.TrimSpace(para[sents[i-1].End:sents[i].Start])
			if m = tailRe.FindStringSubmatch(strings.TrimSpace(para[sents[i].Start:sents[i].End])); m != nil && between == "" {
				break
			}
		}
		if i < 1 {
			return para
		}
		para = joinTail(para, sents[i-1], sents[i], m[1])
	}
}

// joinTail puts marks at the end of sentence prev and removes tail, the
// sentence after it.
func joinTail(para string, prev, tail contract.Sentence, marks string) string {
	before := strings.TrimRight(para[prev.Start:prev.End], " ")
	end := tail.End
	for end < len(para) && para[end] == ' ' {
		end++
	}
	rest := para[end:]
	if rest != "" {
		rest = " " + rest
	}
	return para[:prev.Start] + endMarks(before, leadMarks(marks, before)) + rest
}

// endMarks puts marks at the end of sentence s, before its closing
// punctuation, after a mark it ends with without a space.
func endMarks(s, marks string) string {
	at := len(s)
	if at > 0 && strings.ContainsRune(".!?", rune(s[at-1])) {
		at--
	}
	sep := " "
	if marks == "" || at > 0 && s[at-1] == ']' {
		sep = ""
	}
	return s[:at] + sep + marks + s[at:]
}

// leadMarks is the marks of a cited lead that the rest of the sentence
// does not carry already ("From [4], X [4]." cites 4 once), joined.
func leadMarks(lead, rest string) string {
	have := map[string]bool{}
	for _, m := range markRe.FindAllString(rest, -1) {
		have[m] = true
	}
	var b strings.Builder
	for _, m := range markRe.FindAllString(lead, -1) {
		if !have[m] {
			have[m] = true
			b.WriteString(m)
		}
	}
	return b.String()
}

// capitalLead capitalizes the first word of s when it is one of
// leadWords: a sentence left after its cited lead mostly opens with one
// ("you can …", "the file …"); any other word may be a command or a
// package name, whose case matters more than the sentence's.
func capitalLead(s string) string {
	w := s
	if i := strings.IndexFunc(s, func(r rune) bool { return !unicode.IsLetter(r) }); i >= 0 {
		w = s[:i]
	}
	if !leadWords[w] {
		return s
	}
	return strings.ToUpper(w[:1]) + s[1:]
}

var leadWords = map[string]bool{
	"you": true, "the": true, "a": true, "an": true, "it": true, "this": true, "these": true,
	"that": true, "there": true, "they": true, "we": true, "one": true, "its": true, "to": true,
	"if": true, "when": true, "all": true, "each": true, "some": true, "most": true, "many": true,
	"using": true, "with": true, "on": true, "for": true, "by": true, "users": true, "debian": true,
}

// factsParagraph is the extractive paragraph: each fact with its number.
func factsParagraph(facts []Fact) string {
	parts := make([]string, len(facts))
	for i, f := range facts {
		t := strings.TrimRight(f.Text, " ")
		end := ""
		if k := len(t) - 1; k >= 0 && strings.ContainsRune(".!?", rune(t[k])) {
			t, end = t[:k], t[k:]
		}
		parts[i] = fmt.Sprintf("%s [%d]%s", t, f.N, end)
	}
	return strings.Join(parts, " ")
}

const summarySystem = `You write the closing summary of a research report: 2 to 4 sentences that answer the goal from the report and the facts given with it.
Use only what the report and the facts say. Keep the source numbers like [2] of the sentences you use, and names, commands, file paths and numbers exactly as they are written. No heading, no list.`

// answerSystem is the summary's instruction when it answers from whole
// passages: the question's answer, not a digest of the sections.
const answerSystem = `You write the closing summary of a research report: 2 to 4 sentences that answer the goal from the numbered sources given.
Say the answer in the first sentence. Use only the sources. End each sentence with the number of the source it comes from, like [2].
Copy names, commands, package names, file paths, options and numbers exactly as the sources write them. No heading, no list.`

// Summarize writes the report's closing summary from its sections and,
// with in.Facts, the evidence sentences that best answer the goal itself
// (from the sections' evidence and the root's nearest the goal,
// CollectSections): a section answers its task, and the summary answers
// the question. With in.Passages and root passages for the goal it
// answers from those passages alone, the report not shown
// (summaryPassagesPrompt). Its citations are checked against those
// sources like a composed part's (one repair, then invalid ones removed). An answer that
// is not prose (JSON, empty) gives no summary rather than a wrong one.
func (a *Activities) Summarize(ctx context.Context, in SummarizeInput) (ComposeResult, error) {
	var doc sectionsDoc
	ok, err := getBlob(ctx, a.Store, in.SessionID, sectionsKey, &doc)
	if err != nil {
		return ComposeResult{}, err
	}
	if !ok {
		return ComposeResult{}, fmt.Errorf("summarize: sections of session %s not collected", in.SessionID)
	}
	evidence := map[int]string{}
	for _, sec := range doc.Sections {
		for n, text := range sec.Evidence {
			evidence[n] += text
		}
	}
	for n, text := range doc.goalTexts() {
		evidence[n] += text
	}
	system, user, reminder := summarySystem, "", summaryReminder
	if ps := GoalPassages(in.Goal, doc.Passages, in.Passages); len(ps) > 0 {
		system, user, reminder = answerSystem, summaryPassagesPrompt(in.Goal, ps), answerReminder
	} else {
		user = summaryPrompt(in, ExtractFacts(in.Goal, evidence, FactOptions{K: in.Facts, MaxChars: 400, Follow: in.FactFollow}))
	}
	res := ComposeResult{}
	text, cut, err := a.composeChecked(ctx, ComposeInput{Part: 0, MaxTokens: in.MaxTokens}, system, user, reminder, evidence, &res)
	if err != nil {
		return ComposeResult{}, err
	}
	if t := strings.TrimSpace(text); t == "" || strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[{") {
		logger(ctx, in.SessionID).Warn("summary answer is not prose; the report has none", "answer", truncate(t, 200))
		return res, nil
	}
	prose, dropped := dropInventedURLs(Prose(text), knownLinks(doc, user, evidence)...)
	if dropped > 0 {
		logger(ctx, in.SessionID).Info("summary links no source holds removed", "removed", dropped)
	}
	if cut {
		if prose = wholeSentences(prose); prose == "" {
			logger(ctx, in.SessionID).Warn("summary cut by its token bound before its first sentence ended; the report has none", "answer", truncate(text, 200))
			return res, nil
		}
	}
	para, placed := placeCitations(prose, evidence)
	if placed > 0 {
		logger(ctx, in.SessionID).Info("summary citations placed by their facts", "placed", placed)
	}
	res.Markdown = firstSentences(dropPromptTalk(dropRepeats(para)), summaryMaxSentences)
	if n := proseWords(res.Markdown); n < summaryMinWords {
		// The eighteenth evaluation run's dr-036 summary was "2 4": what
		// the model left of the reminder's "2 to 4 sentences". No summary
		// says less than a wrong one.
		logger(ctx, in.SessionID).Warn("summary answer has no words; the report has none", "words", n, "answer", truncate(text, 200))
		res.Markdown = ""
		return res, nil
	}
	res.Cited = citedNumbers(res.Markdown)
	return res, nil
}

// summaryMinWords is the fewest words a summary has ("Run xeyes [1]."):
// fewer is not an answer.
const summaryMinWords = 2

// proseWords counts md's words of two letters or more, citation marks
// left out: numbers and marks alone say nothing.
func proseWords(md string) int {
	n := 0
	for _, f := range strings.Fields(containMarkRe.ReplaceAllString(md, " ")) {
		letters := 0
		for _, r := range f {
			if unicode.IsLetter(r) {
				letters++
			}
		}
		if letters >= 2 {
			n++
		}
	}
	return n
}

// summaryMaxSentences is the longest summary kept, as summaryReminder
// asks: a 1.5B model asked for 2 to 4 sentences copied a whole
// one-section report (nine sentences) into its summary.
const summaryMaxSentences = 4

// firstSentences is md cut after its n-th sentence (its citation marks
// kept), or md whole when it has no more.
func firstSentences(md string, n int) string {
	sents := contract.SplitSentences(md)
	if len(sents) <= n {
		return md
	}
	return strings.TrimSpace(md[:sents[n-1].End])
}

// cutByBound says whether a composition answer may have been cut by the
// call's max_tokens: the server says so ("length"), or says nothing of
// why it stopped. "stop" and the rest leave the text as written.
func cutByBound(finish string) bool { return finish == "length" || finish == "" }

// wholeSentences is md without the unfinished end the token bound left:
// its last line cut after its last sentence that ends with . ! or ?
// (closing quotes and its citation marks kept, before or after the
// punctuation: "… [2]." and "…. [2]"), or dropped when it has none. A
// decimal or version ("v2.1 is") or an abbreviation ("etc.") ends no
// sentence (contract.SplitSentences). A last line without sentences (a
// heading, a code fence) is left as it is. A text cut inside a code
// block loses the block's last line, which may be a command cut short,
// and the block is closed (closeCutFence).
func wholeSentences(md string) string {
	md = strings.TrimRightFunc(md, unicode.IsSpace)
	if closed, ok := closeCutFence(md); ok {
		return closed
	}
	head, last := "", md
	if i := strings.LastIndexByte(md, '\n'); i >= 0 {
		head, last = md[:i+1], md[i+1:]
	}
	sents := contract.SplitSentences(last)
	if len(sents) == 0 {
		return md
	}
	keep := 0
	for i := len(sents) - 1; i >= 0; i-- {
		if finished(last, sents[i]) {
			keep = sents[i].End
			break
		}
	}
	return strings.TrimRightFunc(head+last[:keep], unicode.IsSpace)
}

// closeCutFence handles md that ends inside a code block (an odd count of
// fence lines): its last line goes, and a fence line closes the block,
// unless nothing is left of it, in which case its opening fence goes
// too. ok is false when md does not end inside a block.
func closeCutFence(md string) (string, bool) {
	lines := strings.Split(md, "\n")
	open := -1
	for i, l := range lines {
		if contract.FenceLine(l) != "" {
			if open < 0 {
				open = i
			} else {
				open = -1
			}
		}
	}
	if open < 0 {
		return md, false
	}
	fence := contract.FenceLine(lines[open])
	lines = lines[:len(lines)-1]
	if len(lines) <= open+1 {
		return strings.TrimRightFunc(strings.Join(lines[:open], "\n"), unicode.IsSpace), true
	}
	return strings.Join(lines, "\n") + "\n" + strings.TrimLeft(fence, " \t"), true
}

// finished says whether sentence s of line ends with sentence-final
// punctuation once its trailing citation marks and closing quotes are
// set aside.
func finished(line string, s contract.Sentence) bool {
	end := s.End
	for {
		end = len(strings.TrimRight(line[:end], " \t"))
		k := len(s.Marks) - 1
		for k >= 0 && s.Marks[k].End != end {
			k--
		}
		if k < 0 {
			break
		}
		end = s.Marks[k].Start
	}
	t := strings.TrimRight(line[s.Start:end], "\"')*_”’ \t")
	return t != "" && strings.ContainsRune(".!?", rune(t[len(t)-1]))
}

// summaryPrompt is the summary call's user message: the goal, the report,
// then the facts for the goal (none when in.Facts is 0).
func summaryPrompt(in SummarizeInput, facts []Fact) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Summarize this report for the goal: %s\n\nReport:\n%s\n\n", in.Goal, in.Report)
	if len(facts) > 0 {
		b.WriteString("Facts for the goal:\n")
		for _, f := range facts {
			fmt.Fprintf(&b, "[%d] %s\n", f.N, f.Text)
		}
		b.WriteString("\n")
	}
	b.WriteString(summaryReminder + "\n")
	return b.String()
}

// summaryPassagesPrompt is the summary call's user message when it
// answers from whole passages: the passages, then the goal, last, where a
// small model looks (as the baselines' answer prompt has it). The report
// is not shown: given the sections and the passages, the 1.5B model
// summarized the sections. In the eighth local evaluation its summaries
// of dr-018 and dr-051 restated a section's POP3 port and txt2man, while
// the passages before them held imaps 993 and help2man, which the
// baselines, shown passages alone, answered (docs/citations.md).
func summaryPassagesPrompt(goal string, ps []Passage) string {
	var b strings.Builder
	b.WriteString("Sources for the goal:\n\n")
	for _, p := range ps {
		fmt.Fprintf(&b, "[%d] %s\n\n", p.N, strings.TrimSpace(p.Text))
	}
	fmt.Fprintf(&b, "Goal: %s\n\n%s\n", goal, answerReminder)
	return b.String()
}

// GoalPassages picks the k passages that best answer goal, each cut to
// contract.SummaryPassageChars, in rank order. ps comes nearest the goal's
// embedding first (goalEvidence); its BM25 rank against the goal's words
// (factScores, the passages as the collection) is fused with that order
// by reciprocal rank,
//
//	score(p) = 1/(k + rank_emb(p)) + 1/(k + rank_bm25(p)),   k = research.DefaultRRFK,
//
// as the corpus search fuses its two rankings (docs/research.md): a
// paraphrased question shares few words with its answer's passage, and a
// table row shares its name with the question and little meaning. Ties
// keep the embedding order. A passage repeating an earlier one's text is
// dropped.
func GoalPassages(goal string, ps []Passage, k int) []Passage {
	if k <= 0 || len(ps) == 0 {
		return nil
	}
	pieces := make([]piece, len(ps))
	for i, p := range ps {
		ws := wordCounts(p.Text)
		l := 0
		for _, c := range ws {
			l += c
		}
		pieces[i] = piece{n: p.N, text: p.Text, words: ws, len: l}
	}
	bm := factScores(goal, pieces, false)
	byBM := make([]int, len(ps))
	for i := range byBM {
		byBM[i] = i
	}
	sort.SliceStable(byBM, func(a, b int) bool { return bm[byBM[a]] > bm[byBM[b]] })
	fused := make([]float64, len(ps))
	for r, i := range byBM {
		fused[i] = 1/(research.DefaultRRFK+float64(r+1)) + 1/(research.DefaultRRFK+float64(i+1))
	}
	order := make([]int, len(ps))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return fused[order[a]] > fused[order[b]] })
	seen := map[string]bool{}
	var out []Passage
	for _, i := range order {
		key := normalizeQuote(ps[i].Text)
		if seen[key] || strings.TrimSpace(ps[i].Text) == "" {
			continue
		}
		seen[key] = true
		out = append(out, Passage{N: ps[i].N, Text: truncate(ps[i].Text, contract.SummaryPassageChars)})
		if len(out) == k {
			break
		}
	}
	return out
}

// dropRepeats removes the sentences of a paragraph that repeat an earlier
// one: the same words (markers aside, spaces and case folded), or a
// restatement (restates): a small model's paragraph sometimes says its
// three sentences twice (dr-010), or says its first fact again in other
// words at the end (make run, 2026-12-02). The first keeps the repeat's
// citations when it had none of its own.
func dropRepeats(para string) string {
	pieces := sentencePieces(para)
	seen := map[string]int{}
	kept := make([]string, 0, len(pieces))
	profs := make([]coverProfile, 0, len(pieces))
	for _, p := range pieces {
		k := strings.Join(strings.FieldsFunc(strings.ToLower(markerRe.ReplaceAllString(p, " ")), notWordRune), " ")
		i, dup := seen[k]
		prof := profile(p)
		if !dup && len(k) >= echoMinChars {
			i, dup = restates(profs, prof)
		}
		switch {
		case len(k) < echoMinChars:
			kept, profs = append(kept, p), append(profs, prof)
		case !dup:
			seen[k] = len(kept)
			kept, profs = append(kept, p), append(profs, prof)
		case len(citedNumbers(kept[i])) == 0 && len(citedNumbers(p)) > 0:
			kept[i] = p
		}
	}
	return strings.Join(kept, " ")
}

// promptWords are the words a small model uses when it talks about its
// prompt instead of the subject: "These claims are supported by the
// given facts [1] and.", "From the facts provided, we can see that:"
// (1.5B sections, eighth evaluation run). Plurals as coverTerms folds them.
var promptWords = map[string]bool{
	"claim": true, "supported": true, "support": true, "given": true, "fact": true, "provided": true,
	"report": true, "information": true, "source": true, "above": true, "mentioned": true, "stated": true,
	"based": true, "following": true, "goal": true, "question": true, "context": true, "summary": true,
	"answer": true, "need": true, "know": true, "thing": true, "see": true, "unverified": true,
	"sourced": true, "cited": true, "according": true,
	// "The goal is answered in the first sentence of the summary." opened
	// the nineteenth evaluation run's dr-010 summary: answerSystem's "Say
	// the answer in the first sentence", said back.
	"answered": true, "first": true, "sentence": true,
}

// promptFrameRe is the frame of a composition prompt (composeSection's
// and the parts' "This is part n of m of the report: the section "…".
// Facts:"), echoed by a 1.5B model at the start of what it wrote and run
// into its first fact (dr-010, eleventh evaluation run): the frame goes,
// the fact stays.
var promptFrameRe = regexp.MustCompile(`(?i)\bthis is part \d+ of \d+(?: of the report)?(?::\s*the section\s*"[^"\n]*")?[.:]?\s*(?:(?:facts|material):\s*)?`)

// dropPromptTalk removes the sentences of a paragraph that only talk
// about the prompt: at least one content word, every one of them a
// promptWord, no number ("This is sourced from [1]." closed a summary of
// the fifteenth evaluation run). Such a sentence tells the reader nothing,
// and its citation would be judged unsupported; a sentence with one word
// of the subject stays.
func dropPromptTalk(para string) string {
	pieces := sentencePieces(promptFrameRe.ReplaceAllString(para, ""))
	kept := make([]string, 0, len(pieces))
	for _, p := range pieces {
		if !aboutThePrompt(profile(p)) {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, " ")
}

func aboutThePrompt(p coverProfile) bool {
	if len(p.content) == 0 || len(p.numbers) > 0 {
		return false
	}
	for w := range p.content {
		if !promptWords[w] {
			return false
		}
	}
	return true
}

// sentencePieces are a one-line paragraph's sentences as the citation
// check reads them (contract.SplitSentences: a mark after the final
// period belongs to its sentence, so it goes with it when the sentence
// is dropped); a text of several lines is split by splitPassage.
func sentencePieces(para string) []string {
	if strings.Contains(para, "\n") {
		return splitPassage(para, 0)
	}
	var out []string
	for _, s := range contract.SplitSentences(para) {
		out = append(out, strings.TrimSpace(para[s.Start:s.End]))
	}
	return out
}

// restateShare is the share of each sentence's content words the other
// must hold for the two to be one fact said twice.
const restateShare = 0.75

// restates finds an earlier sentence that p restates: both have at least
// coverMinWords content words, the same numbers, and each holds
// restateShare of the other's content words. Negation is not compared: a
// restatement often swaps "suffer from" for "are not immune to".
func restates(earlier []coverProfile, p coverProfile) (int, bool) {
	if len(p.content) < coverMinWords {
		return 0, false
	}
	for i, q := range earlier {
		if len(q.content) < coverMinWords || !sameKeys(p.numbers, q.numbers) {
			continue
		}
		held := 0
		for w := range p.content {
			if q.content[w] {
				held++
			}
		}
		if float64(held) >= restateShare*float64(len(p.content)) && float64(held) >= restateShare*float64(len(q.content)) {
			return i, true
		}
	}
	return 0, false
}

func sameKeys(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

func notWordRune(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }
