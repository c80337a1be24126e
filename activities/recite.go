package activities

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/contract"
	"github.com/lethe-research/lethe/llm"
)

// reciteMinShared is the fewest content words (numbers, and words of
// three letters or more that are not function words: coverStop) a
// sentence must share with a passage before the model is asked whether
// that passage supports it. Two is what the paraphrases of the
// twenty-fifth evaluation run shared with the passage that held their
// fact ("… secure IMAP service is run on the port 993" and "… the
// TLS/IMAP4 port (993)": port, 993).
const reciteMinShared = 2

// ReciteCandidates pairs each item whose verdict is unsupported and not
// moved with the source of the session, other than the one it cites,
// whose passage shares the most content words with its sentence (at least
// reciteMinShared; ties to the first URL in sorted order). An item keeps
// its I and N, so the model's verdict names it; its URL is the candidate.
func ReciteCandidates(items []VerifyItem, verdicts []VerifyVerdict, sources map[string][]string, chars int) []VerifyItem {
	byI := make(map[int]VerifyItem, len(items))
	for _, it := range items {
		byI[it.I] = it
	}
	urls := slices.Sorted(maps.Keys(sources))
	var out []VerifyItem
	for _, v := range verdicts {
		it, ok := byI[v.I]
		if !ok || v.Status != contract.Unsupported || v.Moved != 0 {
			continue
		}
		want := contentWords(it.Sentence)
		best, bestURL := reciteMinShared-1, ""
		for _, u := range urls {
			if u == it.URL {
				continue
			}
			if n := mostShared(want, sources[u], chars); n > best {
				best, bestURL = n, u
			}
		}
		if bestURL != "" {
			it.URL = bestURL
			out = append(out, it)
		}
	}
	return out
}

// mostShared is the largest number of content words of want that one passage of
// texts holds (passages as Excerpt cuts them).
func mostShared(want map[string]bool, texts []string, chars int) int {
	best := 0
	for _, t := range texts {
		for _, line := range strings.Split(t, "\n") {
			for _, p := range splitPassage(strings.Join(strings.Fields(line), " "), chars) {
				n := 0
				for w := range contentWords(p) {
					if want[w] {
						n++
					}
				}
				best = max(best, n)
			}
		}
	}
	return best
}

// contentWords are the words of s that carry a fact (as coverage reads
// them: coverTerms, less coverStop).
func contentWords(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range coverTerms(s) {
		if strings.ContainsAny(w, "0123456789") || len(w) > 2 && !coverStop[w] {
			out[w] = true
		}
	}
	return out
}

// reciteByModel is the second look of VerifyInput.Recite: the model judges
// each unsupported, unmoved item against its candidate source
// (ReciteCandidates), and a supported verdict moves the item there, to
// the report's number for that source or, for a source the report does
// not list, to its URL and title. A failed call leaves the verdicts as
// they were: the first look stands. It returns how many it moved.
func (a *Activities) reciteByModel(ctx context.Context, in VerifyInput, verdicts []VerifyVerdict, sources map[string][]string, titles map[string]string, res *VerifyResult) (int, error) {
	chars := orDefault(in.SourceChars, config.Defaults().Assembly.VerifySourceChars)
	cands := ReciteCandidates(in.Items, verdicts, sources, chars)
	if len(cands) == 0 {
		return 0, nil
	}
	judged, err := a.judgeByModel(ctx, in, cands, sources, res)
	if err != nil {
		// An outage is waited out as any model call's is (the first
		// look's verdicts are stored): the session then ends as one the
		// outage never touched. A refusal will not change on a retry.
		if ctx.Err() != nil || llm.IsRetryable(err) {
			return 0, err
		}
		logger(ctx, in.SessionID).Warn("re-citing by the model failed; the first verdicts stand", "batch", in.Batch, "error", err)
		return 0, nil
	}
	to := map[int]string{}
	for _, c := range cands {
		to[c.I] = c.URL
	}
	quote := map[int]string{}
	for _, j := range judged {
		if j.Status == contract.Supported {
			quote[j.I] = j.Quote
		}
	}
	number := map[string]int{}
	for _, src := range in.Sources {
		number[src.URL] = src.N
	}
	moved := 0
	for k, v := range verdicts {
		q, ok := quote[v.I]
		if !ok {
			continue
		}
		u := to[v.I]
		if n := number[u]; n > 0 {
			verdicts[k].Moved = n
		} else {
			verdicts[k].MovedURL, verdicts[k].MovedTitle = u, titles[u]
		}
		verdicts[k].Quote = q
		moved++
	}
	return moved, nil
}
