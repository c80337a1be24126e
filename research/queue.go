package research

import (
	"github.com/lethe-research/lethe/contract"
	"github.com/lethe-research/lethe/research/queue"
)

// Candidate is a URL waiting in the research queue (contract.URLCandidate:
// Discover returns it to the workflow).
type Candidate = contract.URLCandidate

// RankCandidates is queue.RankCandidates: the URLs to fetch, best first.
func RankCandidates(c []Candidate, seen map[string]bool) []Candidate {
	return queue.RankCandidates(c, seen)
}

// NormalizeURL is queue.NormalizeURL: the canonical form of a URL used for
// dedup and the seen set.
func NormalizeURL(raw string) string { return queue.NormalizeURL(raw) }
