package graph

import "slices"

// FindCycle looks for a directed cycle in the graph given as adjacency lists
// (node -> successors). It returns one cycle as a closed path [a, b, ..., a],
// or nil when the graph is acyclic. The search is deterministic: nodes and
// successors are visited in sorted order. Successors that are not keys of
// adj are treated as sinks.
func FindCycle(adj map[string][]string) []string {
	const (
		white = iota
		grey
		black
	)
	color := make(map[string]int, len(adj))
	nodes := make([]string, 0, len(adj))
	for n := range adj {
		nodes = append(nodes, n)
	}
	slices.Sort(nodes)
	succ := func(n string) []string {
		s := slices.Clone(adj[n])
		slices.Sort(s)
		return s
	}
	type frame struct {
		node string
		next []string
	}
	for _, start := range nodes {
		if color[start] != white {
			continue
		}
		stack := []frame{{start, succ(start)}}
		color[start] = grey
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			if len(top.next) == 0 {
				color[top.node] = black
				stack = stack[:len(stack)-1]
				continue
			}
			m := top.next[0]
			top.next = top.next[1:]
			switch color[m] {
			case grey:
				// m is on the stack: the cycle is m ... top, m.
				var path []string
				for i := range stack {
					if stack[i].node == m {
						for _, f := range stack[i:] {
							path = append(path, f.node)
						}
						break
					}
				}
				return append(path, m)
			case white:
				color[m] = grey
				stack = append(stack, frame{m, succ(m)})
			}
		}
	}
	return nil
}
