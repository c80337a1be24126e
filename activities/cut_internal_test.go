package activities

import "testing"

// TestWholeSentences: what the token bound cut off a composed text goes,
// its whole sentences and their citation marks stay.
func TestWholeSentences(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"whole", "Sulfides conduct well [1]. Garnets resist dendrites [2].", "Sulfides conduct well [1]. Garnets resist dendrites [2]."},
		{"cut mid-word", "Sulfides conduct well [1]. Oxide layers grow at the interface, which limits fast chargin",
			"Sulfides conduct well [1]."},
		{"mark before the period", "Sulfides conduct well [1]. Oxide layers grow [2].", "Sulfides conduct well [1]. Oxide layers grow [2]."},
		{"marks after the period", "It is stable. [1] [3] It then", "It is stable. [1] [3]"},
		{"decimal or version is no end", "Lethe v2.1 is stable [1]. The release v2.1 is", "Lethe v2.1 is stable [1]."},
		{"no whole sentence", "The release v2.1 is", ""},
		{"marks without punctuation", "Oxide layers limit fast charging [3]", ""},
		{"abbreviation is no end", "Tools such as tar, cpio, etc. are used [1]. Another", "Tools such as tar, cpio, etc. are used [1]."},
		{"closing quote", `He wrote "use apt." [2] And then`, `He wrote "use apt." [2]`},
		{"question and exclamation", "Is it safe? Yes [1]! And", "Is it safe? Yes [1]!"},
		{"trailing space", "It is stable [1].  \n", "It is stable [1]."},
		{"last line of Markdown", "## Part\n\nFirst paragraph [1].\n\nSecond paragraph is cut mid", "## Part\n\nFirst paragraph [1]."},
		{"last line whole", "## Part\n\nFirst [1].\n\nSecond [2]. Third", "## Part\n\nFirst [1].\n\nSecond [2]."},
		{"heading last", "Text [1].\n\n## Next", "Text [1].\n\n## Next"},
		{"empty", "", ""},
		{"cut in a code block", "Run this [1].\n\n```\n$ sudo apt-get update\n$ sudo apt-get inst", "Run this [1].\n\n```\n$ sudo apt-get update\n```"},
		{"cut on a block's first line", "Run this [1].\n\n```\n$ sudo apt-get inst", "Run this [1]."},
		{"closed block stays", "Run this [1].\n\n```\n$ make\n```\n\nThen it is cut mid", "Run this [1].\n\n```\n$ make\n```"},
		{"cut right after a fence", "Run this [1].\n\n```", "Run this [1]."},
		{"tilde fence", "Run [1].\n  ~~~\n$ a\n$ b", "Run [1].\n  ~~~\n$ a\n~~~"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := wholeSentences(tc.in); got != tc.want {
				t.Errorf("wholeSentences(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// TestCutByBound: "length" and a silent server may have cut the text;
// a model that stopped by itself wrote what it meant.
func TestCutByBound(t *testing.T) {
	for finish, want := range map[string]bool{"length": true, "": true, "stop": false, "content_filter": false, "tool_calls": false} {
		if got := cutByBound(finish); got != want {
			t.Errorf("cutByBound(%q) = %v, want %v", finish, got, want)
		}
	}
}
