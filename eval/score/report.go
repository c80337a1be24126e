package score

import (
	"encoding/json"
	"fmt"
	"html"
	"math"
	"sort"
	"strings"

	"github.com/lethe-research/lethe/contract"
)

// Record is the score of one system on one question (contract.EvalRecord:
// it travels in workflow history).
type Record = contract.EvalRecord

// Summary aggregates one system over the questions.
type Summary = contract.EvalSummary

// Summarize aggregates records by system, in the order systems are given
// (systems not listed follow in name order). A failed question counts as
// wrong and read nothing; its sentences count for nothing.
func Summarize(records []Record, systems []string) []Summary {
	by := map[string][]Record{}
	for _, r := range records {
		by[r.System] = append(by[r.System], r)
	}
	order := append([]string(nil), systems...)
	var extra []string // walked over records, not the map: the Evaluation workflow calls this
	for _, r := range records {
		if !containsStr(order, r.System) && !containsStr(extra, r.System) {
			extra = append(extra, r.System)
		}
	}
	sort.Strings(extra)
	var out []Summary
	for _, s := range append(order, extra...) {
		rs := by[s]
		if len(rs) == 0 {
			continue
		}
		sm := Summary{System: s, Questions: len(rs)}
		var cited, supported, factual, citing int
		for _, r := range rs {
			if r.Failed {
				sm.Failed++
			}
			if r.Contains {
				sm.Contains++
				if !r.UnverifiedOnly {
					sm.Verified++
				}
			}
			if r.Backed {
				sm.Backed++
			}
			sm.Judge += r.Judge
			sm.EvidenceRecall += r.EvidenceRecall
			cited, supported, factual, citing = cited+r.Cited, supported+r.Supported, factual+r.Factual, citing+r.Citing
			sm.Unjudged += r.Unjudged
			sm.Calls += r.Calls
			sm.Tokens += r.PromptTokens + r.CompletionTokens
			sm.Minutes += r.Seconds / 60
		}
		n := float64(len(rs))
		sm.Contains, sm.Verified, sm.Backed, sm.Judge, sm.EvidenceRecall = sm.Contains/n, sm.Verified/n, sm.Backed/n, sm.Judge/n, sm.EvidenceRecall/n
		sm.Precision, sm.CitationRecall = Ratio(supported, cited), Ratio(citing, factual)
		out = append(out, sm)
	}
	return out
}

func containsStr(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// SortRecords orders records by question index, then system order.
func SortRecords(records []Record, systems []string) {
	rank := func(s string) int {
		for i, x := range systems {
			if x == s {
				return i
			}
		}
		return len(systems)
	}
	sort.SliceStable(records, func(a, b int) bool {
		if records[a].Index != records[b].Index {
			return records[a].Index < records[b].Index
		}
		if ra, rb := rank(records[a].System), rank(records[b].System); ra != rb {
			return ra < rb
		}
		return records[a].System < records[b].System
	})
}

// Table is the Markdown result: one row per system, then one per question
// and system.
func Table(sums []Summary, records []Record) string {
	var b strings.Builder
	b.WriteString("| system | questions | failed | correct (contains) | correct (verified) | correct (backed) | correct (judge) | citation precision | citation recall | evidence recall | unjudged | LLM calls | tokens | minutes |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, s := range sums {
		fmt.Fprintf(&b, "| %s | %d | %d | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %d | %d | %d | %.1f |\n",
			s.System, s.Questions, s.Failed, s.Contains, s.Verified, s.Backed, s.Judge, s.Precision, s.CitationRecall, s.EvidenceRecall, s.Unjudged, s.Calls, s.Tokens, s.Minutes)
	}
	if len(records) == 0 {
		return b.String()
	}
	if line := agreementLine(sums, records); line != "" {
		b.WriteString("\n" + line + "\n")
	}
	b.WriteString("\n| question | kind | system | contains | judge | cited (supported) | unjudged | factual (citing) | evidence recall | calls | tokens | seconds | note |\n")
	b.WriteString("|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for _, r := range records {
		note := ""
		switch {
		case r.Failed:
			note = "failed: " + r.Error
		case r.JudgeError != "" && r.CitationError != "":
			note = "judge: " + r.JudgeError + "; citations: " + r.CitationError
		case r.JudgeError != "":
			note = "judge: " + r.JudgeError
		case r.CitationError != "":
			note = "citations: " + r.CitationError
		}
		note = strings.ReplaceAll(cut(strings.Join(strings.Fields(note), " "), 120), "|", "\\|")
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %.1f | %d (%d) | %d | %d (%d) | %.2f | %d | %d | %.0f | %s |\n",
			r.Question, r.Kind, r.System, contained(r), r.Judge, r.Cited, r.Supported, r.Unjudged, r.Factual, r.Citing,
			r.EvidenceRecall, r.Calls, r.PromptTokens+r.CompletionTokens, r.Seconds, note)
	}
	return b.String()
}

// Agreement counts, over records a judge graded (not failed, no judge
// error), those where the judge's verdict (grade ≥ 0.5) and gold
// containment say the same. The two measure one thing by different
// means; where they disagree one of them is wrong, so the share tells
// how far to trust either column alone: docs/eval.md gives the 1.5B
// judge's agreement on the local models.
func Agreement(records []Record) (agree, graded int) {
	for _, r := range records {
		if r.Failed || r.JudgeError != "" {
			continue
		}
		graded++
		if (r.Judge >= 0.5) == r.Contains {
			agree++
		}
	}
	return agree, graded
}

// agreementLine is Agreement in words, in all and per system (in the
// summaries' order); "" when no record was graded.
func agreementLine(sums []Summary, records []Record) string {
	agree, graded := Agreement(records)
	if graded == 0 {
		return ""
	}
	by := map[string][]Record{}
	for _, r := range records {
		by[r.System] = append(by[r.System], r)
	}
	var parts []string
	for _, s := range sums {
		if a, n := Agreement(by[s.System]); n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d of %d", s.System, a, n))
		}
	}
	return fmt.Sprintf("The judge and gold containment agree on %d of %d graded answers (%s); where they disagree, one of them is wrong.",
		agree, graded, strings.Join(parts, ", "))
}

// contained is the per-question table's contains cell: "unverified"
// when only sentences marked [unverified] hold the answer.
func contained(r Record) string {
	if r.Contains && r.UnverifiedOnly {
		return "unverified"
	}
	return yes(r.Contains)
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// JSONL is one JSON record per line.
func JSONL(records []Record) (string, error) {
	var b strings.Builder
	for _, r := range records {
		line, err := json.Marshal(r)
		if err != nil {
			return "", fmt.Errorf("record %s/%s: %w", r.Question, r.System, err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.String(), nil
}

// Plot is an SVG scatter plot of answer correctness (judge) against tokens
// per question, one labelled point per system; the token axis is
// logarithmic because the systems differ by orders of magnitude.
func Plot(sums []Summary) string {
	const w, h, left, right, top, bottom = 640.0, 400.0, 70.0, 30.0, 40.0, 60.0
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range sums {
		t := math.Max(1, float64(s.Tokens)/math.Max(1, float64(s.Questions)))
		lo, hi = math.Min(lo, t), math.Max(hi, t)
	}
	if len(sums) == 0 {
		lo, hi = 1, 10
	}
	lo, hi = math.Pow(10, math.Floor(math.Log10(lo))), math.Pow(10, math.Ceil(math.Log10(hi)))
	if hi <= lo {
		hi = lo * 10
	}
	x := func(t float64) float64 {
		return left + (w-left-right)*(math.Log10(t)-math.Log10(lo))/(math.Log10(hi)-math.Log10(lo))
	}
	y := func(a float64) float64 { return top + (h-top-bottom)*(1-a) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="12">`+"\n", w, h, w, h)
	fmt.Fprintf(&b, `<rect width="%.0f" height="%.0f" fill="white"/>`+"\n", w, h)
	fmt.Fprintf(&b, `<text x="%.0f" y="22" text-anchor="middle" font-size="14">Answer correctness (judge) against tokens per question</text>`+"\n", w/2)
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="black"/>`+"\n", left, h-bottom, w-right, h-bottom)
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="black"/>`+"\n", left, top, left, h-bottom)
	for d := lo; d <= hi*1.0001; d *= 10 {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="black"/><text x="%.1f" y="%.0f" text-anchor="middle">%s</text>`+"\n",
			x(d), h-bottom, x(d), h-bottom+5, x(d), h-bottom+20, humanInt(d))
	}
	for a := 0.0; a <= 1.0001; a += 0.25 {
		fmt.Fprintf(&b, `<line x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f" stroke="#ddd"/><text x="%.0f" y="%.1f" text-anchor="end">%.2f</text>`+"\n",
			left, y(a), w-right, y(a), left-8, y(a)+4, a)
	}
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" text-anchor="middle">tokens per question (log scale)</text>`+"\n", (left+w-right)/2, h-15)
	fmt.Fprintf(&b, `<text x="18" y="%.0f" text-anchor="middle" transform="rotate(-90 18 %.0f)">correct (judge)</text>`+"\n", (top+h-bottom)/2, (top+h-bottom)/2)
	colors := []string{"#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e"}
	for i, s := range sums {
		t := math.Max(1, float64(s.Tokens)/math.Max(1, float64(s.Questions)))
		c := colors[i%len(colors)]
		fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="6" fill="%s"/><text x="%.1f" y="%.1f" fill="%s">%s (%.2f, %s tokens)</text>`+"\n",
			x(t), y(s.Judge), c, x(t)+9, y(s.Judge)-8, c, html.EscapeString(s.System), s.Judge, humanInt(t))
	}
	b.WriteString("</svg>\n")
	return b.String()
}

func humanInt(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.3gM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.3gk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}
