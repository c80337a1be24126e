package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"slices"
)

// strengthShards is how many blobs hold a session's strength records
// (StrengthBaseBlob + "/" + three hex digits). A sync reads and writes the
// shards of the items it refines: at 100,000 items about a hundred records
// per shard, where the single blob was 100,000 records decoded and
// encoded on every sync (a third of Focus at 100k on bench/long). Fixed: a
// storage layout, not a decision threshold; changing it needs a migration
// like migrateStrengths.
const strengthShards = 1024

// strengthShard is the blob key of the shard that holds id's record.
func strengthShard(id string) string {
	h := fnv.New32a()
	h.Write([]byte(id))
	return fmt.Sprintf("%s/%03x", StrengthBaseBlob, h.Sum32()%strengthShards)
}

// loadStrengthRecords reads the records of the shards that hold ids: the
// records by id, and each shard read (to write back whole). A session
// never refined has none, which is not an error. A session written before
// the shards has its single blob moved into them first.
func loadStrengthRecords(ctx context.Context, s Store, sessionID string, ids []string) (map[string]strengthRecord, map[string]map[string]strengthRecord, error) {
	keys := make([]string, 0, len(ids)+1)
	for _, id := range ids {
		keys = append(keys, strengthShard(id))
	}
	keys = sortedSet(keys)
	raw, err := s.GetBlobs(ctx, sessionID, append(slices.Clone(keys), StrengthBaseBlob))
	if err != nil {
		return nil, nil, fmt.Errorf("read strength records: %w", err)
	}
	if legacy, ok := raw[StrengthBaseBlob]; ok {
		if raw, err = migrateStrengths(ctx, s, sessionID, legacy, keys); err != nil {
			return nil, nil, err
		}
	}
	rec := map[string]strengthRecord{}
	shards := make(map[string]map[string]strengthRecord, len(keys))
	for _, k := range keys {
		m := map[string]strengthRecord{}
		if data, ok := raw[k]; ok {
			if err := json.Unmarshal(data, &m); err != nil {
				return nil, nil, fmt.Errorf("decode %s: %w", k, err)
			}
		}
		shards[k] = m
		for id, r := range m {
			rec[id] = r
		}
	}
	return rec, shards, nil
}

// migrateStrengths splits the single blob of an older session into the
// shards (one transaction), deletes it, and returns the shards among keys.
// A crash between the two writes repeats the split from the same blob,
// which writes the same shards.
func migrateStrengths(ctx context.Context, s Store, sessionID string, legacy []byte, keys []string) (map[string][]byte, error) {
	all := map[string]strengthRecord{}
	if err := json.Unmarshal(legacy, &all); err != nil {
		return nil, fmt.Errorf("decode %s: %w", StrengthBaseBlob, err)
	}
	byShard := map[string]map[string]strengthRecord{}
	for id, r := range all {
		k := strengthShard(id)
		if byShard[k] == nil {
			byShard[k] = map[string]strengthRecord{}
		}
		byShard[k][id] = r
	}
	blobs := make(map[string][]byte, len(byShard))
	for k, m := range byShard {
		data, err := json.Marshal(m)
		if err != nil {
			return nil, err
		}
		blobs[k] = data
	}
	if err := s.PutBlobs(ctx, sessionID, blobs); err != nil {
		return nil, fmt.Errorf("split %s: %w", StrengthBaseBlob, err)
	}
	if err := s.DeleteBlob(ctx, sessionID, StrengthBaseBlob); err != nil {
		return nil, fmt.Errorf("split %s: %w", StrengthBaseBlob, err)
	}
	out := map[string][]byte{}
	for _, k := range keys {
		if data, ok := blobs[k]; ok {
			out[k] = data
		}
	}
	return out, nil
}

// saveStrengthRecords writes the shards whose records changed, in one
// transaction, so that a sync with nothing new writes nothing.
func saveStrengthRecords(ctx context.Context, s Store, sessionID string, shards map[string]map[string]strengthRecord, next map[string]strengthRecord) error {
	touched := map[string]bool{}
	for id, r := range next {
		k := strengthShard(id)
		m, ok := shards[k]
		if !ok {
			return fmt.Errorf("strength record of %s: shard %s was not read", id, k)
		}
		if old, ok := m[id]; ok && old == r {
			continue
		}
		m[id] = r
		touched[k] = true
	}
	if len(touched) == 0 {
		return nil
	}
	blobs := make(map[string][]byte, len(touched))
	for k := range touched {
		data, err := json.Marshal(shards[k]) // map keys are sorted: deterministic bytes
		if err != nil {
			return err
		}
		blobs[k] = data
	}
	return s.PutBlobs(ctx, sessionID, blobs)
}
