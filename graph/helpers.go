package graph

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// ReadyTasks returns the PENDING tasks of ts whose DEPENDS_ON targets are
// all DONE (a prerequisite missing from ts counts as not done), in the order
// of ts. Backends that load the task list use it for ReadySet.
func ReadyTasks(ts []Task) []Task {
	status := make(map[string]Status, len(ts))
	for _, t := range ts {
		status[t.ID] = t.Status
	}
	var out []Task
	for _, t := range ts {
		if t.Status != Pending {
			continue
		}
		ready := true
		for _, d := range t.DependsOn {
			if status[d] != Done {
				ready = false
				break
			}
		}
		if ready {
			out = append(out, t)
		}
	}
	return out
}

// PrepareEvidence fills the derived fields of an item handed to AddEvidence:
// ContentHash (ContentHash(Content) when empty), ID, SessionID, TaskID and
// Kind (KindText when empty). It rejects empty content, hashes containing
// NUL or '/', and strengths that are not finite.
func PrepareEvidence(sessionID, taskID string, e Evidence) (Evidence, error) {
	if strings.TrimSpace(e.Content) == "" {
		return Evidence{}, errors.New("graph: evidence with empty content")
	}
	if e.ContentHash == "" {
		e.ContentHash = ContentHash(e.Content)
	}
	if strings.ContainsAny(e.ContentHash, "\x00/") {
		return Evidence{}, fmt.Errorf("graph: evidence content hash %q contains NUL or '/'", e.ContentHash)
	}
	if math.IsNaN(e.Strength) || math.IsInf(e.Strength, 0) {
		return Evidence{}, fmt.Errorf("graph: evidence strength %v", e.Strength)
	}
	if e.Kind == "" {
		e.Kind = KindText
	}
	e.ID = EvidenceID(sessionID, e.ContentHash)
	e.SessionID = sessionID
	e.TaskID = taskID
	e.Embedding = slices.Clone(e.Embedding)
	return e, nil
}
