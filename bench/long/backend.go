package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/lethe-research/lethe/activities"
	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/graph/embedded"
	"github.com/lethe-research/lethe/graph/neo4j"
	"github.com/lethe-research/lethe/llm"
	"github.com/lethe-research/lethe/llm/llmtest"
)

// errSkipped marks a backend that is not there to measure.
var errSkipped = errors.New("backend not available")

// openStore opens one backend; cleanup closes it (and removes a temporary
// embedded file).
func openStore(ctx context.Context, o options, backend string) (graph.Store, func(), error) {
	switch backend {
	case "embedded":
		dir, tmp := o.dir, o.dir == ""
		if tmp {
			d, err := os.MkdirTemp("", "lethe-long-")
			if err != nil {
				return nil, nil, fmt.Errorf("embedded store directory: %w", err)
			}
			dir = d
		}
		g := config.Defaults().Graph // the worker's index settings (service.OpenStore)
		s, err := embedded.OpenWith(filepath.Join(dir, "graph.db"), embedded.ANNOptions{MinItems: g.ANNMinItems, M: g.ANNM,
			EfConstruction: g.ANNEfConstruction, EfSearch: g.ANNEfSearch, ThresholdK: g.ANNThresholdK, CacheMiB: g.CacheMiB})
		if err != nil {
			return nil, nil, err
		}
		return s, func() {
			_ = s.Close()
			if tmp {
				_ = os.RemoveAll(dir)
			}
		}, nil
	case "neo4j":
		s, err := neo4j.Open(ctx, neo4j.Config{URI: o.neo4jURI, User: o.user, Password: o.password, WalkCacheMiB: o.walk, VectorStatements: o.vecStmts, LabelBatch: o.labelBatch})
		if errors.Is(err, neo4j.ErrUnreachable) || errors.Is(err, neo4j.ErrUnauthorized) {
			return nil, nil, fmt.Errorf("%w: %v (start one with scripts/neo4j.sh start, or pass -neo4j, -neo4j-user, -neo4j-password)", errSkipped, err)
		}
		if err != nil {
			return nil, nil, err
		}
		return s, func() { _ = s.Close() }, nil
	}
	return nil, nil, fmt.Errorf("unknown backend %q", backend)
}

// runBackend grows one session through every size on one backend and
// times its iterations at each.
func runBackend(ctx context.Context, o options, backend string, emit func(point) error) error {
	st, closeStore, err := openStore(ctx, o, backend)
	if err != nil {
		return err
	}
	defer closeStore()
	var timer *callTimer
	if o.calls {
		timer = newCallTimer(st)
		timer.trace = o.timeline
		st = timer
	}
	model := llmtest.NewServer(llmtest.Script{EmbeddingDim: o.dim})
	defer model.Close()
	cfg := config.Defaults()
	acts := &activities.Activities{Cfg: cfg, Store: st, Embed: llm.NewEmbedClient(llm.EmbedConfig{BaseURL: model.URL()}, nil)}
	r := newRunner(acts, cfg)
	r.timer = timer
	if backend == "neo4j" {
		if r.server, err = newServerMeter(o.serverPID); err != nil {
			return err
		}
	}
	s := &session{id: fmt.Sprintf("long-%s-%d", backend, time.Now().UnixNano()), gen: generator{seed: o.seed, dim: o.dim},
		similar: similarConfig{threshold: cfg.Algebra.SimilarThreshold, maxPer: cfg.Algebra.SimilarMaxPerNode}}
	if !o.keep {
		defer func() { _ = st.ResetSession(context.Background(), s.id) }()
	}
	if err := s.create(ctx, st); err != nil {
		return fmt.Errorf("%s: %w", backend, err)
	}
	for _, n := range o.sizes {
		p, err := measure(ctx, o, st, r, s, backend, n)
		if err != nil { // report what was measured; larger sizes would fail the same way
			p.err = err.Error()
			fmt.Fprintf(os.Stderr, "long: %s at %d: %v\n", backend, n, err)
		}
		if err := emit(p); err != nil {
			return err
		}
		if p.err != "" {
			break
		}
	}
	return nil
}

// measure grows the session to n items, runs the first iteration and then
// o.iters timed ones.
func measure(ctx context.Context, o options, st graph.Store, r *runner, s *session, backend string, n int) (point, error) {
	p := point{backend: backend, n: n}
	fill, err := growObserved(ctx, o, st, r, s, n)
	p.fill, p.items, p.tasks = fill, s.evidence, s.tasks
	if err != nil {
		return p, err
	}
	fmt.Fprintf(os.Stderr, "long: %s: %d evidence, %d generated tasks, filled in %s (so far by call: %v)\n", backend, s.evidence, s.tasks, fill.Round(time.Millisecond), s.phases)
	r.labels = []string{"size", fmt.Sprint(n), "phase", "first"}
	if p.first, err = r.iterate(ctx, st, s); err != nil {
		return p, err
	}
	fmt.Fprintf(os.Stderr, "long: %s at %d: first iteration %s %v\n", backend, n, p.first.total().Round(time.Millisecond), p.first.step)
	iters := o.iters
	if o.slow > 0 && p.first.total() > o.slow {
		iters = 1
		p.err = fmt.Sprintf("the first iteration took %s (more than -slow %s): one timed iteration, larger sizes not run", p.first.total().Round(time.Second), o.slow)
	}
	// The fill's items all carry one iteration, so for novelty_window
	// iterations Observe reads them all as its window (a real session adds
	// a page or two per iteration); the warm-up lets them leave it.
	r.labels = []string{"size", fmt.Sprint(n), "phase", "warmup"}
	for range warmups(o, r.cfg) {
		if _, err := r.iterate(ctx, st, s); err != nil {
			return p, err
		}
	}
	r.labels = []string{"size", fmt.Sprint(n), "phase", "steady"}
	err = r.steady(ctx, o, st, s, &p, iters)
	if p.server = r.server != nil; p.server && r.server.err != nil {
		p.serverErr = r.server.err.Error()
	}
	if err != nil {
		return p, err
	}
	if o.ingest > 0 && len(p.timings) > 0 {
		r.labels = []string{"size", fmt.Sprint(n), "phase", "ingest"}
		if p.ingests, err = r.researchIngest(ctx, st, s, p.timings[len(p.timings)-1].task, o.ingest); err != nil {
			return p, err
		}
	}
	p.observed = s.evidence
	if len(o.tols) > 0 {
		var tasks []string
		for _, t := range p.timings {
			tasks = append(tasks, t.task)
		}
		r.labels = []string{"size", fmt.Sprint(n), "phase", "tols"}
		if p.tols, err = sweepTols(o, r, s, n, tasks); err != nil {
			return p, err
		}
	}
	return p, nil
}

// growObserved grows the session to n evidence items: at once, or with
// -fill-step in steps, each followed by one untimed iteration. One fill of
// 90,000 items stamped with one iteration makes the next Observe compare
// every new row with every other in its novelty stage (n², over 10 minutes
// at 100k), which no session that ingests a few hundred rows per iteration
// meets. It returns the time spent writing, not iterating.
func growObserved(ctx context.Context, o options, st graph.Store, r *runner, s *session, n int) (time.Duration, error) {
	if o.fillStep <= 0 {
		return s.grow(ctx, st, n)
	}
	var fill time.Duration
	for s.evidence < n {
		d, err := s.grow(ctx, st, min(n, s.evidence+o.fillStep))
		fill += d
		if err != nil {
			return fill, err
		}
		r.labels = []string{"size", fmt.Sprint(n), "phase", "fill"}
		if _, err := r.iterate(ctx, st, s); err != nil {
			return fill, fmt.Errorf("observed fill at %d: %w", s.evidence, err)
		}
	}
	return fill, nil
}

// warmups is the number of untimed iterations after the first: -warmup,
// or the novelty window of the session's signal parameters.
func warmups(o options, cfg config.Config) int {
	if o.warmup >= 0 {
		return o.warmup
	}
	return cfg.Algebra.SignalParams().Incremental.WithDefaults().NoveltyWindow
}

// steady runs the timed iterations into p, each with its setting of
// -alternate (armOf), and the reports of -calls and -alternate.
func (r *runner) steady(ctx context.Context, o options, st graph.Store, s *session, p *point, iters int) error {
	base := r.cfg
	defer func() { r.cfg = base }()
	arms, err := o.alt.configs(base)
	if err != nil {
		return err
	}
	for i := range iters {
		arm, setting := 0, ""
		if len(arms) > 0 {
			arm = armOf(i, len(arms))
			r.cfg, setting = arms[arm], fmt.Sprintf(" (%s=%s)", o.alt.key, o.alt.values[arm])
		}
		t, err := r.iterate(ctx, st, s)
		if err != nil {
			return err
		}
		t.arm = arm
		p.timings = append(p.timings, t)
		server := ""
		if r.server != nil {
			server = fmt.Sprintf(" server CPU %s", ms(t.server))
		}
		fmt.Fprintf(os.Stderr, "long: %s at %d: iteration %d%s %s %v%s\n", p.backend, p.n, s.iter, setting, t.total().Round(time.Millisecond), t.step, server)
		if o.timeline {
			fmt.Fprint(os.Stderr, r.timer.timeline(fmt.Sprintf("of iteration %d (focus %s)", s.iter, t.task)))
		}
	}
	if r.timer != nil {
		p.calls = r.timer.report(fmt.Sprintf("%s at %d", p.backend, p.n), iters)
		fmt.Fprint(os.Stderr, p.calls)
	}
	if len(arms) > 0 {
		p.arms = renderArms(o.alt, p.timings)
		fmt.Fprint(os.Stderr, p.arms)
	}
	return nil
}
