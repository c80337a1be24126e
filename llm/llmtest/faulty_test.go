package llmtest

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestFaultyGoesDownAndComesBack(t *testing.T) {
	srv, err := New(Script{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := NewFaulty(srv.Handler())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chat := func() error {
		resp, err := http.Post(f.URL()+"/v1/chat/completions", "application/json", strings.NewReader(`{"messages":[{"role":"user","content":"hi"}]}`))
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	f.OnRequest(func(n int, r *http.Request) bool {
		if n == 2 {
			f.Down()
		}
		return false
	})
	if err := chat(); err != nil {
		t.Fatalf("first chat: %v", err)
	}
	if err := chat(); err == nil {
		t.Fatal("the second chat took the server down inside itself, yet it was answered")
	}
	if err := chat(); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("while down: %v, want connection refused", err)
	}
	f.OnRequest(nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f.DownFor(ctx, 200*time.Millisecond, func(err error) { t.Error(err) })
	time.Sleep(500 * time.Millisecond)
	if err := chat(); err != nil {
		t.Fatalf("after coming back: %v", err)
	}
	if f.Chats() != 3 {
		t.Fatalf("chats %d, want 3", f.Chats())
	}
}
