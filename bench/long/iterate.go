package main

import (
	"bytes"
	"context"
	"encoding/gob"
	"fmt"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"

	"github.com/lethe-research/lethe/activities"
	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/contract"
	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/research"
)

// steps are the timed store activities of one iteration, in order.
var steps = []string{"ReadState", "Focus", "ApplyOps", "Observe"}

// timing is one iteration: the time of each step, and the research ingest
// between ApplyOps and Observe (not part of the store work of the loop: it
// is the WebResearch child's, timed for reference).
type timing struct {
	step   map[string]time.Duration
	ingest time.Duration
	// cpu is the CPU time this process spent in the four steps (user +
	// system, every thread): the store's own work on the embedded backend,
	// and a measure that a loaded machine inflates far less than wall time.
	cpu time.Duration
	// server is the database server's CPU time over the four steps
	// (-server-pid; Neo4j's own work, on the same cores).
	server time.Duration
	// task is the task the iteration focused.
	task string
	// arm is the setting of -alternate the iteration ran with.
	arm int
}

func (t timing) total() time.Duration {
	var d time.Duration
	for _, s := range steps {
		d += t.step[s]
	}
	return d
}

// runner calls the activity methods the way a worker does: through the
// SDK's activity environment (an activity context for loggers and
// heartbeats, inputs and results through the data converter), by typed
// reference, with the inputs the workflow builds from the session's config.
type runner struct {
	env  *testsuite.TestActivityEnvironment
	acts *activities.Activities
	cfg  config.Config
	cpu  time.Duration // process CPU time spent in calls so far
	// labels are the pprof labels of the calls (size, phase): with the
	// step's own label, a -cpuprofile of the run can be cut per activity
	// and phase (go tool pprof -tagfocus phase=steady -tagignore
	// step=ReadState,Focus,ApplyOps: pprof keeps one -tagfocus).
	labels []string
	// timer, with -calls, times the store calls of the steady phase's
	// steps (calls.go).
	timer *callTimer
	// server, with -server-pid, adds up the database server's CPU time
	// over the steps' calls (server.go).
	server *serverMeter
}

func newRunner(acts *activities.Activities, cfg config.Config) *runner {
	var ts testsuite.WorkflowTestSuite
	env := ts.NewTestActivityEnvironment()
	env.RegisterActivityWithOptions(acts, activity.RegisterOptions{SkipInvalidStructFunctions: true}) // as the worker does (service/service.go)
	return &runner{env: env, acts: acts, cfg: cfg}
}

// phase is the value of the "phase" label ("" when there is none).
func (r *runner) phase() string {
	if i := slices.Index(r.labels, "phase"); i >= 0 && i+1 < len(r.labels) {
		return r.labels[i+1]
	}
	return ""
}

// call runs one activity, labelled step in a CPU profile, and decodes its
// result into out (nil: none).
func (r *runner) call(step string, fn, in, out any) (time.Duration, error) {
	prev := context.Background()
	pprof.SetGoroutineLabels(pprof.WithLabels(prev, pprof.Labels(append([]string{"step", step}, r.labels...)...)))
	defer pprof.SetGoroutineLabels(prev)
	if r.timer != nil && r.phase() == "steady" {
		r.timer.setStep(step)
		defer r.timer.setStep("")
	}
	end := r.server.around() // its reads fall outside the timed span
	start, cpu := time.Now(), processCPU()
	v, err := r.env.ExecuteActivity(fn, in)
	d := time.Since(start)
	r.cpu += processCPU() - cpu
	end()
	if err != nil {
		return d, err
	}
	if out != nil && v != nil && v.HasValue() {
		if err := v.Get(out); err != nil {
			return d, fmt.Errorf("decode result: %w", err)
		}
	}
	return d, nil
}

// iterate runs iteration s.iter+1 of the session: read the ready set,
// focus on the first ready task, apply a small op list (three evidence
// items, one new subtask, the task completed), ingest one page of research
// and observe.
func (r *runner) iterate(ctx context.Context, st graph.Store, s *session) (t timing, err error) {
	s.iter++
	it, cfg := s.iter, r.cfg
	t = timing{step: map[string]time.Duration{}}
	cpu0, server0 := r.cpu, r.server.sum()
	defer func() { t.cpu, t.server = r.cpu-cpu0, r.server.sum()-server0 }()
	var rs contract.ReadStateResult
	var d time.Duration
	// The bounded view, as the workflow calls them (workflows/bounded.go).
	view := &contract.ViewParams{Ready: cfg.Loop.ViewReady, MaxWarp: cfg.Algebra.MaxWarpAngle}
	d, err = r.call("ReadState", r.acts.ReadState, contract.ReadStateInput{SessionID: s.id, Iteration: it, View: view}, &rs)
	if err != nil {
		return t, fmt.Errorf("iteration %d ReadState: %w", it, err)
	}
	t.step["ReadState"] = d
	sel := pick(rs)
	t.task = sel
	var fv contract.FocusViewResult
	t.step["Focus"], err = r.call("Focus", r.acts.FocusView, contract.FocusViewInput{Neighbour: cfg.Loop.ViewNeighbour, Focus: contract.FocusInput{
		SessionID: s.id, Iteration: it, Task: sel, Similar: contract.SimilarFor(cfg), Context: cfg.Context, ChunkChars: cfg.Research.ChunkChars}}, &fv)
	if err != nil {
		return t, fmt.Errorf("iteration %d Focus on %s: %w", it, sel, err)
	}
	var out contract.ApplyOutput
	t.step["ApplyOps"], err = r.call("ApplyOps", r.acts.ApplyOps, contract.ApplyInput{SessionID: s.id, Iteration: it, ActiveTask: sel,
		Ops: iterationOps(it, sel), DedupThreshold: cfg.Algebra.TaskDedupThreshold, EvidenceStrength: cfg.Research.LLMEvidenceStrength}, &out)
	if err != nil {
		return t, fmt.Errorf("iteration %d ApplyOps: %w", it, err)
	}
	if out.Result.RolledBack {
		return t, fmt.Errorf("iteration %d ApplyOps rolled back", it)
	}
	if t.ingest, err = r.ingest(ctx, st, s, sel); err != nil {
		return t, err
	}
	sig := cfg.Algebra.SignalParams()
	var o contract.Observation
	t.step["Observe"], err = r.call("Observe", r.acts.Observe, contract.ObserveInput{SessionID: s.id, Iteration: it, Task: sel, NewEvidence: 3 + pageChunks,
		SVDK: cfg.Algebra.SVDK, MinEvidence: cfg.Algebra.MinEvidence, Signals: &sig}, &o)
	if err != nil {
		return t, fmt.Errorf("iteration %d Observe: %w", it, err)
	}
	return t, nil
}

// ingest stores one page of research for the focused task, as the
// iteration's WebResearch child would, with its SIMILAR_TO edges left to
// the next sync.
func (r *runner) ingest(ctx context.Context, st graph.Store, s *session, task string) (time.Duration, error) {
	emb := s.taskEmb[0]
	if k, ok := generatedIndex(task); ok && k < len(s.taskEmb) {
		emb = s.taskEmb[k]
	}
	items := s.gen.page(s.pages, emb, s.iter)
	s.pages++
	start := time.Now()
	res, err := st.AddEvidence(ctx, s.id, fmt.Sprintf("ingest/%d", s.iter), task, items)
	if err != nil {
		return 0, fmt.Errorf("iteration %d ingest: %w", s.iter, err)
	}
	s.evidence += res.Added + 3 // and the three evidence ops of ApplyOps
	return time.Since(start), nil
}

// pick is the task the iteration focuses on: the first ready task that is
// not the root (the workflow ranks them; the store work does not depend on
// which), else the root.
func pick(rs contract.ReadStateResult) string {
	for _, t := range rs.Ready {
		if t.ShortID != graph.RootShortID {
			return t.ShortID
		}
	}
	return graph.RootShortID
}

// iterationOps is a typical model answer: three findings, one new
// subtask, and the task completed (never the root: that ends the session).
func iterationOps(it int, sel string) []contract.Op {
	ops := make([]contract.Op, 0, 5)
	for k := range 3 {
		c := fmt.Sprintf("Finding %d of iteration %d on %s: the interface resistance grows with cycling at %d MPa.", k, it, sel, 5+k)
		ops = append(ops, contract.Op{Op: "evidence", Task: sel, Content: c, EmbedText: c})
	}
	d := fmt.Sprintf("Follow-up %d: how does stack pressure change dendrite growth?", it)
	ops = append(ops, contract.Op{Op: "create", ID: fmt.Sprintf("i%d", it), Parent: sel, Description: d, EmbedText: d})
	if sel != graph.RootShortID {
		r := fmt.Sprintf("Answered in iteration %d.", it)
		ops = append(ops, contract.Op{Op: "complete", Task: sel, Result: r, EmbedText: r})
	}
	return ops
}

// generatedIndex is k of a generated task's short id "t<k>".
func generatedIndex(short string) (int, bool) {
	var k int
	if _, err := fmt.Sscanf(short, "t%d", &k); err != nil {
		return 0, false
	}
	return k, true
}

// processCPU is the CPU time (user + system) this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// researchIngest runs the research child's Ingest activity n times, one
// page each, as WebResearch does after Fetch: the page is the text of the
// page the last iteration ingested, staged as Fetch stages it, and the
// loopback embedding server embeds its chunks. Ingest judges each chunk's
// novelty against what the session holds, so its time shows what the
// session's size does to research; it is reported apart from the loop's
// store work. The page's chunks are items the session holds, so the store
// keeps nothing new (checked): the next sizes grow the same session the
// loop left, and a page of new text would add items whose vectors (the
// loopback embedder's) share nothing with the generated ones.
// ingestChars bounds the text of the page researchIngest stages.
const ingestChars = 4000

func (r *runner) researchIngest(ctx context.Context, st graph.Store, s *session, task string, n int) ([]time.Duration, error) {
	var out []time.Duration
	for k := range n {
		emb := s.taskEmb[0]
		if k, ok := generatedIndex(task); ok && k < len(s.taskEmb) {
			emb = s.taskEmb[k]
		}
		// Its first chunks up to ingestChars: a batch over the research's
		// research.ingest_max_chars (4,800), which a whole page passes,
		// gets a chunk trimmed to fit, a text the store does not hold.
		items := s.gen.page(s.pages-1, emb, s.iter)
		var text strings.Builder
		for i, it := range items {
			if i > 0 && text.Len()+len(it.Content) > ingestChars {
				break
			}
			text.WriteString(it.Content)
			text.WriteString("\n\n")
		}
		key := fmt.Sprintf("bench-ingest/%d/%d", s.iter, k)
		docs := []research.Document{{URL: items[0].SourceURL, Title: items[0].Title, Kind: graph.KindHTML, Text: text.String()}}
		var buf bytes.Buffer
		if err := gob.NewEncoder(&buf).Encode(docs); err != nil {
			return out, fmt.Errorf("stage page %s: %w", key, err)
		}
		if err := st.PutBlob(ctx, s.id, "pages/"+key, buf.Bytes()); err != nil {
			return out, fmt.Errorf("stage page %s: %w", key, err)
		}
		var res contract.IngestResult
		d, err := r.call("Ingest", r.acts.Ingest, contract.IngestInput{SessionID: s.id, Key: key, Task: task, Iteration: s.iter,
			Query: "how do solid state batteries fail", Params: contract.IngestParamsOf(r.cfg)}, &res)
		if err != nil {
			return out, fmt.Errorf("ingest %s: %w", key, err)
		}
		if res.Chunks == 0 {
			return out, fmt.Errorf("ingest %s judged no chunk: the timing would prove nothing", key)
		}
		if res.New > 0 {
			return out, fmt.Errorf("ingest %s stored %d new items: the page was not the last one ingested", key, res.New)
		}
		out = append(out, d)
	}
	return out, nil
}
