package activities

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/lethe-research/lethe/config"
)

// The synthesis route (docs/citations.md): extractive, then abstractive.
// For each section, ExtractFacts picks the sentences of its evidence that
// answer it (pure, lexical); one small call rewrites them as a paragraph
// keeping the [n] markers; one call at the end writes the summary. A small
// CPU model given a few numbered facts writes prose; given pages of
// bulleted excerpts it copies the bullets.

// Fact is one evidence sentence with its source number.
type Fact struct {
	N    int
	Text string
}

// factMinChars drops fragments (headings, captions) too short to state a fact.
const factMinChars = 30

// ExtractFacts is the k sentences of the evidence (source number → text)
// with the most words in common with focus (ties: lower source, earlier
// sentence), each bounded to maxChars, duplicates dropped, returned in
// source order.
func ExtractFacts(focus string, evidence map[int]string, k, maxChars int) []Fact {
	type cand struct {
		Fact
		pos, score int
	}
	want := wordSet(focus)
	ns := make([]int, 0, len(evidence))
	for n := range evidence {
		ns = append(ns, n)
	}
	sort.Ints(ns)
	seen := map[string]bool{}
	var cands []cand
	for _, n := range ns {
		for _, line := range strings.Split(evidence[n], "\n") {
			for _, sent := range splitPassage(strings.Join(strings.Fields(line), " "), maxChars) {
				key := normalizeQuote(sent)
				if len(sent) < factMinChars || strings.HasPrefix(sent, "#") || seen[key] {
					continue
				}
				seen[key] = true
				c := cand{Fact: Fact{N: n, Text: sent}, pos: len(cands)}
				for w := range wordSet(sent) {
					if want[w] {
						c.score++
					}
				}
				cands = append(cands, c)
			}
		}
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].score > cands[j].score })
	if len(cands) > k {
		cands = cands[:k]
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].pos < cands[j].pos })
	out := make([]Fact, len(cands))
	for i, c := range cands {
		out[i] = c.Fact
	}
	return out
}

// synthSystem is the section-writing instruction.
const synthSystem = `You write one section of a research report as a paragraph of prose, in your own words, from numbered facts.
Use only the facts given. End each sentence with the source number of the fact it comes from, like [2]. Never invent a number.
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
	facts := ExtractFacts(title+" "+in.Goal, sec.Evidence, orDefault(in.Facts, config.Defaults().Assembly.SectionFacts), 400)
	res := ComposeResult{}
	if len(facts) == 0 { // a section of model-written results only: as collected
		res.Markdown = fmt.Sprintf("## %s\n\n%s", title, strings.TrimSpace(sec.Text))
		res.Cited, res.NoCall = citedNumbers(res.Markdown), true
		return res, nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Goal: %s\n\nThis is part %d of %d of the report: the section \"%s\".\n\nFacts:\n", in.Goal, in.Part, in.Parts, title)
	for _, f := range facts {
		fmt.Fprintf(&b, "[%d] %s\n", f.N, f.Text)
	}
	b.WriteString("\nWrite this section now: one paragraph of 3 to 6 sentences that answers it from these facts, each sentence ending with its source number like [1].\n")
	system := synthSystem
	if strings.TrimSpace(in.Instructions) != "" {
		system += "\n\nFormatting instructions from the user:\n" + in.Instructions
	}
	evidence := map[int]string{}
	for _, f := range facts {
		evidence[f.N] = sec.Evidence[f.N]
	}
	text, err := a.composeChecked(ctx, in, system, b.String(), evidence, &res)
	if err != nil {
		return ComposeResult{}, err
	}
	para := Prose(text)
	if len(citedNumbers(para)) == 0 {
		para = factsParagraph(facts)
	}
	res.Markdown = fmt.Sprintf("## %s\n\n%s", title, para)
	res.Cited = citedNumbers(res.Markdown)
	return res, nil
}

var listMarkRe = regexp.MustCompile(`^\s*(?:[-*+]|\d{1,3}[.)])\s+`)

// Prose turns a model's section draft into one paragraph: headings and
// fences dropped, list markers removed, lines joined.
func Prose(text string) string {
	var parts []string
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "#") || strings.HasPrefix(t, "```") {
			continue
		}
		parts = append(parts, strings.TrimSpace(listMarkRe.ReplaceAllString(t, "")))
	}
	return strings.Join(parts, " ")
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

const summarySystem = `You write the closing summary of a research report: 2 to 4 sentences that answer the goal from the report.
Use only what the report says. Keep the source numbers like [2] of the sentences you use. No heading, no list.`

// Summarize writes the report's closing summary from its sections. Its
// citations are checked against the sections' sources like a composed
// part's (one repair, then invalid ones removed). An answer that is not
// prose (JSON, empty) gives no summary rather than a wrong one.
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
	user := fmt.Sprintf("Summarize this report for the goal: %s\n\nReport:\n%s\n\nWrite the summary now: 2 to 4 sentences, keeping the source numbers like [1].\n", in.Goal, in.Report)
	res := ComposeResult{}
	text, err := a.composeChecked(ctx, ComposeInput{Part: 0, MaxTokens: in.MaxTokens}, summarySystem, user, evidence, &res)
	if err != nil {
		return ComposeResult{}, err
	}
	if t := strings.TrimSpace(text); t == "" || strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[{") {
		logger(ctx, in.SessionID).Warn("summary answer is not prose; the report has none", "answer", truncate(t, 200))
		return res, nil
	}
	res.Markdown = Prose(text)
	res.Cited = citedNumbers(res.Markdown)
	return res, nil
}
