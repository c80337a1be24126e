package algebra

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// Reference data produced by testdata/reference.py (numpy + networkx). The
// generator below reimplements the script's ref_uniform/ref_normal/
// ref_matrix bit for bit, so both sides decompose the same matrices.

const (
	refGamma = 0x9E3779B97F4A7C15
	refM1    = 0xBF58476D1CE4E5B9
	refM2    = 0x94D049BB133111EB
)

// refUniform is u_i = ((splitmix64(seed + (i+1)·γ) >> 11) + 0.5)·2⁻⁵³.
func refUniform(seed uint64, i int) float64 {
	z := seed + uint64(i+1)*refGamma
	z = (z ^ (z >> 30)) * refM1
	z = (z ^ (z >> 27)) * refM2
	z ^= z >> 31
	return (float64(z>>11) + 0.5) * 0x1p-53
}

// refNormals returns count Box–Muller normals (even index cos, odd sin).
func refNormals(seed uint64, count int) []float64 {
	out := make([]float64, count+1)
	for p := 0; 2*p < count; p++ {
		u1, u2 := refUniform(seed, 2*p), refUniform(seed, 2*p+1)
		r := math.Sqrt(-2 * math.Log(u1))
		s, c := math.Sincos(2 * math.Pi * u2)
		out[2*p], out[2*p+1] = r*c, r*s
	}
	return out[:count]
}

// refMatrix is a_ij = g_(i·d+j)·s_j, s_j = (j+1)^−½ (decay), 1 (flat),
// 0.7^j (geometric).
func refMatrix(n, d int, seed uint64, kind string) [][]float64 {
	g := refNormals(seed, n*d)
	rows := make([][]float64, n)
	for i := range rows {
		rows[i] = g[i*d : (i+1)*d : (i+1)*d]
		for j := range rows[i] {
			var s float64
			switch kind {
			case "decay":
				s = 1 / math.Sqrt(float64(j+1))
			case "flat":
				s = 1
			case "geometric":
				s = math.Pow(0.7, float64(j))
			default:
				panic(kind)
			}
			rows[i][j] *= s
		}
	}
	return rows
}

type refSVDCase struct {
	K     int         `json:"k"`
	Sigma []float64   `json:"sigma"`
	Basis [][]float64 `json:"basis"`
	Rows  [][]float64 `json:"rows"`
	N     int         `json:"n"`
	D     int         `json:"d"`
	Seed  uint64      `json:"seed"`
	Kind  string      `json:"kind"`
	// big cases
	BasisB64   string    `json:"basis_f32_b64"`
	SigmaTop24 []float64 `json:"sigma_top24"`
	NumpySecs  float64   `json:"numpy_svd_thin_seconds"`
}

// svd returns the case as a SharedSVD (basis from rows or base64 float32).
func (c refSVDCase) svd(t testing.TB) SharedSVD {
	s := SharedSVD{K: c.K, Sigma: c.Sigma}
	if c.BasisB64 != "" {
		raw, err := base64.StdEncoding.DecodeString(c.BasisB64)
		if err != nil {
			t.Fatal(err)
		}
		s.Dim = len(raw) / 4 / c.K
		s.Basis = make([]float64, len(raw)/4)
		for i := range s.Basis {
			s.Basis[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])))
		}
		return s
	}
	s.Dim = len(c.Basis[0])
	for _, r := range c.Basis {
		s.Basis = append(s.Basis, r...)
	}
	return s
}

type refPPRCase struct {
	N          int         `json:"n"`
	Edges      [][]float64 `json:"edges"`
	Seeds      []int       `json:"seeds"`
	Alpha      float64     `json:"alpha"`
	Undirected bool        `json:"undirected"`
	PPR        []float64   `json:"ppr"`
}

type reference struct {
	Numpy        string     `json:"numpy"`
	Networkx     string     `json:"networkx"`
	UniformCheck []float64  `json:"uniform_check"`
	NormalCheck  []float64  `json:"normal_check"`
	SVDSmall     refSVDCase `json:"svd_small"`
	SVDMedium    refSVDCase `json:"svd_medium"`
	SVDDecay     refSVDCase `json:"svd_decay"`
	SVDFlat      refSVDCase `json:"svd_flat"`
	PPR          []refPPRCase
	Cosine       struct {
		Vectors [][]float64 `json:"vectors"`
		Matrix  [][]float64 `json:"matrix"`
	} `json:"cosine"`
	Warp struct {
		E, D, G     []float64
		Theta       float64   `json:"theta"`
		Warp        []float64 `json:"warp"`
		CosWarpGoal float64   `json:"cos_warp_goal"`
		CosEG       float64   `json:"cos_eg"`
		CosED       float64   `json:"cos_ed"`
		CosDG       float64   `json:"cos_dg"`
	} `json:"warp"`
}

var loadRef = sync.OnceValues(func() (*reference, error) {
	b, err := os.ReadFile(filepath.Join("testdata", "reference.json"))
	if err != nil {
		return nil, err
	}
	var r reference
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, err
	}
	return &r, nil
})

func mustRef(t testing.TB) *reference {
	t.Helper()
	r, err := loadRef()
	if err != nil {
		t.Fatalf("reference data: %v", err)
	}
	return r
}

func TestReferenceGenerator(t *testing.T) {
	r := mustRef(t)
	for i, want := range r.UniformCheck {
		if got := refUniform(7, i); got != want {
			t.Errorf("refUniform(7,%d) = %v, want %v", i, got, want)
		}
	}
	got := refNormals(7, len(r.NormalCheck))
	for i, want := range r.NormalCheck {
		if math.Abs(got[i]-want) > 1e-15*math.Max(1, math.Abs(want)) {
			t.Errorf("refNormals(7)[%d] = %v, want %v", i, got[i], want)
		}
	}
}

func envSet(name string) bool { return os.Getenv(name) != "" }
