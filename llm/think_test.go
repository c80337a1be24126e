package llm_test

import (
	"testing"

	"github.com/lethe-research/lethe/llm"
)

func TestSplitThinking(t *testing.T) {
	cases := []struct {
		name, in, thinking, answer string
	}{
		{"plain", `  {"ops":[]} `, "", `{"ops":[]}`},
		{"closed", "<think>plan first</think>\n{\"ops\":[]}", "plan first", `{"ops":[]}`},
		{"two blocks", "<think>a</think>x<think>b</think>y", "a\n\nb", "xy"},
		{"unclosed leading", "<think>still thinking when the budget ran out", "still thinking when the budget ran out", ""},
		{"unclosed after text", "answer <think>tail", "tail", "answer"},
		{"orphan close", "reasoning from a template-opened block</think>\n\n{\"a\":1}", "reasoning from a template-opened block", `{"a":1}`},
		{"orphan close then block", "r1</think>x<think>r2</think>y", "r1\n\nr2", "xy"},
		{"empty think", "<think>\n\n</think>\n\nhello", "", "hello"},
		{"empty", "", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			th, ans := llm.SplitThinking(c.in)
			if th != c.thinking || ans != c.answer {
				t.Errorf("SplitThinking(%q) = (%q, %q), want (%q, %q)", c.in, th, ans, c.thinking, c.answer)
			}
		})
	}
}

func TestEstimateTokens(t *testing.T) {
	for in, want := range map[string]int{"": 0, "a": 1, "abcd": 1, "abcde": 2, "12345678": 2} {
		if got := llm.EstimateTokens(in); got != want {
			t.Errorf("EstimateTokens(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestEstimateAll(t *testing.T) {
	for _, c := range []struct {
		texts []string
		want  int
	}{
		{nil, 0},
		{[]string{""}, 0},
		{[]string{"abcd", "abcde", "a"}, 4},
	} {
		if got := llm.EstimateAll(c.texts); got != c.want {
			t.Errorf("EstimateAll(%q) = %d, want %d", c.texts, got, c.want)
		}
	}
}
