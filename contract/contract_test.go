package contract

import (
	"encoding/json"
	"testing"
)

func TestTaskStatusValid(t *testing.T) {
	for _, tc := range []struct {
		s    TaskStatus
		want bool
	}{
		{TaskPending, true}, {TaskActive, true}, {TaskDone, true}, {TaskFailed, true},
		{"", false}, {"pending", false}, {"CANCELLED", false},
	} {
		if got := tc.s.Valid(); got != tc.want {
			t.Errorf("%q.Valid() = %v, want %v", tc.s, got, tc.want)
		}
	}
}

// An Ingest input from workflow code older than a parameter decodes with
// that parameter's default, and a set value is kept.
func TestIngestParamsWithDefaults(t *testing.T) {
	def := IngestParamsOf(Defaults())
	cases := []struct {
		name string
		json string
		want func(IngestParams) bool
	}{
		{"no params at all", `{}`, func(p IngestParams) bool {
			return p.ChunkChars == def.ChunkChars && p.AttentionK == def.AttentionK && *p.Strength == *def.Strength
		}},
		{"older params only", `{"chunk_chars":123,"max_chunks_per_page":2,"max_chunks_embedded":9,"svd_k":4,"min_evidence":3}`, func(p IngestParams) bool {
			return p.ChunkChars == 123 && p.AttentionK == def.AttentionK && p.AttentionTau == def.AttentionTau && *p.Strength == *def.Strength
		}},
		{"all set", `{"chunk_chars":123,"attention_k":3,"attention_tau":0.5,"strength":{"goal":1,"gain":0,"priors":{}}}`, func(p IngestParams) bool {
			return p.AttentionK == 3 && p.AttentionTau == 0.5 && p.Strength.GoalWeight == 1 && p.Strength.Priors.PDF == 0
		}},
	}
	for _, tc := range cases {
		var p IngestParams
		if err := json.Unmarshal([]byte(tc.json), &p); err != nil {
			t.Fatal(err)
		}
		if got := p.WithDefaults(); !tc.want(got) {
			t.Errorf("%s: %+v", tc.name, got)
		}
	}
}

// Names users type in visibility queries must stay unique and typed.
func TestSearchAttributes(t *testing.T) {
	seen := map[string]bool{}
	for _, a := range SearchAttributes() {
		if seen[a] {
			t.Errorf("%s listed twice", a)
		}
		seen[a] = true
	}
	if !seen[AttrNameStatus+"=Keyword"] || len(seen) != 7 {
		t.Fatalf("attributes %v", SearchAttributes())
	}
}
