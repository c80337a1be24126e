package din

import (
	"reflect"
	"testing"
)

func TestDropRestated(t *testing.T) {
	const (
		reT1   = `{"op":"create","id":"t1","description":"d","embed_text":"e"}`
		reT3   = `{"op":"create","id":"t3","description":"d","embed_text":"e","depends_on":["t2"]}`
		reT4   = `{"op":"create","id":"t4","description":"d","embed_text":"e"}`
		update = `{"op":"update","task":"t1","description":"d2","embed_text":"e2"}`
		search = `{"op":"call","task":"t1","tool":"web_search","args":{"query":"q"}}`
	)
	tests := []struct {
		name     string
		in       string
		restated bool
		want     []string // ops kept, or nil for an error
		codes    []string
		dropped  int
	}{
		{"a restated create before an update", `{"ops":[` + reT1 + `,` + update + `]}`, true, []string{"update"}, nil, 1},
		{"two restated creates, one done, before a search", `{"ops":[` + reT1 + `,` + reT3 + `,` + search + `]}`, true, []string{"call"}, nil, 2},
		{"restated creates alone", `{"ops":[` + reT1 + `,` + reT3 + `]}`, true, nil, []string{CodeIDExists, CodeIDExists}, 0},
		{"the id of a failed task", `{"ops":[` + reT4 + `,` + update + `]}`, true, nil, []string{CodeIDExists}, 0},
		{"another error beside it", `{"ops":[` + reT1 + `,{"op":"fail","task":"zz","reason":"r"}]}`, true, nil, []string{CodeIDExists, CodeUnknownID}, 0},
		{"a create that names a task twice", `{"ops":[{"op":"create","id":"x","description":"d","embed_text":"e"},{"op":"create","id":"x","description":"d","embed_text":"e"},` + update + `]}`, true, nil, []string{CodeDuplicateID}, 0},
		{"sessions from before", `{"ops":[` + reT1 + `,` + update + `]}`, false, nil, []string{CodeIDExists}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := testKnown()
			k.Restated = tt.restated
			ops, errs, dropped := ParseCounted(tt.in, k, DefaultLimits())
			if dropped != tt.dropped {
				t.Errorf("dropped %d creates, want %d", dropped, tt.dropped)
			}
			var got, codes []string
			for _, o := range ops {
				got = append(got, o.Op)
			}
			for _, e := range errs {
				codes = append(codes, e.Code)
			}
			if !reflect.DeepEqual(got, tt.want) || !reflect.DeepEqual(codes, tt.codes) {
				t.Fatalf("ops %v errors %v, want %v and %v", got, errs, tt.want, tt.codes)
			}
		})
	}
}
