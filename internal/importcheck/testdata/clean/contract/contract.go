// Package contract imports algebra and the standard library only.
package contract

import "github.com/lethe-research/lethe/algebra"

// X is a number.
func X() float64 { return algebra.Sqrt2() }
