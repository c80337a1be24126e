package neo4j

import (
	"fmt"
	"testing"

	"github.com/lethe-research/lethe/graph"
)

// get is the task's copy when it is current, marked used, as settle
// takes it.
func (c *walkCache) get(task, gen string, n int) (*walkEntry, bool) {
	e := c.lookup(task)
	if !e.current(gen, n) {
		return nil, false
	}
	c.touch(task)
	return e, true
}

// walkEntryOf is a task's entry of n items of 384 dimensions.
func walkEntryOf(sid, task, gen string, n int) *walkEntry {
	e := &walkEntry{sid: sid, task: task, gen: gen}
	for i := range n {
		id := fmt.Sprintf("%s/e/%04d", sid, i)
		e.edges = append(e.edges, graph.Edge{From: id, To: task, Kind: graph.Supports})
		e.shapes = append(e.shapes, graph.Evidence{ID: id, Embedding: make([]float32, 384)})
	}
	return e
}

func TestWalkEntrySize(t *testing.T) {
	e := walkEntryOf("s", "s/t/1", "g", 300)
	per := e.size() / 300
	if per < 4*384+walkItemOverhead || per > 4*384+walkItemOverhead+64 {
		t.Fatalf("an item of 384 dimensions counts %d bytes, want its embedding, ids and overhead", per)
	}
}

func TestWalkCacheKeeps(t *testing.T) {
	room := walkEntryOf("s", "s/t/1", "g", 300).size()
	for _, tc := range []struct {
		name string
		max  int64
		gen  string
		n    int
		want bool
	}{
		{"large task", 4 * room, "g", 300, true},
		{"at the minimum", 4 * room, "g", walkCacheMin, true},
		{"under the minimum", 4 * room, "g", walkCacheMin - 1, false},
		{"no generation", 4 * room, "", 300, false},
		{"cache off", 0, "g", 300, false},
		{"larger than the cache", room - 1, "g", 300, false},
		{"as large as the cache", room, "g", 300, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newWalkCache(tc.max)
			c.put(walkEntryOf("s", "s/t/1", tc.gen, tc.n))
			if _, ok := c.get("s/t/1", tc.gen, tc.n); ok != tc.want {
				t.Fatalf("kept %v, want %v", ok, tc.want)
			}
			if _, _, b := c.held(); b > tc.max {
				t.Fatalf("holds %d bytes over its %d", b, tc.max)
			}
		})
	}
}

func TestWalkCacheChecks(t *testing.T) {
	c := newWalkCache(1 << 30)
	c.put(walkEntryOf("s", "s/t/1", "g1", 300))
	for _, tc := range []struct {
		name, gen string
		n         int
		want      bool
	}{
		{"current", "g1", 300, true},
		{"one more item", "g1", 301, false},
		{"another generation", "g2", 300, false},
	} {
		if _, ok := c.get("s/t/1", tc.gen, tc.n); ok != tc.want {
			t.Errorf("%s: hit %v, want %v", tc.name, ok, tc.want)
		}
	}
	if _, ok := c.get("s/t/2", "g1", 300); ok {
		t.Error("a task never kept was found")
	}
	// A newer copy replaces the older one.
	newer := walkEntryOf("s", "s/t/1", "g1", 301)
	c.put(newer)
	if tasks, items, b := c.held(); tasks != 1 || items != 301 || b != newer.size() {
		t.Fatalf("after the newer copy: %d tasks, %d items, %d bytes, want 1, 301, %d", tasks, items, b, newer.size())
	}
}

func TestWalkCacheDropsLeastRecentlyUsed(t *testing.T) {
	room := walkEntryOf("a", "a/t/1", "g", 300).size()
	c := newWalkCache(3 * room)
	for _, task := range []string{"a/t/1", "a/t/2", "b/t/1"} {
		c.put(walkEntryOf(task[:1], task, "g", 300))
	}
	if _, ok := c.get("a/t/1", "g", 300); !ok { // a/t/1 is now the most recent
		t.Fatal("a/t/1 was dropped before the cache was full")
	}
	c.put(walkEntryOf("b", "b/t/2", "g", 300))
	for task, want := range map[string]bool{"a/t/1": true, "a/t/2": false, "b/t/1": true, "b/t/2": true} {
		if _, ok := c.get(task, "g", 300); ok != want {
			t.Errorf("%s kept %v, want %v", task, ok, want)
		}
	}
	if tasks, items, b := c.held(); tasks != 3 || items != 900 || b > 3*room {
		t.Fatalf("%d tasks, %d items, %d bytes, want 3, 900 and at most %d", tasks, items, b, 3*room)
	}
	c.dropSession("b")
	if tasks, items, _ := c.held(); tasks != 1 || items != 300 {
		t.Fatalf("after dropping session b: %d tasks, %d items, want 1 and 300", tasks, items)
	}
}
