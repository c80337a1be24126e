package queue

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/lethe-research/lethe/contract"
)

func TestNormalizeURL(t *testing.T) {
	for in, want := range map[string]string{
		"":                                       "",
		"  HTTPS://Example.COM:443/a/b?x=1#frag": "https://example.com/a/b?x=1",
		"http://example.com:80":                  "http://example.com/",
		"http://example.com:8080/X":              "http://example.com:8080/X",
		"https://example.com/a/./b/../c":         "https://example.com/a/c",
		"https://example.com/a?":                 "https://example.com/a",
		"https://example.com/a%20b":              "https://example.com/a%20b",
		"corpus:///dir/a.html#sec":               "corpus:///dir/a.html",
		"CORPUS:///Dir/A.html":                   "corpus:///Dir/A.html",
		"https://[::1]:443/":                     "https://[::1]/",
		"mailto:Someone@Example.com":             "mailto:Someone@Example.com",
		"http://bad host/%zz#x":                  "http://bad host/%zz",
	} {
		if got := NormalizeURL(in); got != want {
			t.Errorf("NormalizeURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRankCandidates(t *testing.T) {
	in := []contract.URLCandidate{
		{URL: "https://b.example/page#one", Title: "B low", GoalCos: 0.2},
		{URL: "https://a.example/x", Title: "A", GoalCos: 0.5},
		{URL: "https://B.example:443/page#two", Title: "B high", GoalCos: 0.7},
		{URL: "https://c.example/", Title: "C", GoalCos: 0.5},
		{URL: "https://seen.example/done", Title: "Seen", GoalCos: 0.99},
		{URL: "https://nan.example/", Title: "NaN", GoalCos: math.NaN()},
		{URL: "  ", Title: "Empty", GoalCos: 0.9},
		{URL: "https://d.example/", Title: "D first", GoalCos: 0.3},
		{URL: "https://d.example/#dup", Title: "D second", GoalCos: 0.3},
	}
	orig := append([]contract.URLCandidate(nil), in...)
	seen := map[string]bool{"https://SEEN.example/done#x": true, "https://c.example/": false}
	got := RankCandidates(in, seen)
	var titles, urls []string
	for _, c := range got {
		titles = append(titles, c.Title)
		urls = append(urls, c.URL)
	}
	wantTitles := []string{"B high", "A", "C", "D first", "NaN"}
	if !reflect.DeepEqual(titles, wantTitles) {
		t.Fatalf("titles %q want %q", titles, wantTitles)
	}
	wantURLs := []string{"https://b.example/page", "https://a.example/x", "https://c.example/", "https://d.example/", "https://nan.example/"}
	if !reflect.DeepEqual(urls, wantURLs) {
		t.Fatalf("urls %q", urls)
	}
	if !math.IsNaN(got[4].GoalCos) {
		t.Fatalf("NaN not kept: %v", got[4].GoalCos)
	}
	for i := range in {
		if in[i].URL != orig[i].URL || in[i].Title != orig[i].Title {
			t.Fatal("input modified")
		}
	}
	// Deterministic: same output whatever the map's iteration order, every time.
	for k := 0; k < 20; k++ {
		again := RankCandidates(in, map[string]bool{"https://c.example/": false, "https://SEEN.example/done#x": true})
		if len(again) != len(got) {
			t.Fatal("not deterministic")
		}
		for i := range got {
			if again[i].URL != got[i].URL || again[i].Title != got[i].Title {
				t.Fatal("not deterministic")
			}
		}
	}
	if out := RankCandidates(nil, nil); len(out) != 0 {
		t.Fatal(out)
	}
}

// A URL both found by search and linked from a page keeps depth 0 (it is a
// search result), whichever copy has the higher cosine.
func TestRankCandidatesKeepsLowestDepth(t *testing.T) {
	got := RankCandidates([]contract.URLCandidate{
		{URL: "https://a.example/x", GoalCos: 0.4},
		{URL: "https://a.example/x#l", GoalCos: 0.8, Depth: 1, Title: "link"},
		{URL: "https://b.example/", GoalCos: 0.3, Depth: 2},
		{URL: "https://b.example/", GoalCos: 0.1, Depth: 1},
	}, nil)
	want := []contract.URLCandidate{
		{URL: "https://a.example/x", GoalCos: 0.8, Depth: 0, Title: "link"},
		{URL: "https://b.example/", GoalCos: 0.3, Depth: 1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

func TestHeldLast(t *testing.T) {
	for _, c := range []struct {
		name string
		in   []contract.URLCandidate
		want string
	}{
		{"none held: unchanged", []contract.URLCandidate{{URL: "a"}, {URL: "b"}}, "a b"},
		{"held go last, each group in order", []contract.URLCandidate{{URL: "a", Held: true}, {URL: "b"}, {URL: "c", Held: true}, {URL: "d"}}, "b d a c"},
		{"all held: unchanged", []contract.URLCandidate{{URL: "a", Held: true}, {URL: "b", Held: true}}, "a b"},
		{"empty", nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := append([]contract.URLCandidate(nil), c.in...)
			var got []string
			for _, x := range HeldLast(c.in) {
				got = append(got, x.URL)
			}
			if strings.Join(got, " ") != c.want {
				t.Errorf("got %q, want %q", strings.Join(got, " "), c.want)
			}
			if !reflect.DeepEqual(in, c.in) {
				t.Errorf("input modified: %v", c.in)
			}
		})
	}
}
