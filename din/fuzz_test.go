package din

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary model answers to Parse. Properties:
//   - Parse never panics (a panic in workflow code fails the workflow task);
//   - errors and ops are exclusive: with errors there are no ops;
//   - every error names an op index inside the answer (or -1) and has a
//     code and a message;
//   - ops returned without errors validate again on their own, so what the
//     apply step receives is exactly what Validate accepts;
//   - the repair prompt and DIN-Read of the same text do not panic, and a
//     rendered text never spills onto extra lines.
//
// Run: go test -run '^$' -fuzz FuzzParse -fuzztime 60s ./din/
func FuzzParse(f *testing.F) {
	seeds := []string{
		``,
		`{}`,
		`{"ops":[]}`,
		`{"ops":null}`,
		`{"ops":{}}`,
		`[]`,
		`{"ops":[{"op":"create","id":"t5","description":"d","embed_text":"e","parent":"t1","depends_on":["t2","t3"]}]}`,
		`{"ops":[{"op":"update","task":"t1","description":"d","embed_text":"e"}]}`,
		`{"ops":[{"op":"depend","task":"t1","on":"t2"}]}`,
		`{"ops":[{"op":"complete","task":"root","result":"r","embed_text":"e"}]}`,
		`{"ops":[{"op":"fail","task":"t1","reason":"r"},{"op":"call","task":"t1","tool":"web_search","args":{"query":"q"}}]}`,
		`{"ops":[{"op":"continue","task":"t2"}]}`,
		`{"ops":[{"op":"evidence","task":"t2","content":"c","embed_text":"e","source":"https://example.org"}]}`,
		`{"ops":[{"op":"call","task":"t2","tool":"web_search","args":{"query":"q","extra":"x"}}]}`,
		`{"ops":[{"op":"create","id":"a","description":"d","embed_text":"e"},{"op":"create","id":"a","description":"d","embed_text":"e"}]}`,
		`{"ops":[{"op":"create","id":"x","description":"d","embed_text":"e","depends_on":["x","x",null,3]}]}`,
		`{"ops":[{"op":"depend","task":"t4","on":"t4"},{"op":"Create"},{"OP":"create"},7,null,"s"]}`,
		`{"ops":[{"op":"continue","task":"t1"}`,
		`{"ops":[{"op":"continue","task":"t1"},]}`,
		"<think>plan {\"ops\":[]}</think>\n```json\n{\"ops\":[{\"op\":\"continue\",\"task\":\"t1\"}]}\n```",
		"reasoning</think>{\"ops\":[]}",
		"<think>never closed {\"ops\":[{\"op\":\"fail\",\"task\":\"t3\",\"reason\":\"r\"}]}",
		`prose {with} "quotes {" and {"ops":[{"op":"fail","task":"t1","reason":"a \"}\" b"}]} trailing }`,
		`{"answer":{"ops":[{"op":"continue","task":"root"}]}}`,
		`{"ops":[{"op":"evidence","task":"t1","content":"\u0000\ud800","embed_text":"e","source":"http://[::1"}]}`,
		strings.Repeat("{", 64) + strings.Repeat(`{"`, 32),
	}
	for _, ex := range examples {
		seeds = append(seeds, ex.Answer)
	}
	for _, s := range seeds {
		f.Add(s)
	}
	known := testKnown()
	lim := Limits{MaxOps: 8, MaxStringLen: 200, MaxEmbedTextLen: 100, MaxQueryLen: 50}
	f.Fuzz(func(t *testing.T, text string) {
		ops, errs := Parse(text, known, lim)
		if len(errs) > 0 && ops != nil {
			t.Fatalf("ops and errors together: %v / %v", ops, errs)
		}
		for _, e := range errs {
			if e.Index < -1 || e.Msg == "" || e.Code == "" {
				t.Fatalf("malformed error %#v", e)
			}
			if e.Index >= 0 && e.Index >= countOps(text) && countOps(text) >= 0 {
				t.Fatalf("error index %d beyond the answer's ops: %v", e.Index, e)
			}
		}
		if len(errs) == 0 {
			if ops == nil {
				t.Fatal("no errors and nil ops: an accepted answer must give a (possibly empty) list")
			}
			if again := Validate(ops, known, lim); len(again) > 0 {
				t.Fatalf("parsed ops do not validate: %v\nops: %#v", again, ops)
			}
		}
		_ = RepairPrompt(text, errs, 1, 2)
		out := Render(View{
			Goal:     text,
			Focus:    &TaskLine{ShortID: text, Description: text},
			Tasks:    []TaskLine{{ShortID: text, Description: text, Status: "DONE", Result: text, Parent: text, DependsOn: []string{text}}},
			Evidence: []EvidenceLine{{Ref: "ea", Task: text, Content: "c" + text, Source: text, Title: text}},
			Warns:    []string{text},
			Guide:    []string{text},
			Tools:    []string{text},
		})
		if n := strings.Count(out, "\n"); n > 9 {
			t.Fatalf("a text spilled onto extra lines (%d lines):\n%s", n, out)
		}
	})
}

// countOps returns how many ops the extracted answer holds, or -1 when that
// cannot be told.
func countOps(text string) int {
	obj, err := Extract(text)
	if err != nil {
		return -1
	}
	var top struct {
		Ops []any `json:"ops"`
	}
	if json.Unmarshal([]byte(obj), &top) != nil {
		return -1
	}
	return len(top.Ops)
}
