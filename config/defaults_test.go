package config

import (
	"encoding/json"
	"testing"
	"time"
)

// A config recorded before llm.outage_tolerance existed decodes with the
// parameter's default, and validates.
func TestRecordedConfigGetsNewDefaults(t *testing.T) {
	c := Defaults()
	c.Budget.MaxIterations = 7
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	delete(m["llm"], "outage_tolerance")
	delete(m, "telemetry")
	old, _ := json.Marshal(m)
	var got Config
	if err := json.Unmarshal(old, &got); err != nil {
		t.Fatal(err)
	}
	if got.LLM.OutageTolerance != 30*time.Minute || got.Budget.MaxIterations != 7 || got.Telemetry.MetricsAddr != c.Telemetry.MetricsAddr {
		t.Fatalf("decoded %v / %d / %q", got.LLM.OutageTolerance, got.Budget.MaxIterations, got.Telemetry.MetricsAddr)
	}
	if err := got.Validate(); err != nil {
		t.Fatal(err)
	}
}
