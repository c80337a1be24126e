package din

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestCutOps(t *testing.T) {
	const (
		a = `{"op":"create","id":"t5","description":"d {x}","embed_text":"e"}`
		b = `{"op":"fail","task":"t1","reason":"the \"}\" page"}`
	)
	tests := []struct {
		name string
		in   string
		want string // "" = nothing kept
	}{
		{"cut inside the second op", `{"ops":[` + a + `, {"op":"evidence","task":"t2","cont`, `{"ops":[` + a + `]}`},
		{"cut inside a string with braces", `{"ops":[` + a + "," + b + `,{"op":"fail","task":"t1","reason":"a { b`, `{"ops":[` + a + "," + b + `]}`},
		{"cut after a comma", "{\n \"ops\": [\n  " + a + ",\n  ", `{"ops":[` + a + `]}`},
		{"cut after the list closed", `{"ops":[` + a + `]`, `{"ops":[` + a + `]}`},
		{"fenced, with prose before", "Here:\n```json\n{\"ops\":[" + a + ",{\"op\"", `{"ops":[` + a + `]}`},
		{"after a think block", `<think>{"ops":[{"op":"x"}]}</think>{"ops":[` + b + `,{`, `{"ops":[` + b + `]}`},
		{"ops not the first key", `{"why":"w","ops":[` + a + `,{"op":`, `{"ops":[` + a + `]}`},
		{"cut inside the first op", `{"ops":[{"op":"create","id":"t5","descr`, ""},
		{"cut before any op", `{"ops":[`, ""},
		{"an op that is not valid JSON ends the list", `{"ops":[` + a + `,{"op":"fail",}, ` + b, `{"ops":[` + a + `]}`},
		{"text that is not an op ends the list", `{"ops":[` + a + `, "x", ` + b, `{"ops":[` + a + `]}`},
		{"no ops key", `{"operations":[` + a + `,{`, ""},
		{"only inside an unclosed think block", `<think>{"ops":[` + a + `,{`, ""},
		{"empty", ``, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, n := CutOps(tt.in)
			if got != tt.want {
				t.Fatalf("CutOps = %q, want %q", got, tt.want)
			}
			if want := strings.Count(tt.want, `"op":`); n != want {
				t.Errorf("kept %d ops, want %d", n, want)
			}
		})
	}
}

// TestCutOpsParse: what CutOps keeps is an answer Parse accepts, and Parse
// still refuses the cut answer itself.
func TestCutOpsParse(t *testing.T) {
	cut := `{"ops":[{"op":"create","id":"t5","description":"d","embed_text":"e"},{"op":"call","task":"t5","tool":"web_search","args":{"query":"q"}},{"op":"evidence","task":"t2","content":"c`
	if _, errs := Parse(cut, testKnown(), DefaultLimits()); len(errs) == 0 {
		t.Fatal("Parse accepted a cut answer")
	}
	obj, n := CutOps(cut)
	ops, errs := Parse(obj, testKnown(), DefaultLimits())
	if len(errs) > 0 || n != 2 || len(ops) != 2 || ops[1].Op != "call" {
		t.Fatalf("CutOps kept %d: %v, %v", n, ops, errs)
	}
}

// FuzzCutOps: whatever the text, CutOps returns nothing or an object
// whose ops list holds the n objects it counted.
func FuzzCutOps(f *testing.F) {
	f.Add(`{"ops":[{"op":"continue","task":"t1"},{"op":`)
	f.Add(`{"ops":[{"a":"}"},{"b":"\"{"},{`)
	f.Add(`"ops":[{{{{`)
	f.Fuzz(func(t *testing.T, s string) {
		obj, n := CutOps(s)
		if n == 0 {
			if obj != "" {
				t.Fatalf("no op kept but %q returned", obj)
			}
			return
		}
		var top struct{ Ops []map[string]any }
		if err := json.Unmarshal([]byte(obj), &top); err != nil || len(top.Ops) != n {
			t.Fatalf("CutOps(%q) = %q, %d: %d ops, %v", s, obj, n, len(top.Ops), err)
		}
	})
}
