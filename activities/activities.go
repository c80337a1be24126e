// Package activities holds the Temporal activities: thin adapters over
// llm/, graph/ and research/. Each is idempotent by (session, iteration,
// step) so that a retry after a crash changes nothing twice.
package activities

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"net/http"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"

	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/config/load"
	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/llm"
	"github.com/lethe-research/lethe/research"
)

// Activities holds the clients every activity uses. It is built once per
// worker process from the worker's configuration.
type Activities struct {
	Cfg    config.Config // the worker's own tree: service URLs, limits of this host
	Store  graph.Store
	Chat   *llm.ChatClient
	Embed  *llm.EmbedClient
	Corpus *research.Corpus // nil when no local corpus is configured
	HTTP   *http.Client
	Policy research.URLPolicy
	// Research clients, built by InitResearch (activities/research.go):
	// Web is the policy-enforcing HTTP fetcher (PDFs, media, pages when no
	// browser); Browser is headless Chromium (nil: no browser on this
	// worker); Search is SearXNG (nil: research.searxng_url empty); STT is
	// ffmpeg + whisper.cpp (nil: research.whisper_url empty).
	Web     *research.HTTPFetcher
	Browser *research.Browser
	Search  *research.SearXNG
	STT     *research.Transcriber
	// Web is the web search providers by name (research.providers): SearXNG
	// when configured, Wikipedia and arXiv always (keyless), Tavily and
	// Brave when their keys are set. The corpus is Corpus.
	WebSearch map[string]research.Provider
	// Sources are where the worker's tree came from; ResolveConfig loads
	// them again with a session's overrides on top.
	Sources load.Sources
}

func logger(ctx context.Context, session string) log.Logger {
	return log.With(activity.GetLogger(ctx), "session", session)
}

// nonRetryable wraps an error that retrying cannot fix.
func nonRetryable(kind string, err error) error {
	return temporal.NewNonRetryableApplicationError(err.Error(), kind, err)
}

// getBlob decodes a gob blob; ok is false when it does not exist.
func getBlob(ctx context.Context, s graph.Store, session, key string, v any) (bool, error) {
	b, err := s.GetBlob(ctx, session, key)
	if errors.Is(err, graph.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read blob %s: %w", key, err)
	}
	if err := decodeBlob(key, b, v); err != nil {
		return false, err
	}
	return true, nil
}

// decodeBlob decodes a gob document read under key into v.
func decodeBlob(key string, b []byte, v any) error {
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(v); err != nil {
		return fmt.Errorf("decode blob %s: %w", key, err)
	}
	return nil
}

func putBlob(ctx context.Context, s graph.Store, session, key string, v any) error {
	b, err := gobBytes(key, v)
	if err != nil {
		return err
	}
	if err := s.PutBlob(ctx, session, key, b); err != nil {
		return fmt.Errorf("write blob %s: %w", key, err)
	}
	return nil
}

// gobBytes is the blob putBlob writes for v under key.
func gobBytes(key string, v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(v); err != nil {
		return nil, fmt.Errorf("encode blob %s: %w", key, err)
	}
	return buf.Bytes(), nil
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// boundURL is u when it is at most max bytes (max ≤ 0: no bound), else
// empty: a URL that long is page-controlled noise, and a cut one would
// name another page.
func boundURL(u string, max int) string {
	if max > 0 && len(u) > max {
		return ""
	}
	return u
}

// orDefault is v, or def when v is the zero value: the input of an
// activity scheduled by workflow code from before the parameter travelled
// in it (a session's parameters come from its recorded config, never from
// the worker's; docs/versioning.md).
func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}
