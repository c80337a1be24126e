package activities

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/lethe-research/lethe/algebra"
	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/graph/embedded"
	"github.com/lethe-research/lethe/llm"
)

// collectWhole is CollectSections as it was before lane fullreads (#14):
// every task read, then the evidence of each task of the walk read one task
// at a time. It is the reference the bounded reads must reproduce exactly
// (the report is composed from what it returns).
func collectWhole(ctx context.Context, a *Activities, in CollectInput) (CollectResult, sectionsDoc, error) {
	s, err := a.Store.GetSession(ctx, in.SessionID)
	if err != nil {
		return CollectResult{}, sectionsDoc{}, err
	}
	tasks, err := a.Store.Tasks(ctx, in.SessionID)
	if err != nil {
		return CollectResult{}, sectionsDoc{}, err
	}
	children := map[string][]graph.Task{}
	var root graph.Task
	for _, t := range tasks {
		if t.ShortID == graph.RootShortID {
			root = t
			continue
		}
		children[t.Parent] = append(children[t.Parent], t)
	}
	out := CollectResult{}
	if root.Status == graph.Done && strings.TrimSpace(root.ResultSummary) != "" {
		out.RootDone, out.RootResult = true, root.ResultSummary
	}
	c := collector{a: a, cfg: orDefault(in.Assembly, config.Defaults().Assembly), session: in.SessionID, sources: map[string]int{}}
	// above is the evidence of the nearest ancestor that holds some: a DONE
	// task without evidence of its own shows it.
	var walk func(t graph.Task, inner bool, above []graph.Evidence) error
	walk = func(t graph.Task, inner bool, above []graph.Evidence) error {
		ev, err := a.Store.Evidence(ctx, in.SessionID, t.ShortID)
		if err != nil {
			return err
		}
		shown := ev
		if len(ev) == 0 && t.Status == graph.Done {
			shown = above
		}
		c.section(t, shown, inner || len(children[t.ID]) == 0)
		if len(ev) > 0 {
			above = ev
		}
		for _, ch := range children[t.ID] {
			if err := walk(ch, inner, above); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(root, false, nil); err != nil {
		return CollectResult{}, sectionsDoc{}, err
	}
	if len(c.secs) == 0 {
		if err := walk(root, true, nil); err != nil {
			return CollectResult{}, sectionsDoc{}, err
		}
	}
	doc := sectionsDoc{}
	if (c.cfg.SummaryFacts > 0 || c.cfg.SummaryPassages > 0) && len(c.secs) > 0 { // the root's evidence nearest the goal, from the whole read
		ev, err := a.Store.Evidence(ctx, in.SessionID, graph.RootShortID)
		if err != nil {
			return CollectResult{}, sectionsDoc{}, err
		}
		ev = slices.DeleteFunc(ev, func(e graph.Evidence) bool { return e.SourceURL == "" || e.Kind == graph.KindLLM })
		sort.SliceStable(ev, func(i, j int) bool {
			return algebra.Cosine32(s.GoalQueryEmb, ev[i].Embedding) > algebra.Cosine32(s.GoalQueryEmb, ev[j].Embedding)
		})
		for _, e := range ev[:min(len(ev), c.cfg.SummaryEvidence)] {
			doc.Passages = append(doc.Passages, Passage{N: c.sourceNumber(e), Text: e.Content})
		}
	}
	doc.Sources = c.list
	for _, i := range c.mmrOrder(algebra.ToFloat64(s.GoalQueryEmb), c.cfg.MMRLambda) {
		doc.Sections = append(doc.Sections, c.secs[i])
		out.Sections = append(out.Sections, SectionInfo{Title: c.secs[i].Title, Tokens: llm.EstimateTokens(c.secs[i].Text)})
	}
	out.Sources = c.list
	if out.RootDone {
		if err := c.checkRoot(ctx, &out); err != nil {
			return CollectResult{}, sectionsDoc{}, err
		}
	}
	return out, doc, nil
}

// randomTree grows a session of n tasks: random parents (so inner tasks,
// leaves and deep chains), a third DONE (some with a blank result, some
// with a result embedding), one FAILED in ten; evidence on random tasks,
// content found again for other tasks (shared), URLs repeated across
// items and some without a URL; the root DONE when rootDone, and evidence
// on inner tasks only when innerOnly.
func randomTree(t *testing.T, st graph.Store, sid string, n int, seed uint64, rootDone, innerOnly bool) {
	t.Helper()
	ctx := t.Context()
	rng := rand.New(rand.NewPCG(seed, 11))
	const dim = 8
	vec := func() []float32 {
		v := make([]float32, dim)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	if err := st.CreateSession(ctx, graph.Session{ID: sid, Goal: "g", GoalDocEmb: vec(), GoalQueryEmb: vec(), Dim: dim},
		graph.Task{Description: "goal", EmbedText: "goal", Embedding: vec()}); err != nil {
		t.Fatal(err)
	}
	ids := []string{graph.RootShortID}
	hasChild := map[string]bool{}
	var ops []graph.Op
	for i := 1; i < n; i++ { // one write per iteration of 20 creates
		id, parent := fmt.Sprintf("t%03d", i), ids[rng.IntN(len(ids))]
		ops = append(ops, graph.Op{Kind: graph.OpCreate, Task: id, Parent: parent, Description: "task " + id, EmbedText: "e " + id, Embedding: vec()})
		ids, hasChild[parent] = append(ids, id), true
		if i%20 == 0 || i == n-1 {
			if _, err := st.Apply(ctx, graph.ApplyRequest{SessionID: sid, Key: "c/" + id, Iteration: 1 + i/20, ActiveTask: graph.RootShortID, Ops: ops}); err != nil {
				t.Fatal(err)
			}
			ops = nil
		}
	}
	for _, id := range ids[1:] {
		if innerOnly {
			break // no DONE task: only the fallback gives sections
		}
		switch r := rng.IntN(10); {
		case r == 0:
			ops = append(ops, graph.Op{Kind: graph.OpFail, Task: id, Reason: "dead end"})
		case r <= 2:
			ops = append(ops, graph.Op{Kind: graph.OpComplete, Task: id, Result: "result of " + id + " [1]", EmbedText: "r", Embedding: vec()})
		case r == 3:
			ops = append(ops, graph.Op{Kind: graph.OpComplete, Task: id, Result: "result of " + id})
		case r == 4:
			ops = append(ops, graph.Op{Kind: graph.OpComplete, Task: id, Result: "  "})
		}
	}
	if rootDone {
		ops = append(ops, graph.Op{Kind: graph.OpComplete, Task: graph.RootShortID, Result: `Root answer "content number 3 of the pages" [1] and [2], [99].`})
	}
	if _, err := st.Apply(ctx, graph.ApplyRequest{SessionID: sid, Key: "done", Iteration: 9, ActiveTask: graph.RootShortID, Ops: ops}); err != nil {
		t.Fatal(err)
	}
	items := map[string][]graph.Evidence{}
	for k := range 3 * n {
		id := ids[rng.IntN(len(ids))]
		if innerOnly && !hasChild[id] {
			continue
		}
		url := ""
		if rng.IntN(5) > 0 {
			url = fmt.Sprintf("https://example.org/%d", rng.IntN(n/3+1))
		}
		c := rng.IntN(2 * n) // repeats: content found again for another task
		e := graph.Evidence{Content: fmt.Sprintf("content number %d of the pages", c), SourceURL: url, Title: "page", Kind: graph.KindHTML,
			Strength: float64(rng.IntN(5)) / 4, Embedding: vec(), CreatedIter: 1 + k/50}
		items[id] = append(items[id], e)
	}
	for _, id := range ids { // one write per task, in a fixed order
		if _, err := st.AddEvidence(ctx, sid, "ev/"+id, id, items[id]); len(items[id]) > 0 && err != nil {
			t.Fatal(err)
		}
	}
}

// TestCollectSectionsMatchesWholeRead: on random trees (with and without
// a DONE root, with evidence on inner tasks only, which takes the
// fallback) the bounded reads give exactly the sections, source numbers,
// root check and stored document of the whole-session walk, so reports
// are byte-identical.
func TestCollectSectionsMatchesWholeRead(t *testing.T) {
	st, err := embedded.Open(filepath.Join(t.TempDir(), "graph.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	a := &Activities{Store: st}
	ctx := t.Context()
	for i, c := range []struct {
		n                   int
		rootDone, innerOnly bool
	}{{60, false, false}, {150, false, false}, {150, true, false}, {100, false, true}, {1, false, false}} {
		sid := fmt.Sprintf("collect-%d", i)
		randomTree(t, st, sid, c.n, uint64(i+1), c.rootDone, c.innerOnly)
		in := CollectInput{SessionID: sid, Assembly: config.Defaults().Assembly}
		in.Assembly.DoneEvidence = 3 // fewer than some tasks hold: the strongest are chosen
		want, wantDoc, err := collectWhole(ctx, a, in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := a.CollectSections(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		var gotDoc sectionsDoc
		if ok, err := getBlob(ctx, st, sid, sectionsKey, &gotDoc); err != nil || !ok {
			t.Fatalf("sections blob: %v, %v", ok, err)
		}
		if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotDoc, wantDoc) {
			t.Errorf("%+v: bounded reads differ from the whole walk\n got %+v\nwant %+v", c, got, want)
		}
		if c.n > 1 && len(want.Sections) == 0 {
			t.Errorf("%+v: no sections: the case tests nothing", c)
		}
		if c.innerOnly && len(want.Sections) > 0 && !strings.Contains(fmt.Sprint(wantDoc.Sections), "content number") {
			t.Errorf("%+v: the fallback shows no evidence", c)
		}
		t.Logf("%+v: %d sections, %d sources, root removed %d", c, len(got.Sections), len(got.Sources), got.RootRemoved)
	}
}

// TestCollectorMergesSameTitle: two tasks the model planned with one
// description (a real-model evaluation's report showed "Create a
// Pin-Priority file…" twice) give one section holding the evidence of
// both, each excerpt once; a different title stays its own section.
func TestCollectorMergesSameTitle(t *testing.T) {
	c := collector{cfg: config.Defaults().Assembly, sources: map[string]int{}}
	ev := func(url, content string) graph.Evidence {
		return graph.Evidence{SourceURL: url, Content: content, Embedding: []float32{1, 0}, Strength: 1}
	}
	task := func(desc string) graph.Task {
		return graph.Task{Description: desc, Status: graph.Pending, Embedding: []float32{0, 1}}
	}
	c.section(task("Create a Pin-Priority file"), []graph.Evidence{ev("a", "Pin-Priority: -1 blocks a package.")}, true)
	c.section(task("Read the APT manual"), []graph.Evidence{ev("b", "APT reads /etc/apt/preferences.")}, true)
	c.section(task("create a  pin-priority file"), []graph.Evidence{ev("a", "Pin-Priority: -1 blocks a package."), ev("c", "List them in /etc/apt/preferences.")}, true)
	if len(c.secs) != 2 || len(c.vecs) != 2 {
		t.Fatalf("sections %d, vectors %d, want 2 and 2: %+v", len(c.secs), len(c.vecs), c.secs)
	}
	got := c.secs[0]
	if len(got.Evidence) != 2 || strings.Count(got.Evidence[1], "blocks a package") != 1 || !strings.Contains(got.Evidence[3], "List them") {
		t.Errorf("merged evidence: %v", got.Evidence)
	}
	if strings.Count(got.Text, "blocks a package") != 1 || !strings.Contains(got.Text, "List them") {
		t.Errorf("merged text: %q", got.Text)
	}
}

// TestGoalTexts: a blob written before Goal was dropped is read as it
// was written (its Goal, not Goal and Passages both); a new blob gives
// the same texts from its passages alone.
func TestGoalTexts(t *testing.T) {
	ps := []Passage{{N: 2, Text: "b"}, {N: 1, Text: "a"}, {N: 2, Text: "c"}}
	want := map[int]string{1: "a\n", 2: "b\nc\n"}
	if got := (sectionsDoc{Passages: ps}).goalTexts(); !maps.Equal(got, want) {
		t.Fatalf("from passages: %v, want %v", got, want)
	}
	old := sectionsDoc{Goal: map[int]string{1: "a\n", 2: "b\nc\n"}, Passages: ps}
	if got := old.goalTexts(); !maps.Equal(got, want) {
		t.Fatalf("old blob: %v, want %v", got, want)
	}
	if got := (sectionsDoc{}).goalTexts(); len(got) != 0 {
		t.Fatalf("empty: %v", got)
	}
}

func TestFirstSentences(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"A is one [1]. B is two [2]. C is three.", 2, "A is one [1]. B is two [2]."},
		{"A is one. B is two [1][3]. C is three [2].", 2, "A is one. B is two [1][3]."},
		{"A is one [1]. B is two.", 4, "A is one [1]. B is two."},
		{"Version 1.5 ships, e.g. in Debian [1]. It is fast. It is small.", 1, "Version 1.5 ships, e.g. in Debian [1]."},
	} {
		if got := firstSentences(c.in, c.n); got != c.want {
			t.Errorf("firstSentences(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}
