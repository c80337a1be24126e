// Package activities stands for I/O code.
package activities

// N is a number.
const N = 1
