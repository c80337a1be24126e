package llm

import "strings"

const (
	thinkOpen  = "<think>"
	thinkClose = "</think>"
)

// SplitThinking separates reasoning from the answer in a model's content.
//
//   - Every closed <think>...</think> block is thinking.
//   - A </think> without an opening tag before it (chat templates that put
//     the opening tag in the prompt, as Qwen3 and DeepSeek-R1 do) makes
//     everything before it thinking.
//   - An unclosed <think> makes everything after it thinking (a model that
//     ran out of tokens while thinking); the answer is then what came before
//     it, usually empty. An empty answer is returned as is: the caller's
//     parser reports it.
//
// Thinking parts are trimmed and joined with blank lines; the answer is the
// rest, trimmed.
func SplitThinking(content string) (thinking, answer string) {
	var thoughts []string
	var rest strings.Builder
	s := content

	// A leading orphan close tag: everything before it is thinking.
	if c := strings.Index(s, thinkClose); c >= 0 {
		if o := strings.Index(s, thinkOpen); o < 0 || o > c {
			thoughts = appendThought(thoughts, s[:c])
			s = s[c+len(thinkClose):]
		}
	}
	for {
		o := strings.Index(s, thinkOpen)
		if o < 0 {
			rest.WriteString(s)
			break
		}
		rest.WriteString(s[:o])
		s = s[o+len(thinkOpen):]
		c := strings.Index(s, thinkClose)
		if c < 0 {
			thoughts = appendThought(thoughts, s)
			break
		}
		thoughts = appendThought(thoughts, s[:c])
		s = s[c+len(thinkClose):]
	}
	answer = strings.TrimSpace(strings.ReplaceAll(rest.String(), thinkClose, ""))
	return strings.Join(thoughts, "\n\n"), answer
}

func appendThought(list []string, t string) []string {
	if t = strings.TrimSpace(t); t != "" {
		list = append(list, t)
	}
	return list
}

// joinThinking joins the reasoning field of an answer with thinking found in
// its content.
func joinThinking(field, inContent string) string {
	field = strings.TrimSpace(field)
	switch {
	case field == "":
		return inContent
	case inContent == "":
		return field
	default:
		return field + "\n\n" + inContent
	}
}

// EstimateTokens estimates the number of tokens of s as one per four bytes,
// rounded up: at least 1 for a non-empty string, 0 for "".
func EstimateTokens(s string) int {
	return (len(s) + 3) / 4
}

// EstimateAll is the sum of EstimateTokens over texts: the cost budget's
// count of embedding calls, whose usage the embedding client does not
// return.
func EstimateAll(texts []string) int {
	n := 0
	for _, t := range texts {
		n += EstimateTokens(t)
	}
	return n
}
