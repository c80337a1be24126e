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

// TestPrefix8Order: a smaller prefix8 means a smaller key, and equal
// prefixes happen only where the keys share their first 8 bytes (or are
// shorter and equal up to zero padding), so the shape sort's order is the
// keys' order.
func TestPrefix8Order(t *testing.T) {
	keys := []string{"", "a", "a\x00", "ab", "abcdefgh", "abcdefgh0", "abcdefgh1", "abcdefgi", "b", "ff0a", "ff0a9e", "\xff\xff\xff\xff\xff\xff\xff\xff\xff"}
	for _, a := range keys {
		for _, b := range keys {
			pa, pb := prefix8([]byte(a)), prefix8([]byte(b))
			if pa < pb && a >= b || pa > pb && a <= b {
				t.Errorf("prefix8(%q)=%x, prefix8(%q)=%x disagree with the keys' order", a, pa, b, pb)
			}
		}
	}
}
