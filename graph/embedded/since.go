package embedded

// Lane observe: evidence by creation iteration and blob deletion
// (docs/incremental-signals.md).

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/lethe-research/lethe/graph"
)

// bktEvIter indexes a session's evidence by creation iteration: key =
// iterKey(created_iter) ‖ content hash, no value. Sessions created before
// the index existed have no such bucket; EvidenceSince scans them instead.
var bktEvIter = []byte("evidence_by_iter")

// iterKey is the iteration as 8 big-endian bytes with the sign bit flipped,
// so that byte order is numeric order for negative iterations too.
func iterKey(iter int) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(int64(iter))^(1<<63))
	return b[:]
}

// putNewEvidence writes a new evidence record and, when the session has the
// index, its (iteration, hash) entry. Linking existing content to another
// task keeps its first iteration, so only new records are indexed.
func putNewEvidence(sb *bolt.Bucket, hash string, r evidenceRec) error {
	if err := putJSON(sb.Bucket(bktEvidence), []byte(hash), r); err != nil {
		return err
	}
	if err := indexNewEvidence(sb, hash, r); err != nil {
		return err
	}
	if src := sb.Bucket(bktSources); src != nil && r.Kind != string(graph.KindLLM) && r.SourceURL != "" {
		if err := src.Put([]byte(r.SourceURL), []byte{}); err != nil {
			return err
		}
	}
	if ix := sb.Bucket(bktEvIter); ix != nil {
		return ix.Put(append(iterKey(r.CreatedIter), hash...), []byte{})
	}
	return nil
}

// bktSources holds the source URLs of a session's fetched evidence (key =
// URL, no value), written with each new record whose Kind is not llm.
// Records never change their URL or kind (a link to existing content
// keeps the first record), so puts suffice. Sessions created before the
// bucket existed have none; FetchedSources scans their records instead.
var bktSources = []byte("sources")

// FetchedSources looks each URL up in the sources bucket.
func (s *Store) FetchedSources(ctx context.Context, sessionID string, urls []string) (map[string]bool, error) {
	out := map[string]bool{}
	err := s.view(ctx, "fetched sources", func(tx *bolt.Tx) error {
		sb, err := session(tx, sessionID)
		if err != nil {
			return err
		}
		src := sb.Bucket(bktSources)
		if src == nil {
			return scanSources(sb.Bucket(bktEvidence), urls, out)
		}
		for _, u := range urls {
			if u != "" && src.Get([]byte(u)) != nil {
				out[u] = true
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// scanSources is FetchedSources over the records of a session older than
// the sources bucket.
func scanSources(evb *bolt.Bucket, urls []string, out map[string]bool) error {
	want := map[string]bool{}
	for _, u := range urls {
		want[u] = u != ""
	}
	return evb.ForEach(func(k, v []byte) error {
		var r struct {
			SourceURL string `json:"source_url"`
			Kind      string `json:"kind"`
		}
		if err := json.Unmarshal(v, &r); err != nil {
			return fmt.Errorf("decode evidence %q: %w", k, err)
		}
		if want[r.SourceURL] && r.Kind != string(graph.KindLLM) {
			out[r.SourceURL] = true
		}
		return nil
	})
}

// EvidenceSince returns the evidence with CreatedIter >= iter, ordered by
// (CreatedIter, ID): a seek in the iteration index, then one lookup per
// row, so the cost follows the rows returned, not the session's size.
func (s *Store) EvidenceSince(ctx context.Context, sessionID string, iter int) ([]graph.Evidence, error) {
	var out []graph.Evidence
	err := s.view(ctx, "evidence since", func(tx *bolt.Tx) error {
		sb, err := session(tx, sessionID)
		if err != nil {
			return err
		}
		evb := sb.Bucket(bktEvidence)
		decode := func(hash, v []byte) error {
			var r evidenceRec
			if err := json.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("decode evidence %q: %w", hash, err)
			}
			if r.CreatedIter < iter {
				return nil
			}
			e, err := recToEvidence(sessionID, string(hash), r)
			if err != nil {
				return fmt.Errorf("decode evidence %q: %w", hash, err)
			}
			out = append(out, e)
			return nil
		}
		ix := sb.Bucket(bktEvIter)
		if ix == nil { // a session older than the index
			return evb.ForEach(decode)
		}
		c := ix.Cursor()
		for k, _ := c.Seek(iterKey(iter)); k != nil; k, _ = c.Next() {
			hash := k[8:]
			v := evb.Get(hash)
			if v == nil {
				return fmt.Errorf("evidence index names %q, which is not stored", hash)
			}
			if err := decode(hash, v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	graph.SortEvidence(out)
	return out, nil
}

// DeleteBlob removes a per-session document; a missing one is no error.
func (s *Store) DeleteBlob(ctx context.Context, sessionID, key string) error {
	return s.update(ctx, "delete blob", func(tx *bolt.Tx) error {
		sb, err := session(tx, sessionID)
		if err != nil {
			return err
		}
		if key == "" {
			return errors.New("empty blob key")
		}
		return sb.Bucket(bktBlobs).Delete([]byte(key))
	})
}
