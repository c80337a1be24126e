//go:build !race

package embedded_test

const cascadeWaves = 10
