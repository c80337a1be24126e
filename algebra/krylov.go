package algebra

import (
	"math"
	"math/rand/v2"
	"sort"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// krylov holds the state of one block-Krylov Rayleigh–Ritz run of
// ComputeSVD: the centred float32 matrix, the orthonormal Krylov basis Q
// (float64 master copies) and the columns of C = A·Q.
type krylov struct {
	n, d  int
	a     []float32   // n×d row-major, centred
	q     [][]float64 // orthonormal Krylov vectors, length d
	c     [][]float64 // c[j] = A·q[j], length n
	seed  uint64
	rng   *rand.Rand
	b32   blas.Float32
	b64   blas.Float64
	chunk int // rows per float32 accumulation chunk of AᵀY
}

func newKrylov(a []float32, n, d int, seed uint64) *krylov {
	return &krylov{n: n, d: d, a: a, seed: seed, b32: blas32.Implementation(), b64: blas64.Implementation(), chunk: 64}
}

// gaussian returns the next Gaussian start vector of the run's fixed-seed
// stream.
func (k *krylov) gaussian() []float64 {
	if k.rng == nil {
		k.rng = rand.New(rand.NewPCG(k.seed, seedStream))
	}
	return gaussianVec(k.rng, k.d)
}

// run builds the Krylov space from the start block with `depth`
// applications of AᵀA and returns the top K Ritz values and vectors.
func (k *krylov) run(start [][]float64, depth, K int) ([]float64, []float64) {
	block := k.orthonormalize(start)
	for j := 0; j <= depth && len(block) > 0; j++ {
		y, z := k.pass(block, j < depth)
		k.c = append(k.c, y...)
		if j < depth {
			block = k.orthonormalize(z)
		}
	}
	return k.rayleighRitz(K)
}

// orthonormalize orthogonalises the vectors against the accepted Krylov
// basis and each other (classical Gram–Schmidt, twice), normalises them,
// appends them to k.q and returns them. A vector whose norm collapses below
// 1e−10 of its original norm (the Krylov space is exhausted: rank-deficient
// input) is replaced by a fresh Gaussian vector, at most three times, so
// the basis always grows by full blocks while room remains.
func (k *krylov) orthonormalize(vs [][]float64) [][]float64 {
	out := make([][]float64, 0, len(vs))
	for _, v := range vs {
		if len(k.q) >= k.d {
			break
		}
		v = append([]float64(nil), v...)
		for try := 0; ; try++ {
			before := k.b64.Dnrm2(k.d, v, 1)
			for pass := 0; pass < 2; pass++ {
				coef := make([]float64, len(k.q))
				for i, u := range k.q {
					coef[i] = k.b64.Ddot(k.d, u, 1, v, 1)
				}
				for i, u := range k.q {
					k.b64.Daxpy(k.d, -coef[i], u, 1, v, 1)
				}
			}
			after := k.b64.Dnrm2(k.d, v, 1)
			if after > 1e-10*before && after > 0 && !math.IsNaN(after) {
				k.b64.Dscal(k.d, 1/after, v, 1)
				break
			}
			if try == 3 {
				v = nil
				break
			}
			v = k.gaussian()
		}
		if v == nil {
			continue
		}
		k.q = append(k.q, v)
		out = append(out, v)
	}
	return out
}

// pass computes Y = A·W (as columns of length n) and, when wantZ, the
// columns of Z = Aᵀ·Y, in one pass over the rows of A.
func (k *krylov) pass(w [][]float64, wantZ bool) (y, z [][]float64) {
	n, d, l := k.n, k.d, len(w)
	w32 := make([][]float32, l)
	for j, v := range w {
		w32[j] = ToFloat32(v)
	}
	y = make([][]float64, l)
	for j := range y {
		y[j] = make([]float64, n)
	}
	var acc [][]float32
	if wantZ {
		z = make([][]float64, l)
		acc = make([][]float32, l)
		for j := range z {
			z[j] = make([]float64, d)
			acc[j] = make([]float32, d)
		}
	}
	for i := 0; i < n; i++ {
		row := k.a[i*d : (i+1)*d]
		for j := 0; j < l; j++ {
			yij := k.b32.Sdot(d, row, 1, w32[j], 1)
			y[j][i] = float64(yij)
			if wantZ {
				k.b32.Saxpy(d, yij, row, 1, acc[j], 1)
			}
		}
		if wantZ && ((i+1)%k.chunk == 0 || i == n-1) {
			for j := 0; j < l; j++ {
				zj, aj := z[j], acc[j]
				for p, x := range aj {
					zj[p] += float64(x)
					aj[p] = 0
				}
			}
		}
	}
	return y, z
}

// rayleighRitz returns the top K singular values and right singular
// vectors of A restricted to span(Q): G = CᵀC = E Λ Eᵀ, σ = √λ, V = Q E.
func (k *krylov) rayleighRitz(K int) ([]float64, []float64) {
	m := len(k.q)
	g := mat.NewSymDense(m, nil)
	for i := 0; i < m; i++ {
		for j := i; j < m; j++ {
			g.SetSym(i, j, k.b64.Ddot(k.n, k.c[i], 1, k.c[j], 1))
		}
	}
	var eig mat.EigenSym
	sigma := make([]float64, K)
	basis := make([]float64, K*k.d)
	if !eig.Factorize(g, true) {
		return sigma, basis
	}
	vals := eig.Values(nil)
	var e mat.Dense
	eig.VectorsTo(&e)
	order := make([]int, m)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return vals[order[a]] > vals[order[b]] })
	for r := 0; r < K && r < m; r++ {
		col := order[r]
		sigma[r] = math.Sqrt(math.Max(vals[col], 0))
		row := basis[r*k.d : (r+1)*k.d]
		for i := 0; i < m; i++ {
			k.b64.Daxpy(k.d, e.At(i, col), k.q[i], 1, row, 1)
		}
		// re-normalise against rounding
		if nrm := k.b64.Dnrm2(k.d, row, 1); nrm > 0 {
			k.b64.Dscal(k.d, 1/nrm, row, 1)
		}
		canonicalSign(row)
	}
	return sigma, basis
}
