package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lethe-research/lethe/graph"
)

// callTimer is a graph.Store that adds up, per loop step, the time and
// number of the store calls the step makes (-calls). The step totals say
// which activity costs; these say which store call inside it does, which
// on Neo4j is where a statement or a round trip too many shows.
// Methods the loop does not call pass through untimed.
type callTimer struct {
	graph.Store
	mu    sync.Mutex
	step  string // "" outside the timed iterations: nothing is recorded
	total map[[2]string]time.Duration
	count map[[2]string]int
	// trace, with -timeline, keeps every call of the current iteration
	// with its start, so that one iteration's critical path shows (the
	// totals above add up calls made side by side).
	trace     bool
	stepStart time.Time
	events    []callEvent
}

// callEvent is one store call of a timed step: its start after the
// step's, and its time.
type callEvent struct {
	step, method string
	at, d        time.Duration
}

func newCallTimer(st graph.Store) *callTimer {
	return &callTimer{Store: st, total: map[[2]string]time.Duration{}, count: map[[2]string]int{}}
}

func (c *callTimer) setStep(step string) {
	c.mu.Lock()
	c.step, c.stepStart = step, time.Now()
	c.mu.Unlock()
}

func (c *callTimer) add(method string, start time.Time, d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.step == "" {
		return
	}
	k := [2]string{c.step, method}
	c.total[k] += d
	c.count[k]++
	if c.trace {
		c.events = append(c.events, callEvent{step: c.step, method: method, at: start.Sub(c.stepStart), d: d})
	}
}

// timeline is the calls traced since the last timeline, one line each in
// the order they started, under a heading; the trace starts over.
func (c *callTimer) timeline(heading string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var w strings.Builder
	fmt.Fprintf(&w, "long: timeline %s\n", heading)
	for _, e := range c.events {
		fmt.Fprintf(&w, "long:   %-9s +%6.1f %6.1f ms  %s\n", e.step, msf(e.at), msf(e.d), e.method)
	}
	c.events = c.events[:0]
	return w.String()
}

func msf(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// report is the calls of iters iterations as a Markdown table, the
// costliest first within each step, with each step's sum; the timer starts
// over.
func (c *callTimer) report(title string, iters int) string {
	var w strings.Builder
	c.mu.Lock()
	defer c.mu.Unlock()
	keys := make([][2]string, 0, len(c.total))
	for k := range c.total {
		keys = append(keys, k)
	}
	rank := func(s string) int { return slices.Index(steps, s) }
	slices.SortFunc(keys, func(a, b [2]string) int {
		if d := rank(a[0]) - rank(b[0]); d != 0 {
			return d
		}
		return int(c.total[b] - c.total[a])
	})
	fmt.Fprintf(&w, "\nStore calls per iteration, %s (mean of %d iterations; calls made side by side add up):\n\n| step | call | calls | ms | ms per call |\n|---|---|---:|---:|---:|\n", title, iters)
	row := func(step, call string, n int, d time.Duration) {
		ms := msf(d)
		fmt.Fprintf(&w, "| %s | %s | %.1f | %.1f | %.2f |\n", step, call, float64(n)/float64(iters), ms/float64(iters), ms/float64(max(n, 1)))
	}
	var n int
	var d time.Duration
	for i, k := range keys {
		row(k[0], k[1], c.count[k], c.total[k])
		n, d = n+c.count[k], d+c.total[k]
		if i == len(keys)-1 || keys[i+1][0] != k[0] {
			row(k[0], "**all calls**", n, d)
			n, d = 0, 0
		}
	}
	clear(c.total)
	clear(c.count)
	return w.String()
}

// timed runs one store call and records its time under method.
func timed[T any](c *callTimer, method string, f func() (T, error)) (T, error) {
	start := time.Now()
	v, err := f()
	c.add(method, start, time.Since(start))
	return v, err
}

func (c *callTimer) timedErr(method string, f func() error) error {
	_, err := timed(c, method, func() (struct{}, error) { return struct{}{}, f() })
	return err
}

func (c *callTimer) GetSession(ctx context.Context, sid string) (graph.Session, error) {
	return timed(c, "GetSession", func() (graph.Session, error) { return c.Store.GetSession(ctx, sid) })
}

func (c *callTimer) Tasks(ctx context.Context, sid string) ([]graph.Task, error) {
	return timed(c, "Tasks", func() ([]graph.Task, error) { return c.Store.Tasks(ctx, sid) })
}

func (c *callTimer) ReadySet(ctx context.Context, sid string) ([]graph.Task, error) {
	return timed(c, "ReadySet", func() ([]graph.Task, error) { return c.Store.ReadySet(ctx, sid) })
}

func (c *callTimer) SetStatus(ctx context.Context, sid, short string, from []graph.Status, to graph.Status) (bool, error) {
	return timed(c, "SetStatus", func() (bool, error) { return c.Store.SetStatus(ctx, sid, short, from, to) })
}

func (c *callTimer) Apply(ctx context.Context, req graph.ApplyRequest) (graph.ApplyResult, error) {
	return timed(c, "Apply", func() (graph.ApplyResult, error) { return c.Store.Apply(ctx, req) })
}

func (c *callTimer) SetStrengths(ctx context.Context, sid string, s map[string]float64) error {
	return c.timedErr("SetStrengths", func() error { return c.Store.SetStrengths(ctx, sid, s) })
}

func (c *callTimer) ReplaceSimilar(ctx context.Context, sid string, scope []string, edges []graph.Edge) error {
	return c.timedErr("ReplaceSimilar", func() error { return c.Store.ReplaceSimilar(ctx, sid, scope, edges) })
}

func (c *callTimer) Commit(ctx context.Context, sid string, w graph.Writes) error {
	return c.timedErr("Commit", func() error { return c.Store.Commit(ctx, sid, w) })
}

func (c *callTimer) PutBlob(ctx context.Context, sid, key string, data []byte) error {
	return c.timedErr("PutBlob", func() error { return c.Store.PutBlob(ctx, sid, key, data) })
}

func (c *callTimer) GetBlob(ctx context.Context, sid, key string) ([]byte, error) {
	return timed(c, "GetBlob", func() ([]byte, error) { return c.Store.GetBlob(ctx, sid, key) })
}

func (c *callTimer) GetBlobs(ctx context.Context, sid string, keys []string) (map[string][]byte, error) {
	return timed(c, "GetBlobs", func() (map[string][]byte, error) { return c.Store.GetBlobs(ctx, sid, keys) })
}

func (c *callTimer) PutBlobs(ctx context.Context, sid string, blobs map[string][]byte) error {
	return c.timedErr("PutBlobs", func() error { return c.Store.PutBlobs(ctx, sid, blobs) })
}

func (c *callTimer) DeleteBlob(ctx context.Context, sid, key string) error {
	return c.timedErr("DeleteBlob", func() error { return c.Store.DeleteBlob(ctx, sid, key) })
}

func (c *callTimer) EvidenceSince(ctx context.Context, sid string, iter int) ([]graph.Evidence, error) {
	return timed(c, "EvidenceSince", func() ([]graph.Evidence, error) { return c.Store.EvidenceSince(ctx, sid, iter) })
}

// NeighbourhoodShape is timed by what the walk's round asks for: a round
// of tasks brings their evidence (thousands of rows at 100k), a round of
// evidence their SIMILAR_TO neighbours, which are mostly known.
func (c *callTimer) NeighbourhoodShape(ctx context.Context, sid string, ids []string, known func(string) bool) (graph.Neighbourhood, error) {
	return timed(c, "NeighbourhoodShape "+roundKind(sid, ids), func() (graph.Neighbourhood, error) { return c.Store.NeighbourhoodShape(ctx, sid, ids, known) })
}

// roundKind names a walk round by its ids: "(tasks)", "(evidence)" or
// "(both)".
func roundKind(sid string, ids []string) string {
	tasks := 0
	for _, id := range ids {
		if strings.HasPrefix(id, graph.TaskID(sid, "")) {
			tasks++
		}
	}
	switch tasks {
	case len(ids):
		return "(tasks)"
	case 0:
		return "(evidence)"
	}
	return "(both)"
}

func (c *callTimer) Neighbourhood(ctx context.Context, sid string, ids []string) (graph.Neighbourhood, error) {
	return timed(c, "Neighbourhood", func() (graph.Neighbourhood, error) { return c.Store.Neighbourhood(ctx, sid, ids) })
}

func (c *callTimer) EvidenceCounts(ctx context.Context, sid string) (map[string]int, error) {
	return timed(c, "EvidenceCounts", func() (map[string]int, error) { return c.Store.EvidenceCounts(ctx, sid) })
}

func (c *callTimer) EvidenceCount(ctx context.Context, sid string) (int, error) {
	return timed(c, "EvidenceCount", func() (int, error) { return c.Store.EvidenceCount(ctx, sid) })
}

func (c *callTimer) EvidenceByIDs(ctx context.Context, sid string, ids []string) ([]graph.Evidence, error) {
	return timed(c, "EvidenceByIDs", func() ([]graph.Evidence, error) { return c.Store.EvidenceByIDs(ctx, sid, ids) })
}

func (c *callTimer) NearestEvidence(ctx context.Context, sid string, qs [][]float32, threshold float64) ([][]graph.Neighbor, error) {
	return timed(c, "NearestEvidence", func() ([][]graph.Neighbor, error) { return c.Store.NearestEvidence(ctx, sid, qs, threshold) })
}

func (c *callTimer) NearestCosine(ctx context.Context, sid string, qs [][]float32) ([]float64, error) {
	return timed(c, "NearestCosine", func() ([]float64, error) { return c.Store.NearestCosine(ctx, sid, qs) })
}

func (c *callTimer) SimilarEdgesOf(ctx context.Context, sid string, ids []string) ([]graph.Edge, error) {
	return timed(c, "SimilarEdgesOf", func() ([]graph.Edge, error) { return c.Store.SimilarEdgesOf(ctx, sid, ids) })
}

func (c *callTimer) SimilarPairsOf(ctx context.Context, sid string, ids []string) ([]graph.Edge, error) {
	return timed(c, "SimilarPairsOf", func() ([]graph.Edge, error) { return c.Store.SimilarPairsOf(ctx, sid, ids) })
}

func (c *callTimer) TaskOutline(ctx context.Context, sid string) ([]graph.TaskNode, error) {
	return timed(c, "TaskOutline", func() ([]graph.TaskNode, error) { return c.Store.TaskOutline(ctx, sid) })
}

func (c *callTimer) TasksByIDs(ctx context.Context, sid string, ids []string) ([]graph.Task, error) {
	return timed(c, "TasksByIDs", func() ([]graph.Task, error) { return c.Store.TasksByIDs(ctx, sid, ids) })
}

func (c *callTimer) SetResultEmbeddings(ctx context.Context, sid string, embs map[string][]float32) error {
	return c.timedErr("SetResultEmbeddings", func() error { return c.Store.SetResultEmbeddings(ctx, sid, embs) })
}

func (c *callTimer) EvidenceOfTasks(ctx context.Context, sid string, ids []string) ([]graph.Evidence, error) {
	return timed(c, "EvidenceOfTasks", func() ([]graph.Evidence, error) { return c.Store.EvidenceOfTasks(ctx, sid, ids) })
}

func (c *callTimer) AddEvidence(ctx context.Context, sid, key, task string, items []graph.Evidence) (graph.AddEvidenceResult, error) {
	return timed(c, "AddEvidence", func() (graph.AddEvidenceResult, error) { return c.Store.AddEvidence(ctx, sid, key, task, items) })
}

func (c *callTimer) Evidence(ctx context.Context, sid, task string) ([]graph.Evidence, error) {
	return timed(c, "Evidence", func() ([]graph.Evidence, error) { return c.Store.Evidence(ctx, sid, task) })
}

func (c *callTimer) EvidenceRows(ctx context.Context, sid string) ([]graph.Evidence, error) {
	return timed(c, "EvidenceRows", func() ([]graph.Evidence, error) { return c.Store.EvidenceRows(ctx, sid) })
}

func (c *callTimer) Edges(ctx context.Context, sid string) ([]graph.Edge, error) {
	return timed(c, "Edges", func() ([]graph.Edge, error) { return c.Store.Edges(ctx, sid) })
}

func (c *callTimer) SimilarEdges(ctx context.Context, sid string) ([]graph.Edge, error) {
	return timed(c, "SimilarEdges", func() ([]graph.Edge, error) { return c.Store.SimilarEdges(ctx, sid) })
}

func (c *callTimer) SetStatusWhere(ctx context.Context, sid string, from []graph.Status, to graph.Status) (int, error) {
	return timed(c, "SetStatusWhere", func() (int, error) { return c.Store.SetStatusWhere(ctx, sid, from, to) })
}

func (c *callTimer) SetResultEmbedding(ctx context.Context, sid, short string, emb []float32) error {
	return c.timedErr("SetResultEmbedding", func() error { return c.Store.SetResultEmbedding(ctx, sid, short, emb) })
}

func (c *callTimer) FetchedSources(ctx context.Context, sid string, urls []string) (map[string]bool, error) {
	return timed(c, "FetchedSources", func() (map[string]bool, error) { return c.Store.FetchedSources(ctx, sid, urls) })
}

func (c *callTimer) TaskStatusCounts(ctx context.Context, sid string) (graph.StatusCounts, error) {
	return timed(c, "TaskStatusCounts", func() (graph.StatusCounts, error) { return c.Store.TaskStatusCounts(ctx, sid) })
}

func (c *callTimer) TasksWithStatus(ctx context.Context, sid string, st graph.Status) ([]graph.Task, error) {
	return timed(c, "TasksWithStatus", func() ([]graph.Task, error) { return c.Store.TasksWithStatus(ctx, sid, st) })
}
