package activities

import "testing"

func TestHeading(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"question kept", "How do solid-state batteries fail?", "How do solid-state batteries fail?"},
		{"period dropped", "Add `* soft core unlimited` to the file.", "Add `* soft core unlimited` to the file"},
		{"spaces collapsed", "  Interface   resistance\n growth ", "Interface resistance growth"},
		{"ellipsis kept", "Compare the two routes...", "Compare the two routes..."},
		{"first sentence only", "Find the CUPS port. Then check the lp options.", "Find the CUPS port"},
		{"cut at the word limit",
			"The lp command can be used to print collated copies by adding the -o collate option. For example, run lpr.",
			"The lp command can be used to print collated copies by adding the -o…"},
		{"never inside a code span",
			"Explain why the administrator should first run `sudo update-alternatives --config editor now please and then` before anything else",
			"Explain why the administrator should first run…"},
		{"trailing comma before the cut", "One two three four five six seven eight nine ten eleven twelve thirteen, fourteen fifteen", "One two three four five six seven eight nine ten eleven twelve thirteen, fourteen…"},
		{"separator at the cut", "One two three four five six seven eight nine ten eleven twelve thirteen fourteen, fifteen sixteen", "One two three four five six seven eight nine ten eleven twelve thirteen fourteen…"},
		{"empty", "   ", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := heading(c.in); got != c.want {
				t.Errorf("heading(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}
