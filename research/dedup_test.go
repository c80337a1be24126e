package research

import (
	"math"
	"strings"
	"testing"

	"github.com/lethe-research/lethe/graph"
)

func TestQueryKey(t *testing.T) {
	k := QueryKey("t3", "web_search", map[string]string{"query": "rust <async> & tokio", "lang": "en"})
	if want := `t3:web_search:{"lang":"en","query":"rust <async> & tokio"}`; k != want {
		t.Fatalf("key %s want %s", k, want)
	}
	if k2 := QueryKey("t3", "web_search", map[string]string{"lang": "en", "query": "rust <async> & tokio"}); k2 != k {
		t.Fatal("key depends on map order")
	}
	if k := QueryKey("root", "web_search", nil); k != "root:web_search:{}" {
		t.Fatal(k)
	}
	k = QueryKey("a:b%", "web_search", map[string]string{"q": "x:y"})
	if k != `a%3Ab%25:web_search:{"q":"x:y"}` || TaskOfKey(k) != "a:b%" {
		t.Fatalf("escaped key %s task %s", k, TaskOfKey(k))
	}
}

func TestIsDuplicateQuery(t *testing.T) {
	e := func(v ...float32) []float32 { return v }
	kA := QueryKey("t1", "web_search", map[string]string{"query": "solar panel efficiency"})
	history := []QueryRecord{
		{Key: kA, Task: "t1", Query: "solar panel efficiency", Embedding: e(1, 0, 0)},
		{Key: QueryKey("t2", "web_search", map[string]string{"query": "wind turbines"}), Query: "wind turbines", Embedding: e(0, 1, 0)},
	}
	tests := []struct {
		name      string
		key       string
		emb       []float32
		threshold float64
		dup       bool
		reason    string
	}{
		{"exact key", kA, e(0, 0, 1), 0.92, true, "exact duplicate"},
		{"semantic same task", QueryKey("t1", "web_search", map[string]string{"query": "efficiency of solar panels"}), e(0.99, 0.1, 0), 0.92, true, `cosine 0.995 >= 0.92 with earlier query "solar panel efficiency" of task t1`},
		{"semantic other task ignored", QueryKey("t1", "web_search", map[string]string{"query": "wind turbine output"}), e(0, 1, 0), 0.92, false, ""},
		{"task from key when record has none", QueryKey("t2", "web_search", map[string]string{"query": "turbines of wind"}), e(0, 1, 0.01), 0.92, true, "task t2"},
		{"below threshold", QueryKey("t1", "web_search", map[string]string{"query": "solar tariffs"}), e(0.8, 0.6, 0), 0.92, false, ""},
		{"exactly at threshold", QueryKey("t1", "web_search", map[string]string{"query": "q"}), e(0.92, float32(math.Sqrt(1-0.92*0.92)), 0), 0.92, true, "semantic"},
		{"default threshold for zero", QueryKey("t1", "web_search", map[string]string{"query": "q2"}), e(0.95, 0.31, 0), 0, true, ">= 0.92"},
		{"threshold above one disables", QueryKey("t1", "web_search", map[string]string{"query": "q3"}), e(1, 0, 0), 1.01, false, ""},
		{"no embedding", QueryKey("t1", "web_search", map[string]string{"query": "q4"}), nil, 0.92, false, ""},
		{"dimension mismatch skipped", QueryKey("t1", "web_search", map[string]string{"query": "q5"}), e(1, 0), 0.92, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dup, reason := IsDuplicateQuery(tc.key, tc.emb, history, tc.threshold)
			if dup != tc.dup || !strings.Contains(reason, tc.reason) || (!dup && reason != "") {
				t.Fatalf("dup=%v reason=%q, want %v containing %q", dup, reason, tc.dup, tc.reason)
			}
		})
	}
	if dup, _ := IsDuplicateQuery(kA, e(1, 0, 0), nil, 0.92); dup {
		t.Fatal("empty history")
	}
}

func TestStrength(t *testing.T) {
	kinds := []graph.EvidenceKind{graph.KindHTML, graph.KindPDF, graph.KindText, graph.KindTranscript, graph.KindLLM, "other"}
	vals := []float64{-5, -1, -0.3, 0, 0.2, 0.5, 0.9, 1, 3, math.NaN(), math.Inf(1), math.Inf(-1)}
	for _, k := range kinds {
		for _, g := range vals {
			for _, ig := range vals {
				s := Strength(g, ig, k)
				if math.IsNaN(s) || s < 0 || s > 1 {
					t.Fatalf("Strength(%v,%v,%s) = %v", g, ig, k, s)
				}
			}
		}
	}
	if s := Strength(1, 1, graph.KindPDF); s != 1 {
		t.Fatalf("max %v", s)
	}
	if s := Strength(-1, 0, graph.KindHTML); s != 0 {
		t.Fatalf("min %v", s)
	}
	// Monotone in both inputs; the goal weighs more than the gain.
	if !(Strength(0.8, 0.5, graph.KindHTML) > Strength(0.6, 0.5, graph.KindHTML)) ||
		!(Strength(0.6, 0.7, graph.KindHTML) > Strength(0.6, 0.5, graph.KindHTML)) {
		t.Fatal("not monotone")
	}
	// Documented blend.
	want := (0.6*0.5*(1+0.6) + 0.4*0.5) * 0.95
	if s := Strength(0.6, 0.5, graph.KindHTML); math.Abs(s-want) > 1e-12 {
		t.Fatalf("blend %v want %v", s, want)
	}
	// Kind prior is small and ordered.
	if !(Strength(0.5, 0.5, graph.KindPDF) > Strength(0.5, 0.5, graph.KindTranscript) &&
		Strength(0.5, 0.5, graph.KindTranscript) > Strength(0.5, 0.5, graph.KindLLM)) {
		t.Fatal("kind prior order")
	}
}
