package activities

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"go.temporal.io/sdk/activity"

	"github.com/lethe-research/lethe/algebra"
	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/llm"
)

// sectionDoc is one report section kept in the store between
// CollectSections and Compose: its text and the evidence behind each
// source number it cites.
type sectionDoc struct {
	Title    string
	Text     string
	Evidence map[int]string // source number -> the excerpts the section shows from it
}

type sectionsDoc struct {
	Sections []sectionDoc
	Sources  []Source
	// Goal is what goalTexts derives from Passages. Blobs written before
	// 2026-12-02 hold it beside Passages (the same items twice, about
	// 40 KB); it is read only from those.
	Goal map[int]string `json:",omitempty"`
	// Passages are the root's evidence nearest the goal, whole, nearest
	// first: the summary answers from them (assembly.summary_passages)
	// and picks its facts for the goal from their texts beside the
	// sections' (assembly.summary_facts).
	Passages []Passage `json:",omitempty"`
}

// Passage is one evidence item's text with its source number.
type Passage struct {
	N    int
	Text string
}

const sectionsKey = "assembly/sections"

// CollectSections walks the task tree depth-first: a DONE task gives its
// result with a [Source data] appendix of its strongest evidence, a leaf
// without a result gives its evidence directly. MMR then orders the
// sections against the goal. It reads no task list whole (#14): the
// outline (no texts, no embeddings) and the per-task evidence counts give
// the walk and the tasks that can make a section; only those are read,
// with their evidence, a page at a time in walk order.
func (a *Activities) CollectSections(ctx context.Context, in CollectInput) (CollectResult, error) {
	s, err := a.Store.GetSession(ctx, in.SessionID)
	if err != nil {
		return CollectResult{}, fmt.Errorf("collect session: %w", err)
	}
	outline, err := a.Store.TaskOutline(ctx, in.SessionID)
	if err != nil {
		return CollectResult{}, fmt.Errorf("collect tasks: %w", err)
	}
	per, err := a.Store.EvidenceCounts(ctx, in.SessionID)
	if err != nil {
		return CollectResult{}, fmt.Errorf("collect evidence counts: %w", err)
	}
	roots, err := a.Store.TasksByIDs(ctx, in.SessionID, []string{graph.RootShortID})
	if err != nil {
		return CollectResult{}, fmt.Errorf("collect root: %w", err)
	}
	out := CollectResult{}
	if len(roots) == 1 && roots[0].Status == graph.Done && strings.TrimSpace(roots[0].ResultSummary) != "" {
		out.RootDone, out.RootResult = true, roots[0].ResultSummary
	}
	c := collector{a: a, cfg: orDefault(in.Assembly, config.Defaults().Assembly), session: in.SessionID, sources: map[string]int{}}
	walk := preorder(outline)
	if out.RootDone && per[graph.RootShortID] == 0 {
		walk = withoutRoot(walk)
	}
	if err := c.sections(ctx, sectionTasks(walk, per, false)); err != nil {
		return CollectResult{}, err
	}
	// The seeds' sections come from DONE tasks and researched leaves. When
	// the evidence sits only on inner tasks (the model searched for a task,
	// then split it and stopped), that gives nothing, and the report would
	// say "no findings" over a graph full of evidence: take the inner tasks'
	// evidence then.
	if len(c.secs) == 0 {
		if err := c.sections(ctx, sectionTasks(walk, per, true)); err != nil {
			return CollectResult{}, err
		}
	}
	goal := algebra.ToFloat64(s.GoalQueryEmb)
	doc := sectionsDoc{}
	if (c.cfg.SummaryFacts > 0 || c.cfg.SummaryPassages > 0) && len(c.secs) > 0 {
		if doc.Passages, err = c.goalEvidence(ctx, s.GoalQueryEmb); err != nil {
			return CollectResult{}, err
		}
	}
	order := c.mmrOrder(goal, c.cfg.MMRLambda)
	doc.Sources = c.list
	for _, i := range order {
		sec := c.secs[i]
		doc.Sections = append(doc.Sections, sec)
		out.Sections = append(out.Sections, SectionInfo{Title: heading(sec.Title), Tokens: llm.EstimateTokens(sec.Text)})
	}
	out.Sources = c.list
	if out.RootDone {
		if err := c.checkRoot(ctx, &out); err != nil {
			return CollectResult{}, err
		}
	}
	return out, putBlob(ctx, a.Store, in.SessionID, sectionsKey, doc)
}

// withoutRoot is the walk less its root. A DONE root with no evidence of
// its own has the answer as its whole section, and that answer closes
// the report as its summary (workflows' rootParts): listing it as a
// section too would print it twice. Its children's places are unchanged.
func withoutRoot(walk []walkNode) []walkNode {
	out := make([]walkNode, 0, len(walk))
	for _, n := range walk {
		if n.ShortID != graph.RootShortID {
			out = append(out, n)
		}
	}
	return out
}

// walkNode is one task of the depth-first walk from the root.
type walkNode struct {
	graph.TaskNode
	leaf bool
}

// preorder is the depth-first walk of the tree from the root, children in
// store order (the outline's): the order sections, and so source numbers,
// come in. Tasks not under the root are not visited.
func preorder(outline []graph.TaskNode) []walkNode {
	children := map[string][]graph.TaskNode{}
	var root *graph.TaskNode
	for i, t := range outline {
		if t.ShortID == graph.RootShortID {
			root = &outline[i]
			continue
		}
		children[t.Parent] = append(children[t.Parent], t)
	}
	if root == nil {
		return nil
	}
	var out []walkNode
	var visit func(t graph.TaskNode)
	visit = func(t graph.TaskNode) {
		out = append(out, walkNode{TaskNode: t, leaf: len(children[t.ShortID]) == 0})
		for _, ch := range children[t.ShortID] {
			visit(ch)
		}
	}
	visit(*root)
	return out
}

// sectionTask is a task that may give a section, whether its evidence is
// shown raw (a leaf, or every task in the fallback), and the task whose
// evidence it shows: itself, or for a DONE task that holds none, its
// nearest ancestor that does.
type sectionTask struct {
	id   string
	raw  bool
	from string
}

// sectionTasks keeps, in walk order, the tasks that can give a section: a
// DONE task (its result; a blank one gives nothing unless raw) and a raw
// task that holds evidence. A DONE task without evidence of its own was
// answered from the context its ancestors' research gave it (the seed
// search holds its evidence on the root, docs/seed-search.md), so its
// section shows the nearest such ancestor's evidence, and its facts and
// citations come from there instead of from the model alone.
func sectionTasks(walk []walkNode, evidence map[string]int, inner bool) []sectionTask {
	parent := make(map[string]string, len(walk))
	for _, n := range walk {
		parent[n.ShortID] = n.Parent
	}
	var out []sectionTask
	for _, n := range walk {
		raw := inner || n.leaf
		if n.Status != graph.Done && !(raw && evidence[n.ShortID] > 0) {
			continue
		}
		from := n.ShortID
		for n.Status == graph.Done && evidence[from] == 0 && parent[from] != "" {
			from = parent[from]
		}
		if evidence[from] == 0 {
			from = n.ShortID
		}
		out = append(out, sectionTask{id: n.ShortID, raw: raw, from: from})
	}
	return out
}

// sections adds the sections of the given tasks, in order, reading the
// tasks and their evidence a page at a time.
func (c *collector) sections(ctx context.Context, todo []sectionTask) error {
	for lo := 0; lo < len(todo); lo += taskPage {
		page := todo[lo:min(lo+taskPage, len(todo))]
		ids := make([]string, len(page))
		var froms []string
		for i, p := range page {
			ids[i] = p.id
			if p.from != p.id && !slices.Contains(froms, p.from) {
				froms = append(froms, p.from)
			}
		}
		ts, err := c.a.Store.TasksByIDs(ctx, c.session, ids)
		if err != nil {
			return fmt.Errorf("collect tasks: %w", err)
		}
		ev, err := c.a.Store.EvidenceOfTasks(ctx, c.session, append(slices.Clone(ids), froms...))
		if err != nil {
			return fmt.Errorf("collect evidence: %w", err)
		}
		byID := make(map[string]graph.Task, len(ts))
		for _, t := range ts {
			byID[t.ShortID] = t
		}
		for _, p := range page {
			t, ok := byID[p.id]
			if !ok {
				continue // deleted since the outline was read (a reset): nothing to show
			}
			c.section(t, supporting(ev, graph.TaskID(c.session, p.from)), p.raw)
		}
	}
	return nil
}

// supporting is the evidence with a SUPPORTS edge to the task, in the
// order of ev.
func supporting(ev []graph.Evidence, taskID string) []graph.Evidence {
	var out []graph.Evidence
	for _, e := range ev {
		if e.TaskID == taskID || slices.Contains(e.Also, taskID) {
			out = append(out, e)
		}
	}
	return out
}

// goalEvidence is the root's own evidence (the seed's searches of the goal
// and its plan, docs/seed-search.md) nearest the goal query, at most
// assembly.summary_evidence items, numbered as sources. The seeds' rule
// gives sections only to DONE tasks and researched leaves, so when the
// model plans subtasks the root's evidence makes no section, and a
// report's summary would not see the passages retrieved for the question
// itself: in the local evaluation lethe read the answer and lost it in the
// report where single-shot retrieval answered (dr-018, dr-051).
func (c *collector) goalEvidence(ctx context.Context, goal []float32) ([]Passage, error) {
	ev, err := c.a.Store.EvidenceOfTasks(ctx, c.session, []string{graph.RootShortID})
	if err != nil {
		return nil, fmt.Errorf("collect goal evidence: %w", err)
	}
	var kept []graph.Evidence
	var cos []float64
	for _, e := range supporting(ev, graph.TaskID(c.session, graph.RootShortID)) {
		if fromSource(e) {
			kept = append(kept, e)
			cos = append(cos, algebra.Cosine32(goal, e.Embedding))
		}
	}
	idx := make([]int, len(kept))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return cos[idx[a]] > cos[idx[b]] })
	var ps []Passage
	for _, i := range idx[:min(len(idx), c.cfg.SummaryEvidence)] {
		ps = append(ps, Passage{N: c.sourceNumber(kept[i]), Text: kept[i].Content})
	}
	return ps, nil
}

// goalTexts is the root's goal evidence by source number, each item's
// text followed by a newline: the blob's Goal where an older CollectSections
// wrote it, else derived from the passages.
func (d sectionsDoc) goalTexts() map[int]string {
	if d.Goal != nil {
		return d.Goal
	}
	out := map[int]string{}
	for _, p := range d.Passages {
		out[p.N] += p.Text + "\n"
	}
	return out
}

// checkRoot holds the root's result, which the model wrote during the
// loop, to the same citation check as a composed part: a number must name
// a source of the report, a quoted span must occur in that source's
// evidence. Invalid citations are removed (no repair call: the loop is
// over and the root's author is not asked again).
func (c *collector) checkRoot(ctx context.Context, out *CollectResult) error {
	ev, err := c.a.Store.Evidence(ctx, c.session, "")
	if err != nil {
		return fmt.Errorf("collect evidence for root citations: %w", err)
	}
	evidence := map[int]string{}
	for _, e := range ev {
		if n := c.sourceNumber(e); n > 0 {
			evidence[n] += e.Content + "\n"
		}
	}
	out.Sources = c.list
	out.RootResult, out.RootRemoved = RemoveInvalidCitations(out.RootResult, evidence)
	out.RootCited = citedNumbers(out.RootResult)
	return nil
}

// Extract is the report part Compose would have written, without the
// model: each section's text (a task's result and its [Source data], or a
// leaf's evidence) as collected, with its citations. The session uses it
// when composition fails past the outage tolerance, so that the research
// is never lost with the model.
func (a *Activities) Extract(ctx context.Context, in ComposeInput) (ComposeResult, error) {
	var doc sectionsDoc
	ok, err := getBlob(ctx, a.Store, in.SessionID, sectionsKey, &doc)
	if err != nil {
		return ComposeResult{}, err
	}
	if !ok {
		return ComposeResult{}, fmt.Errorf("extract: sections of session %s not collected", in.SessionID)
	}
	var b strings.Builder
	for _, i := range in.Sections {
		if i < 0 || i >= len(doc.Sections) {
			return ComposeResult{}, nonRetryable(ErrInvalidInput, fmt.Errorf("extract: section %d of %d", i, len(doc.Sections)))
		}
		sec := doc.Sections[i]
		fmt.Fprintf(&b, "## %s\n\n%s\n\n", heading(sec.Title), strings.TrimSpace(sec.Text))
	}
	md := strings.TrimSpace(b.String())
	return ComposeResult{Markdown: md, Cited: citedNumbers(md)}, nil
}

// fromSource reports whether e is text of its source: it has one and was
// read there. An evidence op's source is the page the model says its note
// comes from (Apply keeps it only for a page the session read), but the
// words are the model's: numbered as that source, they would be checked
// against themselves and always pass. So the model's notes get no source
// number and are no part of any source's text (docs/citations.md).
func fromSource(e graph.Evidence) bool {
	return e.SourceURL != "" && e.Kind != graph.KindLLM
}

type collector struct {
	a       *Activities
	cfg     config.Assembly // the session's
	session string
	secs    []sectionDoc
	vecs    [][]float64
	sources map[string]int
	list    []Source
	titles  map[string]int // a section's folded title -> its index in secs
}

func (c *collector) sourceNumber(e graph.Evidence) int {
	if !fromSource(e) {
		return 0
	}
	if n, ok := c.sources[e.SourceURL]; ok {
		return n
	}
	n := len(c.list) + 1
	c.sources[e.SourceURL] = n
	c.list = append(c.list, Source{N: n, URL: e.SourceURL, Title: e.Title})
	return n
}

// section adds t's section: its result with a [Source data] appendix when it is
// DONE, its evidence when raw is set (a leaf, or the fallback), else none.
func (c *collector) section(t graph.Task, ev []graph.Evidence, raw bool) {
	sort.SliceStable(ev, func(i, j int) bool { return ev[i].Strength > ev[j].Strength })
	cfg := c.cfg
	var b strings.Builder
	var limit, chars int
	vec := algebra.ToFloat64(t.ResultEmbedding)
	switch {
	case t.Status == graph.Done && strings.TrimSpace(t.ResultSummary) != "":
		b.WriteString(strings.TrimSpace(t.ResultSummary))
		limit, chars = cfg.DoneEvidence, cfg.DoneEvidenceChars
		if len(ev) > 0 && limit > 0 {
			b.WriteString("\n\n[Source data]")
		}
	case raw && len(ev) > 0:
		limit, chars = cfg.LeafEvidence, cfg.LeafEvidenceChars
	default:
		return
	}
	sec := sectionDoc{Title: t.Description, Evidence: map[int]string{}}
	var evVecs [][]float64
	for i := 0; i < len(ev) && i < limit; i++ {
		n := c.sourceNumber(ev[i])
		text := truncate(strings.Join(strings.Fields(ev[i].Content), " "), chars)
		if n > 0 {
			fmt.Fprintf(&b, "\n- [%d] %s", n, text)
			sec.Evidence[n] += ev[i].Content + "\n"
		} else {
			fmt.Fprintf(&b, "\n- %s", text)
		}
		evVecs = append(evVecs, algebra.ToFloat64(ev[i].Embedding))
	}
	if len(vec) == 0 { // sections with a result embedding are preferred; else the evidence centroid
		// The default blend (evidence 0.5 : task 0.3, no recency) on purpose:
		// a section's direction for MMR, not the session's state embedding
		// (algebra.state_weight_* do not apply; docs/parameters.md).
		vec = algebra.StateEmbedding(evVecs, algebra.ToFloat64(t.Embedding), nil, 0)
	}
	sec.Text = strings.TrimSpace(b.String())
	key := normalizeQuote(sec.Title)
	if j, ok := c.titles[key]; ok {
		c.secs[j] = mergeSections(c.secs[j], sec)
		return
	}
	if c.titles == nil {
		c.titles = map[string]int{}
	}
	c.titles[key] = len(c.secs)
	c.secs = append(c.secs, sec)
	c.vecs = append(c.vecs, vec)
}

// mergeSections folds a section into an earlier one of the same title (a
// small model plans one subtask twice; a report would repeat the section
// and spend a composition call on it): the lines of its text and its
// evidence are added, less what the first already holds.
func mergeSections(dst, src sectionDoc) sectionDoc {
	var add []string
	for _, line := range strings.Split(src.Text, "\n") {
		if strings.TrimSpace(line) != "" && !strings.Contains(dst.Text, line) {
			add = append(add, line)
		}
	}
	if len(add) > 0 {
		dst.Text = strings.TrimSpace(dst.Text + "\n" + strings.Join(add, "\n"))
	}
	for n, text := range src.Evidence {
		if !strings.Contains(dst.Evidence[n], text) {
			dst.Evidence[n] += text
		}
	}
	return dst
}

func (c *collector) mmrOrder(goal []float64, lambda float64) []int {
	rel := make([]float64, len(c.secs))
	for i, v := range c.vecs {
		rel[i] = algebra.NormalizeCosine(algebra.Cosine(v, goal))
	}
	return algebra.MMR(rel, func(i, j int) float64 { return algebra.Cosine(c.vecs[i], c.vecs[j]) }, lambda)
}

// composeSystem is the assembly instruction; user formatting instructions
// are added only here, never during the loop.
const composeSystem = `You write one part of a research report in Markdown for the goal you are given.
Use only the material provided. Cite every claim with the source numbers exactly as they appear in the material, like [3].
Never invent a source number. Keep quoted evidence verbatim inside double quotes and keep source URLs unchanged.
Write section headings with ##. Do not add a source list: it is appended for you.`

// Compose writes one part of the report with a no-think call, then checks
// its citations: every [n] must name a source of this part's material and a
// quoted span must occur in the cited evidence. Invalid citations get one
// repair call, then are removed.
func (a *Activities) Compose(ctx context.Context, in ComposeInput) (ComposeResult, error) {
	var doc sectionsDoc
	ok, err := getBlob(ctx, a.Store, in.SessionID, sectionsKey, &doc)
	if err != nil {
		return ComposeResult{}, err
	}
	if !ok {
		return ComposeResult{}, fmt.Errorf("compose: sections of session %s not collected", in.SessionID)
	}
	if in.Synthesis {
		return a.composeSection(ctx, in, doc)
	}
	evidence := map[int]string{}
	var b strings.Builder
	fmt.Fprintf(&b, "Goal: %s\n\nThis is part %d of %d.\n\nMaterial:\n", in.Goal, in.Part, in.Parts)
	for _, i := range in.Sections {
		if i < 0 || i >= len(doc.Sections) {
			return ComposeResult{}, nonRetryable(ErrInvalidInput, fmt.Errorf("compose: section %d of %d", i, len(doc.Sections)))
		}
		sec := doc.Sections[i]
		fmt.Fprintf(&b, "\n### %s\n%s\n", sec.Title, sec.Text)
		for n, text := range sec.Evidence {
			evidence[n] += text
		}
	}
	system := composeSystem
	if strings.TrimSpace(in.Instructions) != "" {
		system += "\n\nFormatting instructions from the user:\n" + in.Instructions
	}
	// The reminder comes last: small models follow the end of the prompt
	// more than a system message read thousands of tokens earlier.
	b.WriteString("\n" + composeReminder + "\n")
	res := ComposeResult{}
	text, cut, err := a.composeChecked(ctx, in, system, b.String(), composeReminder, evidence, &res)
	if err != nil {
		return ComposeResult{}, err
	}
	if cut {
		text = wholeSentences(text)
	}
	text, _ = dropInventedURLs(text, knownLinks(doc, b.String(), evidence)...)
	res.Markdown = strings.TrimSpace(text)
	res.Cited = citedNumbers(res.Markdown)
	return res, nil
}

// The closing instruction of a composition prompt, and the two repair
// requests: dropEchoes removes a draft's sentences that copy them.
const (
	composeReminder = "Write this part now. After each claim, put the number of the source it comes from in brackets, like [1]."
	invalidFix      = "These citations are invalid: %s. A number must be one of the material's source numbers and a quoted span must appear word for word in that source. Rewrite the draft with valid citations only."
	uncitedFix      = "The draft cites no source. Rewrite it so that each claim ends with the number of the material's source it comes from, like [%d], and leave out claims the material does not support."
)

// composeChecked is one no-think composition call whose citations are
// checked: every [n] must name a source of the material and a quoted span
// must occur in the cited evidence. Invalid citations get one repair call,
// then are removed; a draft that cites nothing gets one call asking for
// the numbers. Sentences that copy the instructions (system, reminder, a
// repair request) are dropped from the answer. cut says whether the call
// whose text is returned may have stopped at its max_tokens (cutByBound):
// its last sentence may end mid-word, for the caller to drop
// (wholeSentences).
func (a *Activities) composeChecked(ctx context.Context, in ComposeInput, system, user, reminder string, evidence map[int]string, res *ComposeResult) (text string, cut bool, err error) {
	call := func(prompt string) (string, bool, error) {
		r, err := a.Chat.Complete(ctx, llm.ChatRequest{System: system, User: prompt, MaxTokens: orDefault(in.MaxTokens, config.Defaults().LLM.ComposeTokens), NoThink: true}, nil)
		if err != nil {
			err = fmt.Errorf("compose part %d: %w", in.Part, err)
			if !llm.IsRetryable(err) && ctx.Err() == nil { // a refusal or a bad request: the same call fails again
				return "", false, nonRetryable(ErrLLM, err)
			}
			return "", false, err
		}
		res.Tokens += r.Usage.TotalTokens
		res.PromptTokens += r.Usage.PromptTokens
		res.CompletionTokens += r.Usage.CompletionTokens
		res.LatencyMS += r.Latency.Milliseconds()
		m := activity.GetMetricsHandler(ctx)
		m.Timer("lethe_llm_latency").Record(r.Latency)
		m.Counter("lethe_llm_calls_total").Inc(1)
		return r.Content, cutByBound(r.FinishReason), nil
	}
	text, cut, err = call(user)
	if err != nil {
		return "", false, err
	}
	text = dropEchoes(text, system, reminder, invalidFix, uncitedFix)
	switch bad := CheckCitations(text, evidence); {
	case len(bad) > 0:
		res.RepairCalls++
		request := fmt.Sprintf(invalidFix, strings.Join(bad, "; "))
		fix := fmt.Sprintf("%s\n\nYour previous draft:\n%s\n\n%s", user, text, request)
		if repaired, rcut, err := call(fix); err == nil {
			// The request as sent, its list filled in: a 1.5B model
			// answered one with "These citations are invalid: [7] is not
			// a source of this material." (dr-067, sixteenth evaluation
			// run), which the bare format does not hold.
			text, cut = dropEchoes(repaired, system, reminder, request, uncitedFix), rcut
		}
		text, res.RemovedCitations = RemoveInvalidCitations(text, evidence)
	case len(evidence) > 0 && len(citedNumbers(text)) == 0:
		// A report that cites nothing cannot be checked by its reader: one
		// call asks for the numbers; a draft that still cites nothing stands.
		res.RepairCalls++
		fix := fmt.Sprintf("%s\n\nYour previous draft:\n%s\n\n"+uncitedFix, user, text, slices.Min(slices.Collect(maps.Keys(evidence))))
		if repaired, rcut, err := call(fix); err == nil {
			text, cut = dropEchoes(repaired, system, reminder, invalidFix, uncitedFix), rcut
		}
		text, res.RemovedCitations = RemoveInvalidCitations(text, evidence)
	}
	return text, cut, nil
}

// nearCopy says whether words, six or more, stand in some run of
// instruction in order with at most one of them changed: the summary of
// the twenty-third evaluation run's dr-010 opened "Answer the goal now from
// the sources: 2 to 4 sentences.", the reminder's "from these sources" said
// back with one word changed. A sentence that shares words with an
// instruction but not its run ("Use only the facts given in the manual")
// is no copy.
func nearCopy(words, instruction []string) bool {
	n := len(words)
	if n < 6 {
		return false
	}
	for at := 0; at+n <= len(instruction); at++ {
		changed := 0
		for k := 0; k < n && changed <= 1; k++ {
			if words[k] != instruction[at+k] {
				changed++
			}
		}
		if changed <= 1 {
			return true
		}
	}
	return false
}

// echoMinChars is the shortest sentence dropEchoes judges: shorter ones
// ("See [1].") may match an instruction by chance.
const echoMinChars = 20

var (
	markerRe = regexp.MustCompile(`\[[^\]\n]{0,40}\]|%[sd]`)
	// draftRe finds a sentence about the draft itself ("The draft cites
	// sources [1] and [2] to support the claims."): the repair requests'
	// word for the model's own text, which no report sentence needs. A
	// sentence about source numbers talks about the instructions too:
	// "This statement ends with source number [1] as it directly cites the
	// fact…" closed a dr-003 section.
	draftRe = regexp.MustCompile(`(?i)\b(the|this|my|your|previous) draft\b|\bsource numbers?\b`)
	// metaRe finds a sentence about the answer's task or sources rather
	// than its subject, which a reader skips and the check cannot support
	// (twenty-third evaluation run, dr-067's and dr-036's sections): "To
	// answer the question, we need to focus on the information provided
	// about …", "Fact [2] provides a brief overview of the pdftk package,
	// …", "This information is relevant to understanding the context of
	// the question …", "This information is supported by the Debian
	// Reference (version 2.100) …". Each form names no subject of its own:
	// "Fact [1] describes port 631", "This information is stored in
	// /etc/passwd" and "To answer the question, the port is 631" stay.
	metaRe = regexp.MustCompile(`^(?i:to answer (?:the|this|your) question,?\s+(?:we|i|you|one)\s+(?:need|must|should|will|have|can)\b` +
		`|(?:this|that|the above|such)\s+information\s+is\s+(?:also\s+)?(?:relevant|useful|important|helpful|crucial|essential|supported by|based on|taken from)\b` +
		`|(?:the\s+)?(?:facts?|sources?|passages?)\s+(?:\[[^\]\n]{0,40}\]\s*(?:,\s*|and\s+)*)*(?:also\s+|collectively\s+|together\s+)?(?:provides?|gives?|offers?|presents?)\s+(?:(?:a|an|the|some|more|additional|further|useful|valuable|brief|general|detailed|short)\s+)*(?:overview|information|details?|context|background|explanation|description|summary|insights?)\b)`)
)

// dropEchoes removes the sentences of text that occur in one of the
// instructions, both compared without their bracketed markers ([3],
// [unverified], a format verb) and with spaces and case folded, and the
// sentences that talk about the draft. Headings and lines without such a
// sentence are kept as they are.
func dropEchoes(text string, instructions ...string) string {
	norm := make([]string, len(instructions))
	terms := make([][]string, len(instructions))
	for i, s := range instructions {
		norm[i] = normalizeSpace(markerRe.ReplaceAllString(s, " "))
		terms[i] = coverTerms(s)
	}
	echo := func(sent string) bool {
		if draftRe.MatchString(sent) || metaRe.MatchString(strings.TrimSpace(sent)) {
			return true
		}
		t := normalizeSpace(markerRe.ReplaceAllString(sent, " "))
		if len(t) < echoMinChars {
			return false
		}
		for i, s := range norm {
			if strings.Contains(s, t) || nearCopy(coverTerms(sent), terms[i]) {
				return true
			}
		}
		return false
	}
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		sents := splitPassage(line, 0)
		kept := sents[:0]
		for _, s := range sents {
			if !echo(s) {
				kept = append(kept, s)
			}
		}
		if len(kept) < len(sents) {
			lines[i] = strings.Join(kept, " ")
		}
	}
	return strings.Join(lines, "\n")
}

var (
	citeRe  = regexp.MustCompile(`\[(\d+)\]`)
	quoteRe = regexp.MustCompile(`"([^"\n]{12,})"\s*((?:\[\d+\])+)`)
)

// CheckCitations lists the invalid citations of a composed text: numbers
// that are not sources of the material, and quoted spans (12 characters or
// more) that do not occur in any source they cite.
func CheckCitations(text string, evidence map[int]string) []string {
	var bad []string
	for _, m := range citeRe.FindAllStringSubmatch(text, -1) {
		n, _ := strconv.Atoi(m[1])
		if _, ok := evidence[n]; !ok {
			bad = append(bad, fmt.Sprintf("[%d] is not a source of this material", n))
		}
	}
	for _, m := range quoteRe.FindAllStringSubmatch(text, -1) {
		if !quoteSupported(m[1], m[2], evidence) {
			bad = append(bad, fmt.Sprintf("quote %q does not occur in %s", truncate(m[1], 60), m[2]))
		}
	}
	return bad
}

func quoteSupported(quote, cites string, evidence map[int]string) bool {
	q := normalizeSpace(quote)
	for _, m := range citeRe.FindAllStringSubmatch(cites, -1) {
		n, _ := strconv.Atoi(m[1])
		if strings.Contains(normalizeSpace(evidence[n]), q) {
			return true
		}
	}
	return false
}

func normalizeSpace(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }

// RemoveInvalidCitations drops citation markers that name no source of the
// material, and the markers of unsupported quotes; it returns the count.
func RemoveInvalidCitations(text string, evidence map[int]string) (string, int) {
	removed := 0
	text = quoteRe.ReplaceAllStringFunc(text, func(s string) string {
		m := quoteRe.FindStringSubmatch(s)
		if quoteSupported(m[1], m[2], evidence) {
			return s
		}
		removed += len(citeRe.FindAllString(m[2], -1))
		return `"` + m[1] + `"`
	})
	text = citeRe.ReplaceAllStringFunc(text, func(s string) string {
		n, _ := strconv.Atoi(s[1 : len(s)-1])
		if _, ok := evidence[n]; ok {
			return s
		}
		removed++
		return ""
	})
	return text, removed
}

func citedNumbers(text string) []int {
	seen := map[int]bool{}
	var out []int
	for _, m := range citeRe.FindAllStringSubmatch(text, -1) {
		n, _ := strconv.Atoi(m[1])
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	sort.Ints(out)
	return out
}

// taskPage is how many tasks Finalize and CollectSections read (and
// Finalize embeds and writes) at a time: it bounds the memory and the size
// of one write, and Finalize heartbeats between pages. No result depends on it, so it is not a parameter.
const taskPage = 256

// Finalize closes the graph after assembly: remaining PENDING and ACTIVE
// tasks become DONE, missing result embeddings are filled, SIMILAR_TO is
// synced. Repeating it is harmless. It reads no task list whole (#14):
// one write closes the open tasks, the outline (no texts, no embeddings)
// gives the counts and the tasks to fill, and those are read, embedded
// and written a page at a time.
func (a *Activities) Finalize(ctx context.Context, in FinalizeInput) (FinalizeResult, error) {
	if _, err := a.Store.SetStatusWhere(ctx, in.SessionID, []graph.Status{graph.Pending, graph.Active}, graph.Done); err != nil {
		return FinalizeResult{}, fmt.Errorf("finalize close open tasks: %w", err)
	}
	outline, err := a.Store.TaskOutline(ctx, in.SessionID)
	if err != nil {
		return FinalizeResult{}, fmt.Errorf("finalize tasks: %w", err)
	}
	var fill []string
	res := FinalizeResult{Tasks: len(outline)}
	for _, t := range outline {
		switch t.Status {
		case graph.Done:
			res.Done++
			if !t.ResultEmbedded {
				fill = append(fill, t.ShortID)
			}
		case graph.Failed:
			res.Failed++
		}
	}
	if !in.SkipEmbeddings {
		for lo := 0; lo < len(fill); lo += taskPage {
			if err := a.fillResultEmbeddings(ctx, in.SessionID, fill[lo:min(lo+taskPage, len(fill))]); err != nil {
				return FinalizeResult{}, err
			}
		}
	}
	if _, err := graph.SyncSimilar(ctx, a.Store, in.SessionID, heartbeating(ctx, graphParams(in.Similar)), nil); err != nil {
		return FinalizeResult{}, fmt.Errorf("finalize similar: %w", err)
	}
	if res.Evidence, err = a.Store.EvidenceCount(ctx, in.SessionID); err != nil {
		return FinalizeResult{}, fmt.Errorf("finalize count evidence: %w", err)
	}
	return res, nil
}

// fillResultEmbeddings embeds the result (else the embed text, else the
// description) of each named DONE task and stores it, in one write.
func (a *Activities) fillResultEmbeddings(ctx context.Context, session string, ids []string) error {
	ts, err := a.Store.TasksByIDs(ctx, session, ids)
	if err != nil {
		return fmt.Errorf("finalize read tasks: %w", err)
	}
	texts := make([]string, len(ts))
	for i, t := range ts {
		texts[i] = firstNonEmpty(t.ResultSummary, t.EmbedText, t.Description)
	}
	embs, err := a.Embed.Embed(ctx, llm.Document, texts)
	if err != nil {
		return fmt.Errorf("finalize embed results: %w", err)
	}
	set := make(map[string][]float32, len(ts))
	for i, t := range ts {
		set[t.ShortID] = embs[i]
	}
	if err := a.Store.SetResultEmbeddings(ctx, session, set); err != nil {
		return fmt.Errorf("finalize result embeddings: %w", err)
	}
	if activity.IsActivity(ctx) {
		activity.RecordHeartbeat(ctx, "finalize result embeddings")
	}
	return nil
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if strings.TrimSpace(x) != "" {
			return x
		}
	}
	return "task"
}
