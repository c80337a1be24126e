package neo4j

import (
	"fmt"
	"math"

	"github.com/lethe-research/lethe/graph"
)

// Property encoding. Embeddings are lists of floats: Cypher has one float
// type (64-bit), so a float32 vector is stored as the list of its exactly
// widened components, and read back by narrowing, which is exact too. The
// driver returns lists as []any of float64. Empty vectors and empty
// optional strings are stored as absent properties (null).
//
// Evidence embeddings are also stored packed (packedSuffix): the float
// list is what the vector index reads, and the packed copy is what crosses
// the wire. A list of 384 floats is 3.5 KB of Bolt and 384 boxed values
// for the driver to decode; the packed copy is 1.5 KB and one copy
// (docs/neo4j.md, "Embeddings on the wire"). Nodes an older binary wrote
// have the list only, and every read falls back to it.
//
// A task's embedding and result embedding are stored packed in the
// property itself, with no list: no index reads them, and a second copy
// could go stale, since they are rewritten (update, complete) and an
// older binary rewriting one during a rolling upgrade writes the list
// alone. In one property the last write wins whichever binary made it,
// and asF32 reads both forms (as every binary since 3823b5f does).

func f32list(v []float32) any {
	if len(v) == 0 {
		return nil
	}
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

func asF32(v any) ([]float32, error) {
	switch l := v.(type) {
	case nil:
		return nil, nil
	case []any:
		if len(l) == 0 {
			return nil, nil
		}
		out := make([]float32, len(l))
		for i, x := range l {
			switch f := x.(type) {
			case float64:
				out[i] = float32(f)
			case int64:
				out[i] = float32(f)
			default:
				return nil, fmt.Errorf("embedding component %d is %T, not a float", i, x)
			}
		}
		return out, nil
	case []float64:
		out := make([]float32, len(l))
		for i, f := range l {
			out[i] = float32(f)
		}
		return out, nil
	case []byte:
		return unpackF32(l)
	}
	return nil, fmt.Errorf("embedding is %T, not a list", v)
}

// packedSuffix names the packed copy of an embedding property:
// "embedding" is stored packed as "embedding_f32".
const packedSuffix = "_f32"

// packF32 is v as little-endian float32 bits, or nil (an absent property)
// when v is empty, as f32list stores it.
func packF32(v []float32) any {
	if len(v) == 0 {
		return nil
	}
	return graph.PackF32(v)
}

func unpackF32(b []byte) ([]float32, error) { return graph.UnpackF32(b) }

// wireVec is the Cypher expression for a node's embedding property as it
// should cross the wire: the packed copy, else (a node an older binary
// wrote) the float list.
func wireVec(node, prop string) string {
	return fmt.Sprintf("coalesce(%[1]s.%[2]s%[3]s, %[1]s.%[2]s)", node, prop, packedSuffix)
}

// evidenceWire projects a whole evidence node for a read: the float list
// is left out where the node holds its packed copy, so that no vector
// crosses the wire twice.
const evidenceWire = `e {.*, embedding: CASE WHEN e.embedding_f32 IS NULL THEN e.embedding END}`

func optString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// props is a node's property map with typed getters; a missing or null
// property reads as the zero value.
type props map[string]any

func (p props) str(k string) string {
	s, _ := p[k].(string)
	return s
}

func (p props) int(k string) int {
	switch v := p[k].(type) {
	case int64:
		return int(v)
	case float64:
		return int(v)
	}
	return 0
}

func (p props) float(k string) float64 {
	switch v := p[k].(type) {
	case float64:
		return v
	case int64:
		return float64(v)
	}
	return 0
}

// emb reads the embedding property k, from its packed copy when the
// row holds one.
func (p props) emb(k string) ([]float32, error) {
	raw := p[k]
	if packed, ok := p[k+packedSuffix]; ok && packed != nil {
		raw = packed
	}
	v, err := asF32(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", k, err)
	}
	return v, nil
}

func strList(v any) []string {
	l, _ := v.([]any)
	if len(l) == 0 {
		return nil
	}
	out := make([]string, 0, len(l))
	for _, x := range l {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// taskProps is the property map of a Task node.
func taskProps(t graph.Task) map[string]any {
	return map[string]any{
		"id":               t.ID,
		"session_id":       t.SessionID,
		"short_id":         t.ShortID,
		"description":      t.Description,
		"embed_text":       t.EmbedText,
		"embedding":        packF32(t.Embedding),
		"status":           string(t.Status),
		"depth":            int64(t.Depth),
		"n_productive":     int64(t.NProductive),
		"result_summary":   optString(t.ResultSummary),
		"result_embedding": packF32(t.ResultEmbedding),
		"created_iter":     int64(t.CreatedIter),
	}
}

func taskFrom(p props, parent, deps any) (graph.Task, error) {
	emb, err := p.emb("embedding")
	if err != nil {
		return graph.Task{}, err
	}
	remb, err := p.emb("result_embedding")
	if err != nil {
		return graph.Task{}, err
	}
	t := graph.Task{
		ID:              p.str("id"),
		SessionID:       p.str("session_id"),
		ShortID:         p.str("short_id"),
		Description:     p.str("description"),
		EmbedText:       p.str("embed_text"),
		Embedding:       emb,
		Status:          graph.Status(p.str("status")),
		Depth:           p.int("depth"),
		NProductive:     p.int("n_productive"),
		ResultSummary:   p.str("result_summary"),
		ResultEmbedding: remb,
		CreatedIter:     p.int("created_iter"),
	}
	if ps := strList(parent); len(ps) > 0 {
		t.Parent = ps[0]
	}
	t.DependsOn = sortedStrings(strList(deps))
	return t, nil
}

// evidenceProps is the property map of an Evidence node.
func evidenceProps(e graph.Evidence) map[string]any {
	return map[string]any{
		"id":            e.ID,
		"session_id":    e.SessionID,
		"content":       e.Content,
		"source_url":    optString(e.SourceURL),
		"title":         optString(e.Title),
		"kind":          string(e.Kind),
		"strength":      e.Strength,
		"embedding":     f32list(e.Embedding),
		"embedding_f32": packF32(e.Embedding),
		"created_iter":  int64(e.CreatedIter),
		"content_hash":  e.ContentHash,
	}
}

func evidenceFrom(p props, taskID string, also []string) (graph.Evidence, error) {
	if len(also) == 0 {
		also = nil // as the embedded store gives it
	}
	emb, err := p.emb("embedding")
	if err != nil {
		return graph.Evidence{}, err
	}
	return graph.Evidence{
		ID:          p.str("id"),
		SessionID:   p.str("session_id"),
		TaskID:      taskID,
		Also:        also,
		Content:     p.str("content"),
		SourceURL:   p.str("source_url"),
		Title:       p.str("title"),
		Kind:        graph.EvidenceKind(p.str("kind")),
		Strength:    p.float("strength"),
		Embedding:   emb,
		CreatedIter: p.int("created_iter"),
		ContentHash: p.str("content_hash"),
	}, nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
