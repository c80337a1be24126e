package research

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/lethe-research/lethe/algebra"
)

// DefaultQueryDedupThreshold is the cosine at or above which a query counts
// as a repeat of an earlier query of the same task.
const DefaultQueryDedupThreshold = 0.92

// QueryRecord is an earlier tool call kept for dedup.
type QueryRecord struct {
	Key       string // QueryKey of the call
	Task      string // task short id; when empty, taken from Key
	Query     string // the query text (for the reason message)
	Embedding []float32
}

// QueryKey returns the exact-dedup key of a tool call:
// "{task}:{tool}:{params_json}", where params_json is the JSON object of
// params with keys sorted and no HTML escaping. ':' and '%' in task and
// tool are percent-escaped so the key splits unambiguously (TaskOfKey).
// The key is scoped to the executing task.
func QueryKey(taskShortID, tool string, params map[string]string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if params == nil {
		params = map[string]string{}
	}
	_ = enc.Encode(params) // map[string]string always encodes; keys are sorted
	return escapeKeyPart(taskShortID) + ":" + escapeKeyPart(tool) + ":" + strings.TrimSuffix(buf.String(), "\n")
}

func escapeKeyPart(s string) string {
	s = strings.ReplaceAll(s, "%", "%25")
	return strings.ReplaceAll(s, ":", "%3A")
}

func unescapeKeyPart(s string) string {
	s = strings.ReplaceAll(s, "%3A", ":")
	return strings.ReplaceAll(s, "%25", "%")
}

// TaskOfKey returns the task short id of a QueryKey.
func TaskOfKey(key string) string {
	if i := strings.IndexByte(key, ':'); i >= 0 {
		return unescapeKeyPart(key[:i])
	}
	return ""
}

// IsDuplicateQuery reports whether a tool call repeats an earlier one and
// why: first an exact key match against any record, then the highest
// cosine between emb and the embeddings of earlier queries of the same task
// (TaskOfKey(key)); cosine >= threshold is a duplicate. A threshold that is
// NaN or <= 0 means DefaultQueryDedupThreshold; above 1 disables the
// semantic check. Records with an empty or differently sized embedding are
// skipped by the semantic check. Pure: the caller loads history and
// persists the new record.
func IsDuplicateQuery(key string, emb []float32, history []QueryRecord, threshold float64) (bool, string) {
	if math.IsNaN(threshold) || threshold <= 0 {
		threshold = DefaultQueryDedupThreshold
	}
	for _, h := range history {
		if h.Key == key {
			return true, fmt.Sprintf("exact duplicate: same task, tool and parameters as an earlier call (%s)", key)
		}
	}
	if len(emb) == 0 {
		return false, ""
	}
	task := TaskOfKey(key)
	best, bestIdx := math.Inf(-1), -1
	for i, h := range history {
		ht := h.Task
		if ht == "" {
			ht = TaskOfKey(h.Key)
		}
		if ht != task || len(h.Embedding) != len(emb) {
			continue
		}
		if c := algebra.Cosine32(emb, h.Embedding); c > best {
			best, bestIdx = c, i
		}
	}
	if bestIdx >= 0 && best >= threshold {
		h := history[bestIdx]
		q := h.Query
		if q == "" {
			q = h.Key
		}
		return true, fmt.Sprintf("semantic duplicate: cosine %.3f >= %.2f with earlier query %q of task %s", best, threshold, q, task)
	}
	return false, ""
}
