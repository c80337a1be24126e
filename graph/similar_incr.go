package graph

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
)

// SimilarMarkBlob is the blob key of the incremental sync's watermark
// (similarMark): which evidence the last sync saw and with which
// parameters, so that the next sync reads only what came after.
const SimilarMarkBlob = "graph/similar/mark"

// similarMark is what SimilarMarkBlob holds. Evidence is never deleted
// one item at a time, so "the session held Total items, AtOrAfter of them
// with CreatedIter >= Iter" tells the next sync whether every item older
// than Iter was seen: if Total-AtOrAfter items older than Iter still exist
// and no more, the items at or after Iter are the only ones that can be
// new. An item that arrives late with an older CreatedIter breaks the
// equation and the sync falls back to the full recomputation.
type similarMark struct {
	Iter       int     `json:"iter"`
	Total      int     `json:"total"`
	AtOrAfter  int     `json:"at_or_after"`
	Dim        int     `json:"dim"`
	Threshold  float64 `json:"threshold"`
	MaxPerNode int     `json:"max_per_node"`
	// SeenAt lists the items at Iter that this sync compared (lane ann):
	// the next sync reads them again (CreatedIter >= Iter) and skips them.
	SeenAt []string `json:"seen_at,omitempty"`
	// Counted says Edges and Unlabelled are known (a mark written before
	// the local sync has neither): the session's SIMILAR_TO edges, and how
	// many of them wait for an NLI label. The local sync keeps them by
	// difference and runs only when no label waits.
	Counted    bool `json:"counted,omitempty"`
	Edges      int  `json:"edges,omitempty"`
	Unlabelled int  `json:"unlabelled,omitempty"`
	// Pairs says the store holds every pair over the threshold of the
	// session's compared evidence (Writes.Pairs): set by a full sync on a
	// store that keeps pairs, kept by each sync that writes the pairs it
	// found. A local sync then reads a displaced item's pairs instead of
	// querying the index for them.
	Pairs bool `json:"pairs,omitempty"`
}

// matches says whether the edges recorded under m were computed with p;
// a different threshold or cap changes every item's neighbourhood.
func (m similarMark) matches(p SimilarParams) bool {
	return m.Dim > 0 && m.Threshold == p.Threshold && m.MaxPerNode == p.MaxPerNode
}

// newMark is the watermark after a sync that saw the given evidence (all
// of the session's, or the fresh part of it with total in all).
func newMark(p SimilarParams, dim, total int, seen []Evidence, prev similarMark) similarMark {
	m := similarMark{Iter: prev.Iter, Dim: dim, Threshold: p.Threshold, MaxPerNode: p.MaxPerNode, Total: total}
	for _, e := range seen {
		m.Iter = max(m.Iter, e.CreatedIter)
	}
	for _, e := range seen {
		if e.CreatedIter >= m.Iter {
			m.AtOrAfter++
			m.SeenAt = append(m.SeenAt, e.ID)
		}
	}
	return m
}

func loadMark(ctx context.Context, s Store, sessionID string) (similarMark, bool, error) {
	var m similarMark
	raw, err := s.GetBlob(ctx, sessionID, SimilarMarkBlob)
	switch {
	case errors.Is(err, ErrNotFound):
		return m, false, nil
	case err != nil:
		return m, false, fmt.Errorf("read %s: %w", SimilarMarkBlob, err)
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		// A mark we cannot read only costs a full recomputation.
		return similarMark{}, false, nil
	}
	return m, true, nil
}

// putMark adds the watermark m to w.
func putMark(w *Writes, m similarMark) error {
	data, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("encode %s: %w", SimilarMarkBlob, err)
	}
	if w.Blobs == nil {
		w.Blobs = map[string][]byte{}
	}
	w.Blobs[SimilarMarkBlob] = data
	return nil
}

// UnitVector is emb scaled to unit length in float64, or nil when it is
// zero or not finite. SyncSimilar and the stores' NearestEvidence compute
// cosines as Dot(UnitVector(a), UnitVector(b)), so that the incremental
// and the full sync agree to the last bit on the same pair.
func UnitVector(emb []float32) []float64 {
	v := make([]float64, len(emb))
	var nn float64
	for k, x := range emb {
		v[k] = float64(x)
		nn += v[k] * v[k]
	}
	if len(emb) == 0 || nn == 0 || math.IsNaN(nn) || math.IsInf(nn, 0) {
		return nil
	}
	inv := 1 / math.Sqrt(nn)
	for k := range v {
		v[k] *= inv
	}
	return v
}

// Dot is the dot product of two vectors of the same length.
func Dot(a, b []float64) float64 { return dot(a, b) }

// idPair is a SIMILAR_TO candidate by evidence id, A < B.
type idPair struct {
	A, B string
	W    float64
}

// capPairs keeps the strongest pairs such that no item exceeds maxPer of
// them (maxPer <= 0: all); ties in weight go to the smaller (A, B). The
// result is in (A, B) order. It is the degree cap of both sync paths, so
// that they agree on ties.
func capPairs(pairs []idPair, maxPer int) []idPair {
	byWeight := slices.Clone(pairs)
	slices.SortFunc(byWeight, func(x, y idPair) int {
		if c := cmp.Compare(y.W, x.W); c != 0 {
			return c
		}
		return cmpIDPair(x, y)
	})
	kept := byWeight
	if maxPer > 0 {
		kept = nil
		deg := map[string]int{}
		for _, c := range byWeight {
			if deg[c.A] >= maxPer || deg[c.B] >= maxPer {
				continue
			}
			deg[c.A]++
			deg[c.B]++
			kept = append(kept, c)
		}
	}
	slices.SortFunc(kept, cmpIDPair)
	return kept
}

func cmpIDPair(x, y idPair) int {
	if c := cmp.Compare(x.A, y.A); c != 0 {
		return c
	}
	return cmp.Compare(x.B, y.B)
}

func newIDPair(a, b string, w float64) idPair {
	if a > b {
		a, b = b, a
	}
	return idPair{A: a, B: b, W: w}
}

// progress calls p.Progress when set (the activity's heartbeat).
func (p SimilarParams) progress() {
	if p.Progress != nil {
		p.Progress()
	}
}
