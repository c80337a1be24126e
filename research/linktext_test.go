package research

import "testing"

func TestLinkText(t *testing.T) {
	for _, c := range []struct{ anchor, url, want string }{
		{"Battery  failure\nmodes", "https://docs.example/cells/failure-modes.html", "Battery failure modes\ndocs example cells failure modes"},
		{"next", "https://docs.example/ch02/index.php?x=1", "next\ndocs example ch02"},
		{"", "corpus:///book/ch05.html", "book ch05"},
		{"here", "%zz", "here"},
	} {
		if got := LinkText(c.anchor, c.url); got != c.want {
			t.Errorf("LinkText(%q, %q) = %q, want %q", c.anchor, c.url, got, c.want)
		}
	}
}
