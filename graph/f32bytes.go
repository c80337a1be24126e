package graph

import (
	"encoding/binary"
	"fmt"
	"math"
)

// PackF32 is v as little-endian float32 bits (nil for an empty vector):
// the form both stores keep embeddings in where bytes are cheaper than a
// list (the embedded store's records, Neo4j's embedding_f32).
func PackF32(v []float32) []byte {
	if len(v) == 0 {
		return nil
	}
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// UnpackF32 reads PackF32's bytes; a length that is not a multiple of 4
// is an error, never a shorter vector.
func UnpackF32(b []byte) ([]float32, error) {
	if len(b) == 0 {
		return nil, nil
	}
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("embedding of %d bytes is not a float32 vector", len(b))
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}
