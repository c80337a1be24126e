// Package workflows links activities through contract.
package workflows

import "github.com/lethe-research/lethe/contract"

// Run is workflow code.
func Run() int { return contract.N() }
