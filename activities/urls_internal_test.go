package activities

import "testing"

func TestDropInventedURLs(t *testing.T) {
	known := []string{"See https://www.debian.org/doc/manuals/debian-reference/ch06.en.html for ports.", "corpus:///ch06.html\nhttps://wiki.debian.org/SSH\n", "Point a browser at localhost:631 to reach CUPS."}
	for _, c := range []struct {
		in, want string
		removed  int
	}{
		// dr-018's summary, sixteenth evaluation run.
		{"The secure IMAP service imaps uses port 443 (https://example.org/secure-imap)", "The secure IMAP service imaps uses port 443", 1},
		{"It uses port 993 (https://example.org/imaps). Next [1].", "It uses port 993. Next [1].", 1},
		{"See <https://example.org/x>, then [2].", "See, then [2].", 1},
		{"Read [the wiki](https://example.org/wiki) [1].", "Read the wiki [1].", 1},
		{"Bare https://example.org/x here.", "Bare here.", 1},
		// Links the prompt, the evidence or a source's address holds stay.
		{"Ports are listed at https://www.debian.org/doc/manuals/debian-reference/ch06.en.html.", "Ports are listed at https://www.debian.org/doc/manuals/debian-reference/ch06.en.html.", 0},
		{"See (https://wiki.debian.org/SSH/) [2].", "See (https://wiki.debian.org/SSH/) [2].", 0},
		{"Read [the wiki](https://wiki.debian.org/SSH) [1].", "Read [the wiki](https://wiki.debian.org/SSH) [1].", 0},
		{"No link here [1].", "No link here [1].", 0},
		{"The CUPS interface is http://localhost:631 [1].", "The CUPS interface is http://localhost:631 [1].", 0},
	} {
		got, n := dropInventedURLs(c.in, known...)
		if got != c.want || n != c.removed {
			t.Errorf("dropInventedURLs(%q) = %q, %d; want %q, %d", c.in, got, n, c.want, c.removed)
		}
	}
}
