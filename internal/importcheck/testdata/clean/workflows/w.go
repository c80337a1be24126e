// Package workflows links only the pure set.
package workflows

import "github.com/lethe-research/lethe/contract"

// Run is workflow code.
func Run() float64 { return contract.X() }
