package config

import (
	"encoding/json"
	"strings"
	"testing"
)

// A config recorded before the scoring parameters existed (no beta,
// strength, prior, attention, state, novelty, refinement, psi-gate or
// zero-yield keys) decodes with their defaults and validates.
func TestRecordedConfigGetsScoringDefaults(t *testing.T) {
	b, err := json.Marshal(Defaults())
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	removed := 0
	for _, p := range params {
		section, key, _ := strings.Cut(p.Key, ".")
		if strings.HasPrefix(key, "beta_") || strings.HasPrefix(key, "strength_") || strings.HasPrefix(key, "prior_") ||
			strings.HasPrefix(key, "attention_") || strings.HasPrefix(key, "state_") || strings.HasPrefix(key, "psi_") && key != "psi_threshold" ||
			key == "novelty_weight_distance" || key == "corroboration_boost" || key == "contradiction_penalty" ||
			key == "zero_yield_step" || key == "llm_evidence_strength" {
			delete(m[section], key)
			removed++
		}
	}
	if removed != 28 {
		t.Fatalf("removed %d keys, want the 28 scoring parameters", removed)
	}
	old, _ := json.Marshal(m)
	var got Config
	if err := json.Unmarshal(old, &got); err != nil {
		t.Fatal(err)
	}
	if got != Defaults() {
		t.Fatalf("decoded %+v", got)
	}
	if err := got.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestBetaBoundsOrdered(t *testing.T) {
	c := Defaults()
	c.Context.BetaMin, c.Context.BetaMax = 0.9, 0.6
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "context.beta_min") {
		t.Fatalf("beta_min > beta_max: %v", err)
	}
	c.Context.BetaMin, c.Context.BetaMax = 0.6, 0.6
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
}
