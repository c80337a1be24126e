package main

import (
	"fmt"
	"io"
)

// errorOnce writes each distinct error once: a progress query that fails
// on every tick (no worker answers it, or the workflow task keeps
// failing) is seen without flooding the terminal.
type errorOnce struct {
	w    io.Writer
	seen map[string]bool
}

func newErrorOnce(w io.Writer) *errorOnce { return &errorOnce{w: w, seen: map[string]bool{}} }

func (e *errorOnce) print(what string, err error) {
	msg := err.Error()
	if e.seen[msg] {
		return
	}
	e.seen[msg] = true
	fmt.Fprintf(e.w, "%s: %v\n", what, err)
}
