//go:build race

package embedded_test

// cascadeWaves: the race detector slows the store code about tenfold, so
// TestBoundedCascadeRecall runs 3 of its 10 waves under it (make test);
// the plain go test runs all ten.
const cascadeWaves = 3
