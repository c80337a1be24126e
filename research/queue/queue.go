// Package queue ranks the research loop's URL queue. It is pure (stdlib
// and contract), so that the WebResearch workflow may call it; the rest of
// research does I/O and stays out of the workflow's dependency closure.
package queue

import (
	"math"
	"net/url"
	"sort"
	"strings"

	"github.com/lethe-research/lethe/contract"
)

// RankCandidates returns the candidates to fetch, best first: URLs are
// normalized (NormalizeURL) and the returned candidates carry the
// normalized URL; duplicates are merged keeping the one with the highest
// GoalCos (on equal GoalCos the first in input order) and the lowest Depth
// of any of them (a page both found and linked is a search result);
// candidates whose
// normalized URL is in seen (keys are normalized too, so seen may hold raw
// or normalized URLs) or is empty are dropped; the rest are sorted by
// GoalCos descending, ties by URL ascending. A NaN GoalCos ranks last.
//
// The output depends only on the input slice order and the set of seen
// keys (never on map iteration order), so workflow code may call it. The
// input is not modified.
func RankCandidates(c []contract.URLCandidate, seen map[string]bool) []contract.URLCandidate {
	seenNorm := make(map[string]bool, len(seen))
	for k, v := range seen {
		if v {
			seenNorm[NormalizeURL(k)] = true
		}
	}
	pos := map[string]int{}
	var out []contract.URLCandidate
	for _, cand := range c {
		key := NormalizeURL(cand.URL)
		if key == "" || seenNorm[key] {
			continue
		}
		cand.URL = key
		if math.IsNaN(cand.GoalCos) {
			cand.GoalCos = math.Inf(-1)
		}
		if i, ok := pos[key]; ok {
			depth := min(out[i].Depth, cand.Depth)
			if cand.GoalCos > out[i].GoalCos {
				out[i] = cand
			}
			out[i].Depth = depth
			continue
		}
		pos[key] = len(out)
		out = append(out, cand)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].GoalCos != out[j].GoalCos {
			return out[i].GoalCos > out[j].GoalCos
		}
		return out[i].URL < out[j].URL
	})
	for i := range out {
		if math.IsInf(out[i].GoalCos, -1) {
			out[i].GoalCos = math.NaN()
		}
	}
	return out
}

// HeldLast moves the candidates the session already holds evidence from
// after the others, keeping each group's order: a run's few pages go to
// text the session has not read, and a held page is fetched again only
// when the queue has nothing else. The input is not modified.
func HeldLast(c []contract.URLCandidate) []contract.URLCandidate {
	out := make([]contract.URLCandidate, 0, len(c))
	for _, cand := range c {
		if !cand.Held {
			out = append(out, cand)
		}
	}
	for _, cand := range c {
		if cand.Held {
			out = append(out, cand)
		}
	}
	return out
}

// NormalizeURL returns the canonical form of a URL used for dedup and the
// seen set: surrounding space trimmed; scheme and host lowercased; the
// default port (:80 for http, :443 for https) removed; dot segments
// resolved; an empty http(s) path becomes "/"; the fragment and an empty
// trailing "?" removed. Query parameters and path case are kept (they may
// matter to the server). Empty input gives "". Input that does not parse
// as a URL is returned trimmed, without its fragment.
func NormalizeURL(raw string) string {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil {
		return stripFragment(raw)
	}
	u.Fragment, u.RawFragment = "", ""
	u.ForceQuery = false
	u.Scheme = strings.ToLower(u.Scheme)
	if u.Opaque != "" {
		return u.String()
	}
	host := strings.ToLower(u.Host)
	switch {
	case u.Scheme == "http" && strings.HasSuffix(host, ":80"):
		host = strings.TrimSuffix(host, ":80")
	case u.Scheme == "https" && strings.HasSuffix(host, ":443"):
		host = strings.TrimSuffix(host, ":443")
	}
	host = strings.TrimSuffix(host, ":")
	u.Host = host
	if u.Path != "" {
		// Resolve dot segments the way a browser does.
		ref := &url.URL{Path: u.Path, RawPath: u.RawPath}
		r := (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/"}).ResolveReference(ref)
		if strings.HasPrefix(u.Path, "/") {
			u.Path, u.RawPath = r.Path, r.RawPath
		}
	}
	if u.Path == "" && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
		u.Path = "/"
	}
	return u.String()
}

// stripFragment is raw without its #fragment.
func stripFragment(raw string) string {
	if i := strings.IndexByte(raw, '#'); i >= 0 {
		return raw[:i]
	}
	return raw
}
