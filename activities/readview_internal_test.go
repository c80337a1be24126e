package activities

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lethe-research/lethe/algebra"
	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/contract"
	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/graph/embedded"
)

// blobDown fails every GetBlob.
type blobDown struct{ graph.Store }

var errBlobDown = errors.New("blob read down")

func (blobDown) GetBlob(context.Context, string, string) ([]byte, error) { return nil, errBlobDown }

// TestReadViewPreviousSignals: the bounded ReadState reads the previous
// iteration's signals beside the session. The gap comes from the stored
// signals when there are, from the goal when there are none, and a
// failed read fails the step with the store's error.
func TestReadViewPreviousSignals(t *testing.T) {
	ctx := t.Context()
	st, err := embedded.Open(filepath.Join(t.TempDir(), "g.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	const sid, dim = "prev-signals", 4
	goal := []float32{1, 0, 0, 0}
	if err := st.CreateSession(ctx, graph.Session{ID: sid, Goal: "g", GoalDocEmb: goal, GoalQueryEmb: goal, Dim: dim},
		graph.Task{Description: "g", EmbedText: "g", Embedding: goal}); err != nil {
		t.Fatal(err)
	}
	gap := []float64{0.6, 0.8, 0, 0}
	if err := putBlob(ctx, st, sid, signalsKey(1), signalsDoc{SVD: algebra.EmptySVD(dim), Gap: gap}); err != nil {
		t.Fatal(err)
	}
	a := &Activities{Cfg: config.Defaults(), Store: st}
	view := func(iter int) (ReadStateResult, error) {
		return a.ReadState(ctx, ReadStateInput{SessionID: sid, Iteration: iter, View: &contract.ViewParams{Ready: 4}})
	}
	for _, c := range []struct {
		iter int
		want float64
	}{{2, 0.6}, {7, 1}} { // signals of iteration 1 stored; of 6, none: the gap is the goal
		rs, err := view(c.iter)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(rs.GapGoalCos-c.want) > 1e-9 {
			t.Errorf("iteration %d: gap·goal %v, want %v", c.iter, rs.GapGoalCos, c.want)
		}
	}
	a.Store = blobDown{st}
	if _, err := view(2); !errors.Is(err, errBlobDown) || !strings.Contains(err.Error(), signalsKey(1)) {
		t.Fatalf("read view with the blob read down: %v", err)
	}
}
