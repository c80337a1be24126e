// Package contract imports a project package outside the pure set.
package contract

import "github.com/lethe-research/lethe/activities"

// N is a number.
func N() int { return activities.N }
