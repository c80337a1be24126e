package main

import (
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		var d []time.Duration
		for _, x := range v {
			d = append(d, time.Duration(x)*time.Millisecond)
		}
		return d
	}
	for _, c := range []struct {
		d    []time.Duration
		p    float64
		want time.Duration
	}{
		{nil, 50, 0},
		{ms(7), 50, 7 * time.Millisecond},
		{ms(7), 90, 7 * time.Millisecond},
		{ms(5, 1, 3), 50, 3 * time.Millisecond},
		{ms(4, 1, 3, 2), 50, 2 * time.Millisecond},
		{ms(10, 1, 9, 2, 8, 3, 7, 4, 6, 5), 90, 9 * time.Millisecond},
		{ms(10, 1, 9, 2, 8, 3, 7, 4, 6, 5), 100, 10 * time.Millisecond},
		{ms(10, 1, 9, 2, 8, 3, 7, 4, 6, 5), 0, 1 * time.Millisecond},
	} {
		if got := percentile(c.d, c.p); got != c.want {
			t.Errorf("percentile(%v, %v) = %v, want %v", c.d, c.p, got, c.want)
		}
	}
}

func TestGrowth(t *testing.T) {
	it := func(ms ...int) []timing {
		var out []timing
		for _, m := range ms {
			out = append(out, timing{step: map[string]time.Duration{"ReadState": time.Duration(m) * time.Millisecond}})
		}
		return out
	}
	small, large := point{timings: it(10, 12, 11)}, point{timings: it(30, 33, 35)}
	if g := growth(small, large); g != 3 {
		t.Errorf("growth = %v, want 3 (33 ms / 11 ms)", g)
	}
	if g := growth(point{}, large); g != 0 {
		t.Errorf("growth from nothing = %v, want 0", g)
	}
}

func TestOverlap(t *testing.T) {
	tests := []struct {
		want, got []string
		k         int
		share     float64
	}{
		{[]string{"a", "b", "c", "d"}, []string{"b", "a", "x", "y"}, 4, 0.5},
		{[]string{"a", "b", "c", "d"}, []string{"b", "a", "x", "y"}, 2, 1},
		{[]string{"a", "b"}, []string{"c"}, 64, 0},
		{nil, []string{"c"}, 64, 1},
	}
	for _, tc := range tests {
		if got := overlap(tc.want, tc.got, tc.k); got != tc.share {
			t.Errorf("overlap(%v, %v, %d) = %v, want %v", tc.want, tc.got, tc.k, got, tc.share)
		}
	}
}
