package score

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Rubric is the answer-correctness rubric: the judge's two questions and
// the grade they give (docs/eval.md quotes it; a test keeps the two equal).
// A small judge asked for a grade on a three-step scale gave the middle
// one to every answer (36 of 36 in the nineteenth evaluation run, its
// reason the rubric's own 0.5 line); asked first to copy the response's
// answer and then whether two short answers agree, it tells them apart.
const Rubric = `1. Copy, word for word, the sentence or two of the RESPONSE that best answer the QUESTION (none if no sentence does).
2. Do those sentences and the GOLD ANSWER give the same answer to the QUESTION? Extra detail does not matter; a different command, file, option, number or name does. Asked of the sentences together and, when they do not, of each sentence alone.
Grade 1 when the copied sentences are the response's own and the answer is the same, otherwise 0. Citations and style do not matter.`

// JudgeSystem is the system message of both of the judge's questions.
const JudgeSystem = "You are a strict grader. Answer with one JSON object only."

// ExtractPrompt is the judge's first question: the response's sentences
// that answer the question, without the gold answer in sight (a small
// model shown the gold answer copies it instead). The response is cut to
// maxChars: a judge reads the answer, not a book.
func ExtractPrompt(question, response string, maxChars int) string {
	return fmt.Sprintf("QUESTION: %s\n\nRESPONSE:\n%s\n\nCopy, word for word, the sentence or two of the RESPONSE that best answer the QUESTION. "+
		`Answer with {"quote": "<the sentences>"}; an empty quote if no sentence of the RESPONSE answers it.`, question, cut(response, maxChars))
}

// ComparePrompt is the judge's second question: whether the response's
// answer (the sentences Ground found) and the gold answer agree.
func ComparePrompt(question, gold, answer string) string {
	return fmt.Sprintf("QUESTION: %s\n\nANSWER A: %s\n\nANSWER B: %s\n\nDo A and B give the same answer to the QUESTION? "+
		"Extra detail in either does not matter; a different command, file, option, number or name does. "+
		`Answer with {"same": true|false}.`, question, gold, answer)
}

// Judgement is the judge's grade, its reason, and the response's
// sentences it graded.
type Judgement struct {
	Score  float64 `json:"score"`
	Reason string  `json:"reason"`
	Quote  string  `json:"quote,omitempty"`
}

// Ask is one call of the judge: its answer's text. Its error is the
// call's (an outage), which Judge passes on.
type Ask func(ctx context.Context, system, user string, maxTokens int) (string, error)

// ExtractTokens and CompareTokens bound the judge's two answers: a quote
// of two sentences, and a boolean.
const (
	ExtractTokens = 256
	CompareTokens = 32
)

// ErrJudgeAnswer marks an answer of the judge that does not parse: the
// grade is 0 and the evaluation records why, it does not retry.
var ErrJudgeAnswer = errors.New("judge answer")

// Judge grades response against gold with the rubric's two questions
// (two calls; one when no sentence of the response answers). calls counts
// the calls made, failed ones included.
func Judge(ctx context.Context, ask Ask, question, gold, response string, maxChars int) (j Judgement, calls int, err error) {
	out, err := ask(ctx, JudgeSystem, ExtractPrompt(question, response, maxChars), ExtractTokens)
	if err != nil {
		return Judgement{}, 1, err
	}
	quote, err := parseQuote(out)
	if err != nil {
		return Judgement{}, 1, err
	}
	if strings.TrimSpace(quote) == "" {
		return Judgement{Reason: "no sentence of the response answers the question"}, 1, nil
	}
	sentences := ground(quote, response)
	if sentences == nil {
		return Judgement{Reason: "the judge's quote is not the response's: " + cut(quote, 200)}, 1, nil
	}
	answer := strings.Join(sentences, " ")
	calls = 1
	same, err := compare(ctx, ask, question, gold, answer, &calls)
	if err != nil || same {
		return sameJudgement(same, answer, answer), calls, err
	}
	if len(sentences) == 1 {
		return sameJudgement(false, answer, answer), calls, nil
	}
	// A small judge shown three sentences, one of which is the answer and
	// two extra detail, often says "not the same" (the twentieth run's
	// dr-036: "… write to the /proc/sysrq-trigger file. For example, echo
	// s > …"); the rubric says extra detail does not matter. The grade of
	// the sentences together stands unless one alone gives the answer: an
	// unreadable answer here counts as "not the same", an outage returns.
	for _, s := range sentences[:min(len(sentences), MaxSentenceCompares)] {
		same, err = compare(ctx, ask, question, gold, s, &calls)
		switch {
		case errors.Is(err, ErrJudgeAnswer):
			continue
		case err != nil || same:
			return sameJudgement(same, s, answer), calls, err
		}
	}
	return sameJudgement(false, answer, answer), calls, nil
}

// MaxSentenceCompares bounds the second question asked of single
// sentences: the quote is "the sentence or two", and a copy the response
// splits finer (a code line, a list) is still a few.
const MaxSentenceCompares = 4

// compare asks the second question of one answer and counts the call.
func compare(ctx context.Context, ask Ask, question, gold, answer string, calls *int) (bool, error) {
	*calls++
	out, err := ask(ctx, JudgeSystem, ComparePrompt(question, gold, answer), CompareTokens)
	if err != nil {
		return false, err
	}
	var c struct {
		Same *bool `json:"same"`
	}
	if err := firstObject(out, &c); err != nil || c.Same == nil {
		return false, fmt.Errorf("%w: no \"same\" in %q", ErrJudgeAnswer, cut(out, 120))
	}
	return *c.Same, nil
}

// sameJudgement is the grade of a comparison: which sentences gave the
// gold answer (by, when one sentence alone did), and all that were graded.
func sameJudgement(same bool, by, graded string) Judgement {
	switch {
	case !same:
		return Judgement{Reason: "the response's answer is not the gold answer", Quote: graded}
	case by == graded:
		return Judgement{Score: 1, Reason: "the response's answer is the gold answer", Quote: graded}
	}
	return Judgement{Score: 1, Reason: "the response's sentence " + strconv.Quote(cut(by, 160)) + " gives the gold answer", Quote: graded}
}

// answerSentences are the sentences of a response the judge may quote:
// list items and code lines included, and lines that open with their
// citations ("[2] The secure IMAP service uses port 993.", as the
// baselines' small model writes them), which Sentences reads as a source
// list's entries. Headings are not: a report's title is the question
// itself, which holds every term of a quote that repeats the question's
// words, and took the place of the twentieth run's dr-061 summary
// sentence ("The GRUB2 menu entry whose kernel line refers to
// root=UUID=...").
func answerSentences(response string) []Sentence {
	var out []Sentence
	for _, line := range strings.Split(response, "\n") {
		l := strings.TrimSpace(line)
		if strings.HasPrefix(l, "```") || strings.HasPrefix(l, "#") {
			continue
		}
		if m := listRe.FindString(l); m != "" {
			l = strings.TrimSpace(l[len(m):])
		}
		l = strings.TrimSpace(strings.TrimPrefix(l, leadCiteRe.FindString(l)))
		out = append(out, splitSentences(l)...)
	}
	return out
}

// looseQuoteRe reads a quote that is not valid JSON: a small model copies
// a sentence with its double quotes unescaped ("… the "/etc/apt/preferences"
// file …"), or closes the string with the backtick of the code span it
// copied (`{"quote": "… with the command `$ MALLOC_CHECK_=2.`}`, the
// nineteenth run's dr-053). The copy runs to the end of the object.
var looseQuoteRe = regexp.MustCompile(`(?s)"quote"\s*:\s*"(.*?)"?\s*}?\s*(?:` + "```" + `)?\s*$`)

// parseQuote is the judge's first answer: the quote of its JSON object,
// or of an object whose quote has unescaped quote marks.
func parseQuote(out string) (string, error) {
	var e struct {
		Quote string `json:"quote"`
	}
	err := firstObject(out, &e)
	if err == nil {
		return e.Quote, nil
	}
	if m := looseQuoteRe.FindStringSubmatch(strings.TrimSpace(out)); m != nil {
		return m[1], nil
	}
	return "", fmt.Errorf("%w: %w", ErrJudgeAnswer, err)
}

// GroundShare is the share of the terms of each sentence of the judge's
// quote that one sentence of the response must hold for the quote to be
// the response's: a copy that drops a citation or a quote mark is still
// a copy, and a sentence the judge wrote itself (it "corrected" the
// answer while copying it) is not.
const GroundShare = 0.8

// Ground finds the response's own sentences that the judge's quote
// copies, and returns them in the response's order: the response's
// words, not the judge's, are compared with the gold answer. Each
// sentence of the quote (split as the response is, so that "root=UUID=...
// is kept in …" is cut in both at the same place) must have a sentence
// of the response holding GroundShare of its terms, the earliest of the
// best; a quote sentence without terms is skipped.
func Ground(quote, response string) (string, bool) {
	s := ground(quote, response)
	return strings.Join(s, " "), s != nil
}

// ground is Ground's sentences, nil when the quote is not the response's.
func ground(quote, response string) []string {
	rs := answerSentences(response)
	terms := make([]map[string]bool, len(rs))
	for i, r := range rs {
		terms[i] = map[string]bool{}
		for _, t := range Terms(r.Text) {
			terms[i][t] = true
		}
	}
	picked := map[int]bool{}
	for _, q := range answerSentences(quote) {
		want := uniq(Terms(q.Text))
		if len(want) == 0 {
			continue
		}
		best, bestShare := -1, 0.0
		for i := range rs {
			n := 0
			for _, t := range want {
				if terms[i][t] {
					n++
				}
			}
			if share := float64(n) / float64(len(want)); share > bestShare {
				best, bestShare = i, share
			}
		}
		if bestShare < GroundShare {
			return nil
		}
		picked[best] = true
	}
	var out []string
	for i, r := range rs {
		if picked[i] {
			out = append(out, r.Text)
		}
	}
	return out
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
func EntailTokens(n int) int { return entailObject + QuoteTokens*n }

// entailObject is the answer budget of the object around the verdicts.
const entailObject = 48

// EntailShorter follows the prompt when a single claim's answer was cut
// at its budget and is asked again (activities.Score), with
// EntailRetryTokens: four times a single claim's budget, room for a
// quote of about 200 words.
const EntailShorter = `Your previous answer was cut off before its JSON closed. Quote at most 12 words of the evidence, and close the JSON.`

// EntailRetryTokens is the budget of that second try.
const EntailRetryTokens = 4 * (entailObject + QuoteTokens)

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
