package research

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Chunking defaults (characters are Unicode code points).
const (
	DefaultChunkTarget = 1200
	DefaultChunkMax    = 2000
	DefaultChunkMin    = 200
)

// ChunkConfig sizes the paragraph groups of Chunk. Zero fields take the
// defaults (1200 / 2000 / 200); a negative MinChars means no minimum.
// MaxChars is raised to TargetChars and MinChars lowered to TargetChars
// when they contradict it.
type ChunkConfig struct {
	TargetChars int // merge consecutive paragraphs while the group stays within this
	MaxChars    int // hard upper bound of a chunk
	MinChars    int // smaller fragments are dropped unless they are the only chunk
}

func (c ChunkConfig) withDefaults() ChunkConfig {
	if c.TargetChars <= 0 {
		c.TargetChars = DefaultChunkTarget
	}
	if c.MaxChars <= 0 {
		c.MaxChars = max(DefaultChunkMax, c.TargetChars)
	}
	if c.MaxChars < c.TargetChars {
		c.MaxChars = c.TargetChars
	}
	switch {
	case c.MinChars == 0:
		c.MinChars = DefaultChunkMin
	case c.MinChars < 0:
		c.MinChars = 0
	}
	if c.MinChars > c.TargetChars {
		c.MinChars = c.TargetChars
	}
	return c
}

// Chunk splits text into paragraph groups, deterministically:
//
//  1. paragraphs are separated by blank lines (lines of only whitespace);
//     each is trimmed, lines inside it are kept;
//  2. a paragraph longer than MaxChars is split into pieces at sentence
//     boundaries (., !, ?, … followed by whitespace; 。！？; line breaks),
//     sentences packed up to TargetChars; a single sentence longer than
//     MaxChars is cut between words (or, with no space, between
//     characters) into pieces of at most MaxChars;
//  3. consecutive paragraphs/pieces are merged, joined by a blank line,
//     while the group stays within TargetChars — or within MaxChars when
//     the group is still below MinChars; a small last group joins the
//     previous one when that stays within MaxChars;
//     a group never ends with a heading-like paragraph (one line of at most
//     120 characters without closing punctuation) when it can start the
//     next group instead;
//  4. groups shorter than MinChars are dropped unless there is only one.
//
// Every chunk has at most MaxChars characters. Empty or whitespace-only
// text gives no chunks.
func Chunk(text string, cfg ChunkConfig) []string {
	cfg = cfg.withDefaults()
	var units []string
	for _, p := range paragraphs(text) {
		if runeLen(p) <= cfg.MaxChars {
			units = append(units, p)
			continue
		}
		units = append(units, splitLong(p, cfg)...)
	}
	if len(units) == 0 {
		return nil
	}

	var groups []string
	var lens []int
	var cur []string
	curN := 0
	flush := func() {
		groups, lens = append(groups, strings.Join(cur, "\n\n")), append(lens, curN)
		cur, curN = nil, 0
	}
	for _, u := range units {
		n := runeLen(u)
		if len(cur) == 0 {
			cur, curN = []string{u}, n
			continue
		}
		if curN+2+n <= cfg.TargetChars || (curN < cfg.MinChars && curN+2+n <= cfg.MaxChars) {
			cur = append(cur, u)
			curN += 2 + n
			continue
		}
		// Do not end a group with a heading: carry it over to the next one.
		var carry []string
		carryN := 0
		if last := cur[len(cur)-1]; len(cur) > 1 && headingLike(last) && runeLen(last)+2+n <= cfg.MaxChars {
			carry, carryN = []string{last}, runeLen(last)+2
			cur = cur[:len(cur)-1]
			curN -= carryN
		}
		flush()
		cur, curN = append(carry, u), carryN+n
	}
	if k := len(groups); k > 0 && curN < cfg.MinChars && lens[k-1]+2+curN <= cfg.MaxChars {
		groups[k-1] += "\n\n" + strings.Join(cur, "\n\n")
		lens[k-1] += 2 + curN
	} else {
		flush()
	}
	if len(groups) == 1 {
		return groups
	}
	out := groups[:0:0]
	for i, g := range groups {
		if lens[i] >= cfg.MinChars {
			out = append(out, g)
		}
	}
	if len(out) == 0 { // cannot happen with MinChars <= TargetChars; keep the longest
		best := 0
		for i := range groups {
			if lens[i] > lens[best] {
				best = i
			}
		}
		out = append(out, groups[best])
	}
	return out
}

// headingLike reports whether a paragraph looks like a heading: one line,
// at most 120 characters, not ending in sentence punctuation.
func headingLike(p string) bool {
	if strings.Contains(p, "\n") || runeLen(p) > 120 {
		return false
	}
	r, _ := utf8.DecodeLastRuneInString(p)
	return !strings.ContainsRune(".!?:;,…。！？；：", r)
}

// paragraphs splits text on blank lines; each paragraph is trimmed and its
// lines right-trimmed.
func paragraphs(text string) []string {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	var out []string
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			if p := strings.TrimSpace(strings.Join(cur, "\n")); p != "" {
				out = append(out, p)
			}
			cur = cur[:0]
		}
	}
	for _, line := range strings.Split(text, "\n") {
		if strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		cur = append(cur, strings.TrimRightFunc(line, unicode.IsSpace))
	}
	flush()
	return out
}

// splitLong splits one oversize paragraph into pieces of at most MaxChars.
func splitLong(p string, cfg ChunkConfig) []string {
	var out []string
	cur, curN := "", 0
	flush := func() {
		if cur != "" {
			out = append(out, cur)
			cur, curN = "", 0
		}
	}
	for _, s := range sentences(p) {
		n := runeLen(s)
		switch {
		case n > cfg.MaxChars:
			flush()
			out = append(out, hardSplit(s, cfg)...)
		case cur == "":
			cur, curN = s, n
		case curN+1+n <= cfg.TargetChars:
			cur += " " + s
			curN += 1 + n
		default:
			flush()
			cur, curN = s, n
		}
	}
	flush()
	return out
}

// sentences splits a paragraph after sentence-ending punctuation followed
// by whitespace, after CJK full stops, and at line breaks. Pieces are
// trimmed; empty pieces are dropped.
func sentences(p string) []string {
	var out []string
	start := 0
	add := func(end int) {
		if s := strings.TrimSpace(p[start:end]); s != "" {
			out = append(out, s)
		}
		start = end
	}
	for i := 0; i < len(p); {
		r, w := utf8.DecodeRuneInString(p[i:])
		switch r {
		case '\n':
			add(i + w)
		case '。', '！', '？':
			add(i + w)
		case '.', '!', '?', '…':
			j := i + w
			for j < len(p) {
				r2, w2 := utf8.DecodeRuneInString(p[j:])
				if !strings.ContainsRune(`"'”’)]»`, r2) {
					break
				}
				j += w2
			}
			if j == len(p) {
				add(j)
				i = j
				continue
			}
			if r2, _ := utf8.DecodeRuneInString(p[j:]); unicode.IsSpace(r2) {
				add(j)
				i = j
				continue
			}
		}
		i += w
	}
	add(len(p))
	return out
}

// hardSplit cuts an overlong sentence between words into pieces packed up
// to TargetChars (never above MaxChars); words longer than MaxChars are cut
// between characters.
func hardSplit(s string, cfg ChunkConfig) []string {
	var out []string
	cur, curN := "", 0
	for _, w := range strings.Fields(s) {
		n := runeLen(w)
		for n > cfg.MaxChars {
			if cur != "" {
				out = append(out, cur)
				cur, curN = "", 0
			}
			cut := runePrefix(w, cfg.MaxChars)
			out = append(out, cut)
			w = w[len(cut):]
			n -= cfg.MaxChars
		}
		if n == 0 {
			continue
		}
		switch {
		case cur == "":
			cur, curN = w, n
		case curN+1+n <= cfg.TargetChars:
			cur += " " + w
			curN += 1 + n
		default:
			out = append(out, cur)
			cur, curN = w, n
		}
	}
	if cur != "" {
		out = append(out, cur)
	}
	return out
}

func runeLen(s string) int { return utf8.RuneCountInString(s) }

// runePrefix returns the first n runes of s.
func runePrefix(s string, n int) string {
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}
