package activities

import (
	"encoding/json"
	"testing"

	"github.com/lethe-research/lethe/algebra"
	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/research"
)

// The parameters' defaults (config/params.go) are the constants the
// packages used before the parameters existed, so a session decides as
// before unless its config says otherwise.
func TestParamDefaultsAreThePackageConstants(t *testing.T) {
	c := config.Defaults()
	if got := SimilarOf(c.Algebra).Refine; got == nil || *got != graph.DefaultRefinement() {
		t.Errorf("refinement default %+v, graph's %+v", got, graph.DefaultRefinement())
	}
	ip := IngestParamsOf(c)
	if *ip.Strength != research.DefaultStrengthParams() {
		t.Errorf("strength default %+v, research's %+v", *ip.Strength, research.DefaultStrengthParams())
	}
	if ip.AttentionK != 8 || ip.AttentionTau != algebra.DefaultAttentionTemperature {
		t.Errorf("research attention k=%d tau=%v, want 8 and %v", ip.AttentionK, ip.AttentionTau, algebra.DefaultAttentionTemperature)
	}
	if c.Algebra.SignalParams() != algebra.DefaultSignalParams() {
		t.Errorf("signal defaults %+v, algebra's %+v", c.Algebra.SignalParams(), algebra.DefaultSignalParams())
	}
	psi, want := c.Budget.PsiParams(), algebra.DefaultPsiParams()
	if psi != want {
		t.Errorf("psi defaults %+v, algebra's %+v", psi, want)
	}
	if c.Budget.ZeroYieldStep != algebra.ZeroYieldStep || c.Context.BetaMin != algebra.BetaMin || c.Context.BetaMax != algebra.BetaMax {
		t.Errorf("zero-yield step %v, beta [%v, %v]", c.Budget.ZeroYieldStep, c.Context.BetaMin, c.Context.BetaMax)
	}
	if c.Research.LLMEvidenceStrength != graph.LLMEvidenceStrength {
		t.Errorf("llm evidence strength %v, graph's %v", c.Research.LLMEvidenceStrength, graph.LLMEvidenceStrength)
	}
}

// An activity input scheduled by workflow code older than a parameter
// decodes without it; the activity then uses the parameter's default, not
// a zero. A present value, zero included where zero is a valid setting, is
// kept.
func TestOlderInputsTakeDefaults(t *testing.T) {
	def := IngestParamsOf(config.Defaults())
	var old IngestInput
	if err := json.Unmarshal([]byte(`{"session_id":"s","params":{"chunk_chars":300,"max_chunks_per_page":2,"max_chunks_embedded":9,"svd_k":4,"min_evidence":2}}`), &old); err != nil {
		t.Fatal(err)
	}
	got := old.Params.WithDefaults()
	if got.ChunkChars != 300 || got.SVDK != 4 || got.AttentionK != def.AttentionK || got.AttentionTau != def.AttentionTau || *got.Strength != *def.Strength {
		t.Errorf("older ingest params with defaults: %+v (strength %+v)", got, got.Strength)
	}
	if none := (IngestParams{}).WithDefaults(); none.ChunkChars != def.ChunkChars || *none.Strength != *def.Strength {
		t.Errorf("empty ingest params with defaults: %+v", none)
	}
	zero := def
	zero.Strength = &research.StrengthParams{GoalWeight: 1}
	if got := zero.WithDefaults(); got.Strength.GainWeight != 0 || got.Strength.Priors.PDF != 0 {
		t.Errorf("explicit zero strength parameters replaced: %+v", got.Strength)
	}

	var sim SyncSimilarInput
	if err := json.Unmarshal([]byte(`{"session_id":"s","similar":{"threshold":0.7,"max_per_node":3}}`), &sim); err != nil {
		t.Fatal(err)
	}
	if gp := graphParams(sim.Similar); gp.Threshold != 0.7 || gp.MaxPerNode != 3 || gp.Refine != nil {
		t.Errorf("older similar params: %+v (nil Refine is graph's default)", gp)
	}
	if gp := graphParams(SimilarParams{}); gp.Threshold != config.Defaults().Algebra.SimilarThreshold || *gp.Refine != graph.DefaultRefinement() {
		t.Errorf("empty similar params: %+v", gp)
	}
	off := SimilarOf(config.Defaults().Algebra)
	off.Refine = &graph.Refinement{}
	if gp := graphParams(off); *gp.Refine != (graph.Refinement{}) {
		t.Errorf("explicit zero refinement replaced: %+v", gp.Refine)
	}

	var obs ObserveInput
	if err := json.Unmarshal([]byte(`{"session_id":"s","iteration":2,"svd_k":16,"min_evidence":3}`), &obs); err != nil {
		t.Fatal(err)
	}
	if obs.Signals != nil {
		t.Errorf("older observe input decoded signals %+v", obs.Signals)
	}
}
