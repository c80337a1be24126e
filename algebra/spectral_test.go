package algebra

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"
)

// maxRelSigma is max_i |σ_i − ref_i|/ref_i over the first k values.
func maxRelSigma(got, ref []float64, k int) float64 {
	m := 0.0
	for i := 0; i < k; i++ {
		m = math.Max(m, math.Abs(got[i]-ref[i])/ref[i])
	}
	return m
}

// orthoErr is max |V Vᵀ − I| over the basis rows.
func orthoErr(s SharedSVD) float64 {
	m := 0.0
	for i := 0; i < s.K; i++ {
		for j := 0; j < s.K; j++ {
			want := 0.0
			if i == j {
				want = 1
			}
			m = math.Max(m, math.Abs(Dot(s.Row(i), s.Row(j))-want))
		}
	}
	return m
}

func TestEmptySVDIsAlgebraicZero(t *testing.T) {
	e := EmptySVD(8)
	v := []float64{1, 2, 3, 4, 5, 6, 7, 8}
	if got := e.Coverage(v); got != 0 {
		t.Errorf("Coverage = %v, want 0", got)
	}
	if got := e.Eigengap(); got != 0 {
		t.Errorf("Eigengap = %v, want 0", got)
	}
	full := ComputeSVD(refMatrix(20, 8, 9, "flat"), 3, 3, nil, 1)
	for _, pair := range [][2]SharedSVD{{e, e}, {e, full}, {full, e}} {
		if got := ChordalDistance(pair[0], pair[1]); got != 1 {
			t.Errorf("ChordalDistance with EmptySVD = %v, want 1", got)
		}
	}
	g := e.GapDirection(v)
	if math.Abs(Cosine(g, v)-1) > 1e-12 || math.Abs(Norm(g)-1) > 1e-12 {
		t.Errorf("GapDirection of EmptySVD = %v, want the normalised goal", g)
	}
}

func TestComputeSVDEmptyCases(t *testing.T) {
	rows := refMatrix(5, 4, 3, "flat")
	tests := []struct {
		name    string
		rows    [][]float64
		k, minR int
	}{
		{"no rows", nil, 3, 1},
		{"below minRows", rows, 3, 6},
		{"one row", rows[:1], 3, 1},
		{"k=0", rows, 0, 1},
	}
	for _, tc := range tests {
		s := ComputeSVD(tc.rows, tc.k, tc.minR, nil, 1)
		if s.K != 0 || s.Coverage(rows[0]) != 0 || s.Eigengap() != 0 {
			t.Errorf("%s: got K=%d, want EmptySVD", tc.name, s.K)
		}
	}
	// rank: n rows centred have rank ≤ n−1
	s := ComputeSVD(rows[:3], 16, 1, nil, 1)
	if s.K != 2 || s.Dim != 4 || s.Rows != 3 {
		t.Errorf("K, Dim, Rows = %d, %d, %d, want 2, 4, 3", s.K, s.Dim, s.Rows)
	}
}

func TestChordalDistance(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	d, k := 12, 3
	rows := make([][]float64, 30)
	for i := range rows {
		rows[i] = gaussianVec(r, d)
	}
	a := ComputeSVD(rows, k, 1, nil, 1)
	if got := ChordalDistance(a, a); got != 0 {
		t.Errorf("same basis: %v, want exactly 0", got)
	}
	// Same subspace, rotated basis.
	rot := SharedSVD{K: k, Dim: d, Basis: make([]float64, k*d)}
	c, s := math.Cos(0.7), math.Sin(0.7)
	for j := 0; j < d; j++ {
		rot.Basis[0*d+j] = c*a.Row(0)[j] + s*a.Row(1)[j]
		rot.Basis[1*d+j] = -s*a.Row(0)[j] + c*a.Row(1)[j]
		rot.Basis[2*d+j] = -a.Row(2)[j]
	}
	if got := ChordalDistance(a, rot); got > 1e-7 {
		t.Errorf("same subspace, rotated basis: %v, want ≈0", got)
	}
	// Orthogonal subspaces: coordinate axes.
	e := func(idx ...int) SharedSVD {
		s := SharedSVD{K: len(idx), Dim: d, Basis: make([]float64, len(idx)*d)}
		for r, i := range idx {
			s.Basis[r*d+i] = 1
		}
		return s
	}
	tests := []struct {
		a, b SharedSVD
		want float64
	}{
		{e(0, 1, 2), e(3, 4, 5), 1},
		{e(0, 1, 2), e(0, 1, 2), 0},
		{e(0, 1, 2), e(2, 1, 0), 0},
		{e(0, 1, 2), e(0, 1, 5), math.Sqrt(1.0 / 3)},
		{e(0, 1), e(0, 1, 5), 0}, // smaller subspace contained in the larger
		{e(0, 1), e(1, 7), math.Sqrt(0.5)},
	}
	for i, tc := range tests {
		if got := ChordalDistance(tc.a, tc.b); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("case %d: %v, want %v", i, got, tc.want)
		}
		if got := ChordalDistance(tc.b, tc.a); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("case %d (swapped): %v, want %v", i, got, tc.want)
		}
	}
	// dimension mismatch is maximal distance
	if got := ChordalDistance(e(0), SharedSVD{K: 1, Dim: 3, Basis: []float64{1, 0, 0}}); got != 1 {
		t.Errorf("dimension mismatch: %v, want 1", got)
	}
}

func TestCoverageEigengapGap(t *testing.T) {
	d := 5
	s := SharedSVD{K: 2, Dim: d, Sigma: []float64{4, 1}, Basis: []float64{
		1, 0, 0, 0, 0,
		0, 1, 0, 0, 0,
	}}
	tests := []struct {
		v    []float64
		want float64
	}{
		{[]float64{1, 0, 0, 0, 0}, 1},
		{[]float64{0, 0, 3, 0, 0}, 0},
		{[]float64{1, 1, 1, 1, 0}, 0.5},
		{[]float64{0, 0, 0, 0, 0}, 0},
		{[]float64{1, 2}, 0}, // dimension mismatch
	}
	for _, tc := range tests {
		if got := s.Coverage(tc.v); math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("Coverage(%v) = %v, want %v", tc.v, got, tc.want)
		}
	}
	if got := s.Eigengap(); got != 0.75 {
		t.Errorf("Eigengap = %v, want 0.75", got)
	}
	one := SharedSVD{K: 1, Dim: d, Sigma: []float64{2}, Basis: []float64{1, 0, 0, 0, 0}}
	if got := one.Eigengap(); got != 1 {
		t.Errorf("Eigengap K=1 = %v, want 1", got)
	}
	gap := s.GapDirection([]float64{1, 1, 1, 1, 0})
	want := []float64{0, 0, 1 / math.Sqrt2, 1 / math.Sqrt2, 0}
	for i := range want {
		if math.Abs(gap[i]-want[i]) > 1e-15 {
			t.Fatalf("GapDirection = %v, want %v", gap, want)
		}
	}
	// fully covered goal: the goal itself
	gap = s.GapDirection([]float64{3, 4, 0, 0, 0})
	if math.Abs(gap[0]-0.6) > 1e-15 || math.Abs(gap[1]-0.8) > 1e-15 {
		t.Errorf("GapDirection(covered) = %v, want the normalised goal", gap)
	}
}

func TestGapDirectionOrthogonalToBasis(t *testing.T) {
	rows := refMatrix(60, 10, 4, "decay")
	s := ComputeSVD(rows, 4, 1, nil, 1)
	goal := refNormals(5, 10)
	gap := s.GapDirection(goal)
	if math.Abs(Norm(gap)-1) > 1e-12 {
		t.Errorf("|gap| = %v", Norm(gap))
	}
	for r := 0; r < s.K; r++ {
		if c := Dot(gap, s.Row(r)); math.Abs(c) > 1e-12 {
			t.Errorf("gap·v_%d = %v, want 0", r, c)
		}
	}
	// The goal less its residual is its reconstruction: inside the affine
	// hull of the evidence, fully covered.
	r := s.residual(goal)
	if math.Abs(Norm(r)*gap[0]-r[0]) > 1e-12 {
		t.Errorf("gap is not the normalised residual")
	}
	rec := make([]float64, len(goal))
	for i := range goal {
		rec[i] = goal[i] - r[i]
	}
	if c := s.Coverage(rec); math.Abs(c-1) > 1e-12 {
		t.Errorf("Coverage(reconstruction) = %v, want 1", c)
	}
	if c, want := s.Coverage(goal), 1-Dot(r, r)/Dot(goal, goal); math.Abs(c-want) > 1e-12 {
		t.Errorf("Coverage(goal) = %v, want 1 − ‖r‖²/‖g‖² = %v", c, want)
	}
}

// TestCoverageWithMean: the reconstruction adds the evidence mean back, so
// what every evidence row shares counts as covered (the raw projection on
// the centred basis called it uncovered).
func TestCoverageWithMean(t *testing.T) {
	s := SharedSVD{K: 2, Dim: 5, Sigma: []float64{4, 1}, Basis: []float64{
		1, 0, 0, 0, 0,
		0, 1, 0, 0, 0,
	}, Mean: []float64{0, 0, 1, 0, 0}}
	raw := s
	raw.Mean = nil
	tests := []struct {
		v         []float64
		want, raw float64
	}{
		{[]float64{0, 0, 1, 0, 0}, 1, 0},    // the mean itself
		{[]float64{1, 0, 1, 0, 0}, 1, 0.5},  // mean + a basis direction
		{[]float64{0, 0, 2, 0, 0}, 0.75, 0}, // twice the mean: residual (0,0,1,0,0)
		{[]float64{0, 0, 0, 1, 0}, 0, 0},    // residual (0,0,−1,1,0): 2 > 1, clamped
		{[]float64{1, 1, 0, 0, 0}, 0.5, 1},  // residual −μ: ‖μ‖²/‖v‖² = ½
		{[]float64{0, 0, 0, 0, 0}, 0, 0},    // zero vector
		{[]float64{1, 2}, 0, 0},             // dimension mismatch
	}
	for _, tc := range tests {
		if got := s.Coverage(tc.v); math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("Coverage(%v) = %v, want %v", tc.v, got, tc.want)
		}
		if got := raw.Coverage(tc.v); math.Abs(got-tc.raw) > 1e-15 {
			t.Errorf("raw Coverage(%v) = %v, want %v", tc.v, got, tc.raw)
		}
	}
	gap := s.GapDirection([]float64{0, 0, 2, 0, 0})
	for i, w := range []float64{0, 0, 1, 0, 0} {
		if math.Abs(gap[i]-w) > 1e-15 {
			t.Fatalf("GapDirection with mean = %v, want the residual direction (0,0,1,0,0)", gap)
		}
	}
	// Fully reconstructed: the goal itself.
	gap = s.GapDirection([]float64{3, 0, 1, 0, 0})
	if math.Abs(Norm(gap)-1) > 1e-15 || math.Abs(gap[0]-3/math.Sqrt(10)) > 1e-15 {
		t.Errorf("GapDirection(covered) = %v, want the normalised goal", gap)
	}
}

// TestSVDAgainstNumpySmall: the exact path (min(n,d) ≤ 6k) against
// numpy.linalg.svd, to 1e-6 (it agrees to ~1e-14).
func TestSVDAgainstNumpySmall(t *testing.T) {
	ref := mustRef(t).SVDSmall
	s := ComputeSVD(ref.Rows, ref.K, 1, nil, 1)
	want := ref.svd(t)
	if s.K != ref.K {
		t.Fatalf("K = %d, want %d", s.K, ref.K)
	}
	for i := range want.Sigma {
		if math.Abs(s.Sigma[i]-want.Sigma[i]) > 1e-6 {
			t.Errorf("σ_%d = %.12g, numpy %.12g", i, s.Sigma[i], want.Sigma[i])
		}
	}
	if d := ChordalDistance(s, want); d > 1e-6 {
		t.Errorf("chordal distance to numpy subspace = %g, want ≤ 1e-6", d)
	}
	// singular vectors individually (up to sign)
	for r := 0; r < s.K; r++ {
		if c := math.Abs(Dot(s.Row(r), want.Row(r))); math.Abs(c-1) > 1e-6 {
			t.Errorf("|v_%d·v_numpy| = %v", r, c)
		}
	}
	mean := Centroid(ref.Rows)
	for j := range mean {
		if math.Abs(s.Mean[j]-mean[j]) > 1e-15 {
			t.Fatalf("Mean = %v, want %v", s.Mean, mean)
		}
	}
}

// TestSVDAgainstNumpyMedium: the block-Krylov path (300×200, k = 8,
// geometric spectrum) against numpy: the cold start to 1e-6; a warm start
// (one Krylov step from the basis of the first 280 rows) tracks to its own,
// looser, one-step accuracy.
func TestSVDAgainstNumpyMedium(t *testing.T) {
	ref := mustRef(t).SVDMedium
	rows := refMatrix(ref.N, ref.D, ref.Seed, ref.Kind)
	want := ref.svd(t)
	prev := ComputeSVD(rows[:ref.N-20], ref.K, 1, nil, 5)
	tests := []struct {
		name          string
		warm          *SharedSVD
		tolSig, tolCh float64
	}{
		{"cold", nil, 1e-6, 1e-6},
		{"warm", &prev, 1e-4, 1e-3},
	}
	for _, tc := range tests {
		s := ComputeSVD(rows, ref.K, 1, tc.warm, 1)
		rel := maxRelSigma(s.Sigma, want.Sigma, ref.K)
		d := ChordalDistance(s, want)
		t.Logf("%s: max rel σ error %.2e, chordal distance %.2e", tc.name, rel, d)
		if rel > tc.tolSig {
			t.Errorf("%s: max relative σ error %g > %g", tc.name, rel, tc.tolSig)
		}
		if d > tc.tolCh {
			t.Errorf("%s: chordal distance to numpy %g > %g", tc.name, d, tc.tolCh)
		}
		if e := orthoErr(s); e > 1e-12 {
			t.Errorf("%s: basis orthonormality error %g", tc.name, e)
		}
	}
}

var bigOnce = struct {
	sync.Mutex
	m map[string][][]float64
}{m: map[string][][]float64{}}

// bigMatrix returns the 2,000×1,024 reference matrix of that kind (cached
// across tests and benchmarks of one run).
func bigMatrix(t testing.TB, kind string) ([][]float64, refSVDCase) {
	r := mustRef(t)
	c := r.SVDDecay
	if kind == "flat" {
		c = r.SVDFlat
	}
	bigOnce.Lock()
	defer bigOnce.Unlock()
	if m, ok := bigOnce.m[kind]; ok {
		return m, c
	}
	m := refMatrix(c.N, c.D, c.Seed, c.Kind)
	bigOnce.m[kind] = m
	return m, c
}

// TestSVDAccuracyDecay: 2,000×1,024, σ_i ∝ i^−½ with sampling noise, k = 16:
// top-k σ within 1% and chordal distance ≤ 0.05 against numpy's exact SVD,
// cold and warm (from the cold basis of the first 1,950 rows).
func TestSVDAccuracyDecay(t *testing.T) {
	rows, ref := bigMatrix(t, "decay")
	want := ref.svd(t)
	cold := ComputeSVD(rows, ref.K, ref.K, nil, 42)
	prev := ComputeSVD(rows[:len(rows)-50], ref.K, ref.K, nil, 42)
	warm := ComputeSVD(rows, ref.K, ref.K, &prev, 42)
	for _, c := range []struct {
		name string
		s    SharedSVD
	}{{"cold", cold}, {"warm", warm}} {
		rel := maxRelSigma(c.s.Sigma, want.Sigma, ref.K)
		dist := ChordalDistance(c.s, want)
		t.Logf("decay %s: max rel σ error %.2e, chordal distance %.4f", c.name, rel, dist)
		if rel > 0.01 {
			t.Errorf("%s: max relative σ error %.4f > 1%%", c.name, rel)
		}
		if dist > 0.05 {
			t.Errorf("%s: chordal distance %.4f > 0.05", c.name, dist)
		}
		if e := orthoErr(c.s); e > 1e-12 {
			t.Errorf("%s: basis orthonormality error %g", c.name, e)
		}
	}
	// No jitter: two warm runs from the same basis on the same matrix give
	// the same bits, hence distance exactly 0.
	again := ComputeSVD(rows, ref.K, ref.K, &prev, 42)
	if d := ChordalDistance(warm, again); d != 0 {
		t.Errorf("two warm runs: chordal distance %g, want exactly 0", d)
	}
	if !sameFloats(warm.Basis, again.Basis) || !sameFloats(warm.Sigma, again.Sigma) {
		t.Error("two warm runs differ in bits")
	}
	// Re-fitting an unchanged matrix from its own basis only refines it.
	refit := ComputeSVD(rows, ref.K, ref.K, &cold, 42)
	t.Logf("decay refit from own basis: step %.2e, to exact %.2e", ChordalDistance(refit, cold), ChordalDistance(refit, want))
	if d := ChordalDistance(refit, cold); d > 0.01 {
		t.Errorf("refit on the same matrix moved the subspace by %.4f", d)
	}
}

// TestSVDAccuracyFlat reports the same figures on a flat spectrum, where
// the top-16 subspace is ill-determined (σ_16/σ_17 ≈ 1.002) and randomized
// methods struggle; only σ is held to a (looser) bound.
func TestSVDAccuracyFlat(t *testing.T) {
	rows, ref := bigMatrix(t, "flat")
	want := ref.svd(t)
	cold := ComputeSVD(rows, ref.K, ref.K, nil, 42)
	prev := ComputeSVD(rows[:len(rows)-50], ref.K, ref.K, nil, 42)
	warm := ComputeSVD(rows, ref.K, ref.K, &prev, 42)
	for _, c := range []struct {
		name string
		s    SharedSVD
	}{{"cold", cold}, {"warm", warm}} {
		rel := maxRelSigma(c.s.Sigma, want.Sigma, ref.K)
		dist := ChordalDistance(c.s, want)
		t.Logf("flat %s: max rel σ error %.2e, chordal distance %.4f", c.name, rel, dist)
		if rel > 0.05 {
			t.Errorf("%s: max relative σ error %.4f > 5%%", c.name, rel)
		}
	}
}

func TestSVDDeterministic(t *testing.T) {
	rows := refMatrix(400, 128, 8, "decay")
	a := ComputeSVD(rows, 8, 1, nil, 7)
	b := ComputeSVD(rows, 8, 1, nil, 7)
	if !sameFloats(a.Basis, b.Basis) || !sameFloats(a.Sigma, b.Sigma) {
		t.Error("same input and seed gave different bits")
	}
	c := ComputeSVD(rows, 8, 1, nil, 8)
	if sameFloats(a.Basis, c.Basis) {
		t.Log("different seeds gave identical bases (possible but unlikely)")
	}
	if d := ChordalDistance(a, c); d > 0.05 {
		t.Errorf("seeds 7 and 8 disagree by %.4f", d)
	}
}

func BenchmarkSVDCold(b *testing.B) {
	rows, ref := bigMatrix(b, "decay")
	b.ReportAllocs()
	for b.Loop() {
		ComputeSVD(rows, ref.K, ref.K, nil, 42)
	}
}

func BenchmarkSVDWarm(b *testing.B) {
	rows, ref := bigMatrix(b, "decay")
	prev := ComputeSVD(rows[:len(rows)-50], ref.K, ref.K, nil, 42)
	b.ReportAllocs()
	for b.Loop() {
		ComputeSVD(rows, ref.K, ref.K, &prev, 42)
	}
}

// BenchmarkSVDGonumThin is the baseline: gonum's full thin SVD of the same
// centred matrix (≈15 s or more per op on 2 cores; run with -benchtime=1x).
func BenchmarkSVDGonumThin(b *testing.B) {
	rows, _ := bigMatrix(b, "decay")
	mean := columnMean(rows, len(rows[0]))
	a := mat.NewDense(len(rows), len(mean), nil)
	for i, r := range rows {
		for j, x := range r {
			a.Set(i, j, x-mean[j])
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		var svd mat.SVD
		if !svd.Factorize(a, mat.SVDThin) {
			b.Fatal("factorize failed")
		}
	}
}

// TestSVDSpeedup checks the ≥30× ratio against gonum's full thin SVD. It
// takes ~20 s, so it only runs with LETHE_SVD_SPEEDUP=1 (the benchmark table
// in docs/algebra.md records the numbers).
func TestSVDSpeedup(t *testing.T) {
	if testing.Short() || !envSet("LETHE_SVD_SPEEDUP") {
		t.Skip("set LETHE_SVD_SPEEDUP=1 to run (≈20 s)")
	}
	rows, ref := bigMatrix(t, "decay")
	t0 := time.Now()
	const reps = 5
	for range reps {
		ComputeSVD(rows, ref.K, ref.K, nil, 42)
	}
	cold := time.Since(t0) / reps
	mean := columnMean(rows, len(rows[0]))
	a := mat.NewDense(len(rows), len(mean), nil)
	for i, r := range rows {
		for j, x := range r {
			a.Set(i, j, x-mean[j])
		}
	}
	t0 = time.Now()
	var svd mat.SVD
	svd.Factorize(a, mat.SVDThin)
	full := time.Since(t0)
	t.Logf("cold %v, gonum thin %v, ratio %.0f×", cold, full, float64(full)/float64(cold))
	if full < 30*cold {
		t.Errorf("speedup %.1f× < 30×", float64(full)/float64(cold))
	}
}

// TestSVDRankDeficient: a rank-5 matrix on the Krylov path (the Krylov
// space exhausts; Gaussian refills keep the basis orthonormal).
func TestSVDRankDeficient(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	d, rank := 200, 5
	dirs := make([][]float64, rank)
	for i := range dirs {
		dirs[i] = gaussianVec(r, d)
	}
	rows := make([][]float64, 500)
	for i := range rows {
		row := make([]float64, d)
		for _, v := range dirs {
			c := r.NormFloat64()
			for j := range row {
				row[j] += c * v[j]
			}
		}
		rows[i] = row
	}
	s := ComputeSVD(rows, 8, 1, nil, 3)
	if s.K != 8 {
		t.Fatalf("K = %d", s.K)
	}
	if e := orthoErr(s); e > 1e-12 {
		t.Errorf("orthonormality error %g", e)
	}
	for i, v := range s.Sigma {
		if math.IsNaN(v) || (i >= rank && v > 1e-4*s.Sigma[0]) || (i < rank && v < 1e-2*s.Sigma[0]) {
			t.Errorf("σ = %v", s.Sigma)
			break
		}
	}
	// the top-5 subspace spans the data directions
	top := SharedSVD{K: rank, Dim: d, Basis: s.Basis[:rank*d]}
	for _, v := range dirs {
		if c := top.Coverage(v); c < 1-1e-6 { // centring keeps the row space
			t.Errorf("coverage of a data direction = %v", c)
		}
	}
}
