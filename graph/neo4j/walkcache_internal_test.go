package neo4j

import (
	"fmt"
	"testing"

	"github.com/lethe-research/lethe/graph"
)

func walkEntryOf(sid, task, gen string, n int) *walkEntry {
	e := &walkEntry{sid: sid, task: task, gen: gen}
	for i := range n {
		id := fmt.Sprintf("%s/e/%d", sid, i)
		e.edges = append(e.edges, graph.Edge{From: id, To: task, Kind: graph.Supports})
		e.shapes = append(e.shapes, graph.Evidence{ID: id})
	}
	return e
}

func TestWalkCacheKeeps(t *testing.T) {
	for _, tc := range []struct {
		name string
		max  int
		gen  string
		n    int
		want bool
	}{
		{"large task", 1000, "g", 300, true},
		{"at the minimum", 1000, "g", walkCacheMin, true},
		{"under the minimum", 1000, "g", walkCacheMin - 1, false},
		{"no generation", 1000, "", 300, false},
		{"cache off", 0, "g", 300, false},
		{"larger than the cache", 299, "g", 300, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newWalkCache(tc.max)
			c.put(walkEntryOf("s", "s/t/1", tc.gen, tc.n))
			_, ok := c.get("s/t/1", tc.gen, tc.n)
			if ok != tc.want {
				t.Fatalf("kept %v, want %v", ok, tc.want)
			}
		})
	}
}

func TestWalkCacheChecks(t *testing.T) {
	c := newWalkCache(1000)
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
	c.put(walkEntryOf("s", "s/t/1", "g1", 301))
	if tasks, items := c.size(); tasks != 1 || items != 301 {
		t.Fatalf("after the newer copy: %d tasks, %d items, want 1 and 301", tasks, items)
	}
}

func TestWalkCacheDropsLeastRecentlyUsed(t *testing.T) {
	c := newWalkCache(900)
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
	if tasks, items := c.size(); tasks != 3 || items != 900 {
		t.Fatalf("%d tasks, %d items, want 3 and 900", tasks, items)
	}
	c.dropSession("b")
	if tasks, items := c.size(); tasks != 1 || items != 300 {
		t.Fatalf("after dropping session b: %d tasks, %d items, want 1 and 300", tasks, items)
	}
}
