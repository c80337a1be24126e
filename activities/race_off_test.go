//go:build !race

package activities_test

const raceEnabled = false
