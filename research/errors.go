package research

import (
	"errors"
	"fmt"
)

// ErrRefused is wrapped by every refusal of a URL or corpus path (URLPolicy,
// Corpus.Open): the caller should not retry, the input is not allowed.
var ErrRefused = errors.New("refused")

// RefusedError names the refused URL and the reason.
type RefusedError struct {
	URL    string
	Reason string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("research: refusing %q: %s", e.URL, e.Reason)
}

// Unwrap makes errors.Is(err, ErrRefused) true.
func (e *RefusedError) Unwrap() error { return ErrRefused }

func refused(u, reason string) error { return &RefusedError{URL: u, Reason: reason} }
