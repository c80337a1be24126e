package main

import (
	"bufio"
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"os"

	"github.com/lethe-research/lethe/contract"
	"github.com/lethe-research/lethe/graph"
)

//go:embed testdata/*.jsonl
var testdata embed.FS

// source is a passage a report sentence cites: a verbatim run of the
// Debian Reference.
type source struct {
	Name string `json:"name"`
	URL  string `json:"url"`
	Text string `json:"text"`
}

// pair is one labelled (sentence, source) citation.
type pair struct {
	ID        string `json:"id"`
	Source    string `json:"source"`
	Sentence  string `json:"sentence"`
	Supported bool   `json:"supported"`
	Kind      string `json:"kind"`
	Why       string `json:"why"`
}

type labelledSet struct {
	Sources []source
	Pairs   []pair
	number  map[string]int // source name → its number in the report (1-based)
}

// loadSet reads the two files (the embedded ones for an empty name) and
// checks that every pair names a source and every id is unique.
func loadSet(pairsFile, sourcesFile string) (labelledSet, error) {
	var set labelledSet
	if err := readJSONL(sourcesFile, "testdata/sources.jsonl", &set.Sources); err != nil {
		return set, err
	}
	if err := readJSONL(pairsFile, "testdata/pairs.jsonl", &set.Pairs); err != nil {
		return set, err
	}
	set.number = map[string]int{}
	for i, s := range set.Sources {
		if s.Name == "" || s.URL == "" || s.Text == "" {
			return set, fmt.Errorf("source %d: name, url and text are required", i+1)
		}
		if set.number[s.Name] != 0 {
			return set, fmt.Errorf("source %q: named twice", s.Name)
		}
		set.number[s.Name] = i + 1
	}
	seen := map[string]bool{}
	for _, p := range set.Pairs {
		if set.number[p.Source] == 0 {
			return set, fmt.Errorf("pair %s: unknown source %q", p.ID, p.Source)
		}
		if seen[p.ID] || p.ID == "" || p.Sentence == "" {
			return set, fmt.Errorf("pair %q: an id must be unique and a sentence given", p.ID)
		}
		seen[p.ID] = true
	}
	return set, nil
}

func readJSONL[T any](file, embedded string, out *[]T) error {
	var data []byte
	var err error
	if file != "" {
		data, err = os.ReadFile(file)
	} else {
		file = embedded
		data, err = testdata.ReadFile(embedded)
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", file, err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for line := 1; sc.Scan(); line++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			return fmt.Errorf("%s:%d: %w", file, line, err)
		}
		*out = append(*out, v)
	}
	return sc.Err()
}

// cited is the pairs as the workflow lists a report's cited pairs, and the
// activity's item for each (indexed by the pair's I).
func (s labelledSet) cited() ([]contract.CitedPair, []contract.VerifyItem) {
	pairs := make([]contract.CitedPair, len(s.Pairs))
	items := make([]contract.VerifyItem, len(s.Pairs))
	for i, p := range s.Pairs {
		n := s.number[p.Source]
		pairs[i] = contract.CitedPair{I: i, Sentence: i, N: n, Text: p.Sentence}
		items[i] = contract.VerifyItem{I: i, Sentence: p.Sentence, N: n, URL: s.Sources[n-1].URL}
	}
	return pairs, items
}

// verifySources is the report's numbered sources, where a move looks.
func (s labelledSet) verifySources() []contract.VerifySource {
	out := make([]contract.VerifySource, len(s.Sources))
	for i, src := range s.Sources {
		out[i] = contract.VerifySource{N: i + 1, URL: src.URL}
	}
	return out
}

// storeSources makes a session whose evidence is the sources, one item
// each. The embeddings are placeholders: verification reads text only.
func storeSources(ctx context.Context, st graph.Store, sid string, sources []source) error {
	const dim = 4
	unit := []float32{1, 0, 0, 0}
	if err := st.CreateSession(ctx, graph.Session{ID: sid, Goal: "Debian Reference", GoalDocEmb: unit, GoalQueryEmb: unit, Dim: dim},
		graph.Task{Description: "Debian Reference", EmbedText: "Debian Reference", Embedding: unit}); err != nil {
		return fmt.Errorf("create session: %w", err)
	}
	ev := make([]graph.Evidence, len(sources))
	for i, s := range sources {
		ev[i] = graph.Evidence{Content: s.Text, SourceURL: s.URL, Strength: 0.5, Embedding: unit, CreatedIter: 1}
	}
	if _, err := st.AddEvidence(ctx, sid, "bench", graph.RootShortID, ev); err != nil {
		return fmt.Errorf("store sources: %w", err)
	}
	return nil
}
