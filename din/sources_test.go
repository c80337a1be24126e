package din

import (
	"strings"
	"testing"
)

func TestCorpusSources(t *testing.T) {
	tests := []struct {
		source string
		corpus bool   // Known.CorpusSources
		want   string // "" when valid, else a part of the error message
	}{
		{"https://example.org/page", false, ""},
		{"https://example.org/page", true, ""},
		{"corpus:///debian-reference.en.pdf?passage=17", true, ""},
		{"corpus:///ch01.en.html", true, ""},
		{"corpus:///debian-reference.en.pdf?passage=17", false, "not an http(s) URL: give the page URL"},
		{"corpus://host/ch01.en.html", true, "or a corpus:/// address"},
		{"corpus:///", true, "or a corpus:/// address"},
		{"file:///etc/passwd", true, "or a corpus:/// address"},
		{"my memory", true, "or a corpus:/// address"},
	}
	for _, tt := range tests {
		k := testKnown()
		k.CorpusSources = tt.corpus
		ops, errs := Parse(`{"ops":[{"op":"evidence","task":"t1","content":"c","embed_text":"e","source":"`+tt.source+`"}]}`, k, DefaultLimits())
		switch {
		case tt.want == "" && (len(errs) > 0 || len(ops) != 1 || ops[0].Source != tt.source):
			t.Errorf("%q (corpus %v): ops %v, errors %v; want it kept", tt.source, tt.corpus, ops, errs)
		case tt.want != "" && (len(errs) != 1 || errs[0].Code != CodeBadSource || !strings.Contains(errs[0].Msg, tt.want)):
			t.Errorf("%q (corpus %v): errors %v; want bad_source with %q", tt.source, tt.corpus, errs, tt.want)
		}
	}
}
