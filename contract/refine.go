package contract

import "math"

// Refinement is the strength refinement of phase 4: an item entailed by
// evidence from other sources moves toward 1 by up to Boost of its
// headroom, an item contradicted by other sources loses up to Penalty of
// its value, both saturating smoothly (1 − e^−x) in the summed edge weights.
type Refinement struct {
	Boost   float64 `json:"boost"`
	Penalty float64 `json:"penalty"`
}

// Strength is the refined strength of an item with base strength base,
// summed SIMILAR_TO weights `support` of entailing items from other sources
// and `against` of contradicting items from other sources:
//
//	s = (base + (1 − base)·Boost·(1 − e^−support)) · (1 − Penalty·(1 − e^−against))
//
// clamped to [0, 1].
func (r Refinement) Strength(base, support, against float64) float64 {
	s := base + (1-base)*r.Boost*(1-math.Exp(-support))
	s *= 1 - r.Penalty*(1-math.Exp(-against))
	return math.Max(0, math.Min(1, s))
}
