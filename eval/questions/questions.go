// Package questions holds the question sets the evaluation runs (the
// Debian Reference set, embedded) and the pure scoring helpers that need
// only a question: gold-string containment, evidence recall and a
// stratified subset.
//
// A question's gold strings are short key strings (a command, a path, an
// option, a number) that a correct answer must contain. "a|b" in a gold
// string means a or b. Matching is case-insensitive, ignores how white
// space is laid out, and does not match inside a longer word (see
// containsWord).
package questions

import (
	"bufio"
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The kinds of question a set may hold.
const (
	// KindFact is answered by one passage.
	KindFact = "fact"
	// KindMultihop needs two passages, usually from two chapters.
	KindMultihop = "multihop"
	// KindParaphrase is worded to avoid the key terms of its passage, so
	// that lexical retrieval on the question alone does not find it.
	KindParaphrase = "paraphrase"
)

// Kinds lists every kind a question may have, in sorted order.
func Kinds() []string { return []string{KindFact, KindMultihop, KindParaphrase} }

// MaxGold is the most gold strings a question may have: more would make
// containment a test of verbosity rather than of knowing the answer.
const MaxGold = 3

// Question is one item of a question set.
type Question struct {
	ID       string   `json:"id"`
	Question string   `json:"question"`
	Answer   string   `json:"answer"`  // a one-sentence gold answer
	Gold     []string `json:"gold"`    // 1–3 key strings; "a|b" = a or b
	Kind     string   `json:"kind"`    // fact, multihop or paraphrase
	Sources  []string `json:"sources"` // "file#anchor" of the passages
}

//go:embed debian-reference.jsonl
var debianReference []byte

// DebianReference returns the embedded question set over the Debian
// Reference (debian-reference-en, /usr/share/doc/debian-reference-en/docs).
func DebianReference() ([]Question, error) {
	qs, err := Parse(bytes.NewReader(debianReference))
	if err != nil {
		return nil, fmt.Errorf("debian-reference.jsonl: %w", err)
	}
	return qs, nil
}

// Parse reads a question set: one JSON object per line, blank lines
// ignored. Every problem found is reported with its line number (joined
// into one error), so that an author can fix a set in one pass.
func Parse(r io.Reader) ([]Question, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	var (
		qs   []Question
		errs []error
		seen = map[string]int{} // id → line of its first use
	)
	for line := 1; sc.Scan(); line++ {
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		q, err := parseLine(raw)
		if err == nil {
			if first, dup := seen[q.ID]; dup {
				err = fmt.Errorf("duplicate id %q (first on line %d)", q.ID, first)
			} else {
				seen[q.ID] = line
			}
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("line %d: %w", line, err))
			continue
		}
		qs = append(qs, q)
	}
	if err := sc.Err(); err != nil {
		errs = append(errs, fmt.Errorf("reading question set: %w", err))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if len(qs) == 0 {
		return nil, errors.New("no questions")
	}
	return qs, nil
}

// parseLine decodes one line strictly (no unknown fields, nothing after
// the object) and checks it.
func parseLine(raw []byte) (Question, error) {
	var q Question
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&q); err != nil {
		return q, fmt.Errorf("bad JSON: %w", err)
	}
	if dec.More() {
		return q, errors.New("bad JSON: more than one value on the line")
	}
	if err := q.check(); err != nil {
		if q.ID != "" {
			return q, fmt.Errorf("%s: %w", q.ID, err)
		}
		return q, err
	}
	return q, nil
}

// check reports the first missing or malformed field of q.
func (q Question) check() error {
	switch {
	case strings.TrimSpace(q.ID) == "":
		return errors.New(`missing field "id"`)
	case strings.TrimSpace(q.Question) == "":
		return errors.New(`missing field "question"`)
	case strings.TrimSpace(q.Answer) == "":
		return errors.New(`missing field "answer"`)
	case len(q.Gold) == 0:
		return errors.New(`missing field "gold"`)
	case len(q.Gold) > MaxGold:
		return fmt.Errorf("gold has %d strings; at most %d", len(q.Gold), MaxGold)
	case q.Kind == "":
		return errors.New(`missing field "kind"`)
	case len(q.Sources) == 0:
		return errors.New(`missing field "sources"`)
	}
	if !knownKind(q.Kind) {
		return fmt.Errorf("unknown kind %q (want %s)", q.Kind, strings.Join(Kinds(), ", "))
	}
	for i, g := range q.Gold {
		for _, alt := range strings.Split(g, "|") {
			if normalize(alt) == "" {
				return fmt.Errorf("gold[%d] %q has an empty alternative", i, g)
			}
		}
	}
	for i, s := range q.Sources {
		if strings.TrimSpace(s) == "" {
			return fmt.Errorf("sources[%d] is empty", i)
		}
	}
	return nil
}

func knownKind(k string) bool {
	for _, want := range Kinds() {
		if k == want {
			return true
		}
	}
	return false
}

// normalize lower-cases s and collapses every run of white space (Unicode,
// so no-break spaces too) into one space, trimming the ends.
func normalize(s string) string {
	return strings.Join(strings.Fields(strings.ToLower(s)), " ")
}

// goldIn reports whether one gold string (with its "|" alternatives) occurs
// in the normalised text t.
func goldIn(gold, t string) bool {
	for _, alt := range strings.Split(gold, "|") {
		if a := normalize(alt); a != "" && containsWord(t, a) {
			return true
		}
	}
	return false
}

// containsWord reports whether a occurs in t without running into a word:
// where a begins (ends) with a letter or digit, the character before
// (after) it must not be one. Plain substring containment would let a
// wrong "umask 0022" contain the gold "umask 002", or "firewall" the gold
// "wall".
func containsWord(t, a string) bool {
	first, _ := utf8.DecodeRuneInString(a)
	last, _ := utf8.DecodeLastRuneInString(a)
	for from := 0; ; {
		i := strings.Index(t[from:], a)
		if i < 0 {
			return false
		}
		i += from
		before, _ := utf8.DecodeLastRuneInString(t[:i])
		after, _ := utf8.DecodeRuneInString(t[i+len(a):])
		if !(isWord(first) && i > 0 && isWord(before)) &&
			!(isWord(last) && i+len(a) < len(t) && isWord(after)) {
			return true
		}
		_, size := utf8.DecodeRuneInString(t[i:])
		from = i + size
	}
}

func isWord(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// Contains reports whether text contains every gold string of q (any one
// of a string's "|" alternatives), case-insensitively, whatever the layout
// of white space, and not inside a longer word ("umask 002" is not in
// "umask 0022"). A question without gold strings contains nothing.
func (q Question) Contains(text string) bool {
	if len(q.Gold) == 0 {
		return false
	}
	t := normalize(text)
	for _, g := range q.Gold {
		if !goldIn(g, t) {
			return false
		}
	}
	return true
}

// Evidence is the evidence recall of q over what a system read: the share
// of q's gold strings found in texts. A gold string counts when it occurs
// within one of the texts; a match that would only exist across the seam
// of two texts does not count, since no passage said it.
func Evidence(q Question, texts []string) float64 {
	if len(q.Gold) == 0 {
		return 0
	}
	norm := make([]string, len(texts))
	for i, t := range texts {
		norm[i] = normalize(t)
	}
	found := 0
	for _, g := range q.Gold {
		for _, t := range norm {
			if goldIn(g, t) {
				found++
				break
			}
		}
	}
	return float64(found) / float64(len(q.Gold))
}

// Stratified returns a deterministic subset of n questions that keeps the
// proportions of the kinds (largest-remainder apportionment), with at least
// one question of every kind present when n is at least the number of
// kinds present (so n ≥ 3 for a set with all three kinds). Within a kind it
// takes questions evenly spaced in id order, so that a subset of a set
// written chapter by chapter spreads over the chapters like the whole set.
// The result is ordered by id; n ≥ len(qs) returns all of qs, by id.
func Stratified(qs []Question, n int) []Question {
	if n <= 0 || len(qs) == 0 {
		return nil
	}
	groups := map[string][]Question{}
	var kinds []string
	for _, q := range qs {
		if _, ok := groups[q.Kind]; !ok {
			kinds = append(kinds, q.Kind)
		}
		groups[q.Kind] = append(groups[q.Kind], q)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		sortByID(groups[k])
	}
	if n > len(qs) {
		n = len(qs)
	}
	sizes := make([]int, len(kinds))
	for i, k := range kinds {
		sizes[i] = len(groups[k])
	}
	var out []Question
	for i, c := range apportion(sizes, n) {
		out = append(out, evenlySpaced(groups[kinds[i]], c)...)
	}
	sortByID(out)
	return out
}

// apportion splits n (≤ the sum of sizes) over groups of the given sizes in
// proportion to them: floors first, then the largest remainders (ties to
// the earlier group). When n is at least the number of groups every group
// gets one, taken from the group whose share suffers least.
func apportion(sizes []int, n int) []int {
	total := 0
	for _, s := range sizes {
		total += s
	}
	counts := make([]int, len(sizes))
	rem := make([]int, len(sizes)) // remainders, in units of 1/total
	given := 0
	for i, s := range sizes {
		counts[i] = s * n / total
		rem[i] = s * n % total
		given += counts[i]
	}
	order := make([]int, len(sizes))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return rem[order[a]] > rem[order[b]] })
	for _, i := range order {
		if given == n {
			break
		}
		if counts[i] < sizes[i] {
			counts[i]++
			given++
		}
	}
	if n < len(sizes) {
		return counts
	}
	for i := range counts {
		if counts[i] > 0 {
			continue
		}
		// Take one from the group most over-represented for its size,
		// so that the proportions move least.
		best := -1
		for j := range counts {
			if counts[j] > 1 && (best < 0 || counts[j]*sizes[best] > counts[best]*sizes[j]) {
				best = j
			}
		}
		if best < 0 {
			break
		}
		counts[best]--
		counts[i]++
	}
	return counts
}

// evenlySpaced picks c of qs (c ≤ len(qs)) at evenly spaced positions:
// the middle of each of c equal slices.
func evenlySpaced(qs []Question, c int) []Question {
	out := make([]Question, 0, c)
	for i := 0; i < c; i++ {
		out = append(out, qs[(2*i+1)*len(qs)/(2*c)])
	}
	return out
}

func sortByID(qs []Question) {
	sort.SliceStable(qs, func(i, j int) bool { return qs[i].ID < qs[j].ID })
}
