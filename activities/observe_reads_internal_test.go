package activities

import (
	"context"
	"errors"
	"testing"

	"github.com/lethe-research/lethe/algebra"
	"github.com/lethe-research/lethe/graph"
)

// sessionDown is a store whose session and task reads fail: the other
// two of Observe's reads at once.
type sessionDown struct {
	graph.Store
}

var errDown = errors.New("store down")

func (sessionDown) GetSession(context.Context, string) (graph.Session, error) {
	return graph.Session{}, errDown
}

func (sessionDown) TasksWithStatus(context.Context, string, graph.Status) ([]graph.Task, error) {
	return nil, errDown
}

// TestObserveReadsAtOnce: Observe reads its iteration's blob, the setup
// and the observed tasks at once. A retry of an observed iteration
// answers from the blob whatever the other two reads found, as when they
// came after it; an iteration not observed yet fails with their error.
func TestObserveReadsAtOnce(t *testing.T) {
	o := newObsSession(t, 32, 4)
	inc := algebra.IncrementalParams{Keep: 3}
	var first Observation
	for iter := 1; iter <= 2; iter++ {
		o.add(t, iter, 10)
		first, _ = o.observe(t, iter, inc)
	}
	o.a.Store = sessionDown{o.store}
	sp := algebra.DefaultSignalParams()
	sp.Incremental = inc
	in := ObserveInput{SessionID: o.sid, Iteration: 2, Task: graph.RootShortID, Signals: &sp}
	got, st, err := o.a.observe(t.Context(), in)
	if err != nil || got != first || st.path != "" {
		t.Fatalf("retry of iteration 2 with the session read down: %+v, %q, %v; want the stored %+v", got, st.path, err, first)
	}
	in.Iteration = 3
	if _, _, err := o.a.observe(t.Context(), in); !errors.Is(err, errDown) {
		t.Fatalf("iteration 3 with the session read down: %v, want the store's error", err)
	}
}

// sinceDown is a store whose EvidenceSince fails.
type sinceDown struct {
	graph.Store
}

func (sinceDown) EvidenceSince(context.Context, string, int) ([]graph.Evidence, error) {
	return nil, errDown
}

// TestObserveWindowReadAtOnce: Observe reads the novelty window beside its
// other reads, before it knows whether the path is incremental. Its error
// fails an incremental observation only; a cold one (the first, or every
// RecomputeEvery) reads every row and never needs the window.
func TestObserveWindowReadAtOnce(t *testing.T) {
	o := newObsSession(t, 32, 4)
	o.add(t, 1, 10)
	store := o.a.Store
	o.a.Store = sinceDown{store}
	inc := algebra.IncrementalParams{Keep: 3}
	if _, st := o.observe(t, 1, inc); st.path != "cold" {
		t.Fatalf("iteration 1 with the window read down: path %q, want cold", st.path)
	}
	o.add(t, 2, 10)
	sp := algebra.DefaultSignalParams()
	sp.Incremental = inc
	in := ObserveInput{SessionID: o.sid, Iteration: 2, Task: graph.RootShortID, Signals: &sp}
	if _, _, err := o.a.observe(t.Context(), in); !errors.Is(err, errDown) {
		t.Fatalf("incremental iteration 2 with the window read down: %v, want the store's error", err)
	}
	o.a.Store = store
	if _, st := o.observe(t, 2, inc); st.path != "incremental" {
		t.Fatalf("iteration 2 with the store back: path %q, want incremental", st.path)
	}
}

// blobsDown is a store whose GetBlobs fails with a store error.
type blobsDown struct {
	graph.Store
}

func (blobsDown) GetBlobs(context.Context, string, []string) (map[string][]byte, error) {
	return nil, errDown
}

// focusDown is a store whose task reads by id fail.
type focusDown struct {
	graph.Store
}

func (focusDown) TasksByIDs(context.Context, string, []string) ([]graph.Task, error) {
	return nil, errDown
}

// TestObserveSignalsBlobsOneRead: the iteration's and the previous
// signals blobs come in one GetBlobs. Its failure fails the observation
// (it is not read as "no blob", which would start the signals over); the
// focus read beside the ACTIVE tasks fails it only when the focus is not
// among them.
func TestObserveSignalsBlobsOneRead(t *testing.T) {
	o := newObsSession(t, 32, 4)
	inc := algebra.IncrementalParams{Keep: 3}
	o.add(t, 1, 10)
	o.observe(t, 1, inc)
	o.add(t, 2, 10)
	store := o.a.Store
	sp := algebra.DefaultSignalParams()
	sp.Incremental = inc
	in := ObserveInput{SessionID: o.sid, Iteration: 2, Task: graph.RootShortID, Signals: &sp}
	o.a.Store = blobsDown{store}
	if _, _, err := o.a.observe(t.Context(), in); !errors.Is(err, errDown) {
		t.Fatalf("iteration 2 with GetBlobs down: %v, want the store's error", err)
	}
	// The root is the focus, with its own read down: PENDING fails the
	// observation, ACTIVE (among the ACTIVE tasks) does not need the read.
	// In that order: the second commits the iteration.
	o.a.Store = focusDown{store}
	for _, c := range []struct {
		status graph.Status
		fails  bool
	}{{graph.Pending, true}, {graph.Active, false}} {
		if _, err := store.SetStatus(t.Context(), o.sid, graph.RootShortID, []graph.Status{graph.Pending, graph.Active}, c.status); err != nil {
			t.Fatal(err)
		}
		_, st, err := o.a.observe(t.Context(), in)
		if c.fails && !errors.Is(err, errDown) {
			t.Fatalf("focus %s, its own read down: %v, want the store's error", c.status, err)
		}
		if !c.fails && (err != nil || st.path != "incremental") {
			t.Fatalf("focus %s, its own read down: path %q, %v; want an incremental observation", c.status, st.path, err)
		}
	}
}
