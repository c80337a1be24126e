// Package din is pure itself and imports graph, as din may.
package din

import "github.com/lethe-research/lethe/graph"

// Render renders.
func Render() string { return graph.Status() }
