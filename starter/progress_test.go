package main

import (
	"bytes"
	"errors"
	"testing"
)

// TestErrorOncePrintsEachErrorOnce: a query failing the same way on every
// tick is shown once; a new failure is shown too.
func TestErrorOncePrintsEachErrorOnce(t *testing.T) {
	var b bytes.Buffer
	e := newErrorOnce(&b)
	for range 3 {
		e.print("progress query", errors.New("context deadline exceeded"))
	}
	e.print("progress query", errors.New("workflow task failed"))
	want := "progress query: context deadline exceeded\nprogress query: workflow task failed\n"
	if b.String() != want {
		t.Fatalf("printed %q, want %q", b.String(), want)
	}
}
