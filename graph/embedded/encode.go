package embedded

import (
	"fmt"
	"slices"

	"github.com/lethe-research/lethe/graph"
)

// Records are JSON documents. Embeddings are packed as little-endian IEEE-754
// float32 (4 bytes per component) and appear base64-encoded inside the JSON,
// which is exact and about 2.5 times smaller than a JSON number list.
// Task and evidence ids are not stored: they are derived from the session id
// and the bucket key (short id, content hash).

type sessionRec struct {
	Goal         string `json:"goal"`
	GoalDocEmb   []byte `json:"goal_doc_emb,omitempty"`
	GoalQueryEmb []byte `json:"goal_query_emb,omitempty"`
	Dim          int    `json:"dim"`
}

type taskRec struct {
	Description     string   `json:"description"`
	EmbedText       string   `json:"embed_text"`
	Embedding       []byte   `json:"embedding,omitempty"`
	Status          string   `json:"status"`
	Depth           int      `json:"depth"`
	NProductive     int      `json:"n_productive"`
	ResultSummary   string   `json:"result_summary,omitempty"`
	ResultEmbedding []byte   `json:"result_embedding,omitempty"`
	CreatedIter     int      `json:"created_iter"`
	Parent          string   `json:"parent,omitempty"`     // short id of the SUBTASK_OF target
	DependsOn       []string `json:"depends_on,omitempty"` // short ids of DEPENDS_ON targets, sorted
}

type evidenceRec struct {
	Task        string   `json:"task"`           // short id of the first SUPPORTS target
	Also        []string `json:"also,omitempty"` // short ids of the further SUPPORTS targets, in link order
	Content     string   `json:"content"`
	SourceURL   string   `json:"source_url,omitempty"`
	Title       string   `json:"title,omitempty"`
	Kind        string   `json:"kind"`
	Strength    float64  `json:"strength"`
	Embedding   []byte   `json:"embedding,omitempty"`
	CreatedIter int      `json:"created_iter"`
}

type similarRec struct {
	Weight float64 `json:"weight"`
	Label  string  `json:"label,omitempty"`
}

func packF32(v []float32) []byte { return graph.PackF32(v) }

func unpackF32(b []byte) ([]float32, error) {
	v, err := graph.UnpackF32(b)
	if err != nil {
		return nil, fmt.Errorf("embedded: %w", err)
	}
	return v, nil
}

func taskToRec(t graph.Task) taskRec {
	r := taskRec{
		Description:     t.Description,
		EmbedText:       t.EmbedText,
		Embedding:       packF32(t.Embedding),
		Status:          string(t.Status),
		Depth:           t.Depth,
		NProductive:     t.NProductive,
		ResultSummary:   t.ResultSummary,
		ResultEmbedding: packF32(t.ResultEmbedding),
		CreatedIter:     t.CreatedIter,
	}
	if t.Parent != "" {
		r.Parent = graph.ShortIDOf(t.Parent)
	}
	for _, d := range t.DependsOn {
		r.DependsOn = append(r.DependsOn, graph.ShortIDOf(d))
	}
	return r
}

func recToTask(sessionID, shortID string, r taskRec) (graph.Task, error) {
	emb, err := unpackF32(r.Embedding)
	if err != nil {
		return graph.Task{}, err
	}
	remb, err := unpackF32(r.ResultEmbedding)
	if err != nil {
		return graph.Task{}, err
	}
	t := graph.Task{
		ID:              graph.TaskID(sessionID, shortID),
		SessionID:       sessionID,
		ShortID:         shortID,
		Description:     r.Description,
		EmbedText:       r.EmbedText,
		Embedding:       emb,
		Status:          graph.Status(r.Status),
		Depth:           r.Depth,
		NProductive:     r.NProductive,
		ResultSummary:   r.ResultSummary,
		ResultEmbedding: remb,
		CreatedIter:     r.CreatedIter,
	}
	if r.Parent != "" {
		t.Parent = graph.TaskID(sessionID, r.Parent)
	}
	for _, d := range r.DependsOn {
		t.DependsOn = append(t.DependsOn, graph.TaskID(sessionID, d))
	}
	return t, nil
}

func evidenceToRec(e graph.Evidence) evidenceRec {
	return evidenceRec{
		Task:        graph.ShortIDOf(e.TaskID),
		Also:        shortIDs(e.Also),
		Content:     e.Content,
		SourceURL:   e.SourceURL,
		Title:       e.Title,
		Kind:        string(e.Kind),
		Strength:    e.Strength,
		Embedding:   packF32(e.Embedding),
		CreatedIter: e.CreatedIter,
	}
}

func recToEvidence(sessionID, hash string, r evidenceRec) (graph.Evidence, error) {
	emb, err := unpackF32(r.Embedding)
	if err != nil {
		return graph.Evidence{}, err
	}
	return graph.Evidence{
		ID:          graph.EvidenceID(sessionID, hash),
		SessionID:   sessionID,
		TaskID:      graph.TaskID(sessionID, r.Task),
		Also:        taskIDs(sessionID, r.Also),
		Content:     r.Content,
		SourceURL:   r.SourceURL,
		Title:       r.Title,
		Kind:        graph.EvidenceKind(r.Kind),
		Strength:    r.Strength,
		Embedding:   emb,
		CreatedIter: r.CreatedIter,
		ContentHash: hash,
	}, nil
}

// supports reports whether the record has a SUPPORTS edge to the task.
func (r evidenceRec) supports(shortID string) bool {
	return r.Task == shortID || slices.Contains(r.Also, shortID)
}

func shortIDs(ids []string) []string {
	if len(ids) == 0 {
		return nil
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = graph.ShortIDOf(id)
	}
	return out
}

func taskIDs(sessionID string, short []string) []string {
	if len(short) == 0 {
		return nil
	}
	out := make([]string, len(short))
	for i, s := range short {
		out[i] = graph.TaskID(sessionID, s)
	}
	return out
}
