//go:build race

package activities_test

// raceEnabled: the race detector slows the store code about tenfold, so
// timing tests skip under it (they run in the plain go test).
const raceEnabled = true
