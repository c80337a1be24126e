package activities

import (
	"strings"

	"github.com/lethe-research/lethe/contract"
)

// headingWords is the most words a section heading keeps. A heading is the
// section's task description, which a small model often writes as an
// answer of two sentences and thirty words ("The lp command can be used to
// print collated copies by adding the -o collate option. For example, …",
// dr-067's section, twenty-third evaluation run); the outline and the
// section then open with that paragraph twice. Not a parameter: it shapes
// how a heading reads, not what the report says, and the Compose prompt
// and fact extraction keep the whole description.
const headingWords = 14

// heading is a task description as a section heading: its first sentence,
// without the closing period, cut to headingWords words with "…" (never
// inside a `code` span). A description that is already short is returned
// with its spaces collapsed and its closing period dropped.
func heading(desc string) string {
	h := strings.Join(strings.Fields(desc), " ")
	if sents := contract.SplitSentences(h); len(sents) > 1 {
		h = strings.TrimSpace(h[sents[0].Start:sents[0].End])
	}
	words := strings.Fields(h)
	if len(words) > headingWords {
		kept := words[:headingWords]
		for strings.Count(strings.Join(kept, " "), "`")%2 == 1 {
			kept = kept[:len(kept)-1] // the cut fell inside a code span: end before it
		}
		if len(kept) == 0 {
			kept = words[:headingWords] // one span longer than the heading: cut it anyway
		}
		return strings.TrimRight(strings.Join(kept, " "), ",;:-–—") + "…"
	}
	if strings.HasSuffix(h, ".") && !strings.HasSuffix(h, "..") {
		h = strings.TrimSuffix(h, ".")
	}
	return h
}
