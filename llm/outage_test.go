package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
)

func TestAsOutage(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"refused", serviceError(ServiceChat, "u", refused), true},
		{"timeout", serviceError(ServiceChat, "u", fmt.Errorf("x: %w", context.DeadlineExceeded)), true},
		{"503", serviceError(ServiceEmbed, "u", &HTTPError{Status: 503}), true},
		{"429", serviceError(ServiceChat, "u", &HTTPError{Status: 429}), true},
		{"408", serviceError(ServiceChat, "u", &HTTPError{Status: 408}), true},
		{"cut stream", serviceError(ServiceChat, "u", io.ErrUnexpectedEOF), true},
		{"400", serviceError(ServiceChat, "u", &HTTPError{Status: 400}), false},
		{"401", serviceError(ServiceChat, "u", &HTTPError{Status: 401}), false},
		{"bad answer", serviceError(ServiceChat, "u", fmt.Errorf("%w: no choices", ErrBadResponse)), false},
		{"bad request", serviceError(ServiceChat, "u", ErrInvalidRequest), false},
		{"not a model call", refused, false},
		{"nil", nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			se, got := AsOutage(context.Background(), fmt.Errorf("wrapped: %w", c.err))
			if c.err == nil {
				se, got = AsOutage(context.Background(), nil)
			}
			if got != c.want {
				t.Fatalf("AsOutage = %v, want %v", got, c.want)
			}
			if got && (se.URL != "u" || se.Service == "") {
				t.Fatalf("service %q url %q", se.Service, se.URL)
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, ok := AsOutage(ctx, serviceError(ServiceChat, "u", refused)); ok {
		t.Fatal("a call abandoned by its caller is not an outage")
	}
}
