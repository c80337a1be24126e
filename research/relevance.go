package research

import (
	"math"
	"sort"
	"strings"
)

// DefaultIngestLambda is the relevance weight of Ingest's selection: 0.7,
// the MMR weight assembly uses (algebra.DefaultMMRLambda), so relevance
// leads and novelty breaks near-ties between equally relevant chunks.
const DefaultIngestLambda = 0.7

// ChunkCandidate is one embedded chunk that Ingest may keep.
type ChunkCandidate struct {
	Page      int     // index of its page in the batch (the per-page cap counts by it)
	Chars     int     // its length in characters (the batch budget counts them)
	Relevance float64 // cosine between the chunk and the query+task embedding
	Held      float64 // largest cosine to the evidence held before this batch (0 when none)
	// Hit: the chunk is (part of) a search hit (Document.Hit), not context
	// fetched around one. Hits are picked before any other chunk.
	Hit bool
}

// SelectRelevant picks the chunks Ingest keeps, relevance first and
// novelty second, MMR-style (Carbonell & Goldstein 1998, as algebra.MMR):
// repeatedly take the unpicked candidate with the largest
//
//	λ·relevance_i − (1 − λ)·max(held_i, max_{j picked} sim(i, j))
//
// so a chunk that repeats evidence already held, or a chunk already picked,
// loses to an equally relevant new one, but novelty alone never lifts an
// irrelevant chunk over a relevant one (λ ≥ ½). Search hits (Hit) come
// first: a non-hit chunk is picked only when no hit is left that fits, so
// the context fetched around a hit fills the budget the hits leave and
// never displaces one (a neighbour that repeats the query's words would
// otherwise win over the passage that answers). A candidate is skipped
// when its page already has maxPerPage picks or when it would take the
// picked characters past maxChars; the walk continues with smaller ones.
// λ is clamped to [0, 1]; maxPerPage or maxChars <= 0 means no such limit;
// sim may be nil (no similarity among candidates). NaN relevance counts as
// −Inf. Ties go to the lower index. It returns the picked indices in pick
// order (best first).
func SelectRelevant(c []ChunkCandidate, sim func(i, j int) float64, lambda float64, maxPerPage, maxChars int) []int {
	var out []int
	for _, p := range SelectEvidence(c, sim, SelectOptions{Lambda: lambda, MaxPerPage: maxPerPage, MaxChars: maxChars}) {
		out = append(out, p.Index)
	}
	return out
}

// WindowChunks chunks a document's text as Ingest does (cfg), keeping its
// search hit apart (Document.Hit): the text before the hit, the hit and the
// text after it are chunked separately, so that no chunk straddles the
// hit's edges; hit[i] reports whether chunk i is (part of) the hit. A
// document without a hit, or with a span outside its text, is chunked
// whole with no hit.
func WindowChunks(d Document, cfg ChunkConfig) (chunks []string, hit []bool) {
	h := d.Hit
	if h == nil || h.Start < 0 || h.End > len(d.Text) || h.Start >= h.End {
		chunks = Chunk(d.Text, cfg)
		return chunks, make([]bool, len(chunks))
	}
	for i, part := range []string{d.Text[:h.Start], d.Text[h.Start:h.End], d.Text[h.End:]} {
		if strings.TrimSpace(part) == "" {
			continue
		}
		for _, ch := range Chunk(part, cfg) {
			chunks, hit = append(chunks, ch), append(hit, i == 1)
		}
	}
	return chunks, hit
}

// WithHits adds the hit chunks (hit[i]: WindowChunks) to a selection keep
// of chunk indices (SelectChunks) and returns it sorted: the passage a
// search found is always embedded, whatever its words.
func WithHits(keep []int, hit []bool) []int {
	in := make(map[int]bool, len(keep))
	for _, i := range keep {
		in[i] = true
	}
	out := append([]int(nil), keep...)
	for i, h := range hit {
		if h && !in[i] {
			out = append(out, i)
		}
	}
	sort.Ints(out)
	return out
}

// SelectOptions configure SelectEvidence.
type SelectOptions struct {
	Lambda     float64 // relevance weight of the MMR score (clamped to [0, 1])
	MaxPerPage int     // picks per page; <= 0: no limit
	MaxChars   int     // characters picked in all; <= 0: no limit
	// HitsInOrder: the search hits (ChunkCandidate.Hit) are taken in
	// candidate order (the batch's page order: the research run's ranking)
	// instead of by MMR score; they still come before any other chunk.
	HitsInOrder bool
	// MinTrim: when the next chunk does not fit in what MaxChars leaves,
	// it is kept cut to what is left (Pick.Chars) if that is at least
	// MinTrim characters, and the selection ends; <= 0: it is skipped and
	// the walk goes on with chunks that fit (SelectRelevant).
	MinTrim int
}

// Pick is one chunk SelectEvidence keeps: its index and, when it is cut
// to fit the character budget, the characters it may keep (0: whole).
type Pick struct {
	Index int
	Chars int
}

// SelectEvidence picks the chunks Ingest keeps, as SelectRelevant
// describes, with two options: HitsInOrder keeps the batch's search hits
// in their rank (the search's ranking is hybrid, lexical and semantic;
// re-judging its hits by the embedding alone drops the lexical half), and
// MinTrim cuts the chunk that would overflow the budget to what is left
// (the caller keeps its best window for the query, BestWindow) instead of
// dropping it. It returns the picks in pick order (best first).
func SelectEvidence(c []ChunkCandidate, sim func(i, j int) float64, o SelectOptions) []Pick {
	lambda := math.Max(0, math.Min(1, o.Lambda))
	red := make([]float64, len(c)) // redundancy: max similarity to held and picked
	done := make([]bool, len(c))
	for i, x := range c {
		if red[i] = x.Held; math.IsNaN(red[i]) {
			red[i] = 0
		}
	}
	perPage := map[int]int{}
	chars := 0
	var out []Pick
	for {
		best, bestScore := -1, math.Inf(-1)
		for i, x := range c {
			if done[i] {
				continue
			}
			if (o.MaxPerPage > 0 && perPage[x.Page] >= o.MaxPerPage) || (o.MinTrim <= 0 && o.MaxChars > 0 && chars+x.Chars > o.MaxChars) {
				done[i] = true // cannot fit now, nor later (counts only grow)
				continue
			}
			rel := x.Relevance
			if math.IsNaN(rel) {
				rel = math.Inf(-1)
			}
			s := lambda*rel - (1-lambda)*red[i]
			if o.HitsInOrder && x.Hit {
				s = math.Inf(1) // the first hit left wins
			}
			if best < 0 || (x.Hit && !c[best].Hit) || (x.Hit == c[best].Hit && s > bestScore) {
				best, bestScore = i, s
			}
		}
		if best < 0 {
			return out
		}
		done[best] = true
		if o.MaxChars > 0 && chars+c[best].Chars > o.MaxChars { // only with MinTrim
			if left := o.MaxChars - chars; left >= o.MinTrim {
				out = append(out, Pick{Index: best, Chars: left})
			}
			return out
		}
		out = append(out, Pick{Index: best})
		perPage[c[best].Page]++
		chars += c[best].Chars
		if sim == nil {
			continue
		}
		for i := range c {
			if !done[i] {
				red[i] = math.Max(red[i], sim(i, best))
			}
		}
	}
}
