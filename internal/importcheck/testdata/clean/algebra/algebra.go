// Package algebra is pure math.
package algebra

import "math"

// Sqrt2 is √2.
func Sqrt2() float64 { return math.Sqrt2 }
