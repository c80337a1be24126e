package activities

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"

	"go.temporal.io/sdk/activity"

	"github.com/lethe-research/lethe/algebra"
	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/llm"
	"github.com/lethe-research/lethe/research"
)

// Discover asks the configured providers for URLs and scores each title and
// snippet against the goal, so the workflow ranks its queue without vectors.
func (a *Activities) Discover(ctx context.Context, in DiscoverInput) (DiscoverResult, error) {
	s, err := a.Store.GetSession(ctx, in.SessionID)
	if err != nil {
		return DiscoverResult{}, fmt.Errorf("discover session: %w", err)
	}
	var hits []research.Hit
	if a.Corpus != nil {
		h, err := a.Corpus.Search(ctx, in.Query, in.Limit)
		if err != nil {
			return DiscoverResult{}, fmt.Errorf("discover corpus %q: %w", in.Query, err)
		}
		hits = append(hits, h...)
	}
	if len(hits) == 0 {
		return DiscoverResult{}, nil
	}
	texts := make([]string, len(hits))
	for i, h := range hits {
		texts[i] = strings.TrimSpace(h.Title + "\n" + h.Snippet)
	}
	embs, err := a.Embed.Embed(ctx, llm.Document, texts)
	if err != nil {
		return DiscoverResult{}, fmt.Errorf("discover embed: %w", err)
	}
	out := DiscoverResult{}
	for i, h := range hits {
		out.Candidates = append(out.Candidates, research.Candidate{
			URL: h.URL, Title: h.Title, Snippet: truncate(h.Snippet, 300), Provider: h.Provider,
			GoalCos: algebra.Cosine32(embs[i], s.GoalQueryEmb),
		})
	}
	return out, nil
}

func pagesKey(key string) string { return "pages/" + key }

// Fetch reads one batch of URLs and stages the page texts in the graph
// store (never in history). It heartbeats per page; a page that fails is
// reported and skipped, never fatal to the batch.
func (a *Activities) Fetch(ctx context.Context, in FetchInput) (FetchResult, error) {
	lg := logger(ctx, in.SessionID)
	var docs []research.Document
	var out FetchResult
	for i, u := range in.URLs {
		activity.RecordHeartbeat(ctx, i)
		if err := ctx.Err(); err != nil {
			return FetchResult{}, err
		}
		doc, err := a.fetchOne(ctx, u)
		ref := PageRef{URL: u}
		if err != nil {
			ref.Error = err.Error()
			lg.Warn("fetch failed", "url", u, "error", err)
		} else {
			ref.Title, ref.Kind, ref.Chars = doc.Title, doc.Kind, len(doc.Text)
			docs = append(docs, doc)
		}
		out.Pages = append(out.Pages, ref)
	}
	if err := putBlob(ctx, a.Store, in.SessionID, pagesKey(in.Key), docs); err != nil {
		return FetchResult{}, err
	}
	return out, nil
}

func (a *Activities) fetchOne(ctx context.Context, u string) (research.Document, error) {
	if strings.HasPrefix(u, "corpus:") {
		if a.Corpus == nil {
			return research.Document{}, fmt.Errorf("%s: no local corpus configured", u)
		}
		return a.Corpus.Open(u)
	}
	if err := a.Policy.Check(ctx, u, nil); err != nil {
		return research.Document{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return research.Document{}, err
	}
	resp, err := a.HTTP.Do(req)
	if err != nil {
		return research.Document{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		return research.Document{}, fmt.Errorf("%s: HTTP %d", u, resp.StatusCode)
	}
	body := io.LimitReader(resp.Body, int64(a.Cfg.Research.MaxPageBytes))
	return research.ExtractHTML(body, u)
}

// Ingest chunks the staged pages into paragraph groups, embeds them with the
// document prefix, keeps each page's most informative chunks, scores their
// strength and persists them idempotently under the batch key. It returns
// scalars only.
func (a *Activities) Ingest(ctx context.Context, in IngestInput) (IngestResult, error) {
	var docs []research.Document
	if _, err := getBlob(ctx, a.Store, in.SessionID, pagesKey(in.Key), &docs); err != nil {
		return IngestResult{}, err
	}
	s, err := a.Store.GetSession(ctx, in.SessionID)
	if err != nil {
		return IngestResult{}, fmt.Errorf("ingest session: %w", err)
	}
	held, err := a.Store.Evidence(ctx, in.SessionID, "")
	if err != nil {
		return IngestResult{}, fmt.Errorf("ingest evidence: %w", err)
	}
	heldVecs := make([][]float64, 0, len(held))
	for _, e := range held {
		heldVecs = append(heldVecs, algebra.ToFloat64(e.Embedding))
	}
	goal := algebra.ToFloat64(s.GoalQueryEmb)
	cc := research.ChunkConfig{TargetChars: a.Cfg.Research.ChunkChars, MaxChars: 2 * a.Cfg.Research.ChunkChars, MinChars: a.Cfg.Research.ChunkChars / 6}
	var res IngestResult
	var items []graph.Evidence
	var igSum float64
	var cos, strengths []float64
	for _, d := range docs {
		chunks := research.Chunk(d.Text, cc)
		if len(chunks) == 0 {
			continue
		}
		embs, err := a.Embed.Embed(ctx, llm.Document, chunks)
		if err != nil {
			return IngestResult{}, fmt.Errorf("ingest embed %s: %w", d.URL, err)
		}
		type scored struct {
			i      int
			ig, cg float64
		}
		sc := make([]scored, len(chunks))
		for i, e := range embs {
			v := algebra.ToFloat64(e)
			sc[i] = scored{i, algebra.InformationGain(v, heldVecs), algebra.Cosine(v, goal)}
			igSum += sc[i].ig
			heldVecs = append(heldVecs, v) // later chunks are judged against earlier ones too
		}
		res.Chunks += len(chunks)
		sort.SliceStable(sc, func(x, y int) bool { return sc[x].ig > sc[y].ig })
		if len(sc) > a.Cfg.Research.MaxChunksPerPage {
			sc = sc[:a.Cfg.Research.MaxChunksPerPage]
		}
		sort.SliceStable(sc, func(x, y int) bool { return sc[x].i < sc[y].i }) // page order
		for _, c := range sc {
			st := research.Strength(c.cg, c.ig, d.Kind)
			items = append(items, graph.Evidence{
				SessionID: in.SessionID, Content: chunks[c.i], SourceURL: d.URL, Title: d.Title, Kind: d.Kind,
				Strength: st, Embedding: embs[c.i], CreatedIter: in.Iteration,
			})
			cos, strengths = append(cos, c.cg), append(strengths, st)
		}
	}
	if res.Chunks > 0 {
		res.MeanIG = igSum / float64(res.Chunks)
	}
	if len(items) > 0 {
		ar, err := a.Store.AddEvidence(ctx, in.SessionID, "ingest/"+in.Key, in.Task, items)
		if err != nil {
			return IngestResult{}, fmt.Errorf("ingest persist %s: %w", in.Key, err)
		}
		res.New, res.Duplicates = ar.Added, ar.Duplicates
		res.GA = algebra.GoalAlignment(0, algebra.AttentionGA(cos, strengths, 8, 0.1), len(items))
	}
	if res.Coverage, err = a.taskCoverage(ctx, in.SessionID, in.Task, goal); err != nil {
		return IngestResult{}, err
	}
	return res, nil
}

// taskCoverage is how much of the goal the task's evidence subspace spans.
func (a *Activities) taskCoverage(ctx context.Context, session, task string, goal []float64) (float64, error) {
	ev, err := a.Store.Evidence(ctx, session, task)
	if err != nil {
		return 0, fmt.Errorf("task coverage: %w", err)
	}
	rows := make([][]float64, len(ev))
	for i, e := range ev {
		rows[i] = algebra.ToFloat64(e.Embedding)
	}
	svd := algebra.ComputeSVD(rows, a.Cfg.Algebra.SVDK, a.Cfg.Algebra.MinEvidence, nil, 1)
	return svd.Coverage(goal), nil
}
