package activities

import (
	"reflect"
	"testing"

	"github.com/lethe-research/lethe/contract"
)

func TestNormalizeContain(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Dendrites grow [1].", " dendrites grow "},
		{"  APT's  cache,\n(see `apt-get update`) [1, 3][2; 4] [unverified]", " apt s cache see apt get update "},
		{"[1]", ""},
		{"Größe 1.5 GB", " größe 1 5 gb "},
	} {
		if got := NormalizeContain(c.in); got != c.want {
			t.Errorf("%q: %q, want %q", c.in, got, c.want)
		}
	}
}

func TestContainedIn(t *testing.T) {
	src := "Chapter 2. Debian package management\n\nThe apt-get(8) command refreshes the package index\nwith \"update\"; " +
		"the aptitude(8) command offers an interactive interface. Packages are verified [3] with GPG keys.\n" +
		"Concatenation of files is done by cat. See /usr/share/doc/apt/README for more."
	norm := []string{NormalizeContain("unrelated text of another evidence item"), NormalizeContain(src)}
	for _, c := range []struct {
		name, sentence string
		want           bool
		span           string
	}{
		{"verbatim", "The aptitude(8) command offers an interactive interface [2].", true, "The aptitude(8) command offers an interactive interface [2]."},
		{"case, spaces, line break, punctuation", "the APT-GET 8 command refreshes the package index with update", true, "the APT-GET 8 command refreshes the package index with update"},
		{"source's own marker", "Packages are verified with GPG keys [1].", true, "Packages are verified with GPG keys [1]."},
		{"excerpt with an ellipsis, pieces in order", "The apt-get(8) command … offers an interactive interface.", true, "The apt-get(8) command … offers an interactive interface."},
		{"pieces out of order", "offers an interactive interface … The apt-get(8) command", false, ""},
		{"one word changed", "The aptitude(8) command offers a graphical interface.", false, ""},
		{"says more than the source", "The aptitude(8) command offers an interactive interface and runs as root.", false, ""},
		{"quoted span", `As the manual puts it, "the aptitude(8) command offers an interactive interface" for most users [1].`, true, "the aptitude(8) command offers an interactive interface"},
		{"typographic quoted span", `Debian says “packages are verified with GPG keys”, which users rarely check.`, true, "packages are verified with GPG keys"},
		{"quoted span too short", `The tool is called "apt-get" and is old.`, false, ""},
		// bench/verify's v40: a quoted path is in the source, and says
		// nothing of what the sentence claims about it.
		{"quoted name", `The "/usr/share/doc/apt/README" file says that aptitude(8) refreshes the package index.`, false, ""},
		{"quoted span, an anchor the source lacks", `As the manual puts it, "the aptitude(8) command offers an interactive interface" like synaptic(8).`, false, ""},
		{"quoted span not in the source", `It says "packages are never verified at all".`, false, ""},
		{"too short to prove anything", "the package index", false, ""},
		{"word boundary", "is done by ca", false, ""},
		{"empty", "", false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			span, ok := ContainedIn(c.sentence, norm)
			if ok != c.want || span != c.span {
				t.Errorf("ContainedIn(%q) = %q, %v; want %q, %v", c.sentence, span, ok, c.span, c.want)
			}
		})
	}
}

func TestSplitByContainment(t *testing.T) {
	sources := map[string][]string{
		"u1": {"Dendrites grow along grain boundaries of the solid electrolyte."},
		"u2": {"Particles swell and lose contact with the electrolyte."},
	}
	items := []VerifyItem{
		{I: 0, N: 1, URL: "u1", Sentence: "Dendrites grow along grain boundaries of the solid electrolyte."},
		{I: 1, N: 2, URL: "u2", Sentence: "Dendrites grow along grain boundaries of the solid electrolyte."}, // the wrong source
		{I: 2, N: 2, URL: "u2", Sentence: "Cathode particles lose contact as they swell."},                   // abstractive
		{I: 3, N: 3, URL: "", Sentence: "Particles swell and lose contact with the electrolyte."},            // no stored text
	}
	contained, rest := SplitByContainment(items, sources)
	want := []VerifyVerdict{{I: 0, Status: contract.Supported, Quote: items[0].Sentence, Via: contract.ViaContainment}}
	if !reflect.DeepEqual(contained, want) {
		t.Errorf("contained = %+v, want %+v", contained, want)
	}
	var restI []int
	for _, it := range rest {
		restI = append(restI, it.I)
	}
	if !reflect.DeepEqual(restI, []int{1, 2, 3}) {
		t.Errorf("left for the model: %v, want [1 2 3]", restI)
	}
	merged := mergeVerdicts(items, contained, []VerifyVerdict{{I: 2, Status: contract.Supported, Via: contract.ViaModel}})
	var st []string
	for k, v := range merged {
		if v.I != items[k].I {
			t.Errorf("verdict %d is for item %d", k, v.I)
		}
		st = append(st, v.Status+"/"+v.Via)
	}
	if w := []string{"supported/containment", "unchecked/", "supported/model", "unchecked/"}; !reflect.DeepEqual(st, w) {
		t.Errorf("merged = %v, want %v", st, w)
	}
}
