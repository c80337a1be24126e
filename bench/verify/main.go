// Command verify measures the citation verifier against labelled pairs:
// each pair is one report sentence, the source it cites (a passage of the
// Debian Reference, stored as the session's evidence) and whether that
// source supports it. It runs the VerifyCitations activity as a session
// runs it (the worker's Guard, a real embedded store, batches cut as the
// workflow cuts them, the configured chat model) and prints, per label and
// per route (containment, coverage, model), how many pairs were judged
// supported, unsupported or left unchecked, then recall (true pairs
// supported) and the false-support rate (false pairs supported) per kind.
//
// It reads the worker's LETHE_* settings, so with the local models:
//
//	scripts/models.sh start && eval "$(scripts/models.sh env)"
//	go run ./bench/verify
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/interceptor"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/lethe-research/lethe/activities"
	"github.com/lethe-research/lethe/config/load"
	"github.com/lethe-research/lethe/contract"
	"github.com/lethe-research/lethe/graph/embedded"
	"github.com/lethe-research/lethe/service"
)

func main() {
	pairsFile := flag.String("pairs", "", "labelled pairs (JSONL; default: the embedded testdata/pairs.jsonl)")
	sourcesFile := flag.String("sources", "", "their sources (JSONL; default: the embedded testdata/sources.jsonl)")
	verbose := flag.Bool("v", false, "one line per pair")
	flag.Parse()
	set, err := loadSet(*pairsFile, *sourcesFile)
	if err != nil {
		log.Fatal(err)
	}
	start := time.Now()
	run, err := verifyAll(context.Background(), set)
	if err != nil {
		log.Fatal(err)
	}
	run.Minutes = time.Since(start).Minutes()
	printReport(os.Stdout, set, run, *verbose)
}

// runResult is the verdict of every pair (by id) and what the calls cost.
type runResult struct {
	Verdicts map[string]contract.VerifyVerdict
	Calls    int
	Repairs  int
	Tokens   int
	Batches  int
	Minutes  float64
	Model    string
}

// verifyAll stores the sources as one session's evidence and runs
// VerifyCitations over the pairs in the workflow's batches.
func verifyAll(ctx context.Context, set labelledSet) (runResult, error) {
	cfg, err := load.Load(load.Sources{})
	if err != nil {
		return runResult{}, fmt.Errorf("config: %w", err)
	}
	dir, err := os.MkdirTemp("", "lethe-bench-verify-")
	if err != nil {
		return runResult{}, err
	}
	defer os.RemoveAll(dir)
	cfg.Graph.Path, cfg.Research.CorpusDir = filepath.Join(dir, "graph.db"), ""
	store, err := embedded.Open(cfg.Graph.Path)
	if err != nil {
		return runResult{}, fmt.Errorf("open store: %w", err)
	}
	defer store.Close()
	a, err := service.NewActivities(cfg, load.Sources{}, store, nil)
	if err != nil {
		return runResult{}, err
	}
	defer a.CloseResearch()
	const sid = "bench-verify"
	if err := storeSources(ctx, store, sid, set.Sources); err != nil {
		return runResult{}, err
	}
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))) // the table is the output
	env := suite.NewTestActivityEnvironment()
	env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{&activities.Guard{}}})
	env.RegisterActivityWithOptions(a, activity.RegisterOptions{SkipInvalidStructFunctions: true})
	env.SetTestTimeout(time.Hour)

	pairs, items := set.cited()
	res := runResult{Verdicts: map[string]contract.VerifyVerdict{}, Model: cfg.LLM.BaseURL + " " + cfg.LLM.Model}
	ac := cfg.Assembly
	for b, batch := range contract.VerifyBatches(pairs, ac.VerifyBatchTokens, ac.VerifySourceChars, cfg.LLM.ComposeTokens) {
		in := contract.VerifyInput{SessionID: sid, Batch: b + 1, SourceChars: ac.VerifySourceChars, MaxTokens: cfg.LLM.ComposeTokens,
			Schema: cfg.LLM.JSONSchema, SchemaLoose: cfg.LLM.JSONSchemaLoose, Sources: set.verifySources()}
		for _, p := range batch {
			in.Items = append(in.Items, items[p.I])
		}
		var out contract.VerifyResult
		v, err := env.ExecuteActivity(a.VerifyCitations, in)
		if err == nil {
			err = v.Get(&out)
		}
		if err != nil {
			return res, fmt.Errorf("batch %d: %w", b+1, err)
		}
		for k, vd := range out.Verdicts {
			res.Verdicts[set.Pairs[in.Items[k].I].ID] = vd
		}
		res.Batches++
		res.Calls += out.Calls
		res.Repairs += out.RepairCalls
		res.Tokens += out.Tokens
		fmt.Fprintf(os.Stderr, "batch %d: %d pairs, %d calls\n", b+1, len(in.Items), out.Calls)
	}
	return res, nil
}
