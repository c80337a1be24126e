package activities

import "testing"

func TestFollowable(t *testing.T) {
	for _, c := range []struct {
		page, link string
		want       bool
	}{
		{"https://a.example/", "https://b.example/x", true},
		{"https://a.example/", "http://b.example/x", true},
		{"corpus:///book/ch01.html", "https://b.example/x", true},
		{"corpus:///book/ch01.html", "corpus:///book/ch02.html", true},
		{"https://a.example/", "corpus:///etc/notes.md", false},
		{"https://a.example/", "file:///etc/passwd", false},
		{"https://a.example/", "mailto:a@b.example", false},
	} {
		if got := followable(c.page, c.link); got != c.want {
			t.Errorf("followable(%q, %q) = %v", c.page, c.link, got)
		}
	}
}

// A research run's batches share a browser run key; other runs and other
// sessions do not.
func TestBrowserRunKey(t *testing.T) {
	a1 := browserRunKey(FetchInput{SessionID: "s1", Key: "research/3/0/0"})
	a2 := browserRunKey(FetchInput{SessionID: "s1", Key: "research/3/0/1"})
	b := browserRunKey(FetchInput{SessionID: "s1", Key: "research/3/1/0"})
	c := browserRunKey(FetchInput{SessionID: "s2", Key: "research/3/0/0"})
	if a1 != a2 || a1 == b || a1 == c || b == c {
		t.Errorf("keys %q %q %q %q", a1, a2, b, c)
	}
}
