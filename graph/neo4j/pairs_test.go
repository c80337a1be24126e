package neo4j_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/graph/graphtest"
)

// TestSimilarPairs: the pairs a commit writes come back from
// SimilarPairsOf by either end, once each, From < To; a pair written
// again takes the new weight; a reset deletes the session's pairs only;
// no other read sees them as edges; and a session reset removes them.
func TestSimilarPairs(t *testing.T) {
	cfg := serverConfig(t)
	s := open(t, cfg)
	ctx := t.Context()
	if !s.KeepsPairs() {
		t.Fatal("the Neo4j store keeps no pairs")
	}
	var sids []string
	ev := map[string][]string{}
	for i := range 2 {
		sid := fmt.Sprintf("pairs-%d-%d", i, time.Now().UnixNano())
		t.Cleanup(func() { _ = s.ResetSession(context.Background(), sid) })
		if err := s.CreateSession(ctx, graph.Session{ID: sid, Goal: "g", GoalDocEmb: graphtest.Unit(0), GoalQueryEmb: graphtest.Unit(0), Dim: graphtest.Dim},
			graph.Task{Description: "g", EmbedText: "g", Embedding: graphtest.Unit(0)}); err != nil {
			t.Fatal(err)
		}
		var items []graph.Evidence
		for k := range 4 {
			c := fmt.Sprintf("item %d", k)
			items = append(items, graph.Evidence{Content: c, Embedding: graphtest.Unit(k + 1)})
			ev[sid] = append(ev[sid], graph.EvidenceID(sid, graph.ContentHash(c)))
		}
		if _, err := s.AddEvidence(ctx, sid, "k", graph.RootShortID, items); err != nil {
			t.Fatal(err)
		}
		sids = append(sids, sid)
	}
	a, b := sids[0], sids[1]
	e := ev[a]
	pair := func(x, y string, w float64) graph.Edge {
		return graph.Edge{From: x, To: y, Kind: graph.SimilarTo, Weight: w}
	}
	// norm is what SimilarPairsOf answers: From < To, in SortEdges order.
	norm := func(ps ...graph.Edge) string {
		for i := range ps {
			if ps[i].From > ps[i].To {
				ps[i].From, ps[i].To = ps[i].To, ps[i].From
			}
		}
		graph.SortEdges(ps)
		return fmt.Sprint(ps)
	}
	commit := func(sid string, w graph.Writes) {
		t.Helper()
		if err := s.Commit(ctx, sid, w); err != nil {
			t.Fatal(err)
		}
	}
	of := func(sid string, ids ...string) string {
		t.Helper()
		ps, err := s.SimilarPairsOf(ctx, sid, ids)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(ps)
	}
	commit(a, graph.Writes{Pairs: []graph.Edge{pair(e[1], e[0], 0.91), pair(e[1], e[2], 0.95), pair(e[3], e[3], 1)}})
	commit(b, graph.Writes{Pairs: []graph.Edge{pair(ev[b][0], ev[b][1], 0.93)}})
	want := norm(pair(e[0], e[1], 0.91), pair(e[1], e[2], 0.95))
	if got := of(a, e[1]); got != want {
		t.Fatalf("pairs of %s: %s, want %s", e[1], got, want)
	}
	if got := of(a, e[0], e[2], e[3]); got != want {
		t.Fatalf("pairs of the other ends: %s, want %s (a self pair is dropped)", got, want)
	}
	commit(a, graph.Writes{Pairs: []graph.Edge{pair(e[0], e[1], 0.97)}})
	if got, want := of(a, e[0]), norm(pair(e[0], e[1], 0.97)); got != want {
		t.Fatalf("a pair written again: %s, want %s", got, want)
	}
	if es, err := s.Edges(ctx, a); err != nil || len(es) != 4 { // the four SUPPORTS edges
		t.Fatalf("edges with pairs stored: %v, %v", es, err)
	}
	commit(a, graph.Writes{ResetPairs: true, Pairs: []graph.Edge{pair(e[2], e[3], 0.9)}})
	if got, want := of(a, e...), norm(pair(e[2], e[3], 0.9)); got != want {
		t.Fatalf("after a reset: %s, want %s", got, want)
	}
	if got := of(b, ev[b]...); got != norm(pair(ev[b][0], ev[b][1], 0.93)) {
		t.Fatalf("another session's reset reached this one: %s", got)
	}
	if _, err := s.SimilarPairsOf(ctx, "no-such-session", e); !errors.Is(err, graph.ErrNotFound) {
		t.Fatalf("pairs of an unknown session: %v", err)
	}
	if err := s.ResetSession(ctx, a); err != nil {
		t.Fatal(err)
	}
	cypher := cypherOf(t, cfg)
	if rows := cypher("MATCH (x:Evidence)-[r:SIMILAR_PAIR]->() WHERE x.session_id = $sid RETURN count(r)", map[string]any{"sid": a}); rows[0].Values[0].(int64) != 0 {
		t.Fatalf("%v pairs left after the session's reset", rows[0].Values[0])
	}
}
