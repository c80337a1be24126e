package embedded

import (
	"encoding/json"
	"slices"
	"testing"
)

// TestEvidenceTargets: the head parse agrees with a full decode, for the
// records the store writes and for layouts it falls back on.
func TestEvidenceTargets(t *testing.T) {
	recs := []evidenceRec{
		{Task: "root", Content: "x", Embedding: []byte{1, 2}},
		{Task: "t1", Also: []string{"t2", "t10"}, Content: `"quoted" \\ ","also":["no"]`},
		{Task: `we"ird`, Also: []string{`a\b`}},
	}
	var raws [][]byte
	for _, r := range recs {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		raws = append(raws, b)
	}
	raws = append(raws, []byte(`{"content":"c","task":"late","also":["x"]}`), []byte(` {"task":"sp"}`))
	for _, raw := range raws {
		var want struct {
			Task string   `json:"task"`
			Also []string `json:"also"`
		}
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatal(err)
		}
		task, also, err := evidenceTargets(raw)
		if err != nil || task != want.Task || !slices.Equal(also, want.Also) {
			t.Errorf("%s: got %q %q %v, want %q %q", raw, task, also, err, want.Task, want.Also)
		}
	}
}
