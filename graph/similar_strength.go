package graph

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"math"
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
			if m, err = decodeShard(data); err != nil {
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
// shards and deletes it, in one commit, and returns the shards among keys.
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
		blobs[k] = encodeShard(m)
	}
	if err := s.Commit(ctx, sessionID, Writes{Blobs: blobs, DeleteBlobs: []string{StrengthBaseBlob}}); err != nil {
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

// strengthBlobs adds to w the shards whose records changed, so that a
// sync with nothing new writes none.
func strengthBlobs(w *Writes, shards map[string]map[string]strengthRecord, next map[string]strengthRecord) error {
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
	for k := range touched {
		if w.Blobs == nil {
			w.Blobs = map[string][]byte{}
		}
		w.Blobs[k] = encodeShard(shards[k])
	}
	return nil
}

// shardBinary opens a shard in the binary layout: the byte, a uvarint
// count, then per record, in id order, a uvarint length, the id and the
// three float64s (base, refined, prev) as little-endian bits. A shard
// written before 2026-12-02 is a JSON object, whose first byte is '{'.
// Measured on bench/long at 100,000 items: decoding and encoding the JSON
// shards a sync touches was 10 ms of its 35 ms.
const shardBinary = 0x01

// encodeShard is the binary layout of m: the same records give the same
// bytes, so an unchanged shard is never written as changed.
func encodeShard(m map[string]strengthRecord) []byte {
	ids := slices.Sorted(maps.Keys(m))
	n := 1 + binary.MaxVarintLen64
	for _, id := range ids {
		n += binary.MaxVarintLen64 + len(id) + 24
	}
	out := make([]byte, 0, n)
	out = append(out, shardBinary)
	out = binary.AppendUvarint(out, uint64(len(ids)))
	for _, id := range ids {
		r := m[id]
		out = binary.AppendUvarint(out, uint64(len(id)))
		out = append(out, id...)
		for _, f := range [3]float64{r.Base, r.Refined, r.Prev} {
			out = binary.LittleEndian.AppendUint64(out, math.Float64bits(f))
		}
	}
	return out
}

var errShortShard = errors.New("strength shard ends early")

// decodeShard reads a shard in either layout.
func decodeShard(data []byte) (map[string]strengthRecord, error) {
	if len(data) > 0 && data[0] == '{' {
		m := map[string]strengthRecord{}
		if err := json.Unmarshal(data, &m); err != nil {
			return nil, err
		}
		return m, nil
	}
	if len(data) == 0 || data[0] != shardBinary {
		return nil, fmt.Errorf("strength shard: unknown layout")
	}
	rest := data[1:]
	count, w := binary.Uvarint(rest)
	if w <= 0 || count > uint64(len(rest)) {
		return nil, errShortShard
	}
	rest = rest[w:]
	m := make(map[string]strengthRecord, count)
	for range count {
		l, w := binary.Uvarint(rest)
		if w <= 0 || uint64(len(rest)-w) < l+24 {
			return nil, errShortShard
		}
		id := string(rest[w : w+int(l)])
		f := rest[w+int(l):]
		m[id] = strengthRecord{
			Base:    math.Float64frombits(binary.LittleEndian.Uint64(f)),
			Refined: math.Float64frombits(binary.LittleEndian.Uint64(f[8:])),
			Prev:    math.Float64frombits(binary.LittleEndian.Uint64(f[16:])),
		}
		rest = f[24:]
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("strength shard: %d bytes after the records", len(rest))
	}
	return m, nil
}

// StrengthShardJSON is a strength shard (either layout) as the JSON object
// of the layout before 2026-12-02, for the tests that rebuild an older
// session's blobs.
func StrengthShardJSON(data []byte) ([]byte, error) {
	m, err := decodeShard(data)
	if err != nil {
		return nil, err
	}
	return json.Marshal(m)
}
