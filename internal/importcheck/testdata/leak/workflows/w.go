// Package workflows is a workflow package whose only direct imports are
// allowed, but which links net/http through din and graph.
package workflows

import "github.com/lethe-research/lethe/din"

// Run is workflow code.
func Run() string { return din.Render() }
