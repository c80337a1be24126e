package activities

import "testing"

// placeEvidence are three numbered facts, as composeSection numbers them.
var placeEvidence = map[int]string{
	1: "Solid-state batteries are nevertheless not immune to thermal runaway: a lithium metal anode melts at 180 degrees Celsius and molten lithium reacts violently with cathode oxygen release. Short circuits caused by dendrites heat the cell locally.",
	2: "Mechanical contact loss is the second interface failure: cathode particles expand and shrink as lithium enters and leaves. Capacity fades as contact is lost.",
	3: "Every pore or crack in the separator is a path for lithium dendrites and a cause of early failure.",
}

func TestPlaceCitations(t *testing.T) {
	for _, c := range []struct {
		name, in, want string
		placed         int
	}{
		{"heap on the last sentence is spread",
			"Short circuits caused by dendrites heat the cell locally. Capacity fades as contact is lost. Every pore or crack in the separator is a path for lithium dendrites and a cause of early failure. [1] , [2], [3]",
			"Short circuits caused by dendrites heat the cell locally [1]. Capacity fades as contact is lost [2]. Every pore or crack in the separator is a path for lithium dendrites and a cause of early failure [3].", 3},
		{"uncited sentences get their holder, numbered ones stay",
			"Capacity fades as contact is lost. Dendrites make solid cells unsafe [3]. Every pore or crack in the separator is a path for lithium dendrites and a cause of early failure.",
			"Capacity fades as contact is lost [2]. Dendrites make solid cells unsafe [3]. Every pore or crack in the separator is a path for lithium dendrites and a cause of early failure [3].", 2},
		{"a sentence no fact holds stays uncited",
			"The moon is made of green cheese and orbits slowly. Capacity fades as contact is lost [2].",
			"The moon is made of green cheese and orbits slowly. Capacity fades as contact is lost [2].", 0},
		{"a heap no sentence is held by stays as written",
			"The moon is made of green cheese. Mars is red and dusty and cold. [1][2]",
			"The moon is made of green cheese. Mars is red and dusty and cold. [1][2]", 0},
		{"a recomposed sentence is placed by coverage",
			"Solid-state batteries are not immune to thermal runaway, since lithium metal anodes melt at 180 degrees Celsius and molten lithium reacts violently with cathode oxygen release. Capacity fades [2].",
			"Solid-state batteries are not immune to thermal runaway, since lithium metal anodes melt at 180 degrees Celsius and molten lithium reacts violently with cathode oxygen release [1]. Capacity fades [2].", 1},
		{"a recomposed sentence that drops the negation is not placed",
			"Solid-state batteries are immune to thermal runaway, since lithium metal anodes melt at 180 degrees Celsius and molten lithium reacts violently with cathode oxygen release. Capacity fades [2].",
			"Solid-state batteries are immune to thermal runaway, since lithium metal anodes melt at 180 degrees Celsius and molten lithium reacts violently with cathode oxygen release. Capacity fades [2].", 0},
	} {
		got, placed := placeCitations(c.in, placeEvidence)
		if got != c.want || placed != c.placed {
			t.Errorf("%s:\n got %q (%d)\nwant %q (%d)", c.name, got, placed, c.want, c.placed)
		}
	}
}
