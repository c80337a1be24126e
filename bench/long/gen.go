package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/lethe-research/lethe/graph"
)

// The generator builds a session's content from a seed alone, so two runs
// (and two backends) fill the same graph. Every random draw comes from a
// PCG stream keyed by (seed, purpose, index): item k is the same whatever
// batches it was written in.
//
// Shape: a goal; tasks whose embeddings lean toward the goal; pages of
// pageChunks chunks, each page a "source" under one task; a chunk is its
// page's direction plus noise, so chunks of one page are SIMILAR_TO each
// other (cosine ≈ 0.89) and chunks of two pages of one task are not
// (≈ 0.65), as when the research reads several pages per task.
const (
	pageChunks  = 8
	contentSize = 800 // characters per chunk: real chunks are 1,200 at most
	taskNoise   = 1.0 // task = goal + taskNoise·u (cosine to the goal ≈ 0.7)
	pageNoise   = 0.6 // page = task + pageNoise·u
	chunkNoise  = 0.35
)

// Purposes of the random streams.
const (
	streamGoal = iota + 1
	streamTask
	streamPage
	streamChunk
	streamText
)

type generator struct {
	seed uint64
	dim  int
}

func (g generator) rng(purpose, index int) *rand.Rand {
	return rand.New(rand.NewPCG(g.seed, uint64(purpose)<<48|uint64(index)))
}

// taskCount is the size of the task tree at n evidence items: tens of tasks
// for a short session, a few hundred for a long one.
func taskCount(n int) int {
	return min(400, 16+int(math.Sqrt(float64(n))))
}

// unit is a random direction.
func unit(r *rand.Rand, dim int) []float64 {
	v := make([]float64, dim)
	for i := range v {
		v[i] = r.NormFloat64()
	}
	return normalize(v)
}

func normalize(v []float64) []float64 {
	var ss float64
	for _, x := range v {
		ss += x * x
	}
	n := math.Sqrt(ss)
	for i := range v {
		v[i] /= n
	}
	return v
}

// perturb is normalize(base + scale·u) for a random direction u.
func perturb(r *rand.Rand, base []float64, scale float64) []float64 {
	u := unit(r, len(base))
	out := make([]float64, len(base))
	for i := range base {
		out[i] = base[i] + scale*u[i]
	}
	return normalize(out)
}

func to32(v []float64) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out
}

func (g generator) goal() []float64 { return unit(g.rng(streamGoal, 0), g.dim) }

// taskShort is the short id of generated task k (k ≥ 1; 0 is the root).
func taskShort(k int) string {
	if k == 0 {
		return graph.RootShortID
	}
	return fmt.Sprintf("t%d", k)
}

// task is generated task k ≥ 1: its parent is an earlier task, one in six
// also depends on an earlier task, and its embedding leans toward the goal.
func (g generator) task(k int) graph.Op {
	r := g.rng(streamTask, k)
	parent := r.IntN(k)
	op := graph.Op{
		Kind: graph.OpCreate, Task: taskShort(k), Parent: taskShort(parent),
		Description: fmt.Sprintf("Subquestion %d: %s", k, words(r, 12)),
		Embedding:   to32(perturb(r, g.goal(), taskNoise)),
	}
	op.EmbedText = op.Description
	if k > 1 && r.IntN(6) == 0 {
		if dep := 1 + r.IntN(k-1); dep != parent {
			op.DependsOn = []string{taskShort(dep)}
		}
	}
	return op
}

// taskDone says whether generated task k is DONE after the fill: two in
// three are, as in a session well under way; the root never is.
func taskDone(k int) bool { return k > 0 && k%3 != 0 }

// pageTask is the task page p was read for, among the first tasks tasks.
func (g generator) pageTask(p, tasks int) int {
	return g.rng(streamPage, p).IntN(tasks)
}

// page is the chunks of page p for a task with embedding taskEmb, created
// at iteration iter.
func (g generator) page(p int, taskEmb []float64, iter int) []graph.Evidence {
	r := g.rng(streamChunk, p)
	dir := perturb(r, taskEmb, pageNoise)
	tr := g.rng(streamText, p)
	out := make([]graph.Evidence, pageChunks)
	for c := range out {
		out[c] = graph.Evidence{
			Content:   fmt.Sprintf("Page %d, part %d. %s", p, c, words(tr, contentSize/7)),
			SourceURL: fmt.Sprintf("https://source-%d.example.org/page/%d", p%997, p),
			Title:     fmt.Sprintf("Page %d", p), Kind: graph.KindHTML, Strength: 0.5 + 0.4*r.Float64(),
			Embedding: to32(perturb(r, dir, chunkNoise)), CreatedIter: iter,
		}
	}
	return out
}

var vocabulary = strings.Fields(`battery electrolyte anode cathode lithium solid state interface
dendrite sulfide oxide polymer conductivity impedance cycling capacity fade crack pressure
stack temperature coating grain boundary diffusion voltage current density failure mode
measurement sample cell layer thickness formation degradation mechanism model result`)

// words is n words of the vocabulary.
func words(r *rand.Rand, n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = vocabulary[r.IntN(len(vocabulary))]
	}
	return strings.Join(w, " ")
}

// similarEdges are the SIMILAR_TO edges among items (prepared: ids set)
// the way SyncSimilar would link them: cosine ≥ threshold, at most
// maxPerNode per item, strongest first (0 = no cap).
func similarEdges(items []graph.Evidence, threshold float64, maxPerNode int) []graph.Edge {
	type pair struct {
		i, j int
		c    float64
	}
	var pairs []pair
	for i := range items {
		for j := i + 1; j < len(items); j++ {
			if c := cosine32(items[i].Embedding, items[j].Embedding); c >= threshold {
				pairs = append(pairs, pair{i, j, c})
			}
		}
	}
	slices.SortStableFunc(pairs, func(a, b pair) int {
		switch {
		case a.c > b.c:
			return -1
		case a.c < b.c:
			return 1
		}
		return 0
	})
	deg := make([]int, len(items))
	var out []graph.Edge
	for _, p := range pairs {
		if maxPerNode > 0 && (deg[p.i] >= maxPerNode || deg[p.j] >= maxPerNode) {
			continue
		}
		deg[p.i]++
		deg[p.j]++
		from, to := items[p.i].ID, items[p.j].ID
		if from > to {
			from, to = to, from
		}
		out = append(out, graph.Edge{From: from, To: to, Kind: graph.SimilarTo, Weight: p.c})
	}
	return out
}

func cosine32(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}
