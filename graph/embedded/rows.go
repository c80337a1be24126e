package embedded

// Lane observe (#14): the evidence rows of Observe's periodic recompute,
// without decoding contents. Embeddings, hashes and iterations come from
// the similarity index's cache rows (similar.go); kind and strength, the
// only mutable field among them, from the tail of each record.

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/lethe-research/lethe/graph"
)

// EvidenceRows reads every record once for its kind and strength and
// takes the rest from the cache rows, caught up in the same transaction.
func (s *Store) EvidenceRows(ctx context.Context, sessionID string) ([]graph.Evidence, error) {
	var out []graph.Evidence
	err := s.view(ctx, "evidence rows", func(tx *bolt.Tx) error {
		sb, err := session(tx, sessionID)
		if err != nil {
			return err
		}
		return s.vecs.refresh(sb, sessionID, func(sv *sessVecs) error {
			out, err = rows(sb.Bucket(bktEvidence), sessionID, sv)
			return err
		})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// rows builds the items in Evidence order: (CreatedIter, id), and the ids
// share the session's prefix, so the hash orders them.
func rows(evb *bolt.Bucket, sid string, sv *sessVecs) ([]graph.Evidence, error) {
	out := make([]graph.Evidence, 0, len(sv.hash))
	err := evb.ForEach(func(k, v []byte) error {
		row, ok := sv.row[string(k)]
		if !ok {
			return fmt.Errorf("evidence %q is not in the similarity cache", k)
		}
		kind, strength, err := kindStrength(v)
		if err != nil {
			return fmt.Errorf("decode evidence %q: %w", k, err)
		}
		hash := sv.hash[row]
		out = append(out, graph.Evidence{ID: graph.EvidenceID(sid, hash), SessionID: sid, ContentHash: hash,
			Kind: graph.EvidenceKind(kind), Strength: strength, Embedding: sv.emb[row], CreatedIter: sv.iter[row]})
		return nil
	})
	slices.SortFunc(out, func(a, b graph.Evidence) int {
		if c := cmp.Compare(a.CreatedIter, b.CreatedIter); c != 0 {
			return c
		}
		return strings.Compare(a.ContentHash, b.ContentHash)
	})
	return out, err
}

// kindStrength reads "kind" and "strength" of an evidence record from its
// tail, as evidenceRec lays it out (`,"kind":"<kind>","strength":<number>`
// after the content, the source and the title). The key cannot occur
// inside a string value: a quote there is escaped, and this one follows a
// comma. A record laid out otherwise is decoded whole.
func kindStrength(v []byte) (string, float64, error) {
	const key = `,"kind":"`
	i := bytes.Index(v, []byte(key))
	if i < 0 {
		return fullKindStrength(v)
	}
	rest := v[i+len(key):]
	end := bytes.IndexByte(rest, '"')
	if end < 0 || bytes.IndexByte(rest[:end], '\\') >= 0 {
		return fullKindStrength(v)
	}
	kind := string(rest[:end])
	num, ok := bytes.CutPrefix(rest[end+1:], []byte(`,"strength":`))
	if !ok {
		return fullKindStrength(v)
	}
	stop := bytes.IndexAny(num, ",}")
	if stop < 0 {
		return fullKindStrength(v)
	}
	strength, err := strconv.ParseFloat(string(num[:stop]), 64)
	if err != nil {
		return fullKindStrength(v)
	}
	return kind, strength, nil
}

func fullKindStrength(v []byte) (string, float64, error) {
	var r struct {
		Kind     string  `json:"kind"`
		Strength float64 `json:"strength"`
	}
	err := json.Unmarshal(v, &r)
	return r.Kind, r.Strength, err
}
