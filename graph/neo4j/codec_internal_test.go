package neo4j

import (
	"math"
	"reflect"
	"testing"
)

func TestPackF32(t *testing.T) {
	for _, v := range [][]float32{
		{1},
		{0.1, -2.5e-8, math.MaxFloat32, -math.SmallestNonzeroFloat32, 0},
		{float32(math.Inf(1)), float32(math.Inf(-1))},
	} {
		b, ok := packF32(v).([]byte)
		if !ok || len(b) != 4*len(v) {
			t.Fatalf("packF32(%v) = %v", v, packF32(v))
		}
		got, err := asF32(b)
		if err != nil || !reflect.DeepEqual(got, v) {
			t.Errorf("asF32(packF32(%v)) = %v, %v", v, got, err)
		}
		// The packed copy reads as the float list does.
		if l, err := asF32(f32list(v)); err != nil || !reflect.DeepEqual(l, got) {
			t.Errorf("float list %v, packed %v (%v)", l, got, err)
		}
	}
	if p := packF32(nil); p != nil {
		t.Errorf("packF32(nil) = %v, want an absent property", p)
	}
	for _, n := range []int{1, 2, 3, 5, 1537} {
		if _, err := asF32(make([]byte, n)); err == nil {
			t.Errorf("%d bytes read as an embedding without an error", n)
		}
	}
}

func TestPropsEmbPrefersPacked(t *testing.T) {
	p := props{"embedding": []any{1.0, 2.0}, "embedding_f32": packF32([]float32{3, 4})}
	if got, err := p.emb("embedding"); err != nil || !reflect.DeepEqual(got, []float32{3, 4}) {
		t.Errorf("emb with both = %v, %v; want the packed copy", got, err)
	}
	delete(p, "embedding_f32")
	if got, err := p.emb("embedding"); err != nil || !reflect.DeepEqual(got, []float32{1, 2}) {
		t.Errorf("emb with the list only = %v, %v", got, err)
	}
	p["embedding_f32"] = []byte{1, 2, 3}
	if _, err := p.emb("embedding"); err == nil {
		t.Error("a damaged packed copy read without an error")
	}
}
