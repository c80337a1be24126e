package algebra

import "math"

// Batch operations over sets of embeddings: goal alignment, state
// embedding, stability, information gain (seed 003 "Stage 2", "Stage 3").
//
// These are plain loops without BLAS; they run in activities on full
// evidence matrices but are deterministic and goroutine-free. AttentionGA
// and GoalAlignment take only scalars and are safe in workflow code.

// The defaults below are the session parameters' defaults (config/params.go
// holds the reasons); the session's values reach ComputeIterationSignals in
// SignalInputs.Params.

// DefaultAttentionTopK is the number of best-aligned evidence items the
// evidence GA attends to (algebra.attention_k).
const DefaultAttentionTopK = 10

// DefaultAttentionTemperature is the softmax temperature of the evidence GA
// on the [0, 1] GA scale: a GA difference of 0.1 is a factor e in weight
// (algebra.attention_tau).
const DefaultAttentionTemperature = 0.1

// DefaultStateRecency is the recency exponent of StateEmbedding: the newest
// evidence weighs e² ≈ 7.4 times the oldest (algebra.state_recency).
const DefaultStateRecency = 2.0

// Default state embedding blend weights (algebra.state_weight_*),
// renormalised over the parts present.
const (
	StateEvidenceWeight = 0.5
	StateTaskWeight     = 0.3
	StateActiveWeight   = 0.2
)

// StateWeights are the blend weights of StateEmbeddingWeighted.
type StateWeights struct {
	Evidence float64 `json:"evidence"`
	Task     float64 `json:"task"`
	Active   float64 `json:"active"`
}

// DefaultStateWeights are 0.5 evidence, 0.3 task, 0.2 active tasks.
func DefaultStateWeights() StateWeights {
	return StateWeights{Evidence: StateEvidenceWeight, Task: StateTaskWeight, Active: StateActiveWeight}
}

// AttentionGA is the evidence-level goal alignment (seed 003 "Stage 2"):
// each evidence–goal cosine c_i is affine-mapped to g_i = ½(1 + c_i), the
// top-k g_i are kept (ties: lower index first), and their attention-weighted
// mean is returned, with a strength-weighted softmax:
//
//	w_i = s_i · exp((g_i − g_max)/τ)          (i in top-k)
//	GA_evidence = Σ w_i·g_i / Σ w_i
//
// s_i = max(strengths[i], 0), 1 where strengths is shorter than cosines;
// if every top-k strength is 0 the strengths are ignored. topK ≤ 0 or
// > len(cosines) attends to all; temperature ≤ 0 is hard attention (g_max).
// Empty input gives 0. The result is in [0, 1]. Safe in workflow code.
func AttentionGA(cosines, strengths []float64, topK int, temperature float64) float64 {
	n := len(cosines)
	if n == 0 {
		return 0
	}
	if topK <= 0 || topK > n {
		topK = n
	}
	idx := topIndices(cosines, topK)
	gmax := NormalizeCosine(cosines[idx[0]])
	if !(temperature > 0) {
		return gmax
	}
	strength := func(i int) float64 {
		if i < len(strengths) {
			if s := strengths[i]; s > 0 {
				return s
			}
			return 0
		}
		return 1
	}
	var num, den float64
	for _, i := range idx {
		g := NormalizeCosine(cosines[i])
		w := strength(i) * math.Exp((g-gmax)/temperature)
		num += w * g
		den += w
	}
	if !(den > 0) {
		num, den = 0, 0
		for _, i := range idx {
			g := NormalizeCosine(cosines[i])
			w := math.Exp((g - gmax) / temperature)
			num += w * g
			den += w
		}
	}
	return Clamp01(num / den)
}

// topIndices returns the indices of the k largest values in descending
// order, lower index first among equal values; NaN sorts last.
func topIndices(v []float64, k int) []int {
	idx := make([]int, 0, k)
	less := func(a, b int) bool { // a ranks after b
		va, vb := v[a], v[b]
		if math.IsNaN(va) {
			return !math.IsNaN(vb) || a > b
		}
		if math.IsNaN(vb) {
			return false
		}
		return va < vb || (va == vb && a > b)
	}
	for i := range v {
		if len(idx) == k {
			if !less(idx[k-1], i) {
				continue
			}
			idx = idx[:k-1]
		}
		// insert i keeping idx ordered best-first
		pos := len(idx)
		for pos > 0 && less(idx[pos-1], i) {
			pos--
		}
		idx = append(idx, 0)
		copy(idx[pos+1:], idx[pos:])
		idx[pos] = i
	}
	return idx
}

// GoalAlignment is the confidence-ramped goal alignment (seed 003 "Stage 2"):
//
//	GA = (1 − e^{−n}) · ga_peak,   ga_peak = evidenceGA if n > 0 else taskGA
//
// With zero evidence the confidence is 0 and GA is 0: no data yet. taskGA is
// NormalizeCosine(task, goal), evidenceGA is AttentionGA. Safe in workflow
// code.
func GoalAlignment(taskGA, evidenceGA float64, nEvidence int) float64 {
	peak := taskGA
	if nEvidence > 0 {
		peak = evidenceGA
	}
	return Clamp01(Confidence(float64(nEvidence)) * Clamp01(peak))
}

// Centroid returns the arithmetic mean of the rows (rows whose length
// differs from the first row's are skipped); nil for no rows.
func Centroid(rows [][]float64) []float64 {
	if len(rows) == 0 {
		return nil
	}
	d := len(rows[0])
	c := make([]float64, d)
	n := 0
	for _, r := range rows {
		if len(r) != d {
			continue
		}
		for j, x := range r {
			c[j] += x
		}
		n++
	}
	if n == 0 {
		return nil
	}
	inv := 1 / float64(n)
	for j := range c {
		c[j] *= inv
	}
	return c
}

// RecencyWeights returns the exponential linspace weights of n items ordered
// oldest → newest:
//
//	w_i = exp(recency·(i/(n−1) − 1)),   i = 0 … n−1   (w = 1 for n = 1)
//
// so the newest item weighs 1 and the oldest e^{−recency}.
func RecencyWeights(n int, recency float64) []float64 {
	if n <= 0 {
		return nil
	}
	w := make([]float64, n)
	if n == 1 {
		w[0] = 1
		return w
	}
	for i := range w {
		w[i] = math.Exp(recency * (float64(i)/float64(n-1) - 1))
	}
	return w
}

// StateEmbedding is the session's current focus (seed 003 "Stage 3"), a
// recency-weighted centroid blended with the task and the active tasks:
//
//	c_e = Σ w_i·ê_i / Σ w_i        (ê_i unit evidence rows, oldest → newest, w = RecencyWeights)
//	c_a = mean of the unit active-task embeddings
//	state = normalize(0.5·c_e + 0.3·t̂ + 0.2·c_a)
//
// The blend weights are renormalised over the parts present (no evidence,
// no task or no active tasks). The dimension is that of the first non-empty
// vector among task, evidence, active; vectors of another length and zero
// vectors are skipped. Returns nil when nothing is present.
func StateEmbedding(evidence [][]float64, task []float64, active [][]float64, recency float64) []float64 {
	return StateEmbeddingWeighted(evidence, task, active, recency, DefaultStateWeights())
}

// StateEmbeddingWeighted is StateEmbedding with the session's blend weights
// (algebra.state_weight_*) in place of 0.5, 0.3 and 0.2.
func StateEmbeddingWeighted(evidence [][]float64, task []float64, active [][]float64, recency float64, w StateWeights) []float64 {
	d := stateDim(evidence, task, active)
	if d == 0 {
		return nil
	}
	state := make([]float64, d)
	var wsum float64
	wsum += addEvidencePart(state, evidence, recency, w.Evidence)
	wsum += addTaskPart(state, task, w.Task)
	wsum += addActivePart(state, active, w.Active)
	if wsum == 0 {
		return nil
	}
	out := Normalize(state)
	if Dot(out, out) == 0 {
		return nil
	}
	return out
}

// stateDim is the dimension StateEmbedding documents: that of the first
// non-empty vector among task, evidence, active. Fixing it first lets each
// part skip vectors of another length instead of failing the whole state.
func stateDim(evidence [][]float64, task []float64, active [][]float64) int {
	if d := len(task); d != 0 {
		return d
	}
	for _, r := range evidence {
		if len(r) > 0 {
			return len(r)
		}
	}
	for _, r := range active {
		if len(r) > 0 {
			return len(r)
		}
	}
	return 0
}

// addEvidencePart adds the weighted recency centroid of the unit evidence rows
// to state and returns the blend weight it used (0 when no row counts), so
// the caller can renormalise over the parts present. Rows are normalised
// first so that a long passage does not outweigh a short one.
func addEvidencePart(state []float64, evidence [][]float64, recency, weight float64) float64 {
	d := len(state)
	ev := make([]float64, d)
	w := RecencyWeights(len(evidence), recency)
	var ew float64
	for i, r := range evidence {
		if len(r) != d {
			continue
		}
		n := Norm(r)
		if n == 0 {
			continue
		}
		s := w[i] / n
		for j, x := range r {
			ev[j] += s * x
		}
		ew += w[i]
	}
	if !(ew > 0) {
		return 0
	}
	for j := range ev {
		state[j] += weight * ev[j] / ew
	}
	return weight
}

// addTaskPart adds the unit task embedding to state and returns the blend
// weight it used (0 without a usable task).
func addTaskPart(state, task []float64, weight float64) float64 {
	if len(task) != len(state) {
		return 0
	}
	n := Norm(task)
	if !(n > 0) {
		return 0
	}
	for j, x := range task {
		state[j] += weight * x / n
	}
	return weight
}

// addActivePart adds the mean of the unit active-task embeddings to state and
// returns the blend weight it used (0 when none counts). An unweighted mean:
// the active tasks have no order that would make one more current.
func addActivePart(state []float64, active [][]float64, weight float64) float64 {
	d := len(state)
	act := make([]float64, d)
	na := 0
	for _, r := range active {
		if len(r) != d {
			continue
		}
		n := Norm(r)
		if n == 0 {
			continue
		}
		for j, x := range r {
			act[j] += x / n
		}
		na++
	}
	if na == 0 {
		return 0
	}
	for j := range act {
		state[j] += weight * act[j] / float64(na)
	}
	return weight
}

// Stability is the affine-mapped cosine of consecutive state embeddings
// (seed 003 "Stage 3"):
//
//	stability = ½(1 + cos(prev, curr))
//
// near 0 for anti-correlation (oscillation), 0.5 for orthogonal drift, near
// 1 for convergence. When either state is missing (nil, empty, zero, or of
// different length) it returns 0.5, the "no information" value; callers
// pair that case with a zero confidence so the tracker holds (see
// ComputeIterationSignals).
func Stability(prev, curr []float64) float64 {
	if len(prev) == 0 || len(prev) != len(curr) || Dot(prev, prev) == 0 || Dot(curr, curr) == 0 {
		return 0.5
	}
	return NormalizeCosine(Cosine(prev, curr))
}

// ResidualDistance is the normalised chord distance between the directions
// of a and b (seed 003: residual magnitude, "chord distance from evidence
// centroid to goal"):
//
//	‖â − b̂‖/2 = √((1 − cos(a, b))/2) = sin(∠(a, b)/2)
//
// 0 for the same direction, 1 for opposite directions, √½ for orthogonal
// ones. A missing or zero vector gives 1 (maximum distance).
func ResidualDistance(a, b []float64) float64 {
	if len(a) == 0 || len(a) != len(b) || Dot(a, a) == 0 || Dot(b, b) == 0 {
		return 1
	}
	return Clamp01(math.Sqrt(Clamp01((1 - Cosine(a, b)) / 2)))
}

// InformationGain is how much new direction a candidate adds to what is
// held:
//
//	IG = 1 − clamp01(max_j cos(candidate, held_j))
//
// 1 for an empty held set, 0 for a zero candidate (it carries no
// direction). Held rows of another length are skipped. Range [0, 1];
// anti-aligned held items count as unrelated (clamped at 0), not as more
// than new.
func InformationGain(candidate []float64, held [][]float64) float64 {
	cn := Norm(candidate)
	if cn == 0 {
		return 0
	}
	best := 0.0
	for _, h := range held {
		if len(h) != len(candidate) {
			continue
		}
		hn := Norm(h)
		if hn == 0 {
			continue
		}
		if c := dotUnrolled(candidate, h) / (cn * hn); c > best {
			best = c
		}
	}
	return 1 - Clamp01(best)
}

// MeanInformationGain is the mean information gain of a batch of
// candidates against the held set, scored sequentially: candidate i is
// compared with held ∪ candidates[:i], so near-duplicates inside the batch
// count as redundant (ten copies of one new paragraph are one unit of new
// information, not ten). Empty candidates give 0. Range [0, 1]. The research
// loop's temporal signal is 1 − this value.
func MeanInformationGain(candidates, held [][]float64) float64 {
	if len(candidates) == 0 {
		return 0
	}
	hu := unitRows(held, -1)
	d := -1
	if len(candidates) > 0 {
		d = len(candidates[0])
	}
	var sum float64
	for _, c := range candidates {
		cu := Normalize(c)
		if Dot(cu, cu) == 0 {
			continue // zero candidate: IG 0, and nothing to remember
		}
		best := 0.0
		for _, h := range hu {
			if len(h) != len(cu) {
				continue
			}
			if v := dotUnrolled(cu, h); v > best {
				best = v
			}
		}
		sum += 1 - Clamp01(best)
		if len(cu) == d {
			hu = append(hu, cu)
		}
	}
	return Clamp01(sum / float64(len(candidates)))
}

// unitRows returns unit copies of the non-zero rows (of length d, or any
// length when d < 0).
func unitRows(rows [][]float64, d int) [][]float64 {
	out := make([][]float64, 0, len(rows))
	for _, r := range rows {
		if d >= 0 && len(r) != d {
			continue
		}
		u := Normalize(r)
		if Dot(u, u) == 0 {
			continue
		}
		out = append(out, u)
	}
	return out
}

// dotUnrolled is Dot with four independent accumulators (faster on long
// vectors; a fixed summation order, so deterministic).
func dotUnrolled(a, b []float64) float64 {
	if len(b) < len(a) {
		a = a[:len(b)]
	}
	b = b[:len(a)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}
