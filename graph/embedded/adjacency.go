package embedded

// Lane storecost (#14): durable adjacency and counter buckets, so that the
// per-iteration reads (Neighbourhood, EvidenceCounts, EvidenceCount) and
// ReplaceSimilar cost what they return, not what the session holds
// (docs/store-adjacency.md).
//
// The indexes are buckets of the session, written in the same bbolt
// transaction as the records they index: a reader sees both or neither,
// and a crash keeps them in step (a transaction commits whole or not at
// all). A file written before them (format lethe-graph/1) gets them built
// by Open, once, from the records; the format then becomes lethe-graph/2,
// which an older binary refuses to open, so no writer that does not
// maintain them ever touches the file again.
//
//	sessions/<id>/task_adj    <task> 0 <other task> 0 <kind byte> -> ""   both directions of SUBTASK_OF, DEPENDS_ON
//	sessions/<id>/supports    <task> 0 <evidence hash>             -> ""   SUPPORTS, by target task
//	sessions/<id>/similar_adj <evidence hash> 0 <other hash>       -> ""   SIMILAR_TO, both directions
//	sessions/<id>/counts      <task>                               -> uint64 SUPPORTS edges into the task
//	sessions/<id>/meta        "evidence_total"                     -> uint64 evidence nodes

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

var (
	bktTaskAdj    = []byte("task_adj")
	bktSupports   = []byte("supports")
	bktSimilarAdj = []byte("similar_adj")
	bktCounts     = []byte("counts")
	keyEvTotal    = []byte("evidence_total")

	indexBuckets = [][]byte{bktTaskAdj, bktSupports, bktSimilarAdj, bktCounts}
)

// Direction bytes of a task_adj key: the edge leaves the first task
// (child -> parent, task -> prerequisite) or enters it.
const (
	adjSubtaskOut   = 'S' // first is the child
	adjSubtaskIn    = 's' // first is the parent
	adjDependsOut   = 'D' // first depends on other
	adjDependsIn    = 'd' // other depends on first
	adjKeySeparator = 0
)

// pairKey is a ‖ 0 ‖ b (‖ 0 ‖ kind when kind != 0).
func pairKey(a, b string, kind byte) []byte {
	k := make([]byte, 0, len(a)+len(b)+3)
	k = append(k, a...)
	k = append(k, adjKeySeparator)
	k = append(k, b...)
	if kind != 0 {
		k = append(k, adjKeySeparator, kind)
	}
	return k
}

// prefixed calls fn with the rest of every key of b that starts with
// a ‖ 0, in key order.
func prefixed(b *bolt.Bucket, a string, fn func(rest []byte) error) error {
	p := append([]byte(a), adjKeySeparator)
	c := b.Cursor()
	for k, _ := c.Seek(p); k != nil && bytes.HasPrefix(k, p); k, _ = c.Next() {
		if err := fn(k[len(p):]); err != nil {
			return err
		}
	}
	return nil
}

// indexTask records the task-task edges of a task record (its parent and
// prerequisites). Edges are only ever added (a cycle rolls the whole
// transaction back), so puts suffice; they are idempotent.
func indexTask(sb *bolt.Bucket, short string, r taskRec) error {
	ix := sb.Bucket(bktTaskAdj)
	put := func(a, b string, kind byte) error { return ix.Put(pairKey(a, b, kind), []byte{}) }
	if r.Parent != "" {
		if err := put(short, r.Parent, adjSubtaskOut); err != nil {
			return err
		}
		if err := put(r.Parent, short, adjSubtaskIn); err != nil {
			return err
		}
	}
	for _, d := range r.DependsOn {
		if err := put(short, d, adjDependsOut); err != nil {
			return err
		}
		if err := put(d, short, adjDependsIn); err != nil {
			return err
		}
	}
	return nil
}

// indexSupport records a SUPPORTS edge hash -> task that did not exist and
// counts it.
func indexSupport(sb *bolt.Bucket, task, hash string) error {
	if err := sb.Bucket(bktSupports).Put(pairKey(task, hash, 0), []byte{}); err != nil {
		return err
	}
	return addCount(sb.Bucket(bktCounts), []byte(task), 1)
}

// indexNewEvidence records a new evidence node: its SUPPORTS edges and the
// session's total.
func indexNewEvidence(sb *bolt.Bucket, hash string, r evidenceRec) error {
	for _, t := range append([]string{r.Task}, r.Also...) {
		if err := indexSupport(sb, t, hash); err != nil {
			return err
		}
	}
	return addCount(sb.Bucket(bktMeta), keyEvTotal, 1)
}

// indexSimilar adds (on) or removes (!on) both directions of a SIMILAR_TO
// pair in the adjacency bucket.
func indexSimilar(sb *bolt.Bucket, a, b string, on bool) error {
	ix := sb.Bucket(bktSimilarAdj)
	for _, k := range [][]byte{pairKey(a, b, 0), pairKey(b, a, 0)} {
		var err error
		if on {
			err = ix.Put(k, []byte{})
		} else {
			err = ix.Delete(k)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func addCount(b *bolt.Bucket, key []byte, d uint64) error {
	var buf [8]byte
	binary.BigEndian.PutUint64(buf[:], readCount(b, key)+d)
	return b.Put(key, buf[:])
}

func readCount(b *bolt.Bucket, key []byte) uint64 {
	v := b.Get(key)
	if len(v) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(v)
}

// buildIndexes (re)creates a session's index buckets from its records:
// the migration of a lethe-graph/1 file, run by Open.
func buildIndexes(sb *bolt.Bucket) error {
	for _, name := range indexBuckets {
		if sb.Bucket(name) != nil {
			if err := sb.DeleteBucket(name); err != nil {
				return err
			}
		}
		if _, err := sb.CreateBucket(name); err != nil {
			return err
		}
	}
	if err := sb.Bucket(bktMeta).Delete(keyEvTotal); err != nil {
		return err
	}
	if err := sb.Bucket(bktMeta).Put(keyEvTotal, make([]byte, 8)); err != nil {
		return err
	}
	err := sb.Bucket(bktTasks).ForEach(func(k, v []byte) error {
		var r taskRec
		if err := json.Unmarshal(v, &r); err != nil {
			return fmt.Errorf("decode task %q: %w", k, err)
		}
		return indexTask(sb, string(k), r)
	})
	if err != nil {
		return err
	}
	err = sb.Bucket(bktEvidence).ForEach(func(k, v []byte) error {
		task, also, err := evidenceTargets(v)
		if err != nil {
			return fmt.Errorf("decode evidence %q: %w", k, err)
		}
		return indexNewEvidence(sb, string(k), evidenceRec{Task: task, Also: also})
	})
	if err != nil {
		return err
	}
	return sb.Bucket(bktEdges).ForEach(func(k, _ []byte) error {
		from, to, ok := bytes.Cut(k, []byte{0})
		if !ok {
			return fmt.Errorf("bad edge key %q", k)
		}
		return indexSimilar(sb, string(from), string(to), true)
	})
}

// migrate builds the indexes of every session of a lethe-graph/1 file.
func migrate(tx *bolt.Tx) error {
	all := tx.Bucket(bktSessions)
	var ids [][]byte
	err := all.ForEach(func(k, v []byte) error {
		if v == nil { // a nested bucket: a session
			ids = append(ids, bytes.Clone(k))
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, id := range ids {
		if err := buildIndexes(all.Bucket(id)); err != nil {
			return fmt.Errorf("index session %q: %w", id, err)
		}
	}
	return nil
}

// dropSimilarIn deletes the SIMILAR_TO edges with both endpoints in scope
// (content hashes), found through the adjacency of each scope item: the
// cost follows the scope's edges, not the session's.
func dropSimilarIn(sb *bolt.Bucket, in map[string]bool) error {
	type pair struct{ a, b string }
	var stale []pair
	ix := sb.Bucket(bktSimilarAdj)
	for h := range in {
		err := prefixed(ix, h, func(rest []byte) error {
			if o := string(rest); in[o] && h < o {
				stale = append(stale, pair{h, o})
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	eb := sb.Bucket(bktEdges)
	for _, p := range stale {
		if err := eb.Delete(edgeKey(p.a, p.b)); err != nil {
			return err
		}
		if err := indexSimilar(sb, p.a, p.b, false); err != nil {
			return err
		}
	}
	return nil
}
