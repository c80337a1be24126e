package din

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestExtract(t *testing.T) {
	const ops = `{"ops":[]}`
	const op1 = `{"ops":[{"op":"continue","task":"t1"}]}`
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"bare object", ops, ops},
		{"surrounding whitespace", "\n\n  " + op1 + "  \n", op1},
		{"think block first", "<think>\nThe user wants...\n</think>\n\n" + op1, op1},
		{"think block with an ops draft is ignored", `<think>maybe {"ops":[{"op":"fail","task":"t1","reason":"r"}]}</think>` + op1, op1},
		{"uppercase think tags", "<THINK>plan</THINK>" + op1, op1},
		{"closing tag only (template opened the block)", `reasoning {"ops":["draft"]} more</think>` + op1, op1},
		{"unclosed think, answer inside: the last object wins", `<think>first {"ops":["draft"]} then decided ` + op1, op1},
		{"unclosed think after prose", `Sure. <think>thinking ` + op1, op1},
		{"json fence", "```json\n" + op1 + "\n```", op1},
		{"plain fence", "```\n" + op1 + "\n```", op1},
		{"prose around", "Here is my answer:\n" + op1 + "\nLet me know if you need more.", op1},
		{"prose with braces before", "I considered {a, b} and {c}. " + op1, op1},
		{"stray unmatched brace before", "Use { carefully. " + op1, op1},
		{"stray quote in prose before", `He said "hi {" and then ` + op1, op1},
		{"nested braces", `{"ops":[{"op":"call","task":"t1","tool":"web_search","args":{"query":"q"}}]}`,
			`{"ops":[{"op":"call","task":"t1","tool":"web_search","args":{"query":"q"}}]}`},
		{"braces inside strings", `{"ops":[{"op":"fail","task":"t1","reason":"use } and {{ here"}]} trailing }`,
			`{"ops":[{"op":"fail","task":"t1","reason":"use } and {{ here"}]}`},
		{"escaped quotes and backslashes", `x {"ops":[{"op":"fail","task":"t1","reason":"a \"}\" b \\"}]} y`,
			`{"ops":[{"op":"fail","task":"t1","reason":"a \"}\" b \\"}]}`},
		{"first object without ops is skipped", `{"note":"x"} ` + op1, op1},
		{"first of two ops objects", ops + " " + op1, ops},
		{"ops object nested in a wrapper", `{"answer":` + op1 + `}`, op1},
		{"object without ops is returned when nothing better", `text {"operations":[]} text`, `{"operations":[]}`},
		{"unicode around", "Voilà → " + op1 + " ✓", op1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Extract(tt.in)
			if err != nil {
				t.Fatalf("error: %v", err)
			}
			if got != tt.want {
				t.Fatalf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestExtractErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		code string
		msg  string
	}{
		{"empty", "", CodeNoJSON, "no JSON object found in the answer"},
		{"prose only", "The answer is yes.", CodeNoJSON, "no JSON object found in the answer"},
		{"array only", `["continue"]`, CodeNoJSON, "no JSON object"},
		{"only thinking", `<think>{"ops":"nope"</think>`, CodeNoJSON, "after the </think> block"},
		{"unclosed think without JSON", "<think>I need to consider", CodeNoJSON, "unclosed <think>"},
		{"cut off", `{"ops":[{"op":"continue","task":"t1"},`, CodeBadJSON, "not closed"},
		{"single quotes", `{'ops': []}`, CodeBadJSON, "not valid JSON"},
		{"trailing comma", `{"ops":[{"op":"continue","task":"t1"},]}`, CodeBadJSON, "not valid JSON"},
		{"comments", "{\"ops\":[] // done\n}", CodeBadJSON, "not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Extract(tt.in)
			if err == nil {
				t.Fatalf("no error, got %q", got)
			}
			var xe *ExtractError
			if !errors.As(err, &xe) || xe.Code != tt.code {
				t.Fatalf("error %v, want code %s", err, tt.code)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("message %q does not contain %q", err.Error(), tt.msg)
			}
		})
	}
}

// TestExtractBounded checks that hostile or huge inputs finish quickly: the
// caller is a workflow task, which the SDK's deadlock detector kills after a
// second.
func TestExtractBounded(t *testing.T) {
	big := `{"ops":[{"op":"evidence","task":"t1","content":"` + strings.Repeat("word { } ", 100000) + `","embed_text":"e"}]}`
	tests := []struct {
		name string
		in   string
		ok   bool
	}{
		{"open braces", strings.Repeat("{", 200000), false},
		{"open braces and quotes", strings.Repeat(`{"`, 100000), false},
		{"nested objects without ops", strings.Repeat(`{"a":`, 5000) + "1" + strings.Repeat("}", 5000), true},
		{"nesting beyond the JSON depth limit", strings.Repeat(`{"a":`, 20000) + "1" + strings.Repeat("}", 20000), false},
		{"large valid answer", big, true},
		{"large valid answer after garbage", strings.Repeat("{x", 50000) + big, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A bound, not a benchmark: a quadratic scan of these inputs takes
			// minutes, a linear one milliseconds; 5 s leaves room for -race on
			// a loaded two-core machine (500 ms did not).
			start := time.Now()
			_, err := Extract(tt.in)
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("took %v", d)
			}
			if (err == nil) != tt.ok {
				t.Fatalf("err = %v, want ok=%v", err, tt.ok)
			}
		})
	}
}

func TestSplitThink(t *testing.T) {
	tests := []struct {
		in       string
		outside  string
		inside   []string
		unclosed bool
	}{
		{"plain", "plain", nil, false},
		{"<think>a</think>b", "\nb", []string{"a"}, false},
		{"x<think>a</think>y<think>b</think>z", "x\ny\nz", []string{"a", "b"}, false},
		{"a</think>b", "b", []string{"a"}, false},
		{"a</think>b<think>c", "b\n", []string{"a", "c"}, true},
		{"<think>a", "\n", []string{"a"}, true},
		{"İ<Think>a</tHiNk>b", "İ\nb", []string{"a"}, false},
	}
	for _, tt := range tests {
		out, in, unclosed := splitThink(tt.in)
		if out != tt.outside || strings.Join(in, "|") != strings.Join(tt.inside, "|") || unclosed != tt.unclosed {
			t.Errorf("splitThink(%q) = %q, %q, %v", tt.in, out, in, unclosed)
		}
	}
}
