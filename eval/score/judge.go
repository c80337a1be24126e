package score

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Rubric is the answer-correctness rubric the judge applies (docs/eval.md
// quotes it; a test keeps the two equal).
const Rubric = `Grade the RESPONSE against the GOLD ANSWER to the QUESTION.
- 1: the response states every fact of the gold answer (wording may differ; extra correct detail is fine).
- 0.5: the response states part of the gold answer and nothing that contradicts it, or states it with a wrong detail that does not change the answer.
- 0: the response misses the gold answer, contradicts it, refuses, or answers a different question.
Judge only against the gold answer, not your own knowledge. Citations and style do not matter.`

// JudgeSystem is the system message of the correctness judge.
const JudgeSystem = "You are a strict grader. " + `Answer with one JSON object only: {"score": 0 | 0.5 | 1, "reason": "<one sentence>"}.`

// JudgePrompt is the user message of the correctness judge. The response
// is cut to maxChars: a judge reads the answer, not a book.
func JudgePrompt(question, gold, response string, maxChars int) string {
	return fmt.Sprintf("%s\n\nQUESTION: %s\n\nGOLD ANSWER: %s\n\nRESPONSE:\n%s\n\nGrade now.", Rubric, question, gold, cut(response, maxChars))
}

// Judgement is the judge's grade.
type Judgement struct {
	Score  float64 `json:"score"`
	Reason string  `json:"reason"`
}

// ParseJudgement reads the judge's answer: the first JSON object in it
// (thinking and code fences around it are tolerated). A score other than
// 0, 0.5 or 1 is an error.
func ParseJudgement(content string) (Judgement, error) {
	var j Judgement
	if err := firstObject(content, &j); err != nil {
		return Judgement{}, err
	}
	if j.Score != 0 && j.Score != 0.5 && j.Score != 1 {
		return Judgement{}, fmt.Errorf("judge score %v is not 0, 0.5 or 1", j.Score)
	}
	return j, nil
}

// EntailSystem is the system message of the citation check.
const EntailSystem = `You check citations. For each numbered claim, decide whether its EVIDENCE supports it: every fact the claim states must be stated or directly implied by the evidence. Answer with one JSON object only: {"verdicts": [{"i": <claim number>, "supported": true|false, "quote": "<at most 12 words of the evidence that support it, empty if none>"}]}, one verdict per claim, in claim order.`

// QuoteTokens bounds one verdict of the citation check: the prompt asks
// for a quote of at most 12 words, so a verdict is about 20 tokens of
// JSON and 20 of quote; twice that leaves room for a judge that quotes
// more.
const QuoteTokens = 80

// EntailTokens is the answer budget for a batch of n claims: n verdicts
// and the object around them. A batch whose answer is cut anyway is
// split and asked again (activities.Score).
func EntailTokens(n int) int { return 48 + QuoteTokens*n }

// Claim is one cited sentence with the evidence text of its citations.
type Claim struct {
	Sentence string
	Evidence string
}

// EntailPrompt is the user message for a batch of claims, numbered from 1.
func EntailPrompt(claims []Claim) string {
	var b strings.Builder
	for i, c := range claims {
		fmt.Fprintf(&b, "CLAIM %d: %s\nEVIDENCE %d: %s\n\n", i+1, c.Sentence, i+1, strings.Join(strings.Fields(c.Evidence), " "))
	}
	fmt.Fprintf(&b, "Give %d verdicts now.", len(claims))
	return b.String()
}

// Verdict is the judgement of one claim.
type Verdict struct {
	I         int    `json:"i"`
	Supported bool   `json:"supported"`
	Quote     string `json:"quote"`
}

// ParseVerdicts reads the verdicts of a batch of n claims: supported[i]
// is the verdict on claim i+1, judged[i] whether the answer gave one
// (the caller asks again about a claim with none); numbers outside 1..n
// are ignored, and the first verdict on a claim counts.
func ParseVerdicts(content string, n int) (supported, judged []bool, err error) {
	var v struct {
		Verdicts []Verdict `json:"verdicts"`
	}
	if err := firstObject(content, &v); err != nil {
		return nil, nil, err
	}
	supported, judged = make([]bool, n), make([]bool, n)
	for _, x := range v.Verdicts {
		if x.I >= 1 && x.I <= n && !judged[x.I-1] {
			supported[x.I-1], judged[x.I-1] = x.Supported, true
		}
	}
	return supported, judged, nil
}

// firstObject decodes the first balanced {...} of s into v.
func firstObject(s string, v any) error {
	if i := strings.LastIndex(s, "</think>"); i >= 0 {
		s = s[i+len("</think>"):]
	}
	start := strings.IndexByte(s, '{')
	if start < 0 {
		return errors.New("no JSON object in the answer")
	}
	depth, inStr, esc := 0, false, false
	for i := start; i < len(s); i++ {
		c := s[i]
		switch {
		case esc:
			esc = false
		case c == '\\' && inStr:
			esc = true
		case c == '"':
			inStr = !inStr
		case inStr:
		case c == '{':
			depth++
		case c == '}':
			depth--
			if depth == 0 {
				if err := json.Unmarshal([]byte(s[start:i+1]), v); err != nil {
					return fmt.Errorf("judge answer: %w", err)
				}
				return nil
			}
		}
	}
	return errors.New("unbalanced JSON object in the answer")
}

func cut(s string, n int) string {
	r := []rune(s)
	if n <= 0 || len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// AnswerSystem is the system message of the baselines' answer call.
const AnswerSystem = `You answer questions from the numbered sources given. Write a short answer in plain prose. After each sentence, put the number of the source it comes from in brackets, like [1]. Use only the sources; if they do not contain the answer, say so.`

// AnswerPrompt is the user message of an answer call: the numbered
// sources, then the question (last, where small models look).
func AnswerPrompt(question string, sources []string) string {
	var b strings.Builder
	b.WriteString("Sources:\n\n")
	for i, s := range sources {
		fmt.Fprintf(&b, "[%d] %s\n\n", i+1, strings.TrimSpace(s))
	}
	fmt.Fprintf(&b, "Question: %s\n\nAnswer with citations like [1].", question)
	return b.String()
}
