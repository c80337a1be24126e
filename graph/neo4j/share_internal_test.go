package neo4j

import "testing"

func TestFirstK(t *testing.T) {
	for _, c := range []struct {
		total, mine int64
		want        int
	}{
		{0, 0, 0},               // nothing indexed: scan (finds nothing, quickly)
		{1000, 0, 0},            // none of the session's items indexed yet
		{1000, 1000, vecFirstK}, // alone in the index
		{3000, 1000, 3 * 64},    // a third of it
		{210000, 10000, 1344},   // the benchmark's 10k beside two sessions of 100k
		{64000, 1000, vecMaxK},  // exactly the last share the index serves
		{64001, 1000, 0},        // under 1/64: the index would pass vecMaxK, scan
		{201000, 1000, 0},       // the benchmark's 1k beside two sessions of 100k
		{1000, 2000, vecFirstK}, // an estimate above the total never goes under vecFirstK
	} {
		if got := firstK(c.total, c.mine); got != c.want {
			t.Errorf("firstK(%d, %d) = %d, want %d", c.total, c.mine, got, c.want)
		}
	}
}
