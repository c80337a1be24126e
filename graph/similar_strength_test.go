package graph

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

func TestShardRoundTrip(t *testing.T) {
	m := map[string]strengthRecord{
		"s:b": {Base: 0.5, Refined: 0.61, Prev: 0.5},
		"s:a": {Base: math.SmallestNonzeroFloat64, Refined: 1, Prev: -0},
		"":    {},
		"s:ü": {Base: 1.0 / 3, Refined: 2.0 / 3, Prev: math.Nextafter(1, 2)},
	}
	data := encodeShard(m)
	if !bytes.Equal(data, encodeShard(map[string]strengthRecord{"s:ü": m["s:ü"], "": {}, "s:a": m["s:a"], "s:b": m["s:b"]})) {
		t.Fatal("same records, different bytes")
	}
	got, err := decodeShard(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(m) {
		t.Fatalf("%d records, want %d", len(got), len(m))
	}
	for id, r := range m {
		if got[id] != r {
			t.Fatalf("%q: %+v, want %+v", id, got[id], r)
		}
	}
	js, _ := json.Marshal(m)
	if fromJSON, err := decodeShard(js); err != nil || len(fromJSON) != len(m) || fromJSON["s:b"] != m["s:b"] {
		t.Fatalf("JSON layout: %v, %v", fromJSON, err)
	}
	if empty, err := decodeShard(encodeShard(nil)); err != nil || len(empty) != 0 {
		t.Fatalf("empty shard: %v, %v", empty, err)
	}
}

// TestShardDamaged: a cut or padded shard is an error, never a shorter map
// (lost records would turn refined strengths into new bases).
func TestShardDamaged(t *testing.T) {
	data := encodeShard(map[string]strengthRecord{"s:a": {Base: 0.5, Refined: 0.6}, "s:b": {Base: 0.2}})
	for i := range len(data) {
		if _, err := decodeShard(data[:i]); err == nil {
			t.Fatalf("cut at %d of %d: no error", i, len(data))
		}
	}
	if _, err := decodeShard(append(bytes.Clone(data), 0)); err == nil {
		t.Fatal("trailing byte: no error")
	}
	if _, err := decodeShard([]byte{0x02, 0}); err == nil {
		t.Fatal("unknown layout: no error")
	}
}
