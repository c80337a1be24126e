package config

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestDefaultsValidAndComplete(t *testing.T) {
	c := Default()
	flat := c.Flatten()
	if len(flat) != len(params) {
		t.Fatalf("struct has %d leaves, table has %d params", len(flat), len(params))
	}
	for _, p := range params {
		got, ok := flat[p.Key]
		if !ok {
			t.Errorf("param %s has no struct field", p.Key)
			continue
		}
		want := p.Default
		if reflect.TypeOf(got) != reflect.TypeOf(want) {
			t.Errorf("%s: struct type %T, default type %T", p.Key, got, want)
		} else if got != want {
			t.Errorf("%s = %v, want default %v", p.Key, got, want)
		}
		if p.Reason == "" {
			t.Errorf("%s has no reason", p.Key)
		}
	}
	if c.Budget.PsiThreshold != 0.82 || c.Research.PsiThreshold != 0.70 || c.Algebra.EMAAlpha != 0.3 {
		t.Fatalf("seed thresholds changed: %+v %+v", c.Budget, c.Algebra)
	}
}

func TestSecretsNotSerialized(t *testing.T) {
	c := Default()
	c.LLM.APIKey = "sk-secret"
	c.Graph.Neo4jPassword = "pw"
	b, _ := jsonMarshal(c)
	if strings.Contains(string(b), "sk-secret") || strings.Contains(string(b), `"pw"`) {
		t.Fatalf("secret leaked into workflow payload: %s", b)
	}
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }
