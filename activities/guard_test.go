package activities

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	neo4jdriver "github.com/neo4j/neo4j-go-driver/v5/neo4j"
	berrors "go.etcd.io/bbolt/errors"
	"go.temporal.io/sdk/temporal"

	"github.com/lethe-research/lethe/contract"
	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/graph/embedded"
	"github.com/lethe-research/lethe/llm"
	"github.com/lethe-research/lethe/llm/llmtest"
)

func TestClassify(t *testing.T) {
	ctx := context.Background()
	embed := llm.NewEmbedClient(llm.EmbedConfig{BaseURL: "http://127.0.0.1:1"}, nil) // nothing listens on port 1
	_, down := embed.Embed(ctx, llm.Document, []string{"x"})
	cases := []struct {
		name, wantType string
		err            error
		retryable      bool
	}{
		{"embedding server down", ErrModelUnavailable, fmt.Errorf("ingest: %w", down), true},
		{"not found", ErrPermanentStore, fmt.Errorf("read: %w", graph.ErrNotFound), false},
		{"immutable", ErrPermanentStore, graph.ErrImmutable, false},
		{"application error kept", ErrLLM, nonRetryable(ErrLLM, errors.New("refused")), false},
		{"transient", "", &net.OpError{Op: "read", Err: errors.New("reset")}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Classify(ctx, c.err)
			var app *temporal.ApplicationError
			if c.wantType == "" {
				if errors.As(err, &app) {
					t.Fatalf("a transient error became %v", err)
				}
				return
			}
			if !errors.As(err, &app) || app.Type() != c.wantType || app.NonRetryable() == c.retryable {
				t.Fatalf("got %v, want type %s (retryable %v)", err, c.wantType, c.retryable)
			}
			if c.wantType == ErrModelUnavailable {
				var o Outage
				if err := app.Details(&o); err != nil || o.Service != llm.ServiceEmbed || o.URL != "http://127.0.0.1:1" {
					t.Fatalf("details %+v (%v)", o, err)
				}
			}
		})
	}
}

func TestCheckPayload(t *testing.T) {
	if err := checkPayload("Expand", strings.Repeat("x", 100), 1000); err != nil {
		t.Fatal(err)
	}
	err := checkPayload("Expand", strings.Repeat("x", 2000), 1000)
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != ErrPayloadTooLarge || !app.NonRetryable() || !strings.Contains(err.Error(), "Expand") {
		t.Fatalf("got %v", err)
	}
}

// A hosted API's answers before its model sees the request: a refused key
// fails the activity for good (no retry or wait changes it), and a rate
// limit is an outage whose details carry the Retry-After the workflow's
// wait honours.
func TestClassifyHostedRefusals(t *testing.T) {
	ctx := context.Background()
	srv := llmtest.NewServer(llmtest.Script{Hosted: &llmtest.Hosted{Key: "sk-k", RateLimitEvery: 1, RetryAfterS: 5}})
	defer srv.Close()
	_, refused := llm.NewEmbedClient(llm.EmbedConfig{BaseURL: srv.URL(), KeySetting: "embed.api_key"}, nil).Embed(ctx, llm.Document, []string{"x"})
	var app *temporal.ApplicationError
	for _, e := range []error{fmt.Errorf("ingest: %w", refused), nonRetryable(ErrLLM, fmt.Errorf("reason: %w", refused))} {
		if err := Classify(ctx, e); !errors.As(err, &app) || app.Type() != contract.ErrModelKeyRefused || !app.NonRetryable() ||
			!strings.Contains(err.Error(), "set embed.api_key") {
			t.Errorf("refused key: %v, want a non-retryable %s naming embed.api_key", err, contract.ErrModelKeyRefused)
		}
	}
	_, limited := llm.NewEmbedClient(llm.EmbedConfig{BaseURL: srv.URL(), APIKey: "sk-k"}, nil).Embed(ctx, llm.Document, []string{"x"})
	err := Classify(ctx, fmt.Errorf("ingest: %w", limited))
	var o Outage
	if !errors.As(err, &app) || app.Type() != ErrModelUnavailable || app.Details(&o) != nil || o.RetryAfter != 5*time.Second {
		t.Errorf("rate limited: %v, outage %+v; want %s asking for 5 s", err, o, ErrModelUnavailable)
	}
}

// TestClassifyStoreErrorsByClass: a store error that the same request meets
// again is non-retryable by its class, whatever its code; a transient one is
// left to the retry policy. The bbolt case opens a real corrupt file.
func TestClassifyStoreErrorsByClass(t *testing.T) {
	ctx := context.Background()
	corrupt := filepath.Join(t.TempDir(), "graph.db")
	if err := os.WriteFile(corrupt, bytes.Repeat([]byte("not a bbolt file "), 4096), 0o600); err != nil {
		t.Fatal(err)
	}
	_, openErr := embedded.Open(corrupt)
	if openErr == nil {
		t.Fatal("a corrupt file opened")
	}
	neo := func(code string) error {
		return fmt.Errorf("neo4j write: %w", &neo4jdriver.Neo4jError{Code: code, Msg: "from the server"})
	}
	cases := []struct {
		name      string
		err       error
		permanent bool
	}{
		{"Neo4j syntax error", neo("Neo.ClientError.Statement.SyntaxError"), true},
		{"Neo4j constraint", neo("Neo.ClientError.Schema.ConstraintValidationFailed"), true},
		{"Neo4j no such database", neo("Neo.ClientError.Database.DatabaseNotFound"), true},
		{"Neo4j forbidden", neo("Neo.ClientError.Security.Forbidden"), true},
		{"Neo4j request invalid", neo("Neo.ClientError.Request.Invalid"), true},
		{"Neo4j not a leader", neo("Neo.ClientError.Cluster.NotALeader"), false},
		{"Neo4j read-only follower", neo("Neo.ClientError.General.ForbiddenOnReadOnlyDatabase"), false},
		{"Neo4j authorization expired", neo("Neo.ClientError.Security.AuthorizationExpired"), false},
		{"Neo4j deadlock", neo("Neo.TransientError.Transaction.DeadlockDetected"), false},
		{"Neo4j out of memory", neo("Neo.TransientError.General.MemoryPoolOutOfMemoryError"), false},
		{"Neo4j database unavailable", neo("Neo.TransientError.General.DatabaseUnavailable"), false},
		{"Neo4j database error", neo("Neo.DatabaseError.General.UnknownError"), false},
		{"bbolt corrupt file", openErr, true},
		{"bbolt checksum", fmt.Errorf("read: %w", berrors.ErrChecksum), true},
		{"bbolt version mismatch", fmt.Errorf("open: %w", berrors.ErrVersionMismatch), true},
		{"bbolt invalid", berrors.ErrInvalid, true},
		{"bbolt lock timeout", fmt.Errorf("open: %w", berrors.ErrTimeout), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var app *temporal.ApplicationError
			got := errors.As(Classify(ctx, c.err), &app) && app.NonRetryable() && app.Type() == ErrPermanentStore
			if got != c.permanent {
				t.Fatalf("%v: permanent %v, want %v", c.err, got, c.permanent)
			}
		})
	}
}
