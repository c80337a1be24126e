package din

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/lethe-research/lethe/graph"
)

// contextKnown collects the task ids an example's DIN-Read context shows,
// so the test also checks that examples only use ids the model can see.
func contextKnown(ctx string) Known {
	k := Known{Status: map[string]graph.Status{graph.RootShortID: graph.Active}}
	focus := regexp.MustCompile(`^YOUR TASK: \[([A-Za-z0-9_-]+)\]`)
	for _, l := range strings.Split(ctx, "\n") {
		if m := focus.FindStringSubmatch(l); m != nil {
			k.Status[m[1]] = graph.Active
		}
		if f := strings.Fields(l); len(f) >= 3 && f[0] == "T" {
			k.Status[f[1]] = graph.Status(f[2])
		}
	}
	return k
}

func TestSystemPromptExamplesParse(t *testing.T) {
	if len(Examples()) == 0 {
		t.Fatal("no examples")
	}
	used := map[string]bool{}
	for _, ex := range Examples() {
		ops, errs := Parse(ex.Answer, contextKnown(ex.Context), DefaultLimits())
		if len(errs) > 0 {
			t.Errorf("example %q does not parse: %v", ex.Title, errs)
		}
		for _, op := range ops {
			used[op.Op] = true
		}
	}
	for _, op := range OpTypes() {
		if !used[op] {
			t.Errorf("no example uses %q", op)
		}
	}
}

func TestSystemPrompt(t *testing.T) {
	p := SystemPrompt()
	must := []string{
		"exactly one JSON object", `{"ops":[]}`, "short ids", "web_search", `complete "root"`,
		"FAILED", "=GOAL", "YOUR TASK:", ">SUB", ">DEP", "TOOLS:", "! <text>", "E <ref>",
	}
	for _, op := range opSpecs {
		must = append(must, `{"op":"`+op.name+`"`)
		for _, f := range op.fields {
			must = append(must, `"`+f.name+`"`)
		}
	}
	for _, s := range must {
		if !strings.Contains(p, s) {
			t.Errorf("system prompt lacks %q", s)
		}
	}
	if p != SystemPrompt() {
		t.Fatal("system prompt is not deterministic")
	}
}

func TestRepairPrompt(t *testing.T) {
	response := "<think>secret reasoning</think>\nSure! ```json\n" +
		`{"ops":[{"op":"continue","task":"t9"},{"op":"call","task":"t1","tool":"web_search","args":{}}]}` + "\n```"
	_, errs := Parse(response, testKnown(), DefaultLimits())
	if len(errs) != 2 {
		t.Fatalf("setup: %v", errs)
	}
	p := RepairPrompt(response, errs, 2, 3)
	for _, s := range []string{
		"repair attempt 2 of 3",
		errs[0].String(), errs[1].String(),
		`{"ops":[{"op":"continue","task":"t9"}`,
		`one JSON object {"ops":[...]}`,
		"web_search takes",
	} {
		if !strings.Contains(p, s) {
			t.Errorf("repair prompt lacks %q:\n%s", s, p)
		}
	}
	for _, op := range OpTypes() {
		if !strings.Contains(p, "- "+op+": ") {
			t.Errorf("repair prompt does not restate %q", op)
		}
	}
	if strings.Contains(p, "secret reasoning") {
		t.Error("repair prompt echoes the reasoning")
	}

	tests := []struct {
		name              string
		response          string
		errs              []Error
		attempt, max      int
		contains, lacking string
	}{
		{"attempt clamped to one", "x", nil, 0, 0, "repair attempt 1 of 1", ""},
		{"no errors still explains", "x", nil, 1, 2, "the answer was rejected", ""},
		{"empty answer", "", []Error{{Index: -1, Msg: "no JSON object found"}}, 1, 2, "(empty)", ""},
		{"prose answer echoed without think", "<think>t</think>I refuse.", nil, 1, 2, "I refuse.", "<think>"},
		{"long answer clipped in the middle", "A" + strings.Repeat("x", 3*RepairEchoChars) + "Z", nil, 1, 2, "middle of the answer omitted", strings.Repeat("x", RepairEchoChars+1)},
		{"multi-line error message flattened", "x", []Error{{Index: 0, Op: "fail", Field: "reason", Msg: "a\nb"}}, 1, 2, "- ops[0] (fail) field reason: a b\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := RepairPrompt(tt.response, tt.errs, tt.attempt, tt.max)
			if !strings.Contains(p, tt.contains) {
				t.Errorf("lacks %q:\n%s", tt.contains, p)
			}
			if tt.lacking != "" && strings.Contains(p, tt.lacking) {
				t.Errorf("contains %q", tt.lacking)
			}
		})
	}

	withCtx := RepairPromptWithContext("=GOAL g\nTOOLS: web_search(query)\n", response, errs, 1, 2)
	if !strings.HasPrefix(withCtx, "=GOAL g\nTOOLS: web_search(query)\n\nYour previous answer could not be applied") {
		t.Errorf("context not first:\n%s", withCtx)
	}
}

func TestSchemaShape(t *testing.T) {
	var s map[string]any
	if err := json.Unmarshal(Schema(), &s); err != nil {
		t.Fatalf("schema is not JSON: %v", err)
	}
	variants := s["properties"].(map[string]any)["ops"].(map[string]any)["items"].(map[string]any)["anyOf"].([]any)
	if len(variants) != len(opSpecs) {
		t.Fatalf("%d variants, want %d", len(variants), len(opSpecs))
	}
	for i, v := range variants {
		m := v.(map[string]any)
		props := m["properties"].(map[string]any)
		if got := props["op"].(map[string]any)["const"]; got != opSpecs[i].name {
			t.Errorf("variant %d is %v, want %s", i, got, opSpecs[i].name)
		}
		var names []string
		for k := range props {
			names = append(names, k)
		}
		sort.Strings(names)
		want := []string{"op"}
		for _, f := range opSpecs[i].fields {
			want = append(want, f.name)
		}
		sort.Strings(want)
		if !reflect.DeepEqual(names, want) {
			t.Errorf("%s: properties %v, want %v", opSpecs[i].name, names, want)
		}
		wireOrder := []string{"op"}
		for _, f := range opSpecs[i].fields {
			wireOrder = append(wireOrder, f.name)
		}
		if order := propertyOrder(t, Schema(), i); !reflect.DeepEqual(order, wireOrder) {
			t.Errorf("%s: properties in order %v, want wire order %v", opSpecs[i].name, order, wireOrder)
		}
		if m["additionalProperties"] != false {
			t.Errorf("%s allows additional properties", opSpecs[i].name)
		}
	}
	// Only keywords of the subset that OpenAI strict mode and llama.cpp accept.
	allowed := map[string]bool{"type": true, "properties": true, "required": true, "additionalProperties": true,
		"anyOf": true, "const": true, "enum": true, "items": true, "pattern": true, "description": true}
	var walk func(any, bool)
	walk = func(n any, isProps bool) {
		switch n := n.(type) {
		case map[string]any:
			for k, v := range n {
				if !isProps && !allowed[k] {
					t.Errorf("keyword %q outside the portable subset", k)
				}
				walk(v, k == "properties" && !isProps)
			}
		case []any:
			for _, v := range n {
				walk(v, false)
			}
		}
	}
	walk(s, false)
}

// TestSchemaAgreesWithParse runs a small validator for the schema subset:
// answers Parse accepts conform to both forms of the schema (with optional
// fields as null for the strict form, as strict decoding writes them, and
// left out for the loose form), and structurally wrong ones conform to
// neither.
func TestSchemaAgreesWithParse(t *testing.T) {
	for _, form := range []struct {
		name   string
		schema []byte
		strict bool
	}{{"strict", Schema(), true}, {"loose", LooseSchema(), false}} {
		t.Run(form.name, func(t *testing.T) {
			var schema any
			if err := json.Unmarshal(form.schema, &schema); err != nil {
				t.Fatal(err)
			}
			nulls := regexp.MustCompile(`,"[a-z_]+":null`)
			for _, in := range schemaConform {
				if !form.strict {
					in = nulls.ReplaceAllString(in, "")
				}
				if _, errs := Parse(in, testKnown(), DefaultLimits()); len(errs) > 0 {
					t.Errorf("Parse rejects %s: %v", in, errs)
				}
				var v any
				_ = json.Unmarshal([]byte(in), &v)
				if err := schemaCheck(schema, v); err != nil {
					t.Errorf("schema rejects %s: %v", in, err)
				}
			}
			for _, in := range schemaReject {
				var v any
				_ = json.Unmarshal([]byte(in), &v)
				if schemaCheck(schema, v) == nil {
					t.Errorf("schema accepts %s", in)
				}
				if _, errs := Parse(in, testKnown(), DefaultLimits()); len(errs) == 0 {
					t.Errorf("Parse accepts %s", in)
				}
			}
		})
	}
}

// TestSchemaForms pins the one difference of the two forms: the strict
// form makes the model write every optional field (null when unused), the
// loose form lets it leave them out and admits no null. Parse takes both.
func TestSchemaForms(t *testing.T) {
	var strict, loose any
	if err := json.Unmarshal(Schema(), &strict); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(LooseSchema(), &loose); err != nil {
		t.Fatal(err)
	}
	omitted := `{"ops":[{"op":"create","id":"x","description":"d","embed_text":"e"}]}`
	nulled := `{"ops":[{"op":"create","id":"x","description":"d","embed_text":"e","parent":null,"depends_on":null}]}`
	for _, c := range []struct {
		name   string
		schema any
		in     string
		ok     bool
	}{
		{"strict, fields left out", strict, omitted, false},
		{"strict, fields null", strict, nulled, true},
		{"loose, fields left out", loose, omitted, true},
		{"loose, fields null", loose, nulled, false},
	} {
		var v any
		_ = json.Unmarshal([]byte(c.in), &v)
		if err := schemaCheck(c.schema, v); (err == nil) != c.ok {
			t.Errorf("%s: schema check error %v, want ok=%v", c.name, err, c.ok)
		}
		if _, errs := Parse(c.in, testKnown(), DefaultLimits()); len(errs) > 0 {
			t.Errorf("%s: Parse rejects %s: %v", c.name, c.in, errs)
		}
	}
	for i := range opSpecs {
		if s, l := propertyOrder(t, Schema(), i), propertyOrder(t, LooseSchema(), i); !reflect.DeepEqual(s, l) {
			t.Errorf("%s: strict order %v, loose order %v", opSpecs[i].name, s, l)
		}
	}
}

var (
	schemaConform = []string{
		`{"ops":[]}`,
		`{"ops":[{"op":"create","id":"x","description":"d","embed_text":"e","parent":null,"depends_on":null}]}`,
		`{"ops":[{"op":"create","id":"x","description":"d","embed_text":"e","parent":"t1","depends_on":["t2"]}]}`,
		`{"ops":[{"op":"update","task":"t1","description":"d","embed_text":"e"}]}`,
		`{"ops":[{"op":"depend","task":"t1","on":"t2"}]}`,
		`{"ops":[{"op":"complete","task":"t1","result":"r","embed_text":"e"}]}`,
		`{"ops":[{"op":"fail","task":"t1","reason":"r"}]}`,
		`{"ops":[{"op":"continue","task":"t1"}]}`,
		`{"ops":[{"op":"evidence","task":"t1","content":"c","embed_text":"e","source":null}]}`,
		`{"ops":[{"op":"call","task":"t1","tool":"web_search","args":{"query":"q"}}]}`,
	}
	schemaReject = []string{
		`{}`,
		`{"ops":[],"x":1}`,
		`{"ops":[{"op":"delete","task":"t1"}]}`,
		`{"ops":[{"op":"continue","task":"t1","result":"r"}]}`,
		`{"ops":[{"op":"create","id":"bad id","description":"d","embed_text":"e","parent":null,"depends_on":null}]}`,
		`{"ops":[{"op":"call","task":"t1","tool":"browse","args":{"query":"q"}}]}`,
		`{"ops":[{"op":"call","task":"t1","tool":"web_search","args":{}}]}`,
		`{"ops":[{"op":"fail","task":"t1","reason":3}]}`,
	}
)

// schemaCheck validates v against the keyword subset Schema uses.
func schemaCheck(schema, v any) error {
	s := schema.(map[string]any)
	if alts, ok := s["anyOf"].([]any); ok {
		for _, a := range alts {
			if schemaCheck(a, v) == nil {
				return nil
			}
		}
		return fmt.Errorf("no anyOf branch matches %v", v)
	}
	if t, ok := s["type"]; ok {
		types := []any{t}
		if list, ok := t.([]any); ok {
			types = list
		}
		match := false
		for _, ty := range types {
			match = match || jsonType(v) == ty
		}
		if !match {
			return fmt.Errorf("%v is not of type %v", v, t)
		}
	}
	if c, ok := s["const"]; ok && v != c {
		return fmt.Errorf("%v is not %v", v, c)
	}
	if e, ok := s["enum"].([]any); ok {
		found := false
		for _, x := range e {
			found = found || x == v
		}
		if !found {
			return fmt.Errorf("%v not in %v", v, e)
		}
	}
	if p, ok := s["pattern"].(string); ok {
		if str, isStr := v.(string); isStr && !regexp.MustCompile(p).MatchString(str) {
			return fmt.Errorf("%q does not match %s", str, p)
		}
	}
	if obj, ok := v.(map[string]any); ok {
		props, _ := s["properties"].(map[string]any)
		if req, ok := s["required"].([]any); ok {
			for _, r := range req {
				if _, has := obj[r.(string)]; !has {
					return fmt.Errorf("missing %v", r)
				}
			}
		}
		for k, x := range obj {
			ps, has := props[k]
			if !has {
				if s["additionalProperties"] == false {
					return fmt.Errorf("additional property %q", k)
				}
				continue
			}
			if err := schemaCheck(ps, x); err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
		}
	}
	if arr, ok := v.([]any); ok {
		if items, ok := s["items"]; ok {
			for _, x := range arr {
				if err := schemaCheck(items, x); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "boolean"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "?"
}

// propertyOrder returns the property names of the i-th op variant in the
// order they appear in the schema bytes.
func propertyOrder(t *testing.T, schema []byte, i int) []string {
	var top struct {
		Properties struct {
			Ops struct {
				Items struct {
					AnyOf []struct {
						Properties json.RawMessage `json:"properties"`
					} `json:"anyOf"`
				} `json:"items"`
			} `json:"ops"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(schema, &top); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(string(top.Properties.Ops.Items.AnyOf[i].Properties)))
	var names []string
	if _, err := dec.Token(); err != nil { // {
		t.Fatal(err)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return names
}
