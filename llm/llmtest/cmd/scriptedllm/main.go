// Command scriptedllm serves an llmtest script as an OpenAI-compatible model
// server, for manual runs of the worker without a real model:
//
//	go run ./llm/llmtest/cmd/scriptedllm -script testdata/session.json -addr 127.0.0.1:8080
//
// It prints the base URL ("http://127.0.0.1:PORT") on the first line of
// standard output, then serves until interrupted (SIGINT/SIGTERM). Without
// -script every chat request gets the default reply {"ops":[]}.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/lethe-research/lethe/llm/llmtest"
)

func main() {
	scriptPath := flag.String("script", "", "JSON script file (rules, default, embedding_dim); empty = defaults only")
	addr := flag.String("addr", "127.0.0.1:0", "listen address (port 0 = any free port)")
	flag.Parse()
	if err := run(*scriptPath, *addr); err != nil {
		log.SetFlags(0)
		log.Fatalf("scriptedllm: %v", err)
	}
}

func run(scriptPath, addr string) error {
	var script llmtest.Script
	if scriptPath != "" {
		var err error
		if script, err = llmtest.LoadScript(scriptPath); err != nil {
			return err
		}
	}
	srv, err := llmtest.New(script)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", addr, err)
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	fmt.Printf("http://%s\n", ln.Addr())

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	log.Printf("scriptedllm: served %d chat and %d embeddings requests", srv.ChatCount(), srv.EmbedCount())
	return nil
}
